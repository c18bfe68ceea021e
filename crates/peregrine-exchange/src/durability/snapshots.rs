//! Periodic snapshots of the engine, written off the matching thread: the
//! [`SnapshotSink`] the server attaches to the core.
//!
//! Two ways to produce them:
//!
//! * **Replica** ([`Snapshotter::spawn_replica`], what the server uses). A snapshot
//!   thread keeps its own copy of the state ([`Replica`], the core crate's state
//!   machine: a second core with no log, no feed and no sessions), seeded once from an
//!   encoded snapshot of the live core when the snapshotter is attached, then fed
//!   every journaled record (`(seq, Record)`, a ~100-byte copy into an SPSC ring) and
//!   replaying it exactly as recovery would.
//!   Every `every` commands *the replica* encodes its state, so the matching thread
//!   never pays the O(resting orders) encode (33 ms for 1M orders here). The replica
//!   writes a snapshot only once the live core has published a durable commit at or
//!   past its sequence number (`committed`, one release store per batch), so a
//!   snapshot never runs ahead of the journal. If the ring is ever full (the replica
//!   starved of CPU for a long while), the matching thread stops feeding it, and
//!   after the batch's commit encodes the live state once and sends it as a fresh
//!   seed; the replica restores it and skips ring records it already covers.
//! * **Inline** ([`Snapshotter::spawn`], kept as the simple baseline and for tests).
//!   Every `every` commands the matching thread encodes the state and, after the
//!   batch's journal commit, hands the blob to a writer thread with `try_send` on a
//!   one-slot channel (if the previous one is still being written, this one is
//!   dropped and logged).
//!
//! Either way the file write, `fsync`, rename, retention and optional journal pruning
//! happen in `SnapshotStore` on the background thread.
//!
//! * **Stepped replica** ([`Snapshotter::stepped_replica`]): the replica mode with no
//!   thread, for a deterministic simulator: the same [`Replica`] is fed each record
//!   as it is journaled and writes its snapshots when the commit covers them, on the
//!   caller's thread.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use peregrine_exchange_core::balances::VenueEngine as MatchingEngine;
use peregrine_exchange_core::codec::command::Record;
use peregrine_exchange_core::codec::snapshot as snapshot_codec;
use peregrine_exchange_core::replica::Replica;
use peregrine_exchange_core::reports::Counters;
use peregrine_exchange_core::{Core, NoLog, SnapshotSink};
use peregrine_journal::SnapshotStore;
use peregrine_queue::spsc::{ring, Consumer, Producer};
use peregrine_types::Timestamp;

/// Records the replica ring holds (a power of two).
pub(crate) const REPLICA_RING: usize = 1 << 16;

/// Builds a blank replica core (same instruments, capacity and balances as the live
/// one), once per seed; `None` if it cannot (the replica then stops, and says so).
pub type ReplicaFactory = Box<dyn Fn() -> Option<Core<NoLog>> + Send>;

/// The matching thread's side of the snapshot machinery.
#[derive(Debug)]
pub struct Snapshotter {
    every: u64,
    inline: Option<Inline>,
    replica: Option<ReplicaLink>,
    stepped: Option<Stepped>,
}

/// The replica and its store on the caller's thread.
struct Stepped {
    replica: Replica,
    store: SnapshotStore,
    make: ReplicaFactory,
    /// Records waiting while a snapshot waits for its commit (the thread's ring).
    backlog: VecDeque<(u64, Record)>,
    committed: u64,
}

impl std::fmt::Debug for Stepped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stepped")
            .field("backlog", &self.backlog.len())
            .field("committed", &self.committed)
            .finish_non_exhaustive()
    }
}

impl Stepped {
    /// What the replica thread's loop does with the records it has, and the
    /// snapshot the commit made due.
    fn run(&mut self) {
        loop {
            if let Some((seq, blob)) = self.replica.take_due(self.committed) {
                write(&mut self.store, seq, blob);
            }
            if self.replica.pending_seq().is_some() {
                return;
            }
            let Some((seq, rec)) = self.backlog.pop_front() else {
                return;
            };
            self.replica.apply(seq, &rec);
        }
    }
}

