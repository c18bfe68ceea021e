//! One order-entry session: its protocol state machine ([`protocol`], sans-IO: the
//! version-2 rules of challenge and login, the recovery phase, stream delivery,
//! heartbeats, sequence numbers and framing) and its socket ([`conn`]).

pub(crate) mod conn;
pub(crate) mod protocol;
