//! [`ReportStore`]: per-account sequence counters and bounded retention.

use std::collections::VecDeque;

use peregrine_types::AccountId;
use peregrine_wire::v2::Outbound;
use rustc_hash::FxHashMap;

/// One account's stream.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct Stream {
    /// The sequence number the next report gets.
    next: u64,
    /// Retained reports, `next - items.len() .. next`, in order.
    items: VecDeque<Outbound>,
}

impl Stream {
    /// A stream whose retention is reserved up front (address space only: pages are
    /// touched as reports arrive), so appending never reallocates and copies, and the
    /// per-report path allocates nothing once an account has a stream.
    fn with_room(retain: usize) -> Self {
        Stream {
            next: 1,
            items: VecDeque::with_capacity(retain.min(MAX_RESERVE)),
        }
    }

    fn oldest(&self) -> u64 {
        self.next - self.items.len() as u64
    }
}

/// Reports reserved per account up front at most (~110 MB of address space); larger
/// retentions grow by doubling beyond it.
const MAX_RESERVE: usize = 1 << 20;

/// Where a replay for a scope can start, or why it cannot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Position {
    /// Reports from this position on are all retained (possibly none yet).
    Replay,
    /// Older than the oldest retained report.
    NotRetained,
    /// Beyond the next report: the client claims reports the exchange never sent.
    Ahead,
}

/// The retention bounds of a store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    /// Reports kept per account (the oldest is dropped beyond it).
    pub per_account: usize,
}

/// Every account's report stream. See the module documentation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportStore {
    streams: FxHashMap<AccountId, Stream>,
    retention: Retention,
    /// Emission order across accounts: `(account, report_seq)` of global index
    /// `order_base + i`.
    order: VecDeque<(AccountId, u64)>,
    order_base: u64,
    /// Reports of every command with an engine sequence number at or above this are
    /// all retained (a drop copy of every account can resume from here).
    all_floor: u64,
}

impl ReportStore {
    /// An empty store: every account's stream starts at 1.
    pub fn new(retention: Retention) -> Self {
        ReportStore {
            streams: FxHashMap::default(),
            retention,
            order: VecDeque::new(),
            order_base: 0,
            all_floor: 1,
        }
    }

    /// After a restart from a snapshot: each listed account's stream continues at its
    /// given next sequence number (earlier reports are not retained), and a drop copy
    /// of every account can resume only from `engine_floor` (the first command
    /// replayed). Call before anything is appended.
    pub fn resume(&mut self, next: &[(AccountId, u64)], engine_floor: u64) {
        let retain = self.retention.per_account;
        for &(account, seq) in next {
            let s = self
                .streams
                .entry(account)
                .or_insert_with(|| Stream::with_room(retain));
            s.next = seq.max(1);
        }
        self.all_floor = self.all_floor.max(engine_floor);
    }

    /// Retains `msg`, a report of `account`'s stream already numbered (the core
    /// numbers every report once, `Core`'s report counters; the store only checks
    /// the number), and returns its number. The oldest retained report of the account
    /// is dropped when it has `retention.per_account` already.
    ///
    /// A number that does not follow the stream's is a bug upstream: it is logged,
    /// a repeat is dropped, and a jump restarts the stream's retention at it (so what
    /// is retained stays contiguous and replays exactly).
    pub fn append(&mut self, account: AccountId, msg: Outbound) -> u64 {
        let retain = self.retention.per_account;
        let s = self
            .streams
            .entry(account)
            .or_insert_with(|| Stream::with_room(retain));
        s.next = s.next.max(1);
        let seq = msg.report().map_or(0, |(_, seq)| seq);
        if seq != s.next {
            debug_assert_eq!(seq, s.next, "report of account {account} out of sequence");
            log::error!(
                "report stream of account {account}: report {seq} where {} was expected{}",
                s.next,
                if seq < s.next {
                    " (dropped)"
                } else {
                    " (retention restarts there)"
                }
            );
            if seq < s.next {
                return seq;
            }
            let dropped = std::mem::take(&mut s.items);
            if let Some(last) = dropped.back() {
                self.all_floor = self.all_floor.max(last.engine_seq() + 1);
            }
            s.next = seq;
        }
        s.next += 1;
        if self.retention.per_account == 0 {
            self.all_floor = self.all_floor.max(msg.engine_seq() + 1);
            return seq;
        }
        let mut evicted = false;
        if s.items.len() == self.retention.per_account {
            if let Some(old) = s.items.pop_front() {
                self.all_floor = self.all_floor.max(old.engine_seq() + 1);
                evicted = true;
            }
        }
        s.items.push_back(msg);
        self.order.push_back((account, seq));
        // Only an eviction can expose a gone report at the front, and only growth can
        // exceed the bound: most appends skip the trim.
        if evicted || self.order.len() > self.retention.per_account * self.streams.len() {
            self.trim_order();
        }
        seq
    }

    /// Drops leading emission-order entries whose reports are gone, and bounds the
    /// order to what every account could retain: a quiet account's old report at the
    /// front would otherwise pin it while busy accounts churn. Forgetting a retained
    /// report's place raises the all-accounts floor past its command.
    fn trim_order(&mut self) {
        let cap = self.retention.per_account * self.streams.len().max(1);
        while let Some(&(a, seq)) = self.order.front() {
            let retained = self.get(a, seq).map(Outbound::engine_seq);
            match retained {
                Some(engine) if self.order.len() > cap => {
                    self.all_floor = self.all_floor.max(engine + 1);
                }
                Some(_) => break,
                None => {}
            }
            self.order.pop_front();
            self.order_base += 1;
        }
    }