#[derive(Debug)]
struct Inline {
    pending: Option<(u64, Vec<u8>)>,
    tx: Option<SyncSender<(u64, Vec<u8>)>>,
    writer: Option<JoinHandle<()>>,
}

#[derive(Debug)]
struct ReplicaLink {
    ring: Producer<(u64, Record)>,
    seeds: SyncSender<(u64, Vec<u8>)>,
    /// A seed was sent and the replica has not taken it yet.
    seed_in_flight: Arc<AtomicBool>,
    committed: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    /// Last sequence number appended (journaled), and its command time.
    last_seq: u64,
    last_ts: Timestamp,
    /// The ring refused a record: feed nothing until a fresh seed is sent.
    desynced: bool,
}

impl Snapshotter {
    /// Inline snapshots: the matching thread encodes, a writer thread writes `store`.
    pub fn spawn(mut store: SnapshotStore, every: u64) -> std::io::Result<Self> {
        let (tx, rx) = sync_channel::<(u64, Vec<u8>)>(1);
        let writer = std::thread::Builder::new()
            .name("snapshots".into())
            .spawn(move || {
                while let Ok((seq, blob)) = rx.recv() {
                    write(&mut store, seq, blob);
                }
            })?;
        Ok(Snapshotter {
            every: every.max(1),
            inline: Some(Inline {
                pending: None,
                tx: Some(tx),
                writer: Some(writer),
            }),
            replica: None,
            stepped: None,
        })
    }

    /// Replica snapshots with no thread (a deterministic simulator's): the replica
    /// runs on the caller's thread as records are journaled and commits reported.
    pub fn stepped_replica(store: SnapshotStore, every: u64, make: ReplicaFactory) -> Self {
        let every = every.max(1);
        Snapshotter {
            every,
            inline: None,
            replica: None,
            stepped: Some(Stepped {
                replica: Replica::new(every),
                store,
                make,
                backlog: VecDeque::new(),
                committed: 0,
            }),
        }
    }

    /// Replica snapshots: a thread that replays every record into the core `make`
    /// builds and snapshots it every `every` commands into `store`. Not fed until
    /// `Core::with_snapshots` seeds it with the live state.
    pub fn spawn_replica(
        store: SnapshotStore,
        every: u64,
        make: ReplicaFactory,
    ) -> std::io::Result<Self> {
        Self::spawn_replica_with_ring(store, every, make, REPLICA_RING)
    }

    /// [`Snapshotter::spawn_replica`] with a ring of `ring_capacity` records (a power
    /// of two; tests use a tiny one to exercise the re-seed path).
    pub fn spawn_replica_with_ring(
        store: SnapshotStore,
        every: u64,
        make: ReplicaFactory,
        ring_capacity: usize,
    ) -> std::io::Result<Self> {
        let every = every.max(1);
        let (producer, consumer) = ring::<(u64, Record)>(ring_capacity);
        let (seeds, seed_rx) = sync_channel::<(u64, Vec<u8>)>(1);
        let committed = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let seed_in_flight = Arc::new(AtomicBool::new(false));
        let replica = ReplicaThread {
            store,
            every,
            records: consumer,
            seeds: seed_rx,
            seed_in_flight: Arc::clone(&seed_in_flight),
            committed: Arc::clone(&committed),
            stop: Arc::clone(&stop),
        };
        let thread = std::thread::Builder::new()
            .name("snapshots".into())
            .spawn(move || replica.run(make))?;
        Ok(Snapshotter {
            every,
            inline: None,
            stepped: None,
            replica: Some(ReplicaLink {
                ring: producer,
                seeds,
                seed_in_flight,
                committed,
                stop,
                thread: Some(thread),
                last_seq: 0,
                last_ts: Timestamp(0),
                desynced: true,
            }),
        })
    }

