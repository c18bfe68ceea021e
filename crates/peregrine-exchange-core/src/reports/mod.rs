//! The per-account report streams (protocol version 2): sequencing and retention.
//!
//! Every report of an account's stream gets the account's next report sequence number,
//! once, from the core's [`Counters`] (the store only checks it,
//! [`ReportStore::append`]); the store keeps the most recent `retain` reports of each
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

mod store;

pub use store::{Position, ReportStore, Retention, StoreParts};

/// Each account's next report sequence number: what the core stamps reports with,
/// and what snapshots save.
#[derive(Debug, Clone, Default)]
pub struct Counters {
    next: rustc_hash::FxHashMap<peregrine_types::AccountId, u64>,
}

impl Counters {
    /// The next sequence number of `account`'s stream (1 for a new account).
    pub fn next(&self, account: peregrine_types::AccountId) -> u64 {
        self.next.get(&account).copied().unwrap_or(1)
    }

    /// Takes `account`'s next sequence number (and advances it).
    #[inline]
    pub fn take(&mut self, account: peregrine_types::AccountId) -> u64 {
        let n = self.next.entry(account).or_insert(1);
        let seq = *n;
        *n += 1;
        seq
    }

    /// Every account's next sequence number, sorted by account (allocates: for
    /// snapshots and start-up, not the order path).
    pub fn sorted(&self) -> Vec<(peregrine_types::AccountId, u64)> {
        let mut v: Vec<_> = self.next.iter().map(|(a, n)| (*a, *n)).collect();
        v.sort_unstable_by_key(|(a, _)| a.0);
        v
    }

    /// Counters restored from a snapshot.
    pub fn from_sorted(next: &[(peregrine_types::AccountId, u64)]) -> Self {
        Counters {
            next: next.iter().copied().collect(),
        }
    }
}
