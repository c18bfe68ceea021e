//! Version-2 execution reports: the version-1 layouts with the account and its
//! report sequence number appended (after zero padding that keeps them aligned), and
//! `MassCancelDone`, the one answer a mass cancel always gets.
//!
//! Every report of an account's stream carries `report_seq`: 1, 2, 3, ... per
//! account, for the account's life, across sessions and restarts (the stream is
//! derived from the journal). An answer that changes nothing and is not journaled (a
//! refusal before sequencing, such as a request on a read-only session) carries
//! `report_seq` 0 and is not replayed.

include!(concat!(env!("OUT_DIR"), "/msg_v2__reports.rs"));
