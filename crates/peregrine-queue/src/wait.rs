//! What a polling thread does when it finds no work: the one idle policy of the
//! workspace (the queue benches, the order engine's threads, the strategy runner and
//! the exchange all use it).
//!
//! An [`Idler`] escalates through three phases as empty polls accumulate, and drops
//! back to the first after useful work ([`Idler::reset`]):
//!
//! 1. **spin** (`spin_loop` hint) for [`IdlePolicy::spins`] empty polls: reacts within
//!    nanoseconds, burns the core;
//! 2. **yield** (`yield_now`) for [`IdlePolicy::yields`] more: other runnable threads on
//!    the core get it, the thread stays runnable;
//! 3. **park** with the bounded timeout [`IdlePolicy::park`] (no one unparks us: the
//!    timeout is the wake-up, so the wait never hangs). Waking costs ~55 µs here
//!    (shared/FACTS.md), hence the spin and yield phases first.
//!
//! Optionally ([`IdlePolicy::sleep`]) a thread idle for [`SLEEP_AFTER`] polls in a row
//! sleeps longer instead: on a 2-core machine whose cores are held by busy-spinning
//! threads, every 50 µs park wake-up preempts a spinner for a time slice (measured: a
//! parked gateway beside a spinning orchestrator and strategy put the
//! strategy↔engine round trip's p99.9 at ~25 µs); a thread that may be slow (a venue
//! nobody uses in a latency run) sleeps for milliseconds instead.
//!
//! A loop that can block in a poller (the exchange's epoll loop) calls
//! [`Idler::idle_or_block`] instead of [`Idler::idle`]: where `idle` would park or
//! sleep, it returns true and the loop blocks in its poller, so input wakes it at the
//! kernel's latency instead of after a fixed park.
//!
//! [`WaitStrategy`] names the three presets config files and command lines choose
//! from: `busy-spin`, `spin-yield` and `park`.

use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Spins before yielding in the spin-then-* presets.
pub const SPINS: u32 = 100;
/// Yields before parking in [`WaitStrategy::SpinThenPark`].
pub const YIELDS: u32 = 10;
/// The park timeout of [`WaitStrategy::SpinThenPark`].
pub const PARK: Duration = Duration::from_micros(50);
/// Empty polls in a row before [`IdlePolicy::sleep`] (when set) takes over.
pub const SLEEP_AFTER: u32 = 1_000;

/// The named idle presets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum WaitStrategy {
    /// Spin with a CPU hint, forever. One core per such thread.
    #[serde(rename = "busy-spin")]
    BusySpin,
    /// Spin [`SPINS`] times, then yield the core on every further empty poll.
    #[serde(rename = "spin-yield")]
    SpinThenYield,
    /// Spin [`SPINS`] times, yield [`YIELDS`] times, then park for [`PARK`].
    #[serde(rename = "park")]
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

impl std::fmt::Display for WaitStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl WaitStrategy {
    /// The name `from_str` accepts (and serde reads and writes).
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
        self.policy().occupies_core()
    }

    /// The preset's phases.
    pub const fn policy(self) -> IdlePolicy {
        match self {
            Self::BusySpin => IdlePolicy {
                spins: u32::MAX,
                yields: 0,
                park: None,
                sleep: None,
            },
            Self::SpinThenYield => IdlePolicy {
                spins: SPINS,
                yields: u32::MAX,
                park: None,
                sleep: None,
            },
            Self::SpinThenPark => IdlePolicy {
                spins: SPINS,
                yields: YIELDS,
                park: Some(PARK),
                sleep: None,
            },
        }
    }

    /// A fresh idler for one thread.
    pub fn idler(self) -> Idler {
        self.policy().idler()
    }
}

/// The phases of idling (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdlePolicy {
    /// Empty polls spent spinning; `u32::MAX` spins forever.
    pub spins: u32,
    /// Empty polls spent yielding after the spins; `u32::MAX` yields forever.
    pub yields: u32,
    /// After the spins and yields, park this long per empty poll; `None` keeps
    /// yielding.
    pub park: Option<Duration>,
    /// After [`SLEEP_AFTER`] empty polls in a row, sleep this long per empty poll
    /// instead of the phases above.
    pub sleep: Option<Duration>,
}

impl From<WaitStrategy> for IdlePolicy {
    fn from(wait: WaitStrategy) -> IdlePolicy {
        wait.policy()
    }
}

