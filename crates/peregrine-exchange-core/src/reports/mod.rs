//! The per-account report streams (protocol version 2): sequencing and retention.
//!
//! Every report of an account's stream gets the account's next report sequence number
//! ([`ReportStore::append`]); the store keeps the most recent `retain` reports of each
//! account, so a session that logs in with an older `next_report_seq` is replayed what
//! it missed ([`ReportStore::get`] by sequence number), and several sessions of one
//! account each read the same stream at their own pace. Reports are a deterministic
//! function of the journaled commands, so after a restart the store is rebuilt by
//! replaying the journal (from the snapshot's report counters, [`ReportStore::resume`]),
//! and the numbering continues unchanged.
//!
//! A drop copy of every account reads the streams merged in emission order
//! ([`ReportStore::at_global`]), positioned by engine sequence number
//! ([`ReportStore::first_global_at`]).
//!
//! Sans-IO, no clock, deterministic: nothing here is iterated in hash order.

pub mod route;
mod store;

pub use store::{Position, ReportStore, Retention};
