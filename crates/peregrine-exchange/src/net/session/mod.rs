//! One order-entry session: its protocol state machine ([`protocol`], sans-IO: the
//! rules of login, heartbeats, sequence numbers and framing) and its socket
//! ([`conn`]).

pub mod conn;
pub mod protocol;