impl IdlePolicy {
    /// Whether a thread idling this way keeps its core busy while idle.
    pub fn occupies_core(&self) -> bool {
        self.park.is_none() && self.sleep.is_none()
    }

    /// A fresh idler for one thread.
    pub fn idler(self) -> Idler {
        Idler {
            policy: self,
            idle: 0,
        }
    }
}

/// Per-thread idle state: call [`Idler::idle`] after an empty poll and
/// [`Idler::reset`] after useful work.
#[derive(Debug, Clone)]
pub struct Idler {
    policy: IdlePolicy,
    /// Empty polls since the last reset.
    idle: u32,
}

/// What one empty poll does, by the number of empty polls since the last reset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Spin,
    Yield,
    Park(Duration),
    Sleep(Duration),
}

impl Idler {
    /// Counts an empty poll and says what it should do.
    #[inline]
    fn next_phase(&mut self) -> Phase {
        self.idle = self.idle.saturating_add(1);
        let p = &self.policy;
        match p.sleep {
            Some(d) if self.idle > SLEEP_AFTER => Phase::Sleep(d),
            _ if self.idle <= p.spins => Phase::Spin,
            _ if self.idle - p.spins <= p.yields => Phase::Yield,
            _ => p.park.map_or(Phase::Yield, Phase::Park),
        }
    }

    /// Waits once, escalating with the number of empty polls since the last reset.
    #[inline]
    pub fn idle(&mut self) {
        match self.next_phase() {
            Phase::Spin => std::hint::spin_loop(),
            Phase::Yield => std::thread::yield_now(),
            Phase::Park(d) => std::thread::park_timeout(d),
            Phase::Sleep(d) => std::thread::sleep(d),
        }
    }

    /// Like [`Idler::idle`], for a loop that can block in a poller until input
    /// arrives: spins and yields as `idle` does (returning false), but where `idle`
    /// would park or sleep it returns true without waiting, and the caller blocks in
    /// its poller with a timeout of its own choosing. Presets that never park
    /// (`busy-spin`, `spin-yield`) never return true.
    #[inline]
    pub fn idle_or_block(&mut self) -> bool {
        match self.next_phase() {
            Phase::Spin => std::hint::spin_loop(),
            Phase::Yield => std::thread::yield_now(),
            Phase::Park(_) | Phase::Sleep(_) => return true,
        }
        false
    }

    /// Work was found: start the next wait from the spin phase.
    #[inline]
    pub fn reset(&mut self) {
        self.idle = 0;
    }

    /// The policy this idler follows.
    pub fn policy(&self) -> IdlePolicy {
        self.policy
    }
}

#[cfg(all(test, not(loom)))]
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
            assert_eq!(s.to_string(), s.name());
        }
        assert!("spin".parse::<WaitStrategy>().is_err());
    }

    #[test]
    fn park_waits_are_bounded() {
        let mut idler = WaitStrategy::SpinThenPark.idler();
        for _ in 0..(SPINS + YIELDS + 3) {
            idler.idle();
        }
        idler.reset();
        assert!(!WaitStrategy::SpinThenPark.occupies_core());
        assert!(WaitStrategy::SpinThenYield.occupies_core());
        assert!(WaitStrategy::BusySpin.occupies_core());
    }

    #[test]
    fn only_parking_presets_ask_to_block() {
        let polls = SPINS + YIELDS;
        for (wait, blocks) in [
            (WaitStrategy::BusySpin, false),
            (WaitStrategy::SpinThenYield, false),
            (WaitStrategy::SpinThenPark, true),
        ] {
            let mut idler = wait.idler();
            for _ in 0..polls {
                assert!(!idler.idle_or_block(), "{wait} blocked while spinning");
            }
            assert_eq!(idler.idle_or_block(), blocks, "{wait}");
            idler.reset();
            assert!(!idler.idle_or_block(), "{wait} blocked right after a reset");
        }
    }

    #[test]
    fn sleep_makes_any_preset_leave_the_core() {
        let policy = IdlePolicy {
            sleep: Some(Duration::from_micros(1)),
            ..WaitStrategy::BusySpin.policy()
        };
        assert!(!policy.occupies_core());
        let mut idler = policy.idler();
        for _ in 0..SLEEP_AFTER + 2 {
            idler.idle();
        }
        assert_eq!(idler.policy(), policy);
    }
}
