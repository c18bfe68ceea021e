//! The exchange as the cluster's [`StateMachine`]: a replica core that replays every
//! committed batch, on every node, the leader included.
//!
//! On a follower it *is* the exchange's state. On the leader it runs beside the
//! serving core (which executed the batches first) and does three things: as each
//! batch is committed it tells the serving core how far its own batches are
//! committed (`Shared::released`, the release watermark of the reports) and
//! notices a batch of another leader (then this node was deposed); and, applying
//! the batches at the node's pace, it gives snapshots and state hashes at the same
//! log indices as every other node, without touching the serving thread.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use peregrine_cluster::{SnapshotEncode, StateMachine};
use peregrine_exchange_core::codec::snapshot;
use peregrine_exchange_core::reports::{ReportStore, Retention};
use peregrine_exchange_core::{Clock, Core, NoLog, VenueSpec};
use peregrine_types::Timestamp;

use super::batch::{self, Stamp};
use super::Shared;

/// Commands a serving leader may acknowledge ahead of its own replica's apply. The
/// replica applies committed batches at the node's pace (in slices between network
/// reads); past this lag the release watermark waits for it, so the serving loop's
/// `[backpressure]` sees the backlog as work in flight and refuses new orders `busy`
/// instead of letting the apply backlog (memory, and the time a new leader needs to
/// catch up) grow without bound. ~0.2-0.7 s of apply at the rates measured.
pub(crate) const MAX_APPLY_LAG: u64 = 65_536;

/// The replicated exchange state (see the module documentation).
pub(crate) struct ExchangeSm {
    venue: VenueSpec,
    /// The clock of the cores built here (the serving core's too).
    clock: Clock,
    retention: Retention,
    core: Core<NoLog>,
    last_ts: Timestamp,
    /// The leadership this node serves as, once handed over.
    own: Option<Stamp>,
    /// Engine seq of the last batch of `own` known committed.
    committed_own: u64,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for ExchangeSm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExchangeSm")
            .field("seq", &self.core.engine_seq())
            .field("own", &self.own)
            .finish_non_exhaustive()
    }
}

impl ExchangeSm {
    /// An empty state (the cluster's start) that collects the report streams it
    /// replays (what a new leader's sessions replay to reconnecting clients).
    pub(crate) fn new(
        venue: &VenueSpec,
        retention: Retention,
        shared: Arc<Shared>,
    ) -> Result<Self, String> {
        Self::with_clock(venue, retention, shared, Clock::monotonic())
    }

    /// [`ExchangeSm::new`] whose cores read `clock` (a simulator's).
    pub(crate) fn with_clock(
        venue: &VenueSpec,
        retention: Retention,
        shared: Arc<Shared>,
        clock: Clock,
    ) -> Result<Self, String> {
        let core = fresh(venue, &clock, Some(retention), None)?;
        Ok(ExchangeSm {
            venue: venue.clone(),
            clock,
            retention,
            core,
            last_ts: Timestamp(0),
            own: None,
            committed_own: 0,
            shared,
        })
    }

    /// The engine sequence number of the last applied command.
    pub(crate) fn engine_seq(&self) -> u64 {
        self.core.engine_seq()
    }

    /// Hands the state over to serve as leader `stamp`: the replica itself (with the
    /// report streams it collected) goes to the serving thread, and a copy restored
    /// from its snapshot (report streams included) stays here to go on replaying, so
    /// the snapshots this node takes while it serves save the streams too.
    pub(crate) fn take_for_serving(&mut self, stamp: Stamp) -> Result<Core<NoLog>, String> {
        let snap = snapshot::decode(&self.encode()).map_err(|e| e.to_string())?;
        let copy = fresh(&self.venue, &self.clock, Some(self.retention), Some(&snap))?;
        let serving = std::mem::replace(&mut self.core, copy);
        self.own = Some(stamp);
        self.committed_own = serving.engine_seq();
        // Release: the serving thread reads the watermark with Acquire.
        self.shared
            .released
            .store(serving.engine_seq(), Ordering::Release);
        Ok(serving)
    }

    /// The state hash now (the admin endpoint's `current_state`).
    pub(crate) fn state_hash_now(&self) -> [u8; 32] {
        self.core.state_hash().0
    }

    /// The state and the report streams' retained reports (a node that installs it,
    /// or restarts from it, serves the same retention as a leader).
    fn encode(&self) -> Vec<u8> {
        self.capture().encode()
    }

