//! The exchange clock: nanoseconds since the Unix epoch, injected into the core.
//!
//! [`Clock::monotonic`] (what the server uses) reads the wall clock once at start;
//! after that time is the anchor plus `Instant` elapsed, so it never goes backwards
//! (the book requires non-decreasing command times) and costs one `clock_gettime`
//! (~25 ns here). [`Clock::manual`] reads a value the caller sets (tests and
//! deterministic drivers), so the core never reads a clock it was not given.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use peregrine_types::Timestamp;

/// A non-decreasing epoch-nanosecond clock.
#[derive(Debug, Clone)]
pub struct Clock {
    source: Source,
    /// Added to the source (see [`Clock::not_before`]).
    offset: u64,
    /// A reading [`Clock::not_before`] took (monotonic source only): the clock never
    /// reads less again, so a floor at or below it needs no clock read. Start-up
    /// replay sets a floor per journaled record; without this each cost a
    /// `clock_gettime` (8% of `peregrine journal replay`, profiled 2026-11-24).
    seen: u64,
}

#[derive(Debug, Clone)]
enum Source {
    Monotonic { start: Instant, epoch_ns: u64 },
    Manual(Arc<AtomicU64>),
}

impl Clock {
    /// Anchored to the wall clock now, advanced by a monotonic source.
    pub fn monotonic() -> Self {
        let epoch_ns = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
        Clock {
            source: Source::Monotonic {
                start: Instant::now(),
                epoch_ns,
            },
            offset: 0,
            seen: 0,
        }
    }

    /// Reads `now` (epoch nanoseconds), which the caller moves; the clock still never
    /// goes backwards.
    pub fn manual(now: Arc<AtomicU64>) -> Self {
        Clock {
            source: Source::Manual(now),
            offset: 0,
            seen: 0,
        }
    }

    /// Never reads earlier than `ts` from now on (after a restart the journal's last
    /// command time is the floor: the book requires non-decreasing command times even
    /// if the wall clock stepped back).
    /// The clock moves forward to `ts` and keeps running from there.
    pub fn not_before(&mut self, ts: Timestamp) {
        let monotonic = matches!(self.source, Source::Monotonic { .. });
        if monotonic && ts.0 <= self.seen {
            return;
        }
        let now = self.now().0;
        if now < ts.0 {
            self.offset = self.offset.saturating_add(ts.0 - now);
        }
        if monotonic {
            self.seen = now.max(ts.0);
        }
    }

    /// Now.
    #[inline]
    pub fn now(&self) -> Timestamp {
        let raw = match &self.source {
            Source::Monotonic { start, epoch_ns } => {
                let elapsed = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
                epoch_ns.saturating_add(elapsed)
            }
            // Relaxed: the value is the whole message; it orders nothing else.
            Source::Manual(now) => now.load(Ordering::Relaxed),
        };
        Timestamp(raw.saturating_add(self.offset))
    }
}

impl Default for Clock {
    fn default() -> Self {
        Self::monotonic()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_goes_backwards() {
        let c = Clock::monotonic();
        let mut last = c.now();
        for _ in 0..10_000 {
            let t = c.now();
            assert!(t >= last);
            last = t;
        }
        assert!(last.0 > 1_600_000_000_000_000_000);
    }

    #[test]
    fn not_before_is_a_floor() {
        let future = Timestamp(Clock::monotonic().now().0 + 3_600_000_000_000);
        let mut c = Clock::monotonic();
        c.not_before(future);
        assert!(c.now() >= future);
        let mut c2 = Clock::monotonic();
        c2.not_before(Timestamp(1));
        assert_eq!(c2.offset, 0, "a past floor changes nothing");
    }

    #[test]
    fn a_floor_after_a_past_one_still_moves_the_clock() {
        let mut c = Clock::monotonic();
        c.not_before(Timestamp(1));
        c.not_before(Timestamp(2)); // below the reading taken: no read, no change
        assert_eq!(c.offset, 0);
        let future = Timestamp(c.now().0 + 3_600_000_000_000);
        c.not_before(future);
        assert!(c.now() >= future);
        let later = Timestamp(future.0 + 1_000_000_000);
        c.not_before(later);
        assert!(
            c.now() >= later,
            "a floor above the last one moves it again"
        );
    }

    #[test]
    fn manual_reads_what_it_is_given_and_a_floor_moves_it_forward() {
        let t = Arc::new(AtomicU64::new(1_000));
        let mut c = Clock::manual(Arc::clone(&t));
        assert_eq!(c.now(), Timestamp(1_000));
        t.store(5_000, Ordering::Relaxed);
        assert_eq!(c.now(), Timestamp(5_000));
        c.not_before(Timestamp(9_000));
        assert_eq!(c.now(), Timestamp(9_000));
        t.store(6_000, Ordering::Relaxed);
        assert_eq!(c.now(), Timestamp(10_000), "keeps running from the floor");
    }
}
