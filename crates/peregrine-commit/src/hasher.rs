//! Commitments off the matching thread.
//!
//! The matching thread owns a [`Committer`]: it tracks the open window
//! ([`WindowState`]), copies each `Fill` into a preallocated chunk of
//! [`TradeRecord`]s, records each window close (index, timestamp, command count) in
//! the chunk at its position among the trades, and once per loop iteration
//! ([`Committer::flush`]) hands the chunk over an SPSC ring (`peregrine-queue`) to the
//! **hasher thread** — if an empty chunk is at hand; if not, the chunk keeps filling,
//! so the matching thread never waits for a flush. The hasher computes [`commit_tick`] (state hash + Merkle root),
//! appends the commitment to the [`CommitLog`], returns the emptied chunk on a second
//! ring, and hands the commitment back on a third; the matching thread publishes it
//! on the feed ([`Committer::drain`]). The matching thread does no hashing.
//!
//! **Bounds.** A fixed pool of [`POOL`] chunks of `chunk_trades` trades each is
//! allocated at start and recycled, so the matching thread allocates nothing once
//! running. A chunk holds `chunk_trades` trades and [`CLOSES_PER_CHUNK`] closes; a
//! full chunk is sent at once and a window may span several chunks (the hasher
//! accumulates them), so a commitment always covers every trade of its window. If a
//! chunk is full and every other one is in flight, the matching thread waits for the
//! hasher (yielding) — back-pressure, never a dropped trade. If the hasher thread has died, chunks are allocated instead and a
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

use crate::tick::{commit_tick, Commitment};
use crate::trade::TradeRecord;
use peregrine_book::Event;
use peregrine_queue::spsc::{ring, Consumer, Producer};

use crate::commit_log::{CommitLog, LoggedCommitment};
use crate::sink::CommitSink;
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

/// Closes one chunk can carry.
pub const CLOSES_PER_CHUNK: usize = 4096;

/// A run of trades and the window closes among them: `closes[i].1` is the number of
/// the chunk's trades that belong to windows up to and including `closes[i].0`; the
/// trades after the last close belong to the window still open.
#[derive(Debug)]
pub(crate) struct Chunk {
    trades: Vec<TradeRecord>,
    closes: Vec<(Close, usize)>,
}

impl Chunk {
    fn is_empty(&self) -> bool {
        self.trades.is_empty() && self.closes.is_empty()
    }
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
                log::warn!(
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
            self.send();
        }
        if let Some(c) = self.chunk.as_mut() {
            c.trades.push(t);
        }
    }

    fn close(&mut self, closed: Closed) {
        let commit = self.logged_through.is_none_or(|done| closed.index > done);
        let full = self
            .chunk
            .as_ref()
            .is_some_and(|c| c.closes.len() >= CLOSES_PER_CHUNK);
        if full {
            self.send();
        }
        if let Some(c) = self.chunk.as_mut() {
            let n = c.trades.len();
            c.closes.push((Close { closed, commit }, n));
        }
    }

    /// Hands what the current chunk holds to the hasher if an empty chunk is at hand
    /// (never waits: otherwise the chunk keeps filling). Called once per loop
    /// iteration (the exchange core's `publish`) and when idle.
    pub fn flush(&mut self) {
        if self.chunk.as_ref().is_none_or(|c| c.is_empty()) {
            return;
        }
        if let Some(empty) = self.empties.try_pop() {
            self.hand_over(empty);
        }
    }

    /// Sends the current (full) chunk, waiting for an empty one if need be.
    fn send(&mut self) {
        let empty = self.take_empty();
        self.hand_over(empty);
    }

    fn hand_over(&mut self, empty: Box<Chunk>) {
        if let Some(chunk) = self.chunk.replace(empty) {
            if self.to_hasher.try_push(chunk).is_err() {
                log::warn!("commitments: hasher ring full, a chunk was dropped");
            }
            self.wake();
        }
    }

    fn take_empty(&mut self) -> Box<Chunk> {
        loop {
            if let Some(c) = self.empties.try_pop() {
                return c;
            }
            if self.hasher.as_ref().is_none_or(|h| h.is_finished()) {
                log::warn!("commitments: the hasher thread is gone; allocating a chunk");
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
        // Hand over what the current chunk holds: at most POOL chunks exist and the
        // ring has 2 * POOL slots, so this push cannot fail.
        if let Some(chunk) = self.chunk.take() {
            if !chunk.is_empty() {
                let _ = self.to_hasher.try_push(chunk);
            }
        }
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
        closes: Vec::with_capacity(CLOSES_PER_CHUNK),
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
            let mut start = 0;
            for &(close, end) in &chunk.closes {
                self.trades.extend_from_slice(&chunk.trades[start..end]);
                start = end;
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
            self.trades.extend_from_slice(&chunk.trades[start..]);
            chunk.trades.clear();
            chunk.closes.clear();
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
                log::warn!(
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

impl CommitSink for Committer {
    fn window_ns(&self) -> u64 {
        Committer::window_ns(self)
    }
    fn logged_through(&self) -> Option<u64> {
        Committer::logged_through(self)
    }
    #[inline]
    fn command(&mut self, ts: u64, events: &[Event]) {
        Committer::command(self, ts, events);
    }
    fn close_now(&mut self) {
        Committer::close_now(self);
    }
    fn close_if_past(&mut self, now: u64) {
        Committer::close_if_past(self, now);
    }
    fn flush(&mut self) {
        Committer::flush(self);
    }
    fn drain(&mut self, f: &mut dyn FnMut(Commitment)) -> usize {
        Committer::drain(self, f)
    }
}