    /// A copy of what [`ExchangeSm::encode`] encodes (the books' orders and venue
    /// state, the ledger, the report streams), to encode on another thread.
    fn capture(&self) -> snapshot::Capture {
        snapshot::capture(
            self.core.engine(),
            self.core.engine_seq(),
            self.last_ts,
            &self.core.report_counters(),
            self.core.reports(),
        )
    }

    /// Advances the serving loop's release watermark: what of this leadership is
    /// committed, at most [`MAX_APPLY_LAG`] commands ahead of the replica's apply.
    fn release(&self) {
        let to = self
            .committed_own
            .min(self.core.engine_seq().saturating_add(MAX_APPLY_LAG));
        // Release: the serving thread reads the watermark with Acquire. Only this
        // thread stores it while serving; it never goes back.
        if to > self.shared.released.load(Ordering::Relaxed) {
            self.shared.released.store(to, Ordering::Release);
            self.shared.signal();
        }
    }

    fn fail(&self, why: String) {
        log::error!("cluster: STATE MACHINE STOPPED: {why}");
        self.shared.fail(why);
    }
}

/// A blank core of `venue`, restored from `snap` if given (with its retained reports),
/// collecting reports from there on if `retention` is given.
fn fresh(
    venue: &VenueSpec,
    clock: &Clock,
    retention: Option<Retention>,
    snap: Option<&snapshot::EngineSnapshot>,
) -> Result<Core<NoLog>, String> {
    let mut core = venue
        .core(NoLog, clock.clone(), venue.arena_capacity)
        .map_err(|e| e.to_string())?;
    if let Some(r) = retention {
        core.collect_reports(ReportStore::new(r), 1);
    }
    if let Some(s) = snap {
        core.restore_snapshot(s)?;
    }
    Ok(core)
}

impl StateMachine for ExchangeSm {
    fn apply(&mut self, _index: u64, data: &[u8]) {
        if self.shared.failed() {
            return;
        }
        let (_, records) = match batch::decode(data) {
            Ok(b) => b,
            Err(e) => return self.fail(format!("a committed entry is not a batch: {e}")),
        };
        let Some(&(first, _)) = records.first() else {
            return;
        };
        let want = self.core.engine_seq().saturating_add(1);
        if first != want {
            return self.fail(format!(
                "committed batch starts at seq {first} where {want} was expected"
            ));
        }
        for (seq, rec) in &records {
            self.core.replay_record(*seq, rec);
            self.last_ts = rec.ts();
        }
        if self.own.is_some() && self.committed_own > self.shared.released.load(Ordering::Relaxed) {
            self.release();
        }
    }

    /// A serving leader releases a batch's results as soon as it is committed (the
    /// replica applies it later, at its own pace); a committed batch of another
    /// leadership means this node was deposed.
    fn committed(&mut self, _index: u64, data: &[u8]) {
        let Some(own) = self.own else {
            return;
        };
        match batch::peek(data) {
            Some((stamp, _, last)) if stamp == own => {
                self.committed_own = self.committed_own.max(last);
                self.release();
            }
            Some((stamp, _, _)) => {
                log::warn!(
                    "cluster: a batch of node {} term {} was committed while serving: deposed",
                    stamp.node,
                    stamp.term
                );
                self.shared.depose();
            }
            None => self.fail("a committed entry is not a batch".into()),
        }
    }

    fn snapshot(&mut self) -> Vec<u8> {
        self.encode()
    }

    /// The copy is taken on the node's thread, the encode runs on its snapshot
    /// thread.
    fn snapshot_copy(&mut self) -> SnapshotEncode {
        let copy = self.capture();
        Box::new(move || copy.encode())
    }

    fn restore(&mut self, state: &[u8]) -> Result<(), String> {
        let retention = Some(self.retention);
        if state.is_empty() {
            self.core = fresh(&self.venue, &self.clock, retention, None)?;
            self.last_ts = Timestamp(0);
            return Ok(());
        }
        let snap = snapshot::decode(state).map_err(|e| e.to_string())?;
        self.core = fresh(&self.venue, &self.clock, retention, Some(&snap))?;
        self.last_ts = snap.last_ts;
        if self.own.is_some() {
            // A serving leader never installs a snapshot: its state would jump under
            // the serving core.
            self.shared.depose();
        }
        Ok(())
    }

