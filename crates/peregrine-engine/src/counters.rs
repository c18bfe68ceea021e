//! Queue counters: pushes, pops and Full (back-pressure) returns.
//!
//! Every counter has exactly one writing thread (the producer writes `pushes` and
//! `full`, the consumer `pops`), so an increment is a Relaxed load and store, not a
//! locked read-modify-write; readers (the stats snapshot) may see a slightly stale
//! value, which is all a counter promises.

use std::sync::atomic::{AtomicU64, Ordering};

/// Counters of one queue (or one side of one).
#[derive(Debug, Default)]
pub struct QueueCounters {
    /// Successful pushes.
    pub pushes: AtomicU64,
    /// Successful pops.
    pub pops: AtomicU64,
    /// Pushes refused because the queue was full.
    pub full: AtomicU64,
}

/// Adds one to a counter that only the calling thread writes.
#[inline]
pub fn bump(c: &AtomicU64) {
    // Relaxed: single writer (see module docs); no other data is published through it.
    c.store(c.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
}

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
