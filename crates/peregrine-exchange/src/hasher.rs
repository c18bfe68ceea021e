//! Commitments off the matching thread.
//!
//! The matching thread owns a [`Committer`]: it tracks the open window
//! ([`WindowState`]), copies each `Fill` into a preallocated chunk of
//! [`TradeRecord`]s, and when a window closes hands the chunk, with the window's
//! index, timestamp and command count, over an SPSC ring (`peregrine-queue`) to the
//! **hasher thread**. The hasher computes [`commit_tick`] (state hash + Merkle root),
//! appends the commitment to the [`CommitLog`], returns the emptied chunk on a second
//! ring, and hands the commitment back on a third; the matching thread publishes it
//! on the feed ([`Committer::drain`]). The matching thread does no hashing.
//!
//! **Bounds.** A fixed pool of [`POOL`] chunks of `chunk_trades` trades each is
//! allocated at start and recycled, so the matching thread allocates nothing once
//! running. A window with more trades than one chunk holds is sent in several
//! chunks (only the last one carries the close); the hasher accumulates them, so a
//! commitment always covers every trade of its window. If every chunk is in flight
//! the matching thread waits for the hasher (yielding) — back-pressure, never a
//! dropped trade. If the hasher thread has died, chunks are allocated instead and a
//! warning is logged. The commitment ring back to the matching thread is bounded
//! ([`DONE_CAPACITY`]); when it is full the hasher drops the *feed copy* (the
//! commitment is still logged) and counts it.
//!
//! The hasher parks (`park_timeout` 10 ms) when its ring is empty; the matching
//! thread unparks it after each hand-off.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use peregrine_book::Event;
use peregrine_commit::{commit_tick, Commitment, TradeRecord};
use peregrine_queue::spsc::{ring, Consumer, Producer};

use crate::commit_log::{CommitLog, LoggedCommitment};
use crate::window::{trades_of, Closed, WindowState};

/// Chunks in the pool.
pub const POOL: usize = 4;
/// Capacity of the ring of finished commitments.
pub const DONE_CAPACITY: usize = 1024;

/// A window's close, sent with its last chunk.
#[derive(Debug, Clone, Copy)]
struct Close {
    closed: Closed,
    /// False for windows the log already holds (seen again while recovering): the
    /// hasher discards their trades.
    commit: bool,
}

/// Trades of one window (possibly a part of it), and its close.
#[derive(Debug)]
pub struct Chunk {
    trades: Vec<TradeRecord>,
    close: Option<Close>,
}

/// The matching thread's side.
#[derive(Debug)]
pub struct Committer {
    state: WindowState,
    chunk: Option<Box<Chunk>>,
    chunk_trades: usize,
    to_hasher: Producer<Box<Chunk>>,
    empties: Consumer<Box<Chunk>>,
    done: Consumer<Commitment>,
    logged_through: Option<u64>,
    hasher: Option<JoinHandle<()>>,
    stop: Arc<AtomicBool>,
    dropped_feed: Arc<AtomicU64>,
}

impl Committer {
    /// Starts the hasher thread over an open commitment log (`log`, whose last
    /// commitment is `last`; `None` to compute without logging, for tests and
    /// benches).
    pub fn spawn(
        window_ns: u64,
        chunk_trades: usize,
        log: Option<CommitLog>,
        last: Option<LoggedCommitment>,
    ) -> std::io::Result<Committer> {
        let chunk_trades = chunk_trades.max(1);
        let (to_hasher, from_matching) = ring::<Box<Chunk>>(2 * POOL);
        let (mut empties_tx, empties) = ring::<Box<Chunk>>(2 * POOL);
        let (done_tx, done) = ring::<Commitment>(DONE_CAPACITY);
        for _ in 0..POOL - 1 {
            let _ = empties_tx.try_push(new_chunk(chunk_trades));
        }
        if let Some(l) = last {
            if l.window_ns != window_ns {
                crate::log!(
                    "commitments: the log's last window is {} ns long, now {} ns (mode or interval changed)",
                    l.window_ns,
                    window_ns
                );
            }
        }
        let stop = Arc::new(AtomicBool::new(false));
        let dropped_feed = Arc::new(AtomicU64::new(0));
        let hasher = Hasher {
            from_matching,
            empties: empties_tx,
            done: done_tx,
            log,
            window_ns,
            trades: Vec::with_capacity(chunk_trades),
            stop: Arc::clone(&stop),
            dropped_feed: Arc::clone(&dropped_feed),
        };
        let handle = std::thread::Builder::new()
            .name("hasher".into())
            .spawn(move || hasher.run())?;
        Ok(Committer {
            state: WindowState::new(window_ns),
            chunk: Some(new_chunk(chunk_trades)),
            chunk_trades,
            to_hasher,
            empties,
            done,
            logged_through: last.map(|l| l.commitment.tick_seq),
            hasher: Some(handle),
            stop,
            dropped_feed,
        })
    }

    /// The window length.
    pub fn window_ns(&self) -> u64 {
        self.state.window_ns()
    }

    /// The last window index the log held at start.
    pub fn logged_through(&self) -> Option<u64> {
        self.logged_through
    }

    /// A command with timestamp `ts` was executed with `events`.
    #[inline]
    pub fn command(&mut self, ts: u64, events: &[Event]) {
        if let Some(c) = self.state.command(ts) {
            self.close(c);
        }
        let collect = match (self.state.open_index(), self.logged_through) {
            (Some(k), Some(done)) => k > done,
            _ => true,
        };
        if collect {
            trades_of(events, ts, |t| self.push(t));
        }
    }

