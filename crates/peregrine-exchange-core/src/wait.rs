//! What a polling thread does when an iteration found no work.
//!
//! Shared by the server's polling loops and the load generator. A local enum for now;
//! the `peregrine-queue` crate's unified idler is to replace it behind the same three
//! names (issue 11).
//!
//! On this 2-core machine, waking a parked thread costs ~55 µs, while a spinning thread
//! owns a whole core. `spin-yield` (the default) spins for a bounded number of empty
//! polls and then yields, so it reacts within microseconds under load and gives the
//! core back when idle. `park` sleeps briefly when idle (tests, shared CI machines).

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Idle policy of a polling loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WaitStrategy {
    /// Never give up the core. Lowest latency; needs a core per spinning thread.
    BusySpin,
    /// Spin for a while, then `yield_now` on each further empty poll.
    SpinYield,
    /// Spin a little, then park: a loop with a poller blocks in it until input
    /// arrives; other loops sleep [`PARK_SLEEP`] on each further empty poll.
    Park,
}

/// Sleep per empty poll under [`WaitStrategy::Park`].
pub const PARK_SLEEP: Duration = Duration::from_micros(50);

/// Empty polls spent spinning before yielding or sleeping.
const SPIN_LIMIT: u32 = 2_000;

impl WaitStrategy {
    /// Whether a thread using this strategy occupies a core even when idle.
    pub const fn spins(self) -> bool {
        matches!(self, WaitStrategy::BusySpin)
    }
}

/// Per-thread idle state: call [`Idler::idle`] after an empty poll and
/// [`Idler::reset`] after a useful one.
#[derive(Debug, Clone, Copy)]
pub struct Idler {
    strategy: WaitStrategy,
    empty: u32,
}

impl Idler {
    /// A fresh idler.
    pub const fn new(strategy: WaitStrategy) -> Self {
        Idler { strategy, empty: 0 }
    }

    /// Work was found.
    #[inline]
    pub fn reset(&mut self) {
        self.empty = 0;
    }

    /// Nothing was found, in a loop that can block in its poller: spins (or, for
    /// `spin-yield`, yields) like [`Idler::idle`], but under `park`, once past the
    /// spin limit, returns true instead of sleeping: the caller then blocks in its
    /// poller until input arrives (no fixed sleep, no wake-up latency beyond the
    /// kernel's).
    #[inline]
    pub fn wants_park(&mut self) -> bool {
        if self.strategy == WaitStrategy::Park && self.empty >= SPIN_LIMIT {
            return true;
        }
        self.idle();
        false
    }

    /// Nothing was found: spin, yield or sleep.
    #[inline]
    pub fn idle(&mut self) {
        self.empty = self.empty.saturating_add(1);
        match self.strategy {
            WaitStrategy::BusySpin => std::hint::spin_loop(),
            _ if self.empty < SPIN_LIMIT => std::hint::spin_loop(),
            WaitStrategy::SpinYield => std::thread::yield_now(),
            WaitStrategy::Park => std::thread::sleep(PARK_SLEEP),
        }
    }
}
