//! The exchange clock: nanoseconds since the Unix epoch, read from a monotonic source.
//!
//! The wall clock is read once at start; after that time is the anchor plus
//! `Instant` elapsed, so it never goes backwards (the book requires non-decreasing
//! command times) and costs one `clock_gettime` (~25 ns here).

use std::time::{Instant, SystemTime, UNIX_EPOCH};

use peregrine_types::Timestamp;

/// A monotonic epoch-nanosecond clock.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    start: Instant,
    epoch_ns: u64,
}

impl Clock {
    /// Anchors to the wall clock now.
    pub fn new() -> Self {
        let epoch_ns = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
        Clock {
            start: Instant::now(),
            epoch_ns,
        }
    }

    /// This clock, moved forward if needed so that it never reads earlier than `ts`
    /// (after a restart the journal's last command time is the floor: the book
    /// requires non-decreasing command times even if the wall clock stepped back).
    pub fn not_before(mut self, ts: Timestamp) -> Self {
        if self.now() < ts {
            let elapsed = u64::try_from(self.start.elapsed().as_nanos()).unwrap_or(u64::MAX);
            self.epoch_ns = ts.0.saturating_sub(elapsed);
        }
        self
    }

    /// Now.
    #[inline]
    pub fn now(&self) -> Timestamp {
        let elapsed = u64::try_from(self.start.elapsed().as_nanos()).unwrap_or(u64::MAX);
        Timestamp(self.epoch_ns.saturating_add(elapsed))
    }
}

impl Default for Clock {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_goes_backwards() {
        let c = Clock::new();
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
        let future = Timestamp(Clock::new().now().0 + 3_600_000_000_000);
        let c = Clock::new().not_before(future);
        assert!(c.now() >= future);
        let c2 = Clock::new();
        assert_eq!(
            c2.not_before(Timestamp(1)).epoch_ns,
            c2.epoch_ns,
            "a past floor changes nothing"
        );
    }
}
