//! Balance administration: deposits, withdrawals and balance queries, for an exchange
//! running with balances.
//!
//! `Deposit` and `Withdraw` are accepted only from sessions whose account the
//! exchange marks as admin; each is sequenced and journaled like an order and answered
//! with a [`Balance`] (the account's balance after it) or an [`AdminRejected`].
//! `BalanceQuery` is answered with a [`Balance`]: any session may ask about its own
//! account, an admin session about any account. Amounts are in the asset's smallest
//! unit (for a quote asset, price unit × quantity unit), always positive.

use peregrine_types::{AccountId, Timestamp};

use crate::field::ReasonCode;
use crate::message::wire_message;

wire_message! {
    /// Client → exchange (admin sessions only). Credit `amount` of `asset` to the
    /// available balance of `account`.
    Deposit = 0x20;
    /// Client's id for this request, echoed in the answer.
    request_id: u64,
    /// Amount in the asset's smallest unit; must be positive.
    amount: i64,
    /// The account credited.
    account: AccountId,
    /// The asset (its configured id).
    asset: u32,
}

wire_message! {
    /// Client → exchange (admin sessions only). Debit `amount` of `asset` from the
    /// available balance of `account`; funds reserved by open orders are never taken.
    Withdraw = 0x21;
    /// Client's id for this request, echoed in the answer.
    request_id: u64,
    /// Amount in the asset's smallest unit; must be positive.
    amount: i64,
    /// The account debited.
    account: AccountId,
    /// The asset (its configured id).
    asset: u32,
}

wire_message! {
    /// Client → exchange. Ask for one account's balance of one asset (own account, or
    /// any account from an admin session).
    BalanceQuery = 0x22;
    /// Client's id for this request, echoed in the answer.
    request_id: u64,
    /// The account asked about.
    account: AccountId,
    /// The asset (its configured id).
    asset: u32,
}

wire_message! {
    /// Exchange → client. An account's balance of one asset: the answer to a
    /// `BalanceQuery`, and the acknowledgement of a `Deposit` or `Withdraw` (the
    /// balance after it).
    Balance = 0xA0;
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
}

wire_message! {
    /// Exchange → client. A `Deposit`, `Withdraw` or `BalanceQuery` was refused;
    /// nothing changed.
    AdminRejected = 0xA1;
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
    /// Why, as an exchange-defined reason code.
    reason: ReasonCode,
}
