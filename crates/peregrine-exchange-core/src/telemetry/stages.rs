//! Where an order's time goes on the server: a [`Stopwatch`] (monotonic
//! nanoseconds since it was made, one `clock_gettime` per read) and the [`Stamps`]
//! the core takes while it executes a request. The server adds the read, decode,
//! commit, durable and write instants around them and records each stage.

use std::time::Instant;

/// Monotonic nanoseconds since creation; `Copy`, so every stage of one thread (or
/// two) reads the same time base.
#[derive(Debug, Clone, Copy)]
pub struct Stopwatch {
    start: Instant,
}

impl Stopwatch {
    /// Starts now.
    pub fn new() -> Self {
        Stopwatch {
            start: Instant::now(),
        }
    }

    /// Nanoseconds since the start.
    #[inline]
    pub fn now_ns(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }
}

impl Default for Stopwatch {
    fn default() -> Self {
        Self::new()
    }
}

/// The instants of one request inside the core (stopwatch nanoseconds).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stamps {
    /// The core took the request.
    pub start: u64,
    /// Its command(s) were appended to the journal's buffer.
    pub appended: u64,
    /// The engine executed it (and the ledger settled it).
    pub matched: u64,
    /// Its reports were encoded into the sessions' buffers and its feed messages
    /// queued.
    pub routed: u64,
}