    /// Closes the open window now (batch mode, after a tick).
    pub fn close_now(&mut self) {
        if let Some(c) = self.state.close() {
            self.close(c);
        }
    }

    /// Closes the open window if the clock `now` has passed its end (continuous
    /// mode, when idle).
    pub fn close_if_past(&mut self, now: u64) {
        if let Some(c) = self.state.close_if_past(now) {
            self.close(c);
        }
    }

    /// Hands every finished commitment to `f` (for the feed).
    pub fn drain(&mut self, mut f: impl FnMut(Commitment)) -> usize {
        let mut n = 0;
        while let Some(c) = self.done.try_pop() {
            f(c);
            n += 1;
        }
        n
    }

    /// Feed copies dropped because the matching thread did not drain in time.
    pub fn dropped_feed(&self) -> u64 {
        // Relaxed: a statistic.
        self.dropped_feed.load(Ordering::Relaxed)
    }

    #[inline]
    fn push(&mut self, t: TradeRecord) {
        let full = self
            .chunk
            .as_ref()
            .is_some_and(|c| c.trades.len() >= self.chunk_trades);
        if full {
            self.send(None);
        }
        if let Some(c) = self.chunk.as_mut() {
            c.trades.push(t);
        }
    }

    fn close(&mut self, closed: Closed) {
        let commit = self.logged_through.is_none_or(|done| closed.index > done);
        self.send(Some(Close { closed, commit }));
    }

    /// Sends the current chunk and takes an empty one from the pool.
    fn send(&mut self, close: Option<Close>) {
        if let Some(mut chunk) = self.chunk.take() {
            chunk.close = close;
            if self.to_hasher.try_push(chunk).is_err() {
                crate::log!("commitments: hasher ring full, a chunk was dropped");
            }
            self.wake();
        }
        self.chunk = Some(self.take_empty());
    }

    fn take_empty(&mut self) -> Box<Chunk> {
        loop {
            if let Some(c) = self.empties.try_pop() {
                return c;
            }
            if self.hasher.as_ref().is_none_or(|h| h.is_finished()) {
                crate::log!("commitments: the hasher thread is gone; allocating a chunk");
                return new_chunk(self.chunk_trades);
            }
            self.wake();
            std::thread::yield_now();
        }
    }

    fn wake(&self) {
        if let Some(h) = &self.hasher {
            h.thread().unpark();
        }
    }
}

impl Drop for Committer {
    fn drop(&mut self) {
        // Release: pairs with the Acquire load in `Hasher::run`; everything pushed
        // before is visible when it sees the flag.
        self.stop.store(true, Ordering::Release);
        if let Some(h) = self.hasher.take() {
            h.thread().unpark();
            let _ = h.join();
        }
    }
}

fn new_chunk(capacity: usize) -> Box<Chunk> {
    Box::new(Chunk {
        trades: Vec::with_capacity(capacity),
        close: None,
    })
}

/// The hasher thread's state.
struct Hasher {
    from_matching: Consumer<Box<Chunk>>,
    empties: Producer<Box<Chunk>>,
    done: Producer<Commitment>,
    log: Option<CommitLog>,
    window_ns: u64,
    trades: Vec<TradeRecord>,
    stop: Arc<AtomicBool>,
    dropped_feed: Arc<AtomicU64>,
}

impl Hasher {
    fn run(mut self) {
        let (mut leaves, mut scratch) = (Vec::new(), Vec::new());
        loop {
            let Some(mut chunk) = self.from_matching.try_pop() else {
                // Acquire: pairs with the Release store in `Committer::drop`.
                if self.stop.load(Ordering::Acquire) && self.from_matching.is_empty() {
                    return;
                }
                std::thread::park_timeout(Duration::from_millis(10));
                continue;
            };
            self.trades.extend_from_slice(&chunk.trades);
            chunk.trades.clear();
            if let Some(close) = chunk.close.take() {
                if close.commit {
                    let c = commit_tick(
                        close.closed.index,
                        close.closed.timestamp,
                        close.closed.tx_count,
                        &self.trades,
                        &mut leaves,
                        &mut scratch,
                    );
                    self.record(c);
                }
                self.trades.clear();
            }
            // The pool has POOL chunks and the ring 2 * POOL slots: never full.
            let _ = self.empties.try_push(chunk);
        }
    }

    fn record(&mut self, c: Commitment) {
        if let Some(log) = self.log.as_mut() {
            let entry = LoggedCommitment {
                window_ns: self.window_ns,
                commitment: c,
            };
            if let Err(e) = log.append(&entry) {
                crate::log!(
                    "commitments: appending tick {} to the log failed ({e}); logging stops",
                    c.tick_seq
                );
                self.log = None;
            }
        }
        if self.done.try_push(c).is_err() {
            // Relaxed: a statistic.
            self.dropped_feed.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// Opens the commitment log of `section` (`<dir>/commitments`, the journal's fsync
/// policy) and starts the hasher for `config`'s window.
pub fn spawn_for(
    config: &crate::config::Config,
    section: &crate::journal_log::JournalSection,
) -> anyhow::Result<Committer> {
    use anyhow::Context;
    let dir = crate::commit_log::dir_of(&section.dir);
    let (log, last) = CommitLog::open(&dir, section.fsync)
        .with_context(|| format!("opening the commitment log in {}", dir.display()))?;
    crate::log!(
        "commitments: window {} ns ({:?} mode), log {}, last logged tick {:?}",
        config.commit_window_ns(),
        config.mode,
        dir.display(),
        last.map(|l| l.commitment.tick_seq)
    );
    Ok(Committer::spawn(
        config.commit_window_ns(),
        config.commitments.chunk_trades,
        Some(log),
        last,
    )?)
}
