//! What a polling thread does when it finds no work.
//!
//! * [`WaitStrategy::BusySpin`]: `spin_loop` hint only. Lowest wake-up latency, burns a
//!   whole core; only sensible with one spinning thread per core.
//! * [`WaitStrategy::SpinThenYield`]: spin a while, then `yield_now` so other runnable
//!   threads on the core get it. For more polling threads than cores.
//! * [`WaitStrategy::SpinThenPark`]: spin, yield, then park with a bounded timeout (no
//!   one unparks us: the timeout is the wake-up, so the wait never hangs). Parking here
//!   costs ~55 µs to wake (shared/FACTS.md), hence the spin and yield phases first.

use std::str::FromStr;
use std::time::Duration;

/// Spins before yielding in the spin-then-* strategies.
const SPINS: u32 = 100;
/// Yields before parking in [`WaitStrategy::SpinThenPark`].
const YIELDS: u32 = 10;
/// The park timeout of [`WaitStrategy::SpinThenPark`].
const PARK: Duration = Duration::from_micros(50);

/// How to wait when a poll found nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitStrategy {
    /// Spin with a CPU hint, forever.
    BusySpin,
    /// Spin, then yield the core.
    SpinThenYield,
    /// Spin, yield, then park with a bounded timeout.
    SpinThenPark,
}

/// A bad wait-strategy name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown wait strategy {0:?} (expected busy-spin, spin-yield or park)")]
pub struct UnknownWait(pub String);

impl FromStr for WaitStrategy {
    type Err = UnknownWait;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "busy-spin" => Ok(Self::BusySpin),
            "spin-yield" => Ok(Self::SpinThenYield),
            "park" => Ok(Self::SpinThenPark),
            other => Err(UnknownWait(other.to_owned())),
        }
    }
}

impl WaitStrategy {
    /// The name `from_str` accepts.
    pub fn name(self) -> &'static str {
        match self {
            Self::BusySpin => "busy-spin",
            Self::SpinThenYield => "spin-yield",
            Self::SpinThenPark => "park",
        }
    }

    /// Whether a thread using this strategy keeps its core busy while idle (it never
    /// sleeps). Yielding counts as busy: the thread stays runnable.
    pub fn occupies_core(self) -> bool {
        !matches!(self, Self::SpinThenPark)
    }

    /// A fresh waiter for one thread.
    pub fn waiter(self) -> Waiter {
        Waiter {
            strategy: self,
            idle: 0,
        }
    }
}

/// Per-thread wait state: call [`Waiter::idle`] after an empty poll and
/// [`Waiter::reset`] after useful work.
#[derive(Debug, Clone)]
pub struct Waiter {
    strategy: WaitStrategy,
    idle: u32,
}

impl Waiter {
    /// Waits once, escalating with the number of empty polls since the last reset.
    #[inline]
    pub fn idle(&mut self) {
        self.idle = self.idle.saturating_add(1);
        match self.strategy {
            WaitStrategy::BusySpin => std::hint::spin_loop(),
            WaitStrategy::SpinThenYield if self.idle <= SPINS => std::hint::spin_loop(),
            WaitStrategy::SpinThenYield => std::thread::yield_now(),
            WaitStrategy::SpinThenPark if self.idle <= SPINS => std::hint::spin_loop(),
            WaitStrategy::SpinThenPark if self.idle <= SPINS + YIELDS => std::thread::yield_now(),
            WaitStrategy::SpinThenPark => std::thread::park_timeout(PARK),
        }
    }

    /// Work was found: start the next wait from the spin phase.
    #[inline]
    pub fn reset(&mut self) {
        self.idle = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_name() {
        for s in [
            WaitStrategy::BusySpin,
            WaitStrategy::SpinThenYield,
            WaitStrategy::SpinThenPark,
        ] {
            assert_eq!(s.name().parse::<WaitStrategy>(), Ok(s));
        }
        assert!("spin".parse::<WaitStrategy>().is_err());
    }

    #[test]
    fn park_waits_are_bounded() {
        let mut waiter = WaitStrategy::SpinThenPark.waiter();
        for _ in 0..(SPINS + YIELDS + 3) {
            waiter.idle();
        }
        waiter.reset();
        assert!(!WaitStrategy::SpinThenPark.occupies_core());
        assert!(WaitStrategy::SpinThenYield.occupies_core());
    }
}
