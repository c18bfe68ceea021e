//! What an engine thread does when a poll found nothing.
//!
//! The configured [`WaitStrategy`], optionally with a longer sleep once the thread has
//! been idle for [`SLEEP_AFTER`] turns in a row. Why: `park` wakes every 50 µs to
//! poll, and on a 2-core machine whose cores are held by busy-spinning threads each
//! wake-up preempts a spinner for a time slice. Measured: a parked gateway next to a
//! busy-spinning orchestrator and strategy put the strategy↔engine round trip's p99.9
//! at ~25 µs. A thread that may be slow (a venue nobody uses in a latency run) can
//! sleep for milliseconds instead.

use std::time::Duration;

use peregrine_queue::{WaitStrategy, Waiter};

/// Idle turns in a row before the optional sleep replaces the wait strategy.
pub const SLEEP_AFTER: u32 = 1_000;

/// A thread's idle behaviour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdlePolicy {
    /// The wait strategy.
    pub wait: WaitStrategy,
    /// Sleep this long per idle turn after [`SLEEP_AFTER`] idle turns.
    pub sleep: Option<Duration>,
}

impl From<WaitStrategy> for IdlePolicy {
    fn from(wait: WaitStrategy) -> IdlePolicy {
        IdlePolicy { wait, sleep: None }
    }
}

impl IdlePolicy {
    /// Fresh per-thread state.
    pub fn idler(self) -> Idler {
        Idler {
            waiter: self.wait.waiter(),
            sleep: self.sleep,
            idle: 0,
        }
    }
}

/// Per-thread idle state: [`Idler::idle`] after an empty poll, [`Idler::reset`] after work.
#[derive(Debug, Clone)]
pub struct Idler {
    waiter: Waiter,
    sleep: Option<Duration>,
    idle: u32,
}

impl Idler {
    /// Waits once.
    #[inline]
    pub fn idle(&mut self) {
        self.idle = self.idle.saturating_add(1);
        match self.sleep {
            Some(d) if self.idle > SLEEP_AFTER => std::thread::sleep(d),
            _ => self.waiter.idle(),
        }
    }

    /// Work was found.
    #[inline]
    pub fn reset(&mut self) {
        self.idle = 0;
        self.waiter.reset();
    }
}
