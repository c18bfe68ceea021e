//! Session messages: login, logout and heartbeats, in both directions.
//!
//! Session rules (see `docs/protocol.md`): the first client message on a connection is
//! [`Login`]; the exchange answers [`LoginAccepted`] or [`LoginRejected`] (and closes).
//! Each side sends a heartbeat when it has sent nothing else for one heartbeat
//! interval; a side that hears nothing for three intervals may close the connection.

use peregrine_types::{AccountId, Timestamp};

use crate::field::{Credential, ReasonCode};
use crate::message::wire_message;

wire_message! {
    /// Client → exchange. Opens a session; must be the first message on a connection.
    Login = 0x01;
    /// The trading account to log in.
    account: AccountId,
    /// Requested heartbeat interval in milliseconds; the exchange may clamp it and
    /// answers with the interval it will use.
    heartbeat_interval_ms: u32,
    /// Password or token, zero-padded to 16 bytes.
    credential: Credential,
}

wire_message! {
    /// Client → exchange. Ends the session; the exchange closes the connection after
    /// the last outbound message. Resting orders stay on the book.
    Logout = 0x02;
}

wire_message! {
    /// Client → exchange. Liveness signal, sent when the client has sent nothing for
    /// one heartbeat interval.
    ClientHeartbeat = 0x03;
}

wire_message! {
    /// Exchange → client. The login succeeded; order entry may begin. Its
    /// `session_seq` is 1.
    LoginAccepted = 0x81;
    /// Per-session sequence number of this message: 1, 2, 3, ... with no gaps.
    session_seq: u64,
    /// The matching engine's global sequence number at the time of this message.
    engine_seq: u64,
    /// Engine time of this message, nanoseconds since the Unix epoch.
    engine_time: Timestamp,
    /// The account now logged in.
    account: AccountId,
    /// The heartbeat interval, milliseconds, both sides must keep.
    heartbeat_interval_ms: u32,
}

wire_message! {
    /// Exchange → client. The login failed; the exchange closes the connection.
    LoginRejected = 0x82;
    /// Per-session sequence number of this message (always 1).
    session_seq: u64,
    /// The matching engine's global sequence number at the time of this message.
    engine_seq: u64,
    /// Engine time of this message, nanoseconds since the Unix epoch.
    engine_time: Timestamp,
    /// Why, as an exchange-defined reason code (0: unspecified).
    reason: ReasonCode,
}

wire_message! {
    /// Exchange → client. Liveness signal, sent when the exchange has sent nothing
    /// for one heartbeat interval. Takes a session sequence number like any other
    /// outbound message.
    ServerHeartbeat = 0x83;
    /// Per-session sequence number of this message.
    session_seq: u64,
    /// The matching engine's global sequence number at the time of this message.
    engine_seq: u64,
    /// Engine time of this message, nanoseconds since the Unix epoch.
    engine_time: Timestamp,
}
