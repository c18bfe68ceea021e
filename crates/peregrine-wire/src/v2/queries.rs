//! Version-2 order queries: the status of one order, and every open order of an
//! account. Both are read-only and not journaled: their answers carry the account's
//! report sequence number at the time of the answer (`report_seq`), so a client can
//! place them in its report stream, and are never replayed.
//!
//! An order of another account is answered exactly like an unknown one
//! ([`OrderState::Unknown`](crate::field::OrderState::Unknown)), so order ids cannot be probed.

include!(concat!(env!("OUT_DIR"), "/msg_v2__queries.rs"));
