//! The snapshot replica, sans-IO: a second [`Core`] (no log, no feed, no sessions)
//! seeded from an encoded snapshot of the live core, then fed every journaled record
//! and replaying it exactly as recovery would. A replica core that collects reports
//! ([`Core::collect_reports`], what the server's factory builds) regenerates the
//! report streams too, and its snapshots save their retained reports. Every `every` commands it encodes its
//! own state, so the matching thread never pays the O(resting orders) encode (33 ms
//! for 1M orders here). A snapshot is handed out only once the live core's durable
//! commit has reached its sequence number ([`Replica::take_due`]), so a snapshot never
//! runs ahead of the journal.
//!
//! The server's snapshot thread drives it: seeds from a channel, records from an SPSC
//! ring, the committed sequence number from an atomic, and writes what
//! [`Replica::take_due`] returns to the snapshot store.

use crate::codec::command::Record;
use crate::codec::snapshot;
use crate::core::Core;
use crate::journal::NoLog;

/// The replica's state.
#[derive(Debug)]
pub struct Replica {
    every: u64,
    core: Option<Core<NoLog>>,
    /// Records at or below `floor` are already in the state (the seed covers them).
    floor: Option<u64>,
    /// `seq / every` of the newest snapshot taken (or covered by the first seed).
    mark: Option<u64>,
    pending: Option<(u64, Vec<u8>)>,
}

impl Replica {
    /// A replica that snapshots every `every` commands (at least 1), not yet seeded.
    pub fn new(every: u64) -> Self {
        Replica {
            every: every.max(1),
            core: None,
            floor: None,
            mark: None,
            pending: None,
        }
    }

    /// Replaces the state with seed `blob` (the live state after record `seq`),
    /// restored into `fresh` (a blank core with the live one's instruments, capacity
    /// and balances). A (re-)seed that passes a snapshot point is that snapshot: the
    /// records there never reached the replica (a seed is sent only after a commit
    /// covering it).
    pub fn seed(&mut self, seq: u64, blob: Vec<u8>, mut fresh: Core<NoLog>) -> Result<(), String> {
        let snap = snapshot::decode(&blob).map_err(|e| e.to_string())?;
        fresh.restore_snapshot(&snap)?;
        self.core = Some(fresh);
        self.floor = Some(seq);
        let point = seq / self.every;
        match self.mark {
            None => self.mark = Some(point),
            Some(m) if point > m && self.pending.is_none() => {
                self.pending = Some((seq, blob));
                self.mark = Some(point);
            }
            Some(_) => {}
        }
        Ok(())
    }

    /// Whether a seed has arrived (records are ignored until then).
    pub fn seeded(&self) -> bool {
        self.core.is_some()
    }

    /// Applies journaled record `seq` (skipped if the seed covers it). At a snapshot
    /// point with no snapshot pending, encodes the state. Returns true when the
    /// caller should stop feeding records until [`Replica::take_due`] released the
    /// pending snapshot.
    pub fn apply(&mut self, seq: u64, rec: &Record) -> bool {
        let (Some(floor), Some(core)) = (self.floor, self.core.as_mut()) else {
            return false;
        };
        if seq <= floor {
            return false;
        }
        core.replay_record(seq, rec);
        let point = seq / self.every;
        if seq.is_multiple_of(self.every)
            && self.pending.is_none()
            && self.mark.is_none_or(|m| point > m)
        {
            self.mark = Some(point);
            let ts = rec.ts();
            let counters = core.report_counters();
            let blob = snapshot::encode_with(core.engine(), seq, ts, &counters, core.reports());
            self.pending = Some((seq, blob));
        }
        self.pending.is_some()
    }

    /// The pending snapshot `(seq, blob)` once the durable commit (`committed`) has
    /// reached it.
    pub fn take_due(&mut self, committed: u64) -> Option<(u64, Vec<u8>)> {
        match &self.pending {
            Some((seq, _)) if committed >= *seq => self.pending.take(),
            _ => None,
        }
    }

    /// The sequence number of the snapshot waiting for its commit, if any.
    pub fn pending_seq(&self) -> Option<u64> {
        self.pending.as_ref().map(|(seq, _)| *seq)
    }

    /// The replica's core (tests compare its state with the live one).
    pub fn core(&self) -> Option<&Core<NoLog>> {
        self.core.as_ref()
    }
}
