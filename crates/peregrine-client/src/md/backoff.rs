//! When to try the recovery service again after it failed (refused, reset or closed
//! the connection, or did not answer in time): bounded exponential backoff with
//! jitter, so subscribers turned away together do not come back together.
//!
//! The `n`-th retry of a failure streak waits a random time in
//! `[d/2, d]`, `d = min(FIRST << n, MAX)`: 50 ms, 100 ms, … 1.6 s, then 2 s for good.
//! A success ends the streak.

use std::time::Duration;

use peregrine_types::rng::Rng;

/// The nominal wait after the first failure of a streak.
pub const FIRST: Duration = Duration::from_millis(50);
/// The nominal wait never grows beyond this.
pub const MAX: Duration = Duration::from_secs(2);

/// The failures of the current streak and the jitter's source.
#[derive(Debug, Clone)]
pub struct Backoff {
    failures: u32,
    rng: Rng,
}

impl Backoff {
    /// A backoff whose jitter is drawn from `rng`.
    pub fn new(rng: Rng) -> Backoff {
        Backoff { failures: 0, rng }
    }

    /// Records a failure; the time to wait before the next try.
    pub fn fail(&mut self) -> Duration {
        let nominal = nominal(self.failures);
        self.failures = self.failures.saturating_add(1);
        let ms = u64::try_from(nominal.as_millis()).unwrap_or(u64::MAX);
        Duration::from_millis(self.rng.range(ms / 2, ms))
    }

    /// Failures since the last success (0: not in a streak).
    pub fn failures(&self) -> u32 {
        self.failures
    }

    /// Ends the streak: the next failure waits [`FIRST`] again.
    pub fn succeed(&mut self) {
        self.failures = 0;
    }
}

/// The nominal wait after `failures` earlier failures of the streak.
fn nominal(failures: u32) -> Duration {
    FIRST
        .checked_mul(1u32.checked_shl(failures).unwrap_or(u32::MAX))
        .map_or(MAX, |d| d.min(MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wait_doubles_from_50_ms_to_2_s_with_jitter_in_its_upper_half() {
        let mut b = Backoff::new(Rng::new(7));
        let nominal_ms = [50, 100, 200, 400, 800, 1600, 2000, 2000, 2000];
        for (i, &ms) in nominal_ms.iter().enumerate() {
            let d = b.fail();
            assert!(
                (ms / 2..=ms).contains(&(d.as_millis() as u64)),
                "retry {i}: {d:?} not in [{}, {ms}] ms",
                ms / 2
            );
            assert_eq!(b.failures(), i as u32 + 1);
        }
        for _ in 0..100 {
            assert!(b.fail() <= MAX, "bounded however long the streak");
        }
        b.succeed();
        assert_eq!(b.failures(), 0);
        assert!(b.fail() <= FIRST, "a success starts over");
    }

    #[test]
    fn the_jitter_spreads_clients_that_failed_together() {
        let waits: Vec<Duration> = (0..8)
            .map(|seed| {
                let mut b = Backoff::new(Rng::new(seed));
                b.fail();
                b.fail()
            })
            .collect();
        let first = waits[0];
        assert!(waits.iter().any(|&w| w != first), "{waits:?}");
    }

    #[test]
    fn the_nominal_wait_saturates_instead_of_overflowing() {
        assert_eq!(nominal(0), FIRST);
        assert_eq!(nominal(5), Duration::from_millis(1600));
        assert_eq!(nominal(6), MAX);
        assert_eq!(nominal(40), MAX);
        assert_eq!(nominal(u32::MAX), MAX);
    }
}
