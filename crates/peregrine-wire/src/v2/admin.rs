//! Version-2 balance answers: the version-1 layouts with the report sequence number
//! appended. A deposit or withdrawal is journaled, so its `Balance` (or
//! `AdminRejected`) is part of the account's report stream; a `BalanceQuery` answer
//! and a refusal before sequencing carry `report_seq` 0.

use peregrine_types::{AccountId, Timestamp};

use crate::field::{Pad, ReasonCode};
use crate::message::wire_message;

wire_message! {
    /// Exchange → client. An account's balance of one asset: the answer to a
    /// `BalanceQuery`, and the acknowledgement of a `Deposit` or `Withdraw` (the
    /// balance after it).
    Balance = 0xA0, version 2;
    /// Per-session sequence number of this message.
    session_seq: u64,
    /// The matching engine's global sequence number of this event.
    engine_seq: u64,
    /// Engine time of this event, nanoseconds since the Unix epoch.
    engine_time: Timestamp,
    /// The request's id.
    request_id: u64,
    /// Free for new orders and withdrawal (saturated to the i64 range).
    available: i64,
    /// Held by open orders (saturated to the i64 range).
    reserved: i64,
    /// The account.
    account: AccountId,
    /// The asset.
    asset: u32,
    /// The account's report sequence number (a deposit or withdrawal; 0 for a query).
    report_seq: u64,
}

wire_message! {
    /// Exchange → client. A `Deposit`, `Withdraw` or `BalanceQuery` was refused;
    /// nothing changed.
    AdminRejected = 0xA1, version 2;
    /// Per-session sequence number of this message.
    session_seq: u64,
    /// The matching engine's global sequence number of this event.
    engine_seq: u64,
    /// Engine time of this event, nanoseconds since the Unix epoch.
    engine_time: Timestamp,
    /// The request's id.
    request_id: u64,
    /// The account the request named.
    account: AccountId,
    /// The asset the request named.
    asset: u32,
    /// Why: an admin reason code (protocol document, reason-code tables).
    reason: ReasonCode,
    /// Must be zero.
    padding: Pad<6>,
    /// The report sequence number of the account the request named, when the refusal
    /// was journaled (a withdrawal above the available balance); else 0.
    report_seq: u64,
}