    /// Seeds the replica with the live state after command `seq` (called once by
    /// `Core::with_snapshots`, off the order path). Inline snapshotters ignore it.
    fn seed_replica(
        &mut self,
        engine: &MatchingEngine,
        seq: u64,
        ts: Timestamp,
        reports: &Counters,
    ) {
        if let Some(st) = self.stepped.as_mut() {
            let blob = snapshot_codec::encode(engine, seq, ts, &reports.sorted());
            let seeded = (st.make)()
                .ok_or_else(|| "could not build the replica's engine".to_string())
                .and_then(|fresh| st.replica.seed(seq, blob, fresh));
            if let Err(e) = seeded {
                log::warn!("snapshot replica: seed at seq {seq} refused ({e}); snapshots are off");
                self.stepped = None;
            }
            return;
        }
        let Some(r) = self.replica.as_mut() else {
            return;
        };
        let blob = snapshot_codec::encode(engine, seq, ts, &reports.sorted());
        r.seed_in_flight.store(true, Ordering::Release);
        if r.seeds.send((seq, blob)).is_ok() {
            r.desynced = false;
            r.last_seq = seq;
            r.last_ts = ts;
        }
    }

    /// After journaled record `seq` ran on the live engine.
    #[inline]
    fn record(
        &mut self,
        seq: u64,
        rec: Record,
        engine: &MatchingEngine,
        ts: Timestamp,
        reports: &Counters,
    ) {
        if let Some(st) = self.stepped.as_mut() {
            st.backlog.push_back((seq, rec));
            st.run();
            return;
        }
        if let Some(r) = self.replica.as_mut() {
            r.last_seq = seq;
            r.last_ts = ts;
            if !r.desynced && r.ring.try_push((seq, rec)).is_err() {
                r.desynced = true;
                log::info!(
                    "snapshot replica fell behind at seq {seq}: re-seeding after this batch"
                );
            }
            return;
        }
        if let Some(i) = self.inline.as_mut() {
            if seq.is_multiple_of(self.every) {
                i.pending = Some((
                    seq,
                    snapshot_codec::encode(engine, seq, ts, &reports.sorted()),
                ));
            }
        }
    }

    /// After a batch's journal commit: everything through `durable` is durable.
    #[inline]
    fn committed(&mut self, engine: &MatchingEngine, durable: u64, reports: &Counters) {
        if let Some(st) = self.stepped.as_mut() {
            st.committed = st.committed.max(durable);
            st.run();
            return;
        }
        if let Some(r) = self.replica.as_mut() {
            // Release: the replica reads it to decide a snapshot may be written.
            r.committed
                .store(durable.min(r.last_seq), Ordering::Release);
            // Acquire: pairs with the replica's store once it took the last seed, so
            // the one-slot channel is free and the encode is never wasted.
            if r.desynced && !r.seed_in_flight.load(Ordering::Acquire) {
                let seq = r.last_seq;
                let blob = snapshot_codec::encode(engine, seq, r.last_ts, &reports.sorted());
                r.seed_in_flight.store(true, Ordering::Release);
                match r.seeds.try_send((seq, blob)) {
                    Ok(()) => r.desynced = false,
                    Err(_) => {
                        r.seed_in_flight.store(false, Ordering::Release);
                        log::info!("snapshot replica: re-seed at seq {seq} failed (thread gone)");
                    }
                }
            }
            return;
        }
        let Some(i) = self.inline.as_mut() else {
            return;
        };
        let due = i.pending.take_if(|(seq, _)| *seq <= durable);
        let (Some(p), Some(tx)) = (due, i.tx.as_ref()) else {
            return;
        };
        match tx.try_send(p) {
            Ok(()) => {}
            Err(TrySendError::Full((seq, _))) => {
                log::info!(
                    "snapshot through seq {seq} skipped: the previous one is still being written"
                );
            }
            Err(TrySendError::Disconnected((seq, _))) => {
                log::info!("snapshot through seq {seq} skipped: the writer thread is gone");
            }
        }
    }