    /// The sequence number `account`'s next report will get.
    pub fn next_seq(&self, account: AccountId) -> u64 {
        self.streams.get(&account).map_or(1, |s| s.next.max(1))
    }

    /// The oldest retained sequence number of `account` (its next one if none is).
    pub fn oldest_seq(&self, account: AccountId) -> u64 {
        self.streams.get(&account).map_or(1, |s| s.oldest().max(1))
    }

    /// Whether a replay of `account` from `from` can be served.
    pub fn position(&self, account: AccountId, from: u64) -> Position {
        if from > self.next_seq(account) {
            Position::Ahead
        } else if from < self.oldest_seq(account) {
            Position::NotRetained
        } else {
            Position::Replay
        }
    }

    /// Report `seq` of `account`, if retained.
    pub fn get(&self, account: AccountId, seq: u64) -> Option<&Outbound> {
        let s = self.streams.get(&account)?;
        let i = seq.checked_sub(s.oldest())?;
        s.items.get(usize::try_from(i).ok()?)
    }

    /// The global (emission-order) index the next report will get.
    pub fn next_global(&self) -> u64 {
        self.order_base + self.order.len() as u64
    }

    /// The oldest engine sequence number a drop copy of every account can resume
    /// from.
    pub fn all_floor(&self) -> u64 {
        self.all_floor
    }

    /// Report with global index `g`, if still retained.
    pub fn at_global(&self, g: u64) -> Option<&Outbound> {
        let i = usize::try_from(g.checked_sub(self.order_base)?).ok()?;
        let &(account, seq) = self.order.get(i)?;
        self.get(account, seq)
    }

    /// The global index of the first retained report whose engine sequence number is
    /// at least `engine_seq` (the next global index if none), or `None` when reports
    /// from `engine_seq` on are not all retained.
    pub fn first_global_at(&self, engine_seq: u64) -> Option<u64> {
        if engine_seq < self.all_floor {
            return None;
        }
        // Engine sequence numbers never decrease along the emission order; holes
        // (reports evicted out of order) all lie below `all_floor`.
        let (mut lo, mut hi) = (self.order_base, self.next_global());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match self.at_global(mid) {
                Some(m) if m.engine_seq() >= engine_seq => hi = mid,
                _ => lo = mid + 1,
            }
        }
        Some(lo)
    }

    /// Each account's next report sequence number, sorted by account (for snapshots).
    pub fn counters(&self) -> Vec<(AccountId, u64)> {
        let mut v: Vec<_> = self
            .streams
            .iter()
            .map(|(a, s)| (*a, s.next.max(1)))
            .collect();
        v.sort_unstable_by_key(|(a, _)| a.0);
        v
    }

    /// Reports retained, over every account.
    pub fn retained(&self) -> usize {
        self.streams.values().map(|s| s.items.len()).sum()
    }

    /// The bounds it keeps.
    pub fn retention(&self) -> Retention {
        self.retention
    }

    /// Every stream sorted by account: `(account, next report seq, retained reports
    /// oldest first)`; the emission order `(account, report seq)` from global index
    /// `order_base`; the every-account floor. What a snapshot saves
    /// (`codec::snapshot`).
    pub fn parts(&self) -> StoreParts<'_> {
        let mut streams: Vec<_> = self
            .streams
            .iter()
            .map(|(a, s)| (*a, s.next.max(1), &s.items))
            .collect();
        streams.sort_unstable_by_key(|(a, _, _)| a.0);
        StoreParts {
            streams,
            order: &self.order,
            order_base: self.order_base,
            all_floor: self.all_floor,
        }
    }

    /// A store rebuilt from a snapshot's [`ReportStore::parts`], kept within
    /// `retention` (the config in force now, which may be smaller than when it was
    /// saved: the oldest reports beyond it are dropped).
    pub fn from_parts(
        retention: Retention,
        streams: Vec<(AccountId, u64, VecDeque<Outbound>)>,
        order: VecDeque<(AccountId, u64)>,
        order_base: u64,
        all_floor: u64,
    ) -> Self {
        let mut store = ReportStore {
            streams: FxHashMap::default(),
            retention,
            order,
            order_base,
            all_floor: all_floor.max(1),
        };
        for (account, next, mut items) in streams {
            while items.len() > retention.per_account {
                if let Some(old) = items.pop_front() {
                    store.all_floor = store.all_floor.max(old.engine_seq() + 1);
                }
            }
            let mut s = Stream::with_room(retention.per_account);
            s.next = next.max(1);
            s.items.extend(items);
            store.streams.insert(account, s);
        }
        store.trim_order();
        store
    }
}

impl ReportStore {
    /// The same store kept within `retention` from now on (a smaller one drops each
    /// account's oldest reports beyond it).
    pub fn with_retention(self, retention: Retention) -> Self {
        if retention == self.retention {
            return self;
        }
        let p = self.parts();
        let streams = p
            .streams
            .iter()
            .map(|(a, n, items)| (*a, *n, (*items).clone()))
            .collect();
        ReportStore::from_parts(
            retention,
            streams,
            p.order.clone(),
            p.order_base,
            p.all_floor,
        )
    }
}

/// The contents of a [`ReportStore`], for a snapshot (see [`ReportStore::parts`]).
#[derive(Debug)]
pub struct StoreParts<'a> {
    /// `(account, next report seq, retained reports oldest first)`, by account.
    pub streams: Vec<(AccountId, u64, &'a VecDeque<Outbound>)>,
    /// Emission order from `order_base`.
    pub order: &'a VecDeque<(AccountId, u64)>,
    /// Global index of `order`'s first entry.
    pub order_base: u64,
    /// See [`ReportStore::all_floor`].
    pub all_floor: u64,
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