    fn state_hash(&mut self) -> [u8; 32] {
        self.core.state_hash().0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use peregrine_book::{Action, Command};
    use peregrine_exchange_core::codec::command::Record;

    /// A batch of `n` tick commands from seq `first`, by leader `stamp`.
    fn ticks(stamp: Stamp, first: u64, n: u64) -> Vec<u8> {
        let mut w = batch::BatchWriter::default();
        w.start(stamp);
        for s in first..first + n {
            let ts = Timestamp(1_000 + s);
            w.push(
                s,
                &Record::Command(Command {
                    ts,
                    action: Action::Tick,
                }),
            );
        }
        w.finish()
    }

    #[test]
    fn a_serving_leader_releases_no_further_than_its_replicas_apply_allows() {
        let config = crate::config::Config::default();
        let venue = config.venue().unwrap();
        let shared = Arc::new(Shared::new().unwrap());
        let retention = Retention {
            per_account: config.reports.retain_per_account,
        };
        let mut sm = ExchangeSm::new(&venue, retention, Arc::clone(&shared)).unwrap();
        let stamp = Stamp { node: 1, term: 2 };
        sm.take_for_serving(stamp).unwrap();
        let released = || shared.released.load(Ordering::Acquire);
        let n = MAX_APPLY_LAG + 1_000;
        let b = ticks(stamp, 1, n);
        // Committed, not yet applied: released only up to the lag.
        sm.committed(3, &b);
        assert_eq!(released(), MAX_APPLY_LAG);
        // Applied: the rest is released.
        sm.apply(3, &b);
        assert_eq!(sm.engine_seq(), n);
        assert_eq!(released(), n);
        // A small batch committed ahead of the apply is released at once.
        let small = ticks(stamp, n + 1, 10);
        sm.committed(4, &small);
        assert_eq!(released(), n + 10);
    }

    /// A batch of `n` limit orders from seq `first` (bids and asks apart, so all rest).
    fn orders(stamp: Stamp, first: u64, n: u64) -> Vec<u8> {
        use peregrine_book::NewOrder;
        use peregrine_types::{
            AccountId, ClientOrderId, InstrumentId, OrderId, OrderType, Price, Qty, Side, StpMode,
            TimeInForce,
        };
        let mut w = batch::BatchWriter::default();
        w.start(stamp);
        for s in first..first + n {
            let buy = s % 2 == 0;
            let order = NewOrder {
                instrument: InstrumentId(1),
                id: OrderId(0),
                client_id: ClientOrderId(s),
                account: AccountId(1 + (s % 4) as u32),
                side: if buy { Side::Buy } else { Side::Sell },
                order_type: OrderType::Limit,
                tif: TimeInForce::Gtc,
                stp: StpMode::None,
                price: Price::from_raw(if buy { 9_000 } else { 11_000 }),
                qty: Qty::from_raw(1),
                expire_at: Timestamp(0),
            };
            let ts = Timestamp(1_000 + s);
            w.push(
                s,
                &Record::Command(Command {
                    ts,
                    action: Action::New(order),
                }),
            );
        }
        w.finish()
    }

    /// The snapshot copy is the state when it was taken: encoded after more batches
    /// were applied, it gives the bytes `snapshot` gave then (what the node's
    /// snapshot thread encodes, with the index and hash taken with the copy).
    #[test]
    fn a_snapshot_copy_encodes_the_state_it_was_taken_at() {
        let config = crate::config::Config::default();
        let venue = config.venue().unwrap();
        let shared = Arc::new(Shared::new().unwrap());
        let retention = Retention {
            per_account: config.reports.retain_per_account,
        };
        let mut sm = ExchangeSm::new(&venue, retention, shared).unwrap();
        let stamp = Stamp { node: 1, term: 1 };
        sm.apply(1, &orders(stamp, 1, 200));
        let resting: usize = sm.core.engine().books().map(|b| b.len()).sum();
        assert!(resting > 0, "the orders rest");
        let then = sm.snapshot();
        let hash_then = sm.state_hash();
        let copy = sm.snapshot_copy();
        sm.apply(2, &orders(stamp, 201, 100));
        sm.apply(3, &ticks(stamp, 301, 10));
        let now = sm.snapshot();
        assert_ne!(now, then, "the state moved on");
        let bytes = std::thread::spawn(copy).join().unwrap();
        assert!(
            bytes == then,
            "the copy encodes to the state it was taken at"
        );
        // And restores to that state's hash.
        sm.restore(&bytes).unwrap();
        assert_eq!(sm.state_hash(), hash_then);
    }
}
