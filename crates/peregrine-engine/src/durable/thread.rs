//! The journal thread: the only engine thread that writes the journal's files.
//!
//! The orchestrator thread hands records over through an in-process SPSC ring
//! ([`JournalLink::append`], no system call); this thread encodes them, writes each
//! batch with one `write(2)` (group commit: everything that arrived since the last
//! write), `fdatasync`s it with `fsync = true`, and then publishes how many records
//! are on file (`committed`, a Release store). A gateway hands a new order to its
//! venue only once `committed` covers the order's `Sent` record, so the write-ahead
//! rule holds while no order-path thread ever waits for the disk: when a write blocks
//! (measured: 0.1–0.4 s under a concurrent fsync load, seconds when the disk is
//! saturated; `docs/engine.md`, "The stall"), orders wait at their gateway, and the
//! orchestrator, the gateways' sockets and every heartbeat go on.
//!
//! A ring that is full (the disk stalled for longer than the ring holds records)
//! never loses a record: the orchestrator keeps the overflow in order and hands it
//! over first.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use peregrine_orchestrator::Rec;
use peregrine_queue::clock::now_ns;
use peregrine_queue::{spsc, Consumer, IdlePolicy, Producer};

use super::EngineJournal;

/// Records in the ring between the orchestrator and the journal thread.
const RING: usize = 16_384;

/// What the journal thread publishes.
#[derive(Debug, Default)]
pub struct JournalState {
    /// Records on file (written; synced too with `fsync`).
    pub committed: AtomicU64,
    /// The journal failed (the first error is in `error`).
    pub failed: AtomicBool,
    /// The first error.
    pub error: Mutex<Option<String>>,
    /// Writes (group commits) so far.
    pub commits: AtomicU64,
}

/// The orchestrator's end.
#[derive(Debug)]
pub struct JournalLink {
    tx: Producer<Rec>,
    /// Records that did not fit the ring yet, in order.
    overflow: VecDeque<Rec>,
    /// Records appended so far (the position a gateway command waits for).
    appended: u64,
    state: Arc<JournalState>,
}

impl JournalLink {
    /// Appends a record (in memory; the journal thread writes it).
    pub fn append(&mut self, rec: Rec) {
        self.appended += 1;
        if self.overflow.is_empty() {
            if let Err(e) = self.tx.try_push(rec) {
                self.overflow.push_back(e.into_inner());
            }
        } else {
            self.overflow.push_back(rec);
        }
    }

    /// Moves what it can of the overflow into the ring.
    pub fn flush(&mut self) {
        while let Some(rec) = self.overflow.pop_front() {
            if let Err(e) = self.tx.try_push(rec) {
                self.overflow.push_front(e.into_inner());
                break;
            }
        }
    }

    /// Hands every record still in memory to the journal thread, waiting for room
    /// (at shutdown: the orchestrator thread has stopped).
    pub fn finish(&mut self) {
        while !self.overflow.is_empty() && !self.failed() {
            self.flush();
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }

    /// Records appended so far.
    pub fn appended(&self) -> u64 {
        self.appended
    }

    /// Records waiting in memory for the ring (the disk is behind).
    pub fn backlog(&self) -> usize {
        self.overflow.len()
    }

    /// Whether the journal failed.
    pub fn failed(&self) -> bool {
        // Relaxed: a flag; the error text is read under its lock.
        self.state.failed.load(Ordering::Relaxed)
    }

    /// The first error, if any.
    pub fn error(&self) -> Option<String> {
        self.state.error.lock().ok().and_then(|g| g.clone())
    }

    /// What the journal thread publishes.
    pub fn state(&self) -> Arc<JournalState> {
        Arc::clone(&self.state)
    }
}

/// Starts the journal thread over `journal` (already opened and replayed); returns
/// the orchestrator's end and the thread. It stops once `stop` is set and every
/// record handed to it is written: set `stop` only after the orchestrator thread has
/// ended and handed over its last records ([`JournalLink::finish`]).
pub fn start(
    journal: EngineJournal,
    wait: IdlePolicy,
    stop: Arc<AtomicBool>,
) -> std::io::Result<(JournalLink, std::thread::JoinHandle<EngineJournal>)> {
    let (tx, rx) = spsc::ring(RING);
    let state = Arc::new(JournalState::default());
    let theirs = Arc::clone(&state);
    let h = std::thread::Builder::new()
        .name("journal".into())
        .spawn(move || write_loop(journal, rx, &theirs, wait, &stop))?;
    let link = JournalLink {
        tx,
        overflow: VecDeque::new(),
        appended: 0,
        state,
    };
    Ok((link, h))
}

fn write_loop(
    mut journal: EngineJournal,
    mut rx: Consumer<Rec>,
    state: &JournalState,
    wait: IdlePolicy,
    stop: &AtomicBool,
) -> EngineJournal {
    let mut waiter = wait.idler();
    let mut count = 0u64;
    loop {
        let mut batch = 0u64;
        // Up to a ring's worth per write: a long backlog is written in large pieces.
        while batch < RING as u64 {
            let Some(rec) = rx.try_pop() else { break };
            if !state.failed.load(Ordering::Relaxed) && !journal.append(&rec, now_ns()) {
                fail(state, &journal);
            }
            batch += 1;
        }
        if batch > 0 {
            if !state.failed.load(Ordering::Relaxed) {
                if journal.commit() {
                    // Relaxed: a statistic.
                    state.commits.fetch_add(1, Ordering::Relaxed);
                } else {
                    fail(state, &journal);
                }
            }
            count += batch;
            if !state.failed.load(Ordering::Relaxed) {
                // Release: pairs with a gateway's Acquire load before it hands over
                // an order whose record is among these.
                state.committed.store(count, Ordering::Release);
            }
            waiter.reset();
            continue;
        }
        // Relaxed: a stop flag; the ring is empty here, and the orchestrator has
        // stopped handing records over before it is set.
        if stop.load(Ordering::Relaxed) {
            return journal;
        }
        waiter.idle();
    }
}

fn fail(state: &JournalState, journal: &EngineJournal) {
    if let Ok(mut g) = state.error.lock() {
        if g.is_none() {
            *g = journal.failed.clone();
        }
    }
    // Relaxed: a flag; its text is under the lock above.
    state.failed.store(true, Ordering::Relaxed);
}
