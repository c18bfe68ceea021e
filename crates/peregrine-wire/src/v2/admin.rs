//! Version-2 balance answers: the version-1 layouts with the report sequence number
//! appended. A deposit or withdrawal is journaled, so its `Balance` (or
//! `AdminRejected`) is part of the account's report stream; a `BalanceQuery` answer
//! and a refusal before sequencing carry `report_seq` 0.

include!(concat!(env!("OUT_DIR"), "/msg_v2__admin.rs"));