    /// Snapshot interval in commands.
    pub fn every(&self) -> u64 {
        self.every
    }
}

impl SnapshotSink for Snapshotter {
    fn seed(&mut self, engine: &MatchingEngine, seq: u64, ts: Timestamp, reports: &Counters) {
        self.seed_replica(engine, seq, ts, reports);
    }
    #[inline]
    fn after_command(
        &mut self,
        seq: u64,
        rec: Record,
        engine: &MatchingEngine,
        ts: Timestamp,
        reports: &Counters,
    ) {
        self.record(seq, rec, engine, ts, reports);
    }
    #[inline]
    fn after_commit(&mut self, engine: &MatchingEngine, durable: u64, reports: &Counters) {
        self.committed(engine, durable, reports);
    }
}

impl Drop for Snapshotter {
    /// Lets the background thread finish what it was given (the replica: every record
    /// fed and the snapshots they make due, as far as they are committed), then joins.
    fn drop(&mut self) {
        if let Some(i) = self.inline.as_mut() {
            i.tx = None;
            if let Some(w) = i.writer.take() {
                let _ = w.join();
            }
        }
        if let Some(r) = self.replica.as_mut() {
            r.stop.store(true, Ordering::Release);
            if let Some(t) = r.thread.take() {
                t.thread().unpark();
                let _ = t.join();
            }
        }
    }
}

/// The snapshot thread's state in replica mode: the channels around the core
/// crate's [`Replica`].
struct ReplicaThread {
    store: SnapshotStore,
    every: u64,
    records: Consumer<(u64, Record)>,
    seeds: Receiver<(u64, Vec<u8>)>,
    seed_in_flight: Arc<AtomicBool>,
    committed: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
}

impl ReplicaThread {
    fn run(mut self, make: ReplicaFactory) {
        let mut replica = Replica::new(self.every);
        loop {
            // Acquire: pairs with the stop store in `Snapshotter::drop`.
            let stopping = self.stop.load(Ordering::Acquire);
            while let Ok((seq, blob)) = self.seeds.try_recv() {
                // Release: the matching thread may send the next seed.
                self.seed_in_flight.store(false, Ordering::Release);
                let seeded = make()
                    .ok_or_else(|| "could not build the replica's engine".to_string())
                    .and_then(|fresh| replica.seed(seq, blob, fresh));
                if let Err(e) = seeded {
                    log::warn!(
                        "snapshot replica: seed at seq {seq} refused ({e}); snapshots are off"
                    );
                    return;
                }
            }
            let mut worked = false;
            if replica.seeded() {
                while let Some((seq, rec)) = self.records.try_pop() {
                    worked = true;
                    if replica.apply(seq, &rec) {
                        break;
                    }
                }
            }
            // Acquire: pairs with the release store after each journal commit.
            if let Some((seq, blob)) = replica.take_due(self.committed.load(Ordering::Acquire)) {
                write(&mut self.store, seq, blob);
                worked = true;
            }
            if stopping && !worked {
                if let Some(seq) = replica.pending_seq() {
                    log::warn!("snapshot through seq {seq} not written: its commit never came");
                }
                return;
            }
            if !worked {
                std::thread::park_timeout(Duration::from_millis(1));
            }
        }
    }
}

fn write(store: &mut SnapshotStore, seq: u64, blob: Vec<u8>) {
    let bytes = blob.len();
    match store.write(seq, blob) {
        Ok(w) => {
            log::info!(
                "snapshot through seq {seq} written ({bytes} bytes): {}",
                w.path.display()
            );
            if !w.removed_segments.is_empty() {
                log::info!(
                    "journal: pruned {} segment(s) covered by the oldest retained snapshot",
                    w.removed_segments.len()
                );
            }
        }
        Err(e) => log::info!("snapshot through seq {seq} failed: {e}"),
    }
}
