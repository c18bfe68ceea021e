//! Queue counters: pushes, pops and Full (back-pressure) returns.
//!
//! Where they live, so that counting adds no contended atomic to the order path:
//!
//! * A count only the orchestrator writes and reads (submit pops, return pushes and
//!   Fulls, completion pops) is a plain `u64` field of the orchestrator; its snapshot
//!   renders it.
//! * A count one thread writes and another reads ([`QueueCounters`]: the gateway's
//!   inbox pops and completion pushes, the orchestrator's inbox pushes) has exactly one
//!   writer, so an increment is a Relaxed load and store, not a locked
//!   read-modify-write; and each counter sits on its own cache line, so the writer
//!   never shares a line with the other thread's counters. The reader (the snapshot,
//!   every `stats_interval_ms`) pulls the line over once per snapshot. Values may be a
//!   little stale, which is all a counter promises.
//! * A strategy process's side of its shared-memory rings is counted by the ring
//!   itself: the header's free-running `tail` and `head` are the push and pop counts
//!   and its `full` counts refused pushes (`peregrine_queue::shm::RingCounts`).

use std::sync::atomic::{AtomicU64, Ordering};

use crossbeam_utils::CachePadded;

/// Counters of one queue (or one side of one), each on its own cache line.
#[derive(Debug, Default)]
pub struct QueueCounters {
    /// Successful pushes.
    pub pushes: CachePadded<AtomicU64>,
    /// Successful pops.
    pub pops: CachePadded<AtomicU64>,
    /// Pushes refused because the queue was full.
    pub full: CachePadded<AtomicU64>,
}

/// Adds one to a counter that only the calling thread writes.
#[inline]
pub fn bump(c: &AtomicU64) {
    // Relaxed: single writer (see module docs); no other data is published through it.
    c.store(c.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
}

pub use peregrine_orchestrator::summary::QueueRow;

/// A consistent-enough copy of a [`QueueCounters`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CounterValues {
    /// Pushes.
    pub pushes: u64,
    /// Pops.
    pub pops: u64,
    /// Full returns.
    pub full: u64,
}

impl QueueCounters {
    /// Reads all three (Relaxed: statistics only).
    pub fn values(&self) -> CounterValues {
        CounterValues {
            pushes: self.pushes.load(Ordering::Relaxed),
            pops: self.pops.load(Ordering::Relaxed),
            full: self.full.load(Ordering::Relaxed),
        }
    }
}
