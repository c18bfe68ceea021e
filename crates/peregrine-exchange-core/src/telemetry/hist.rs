//! The two small tools behind every metric of the matching thread: a fixed
//! power-of-two [`LogHistogram`] (recording is a subtraction, a `leading_zeros` and an
//! increment; no allocation, no atomics) and a [`Debounce`] that lets a publish through
//! at most once per interval, on an injected clock.

use peregrine_journal::stats::{log2_bucket, JournalStats, SYNC_BUCKETS};

/// Buckets of a [`LogHistogram`]: one per power of two of nanoseconds, `0 ..= 64`.
pub const BUCKETS: usize = SYNC_BUCKETS;

/// A histogram of nanosecond durations with one bucket per power of two.
///
/// Bucket `i` counts values `v` with `2^(i-1) < v <= 2^i` (bucket 0: `v <= 1`), so
/// the cumulative count up to bucket `i` is exactly the Prometheus `le = 2^i ns`
/// bucket. Resolution is a factor of two, which is what a latency dashboard needs to
/// tell 200 ns from 2 µs from 2 ms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogHistogram {
    /// Counts per bucket (not cumulative).
    pub buckets: [u64; BUCKETS],
    /// Sum of all recorded values, nanoseconds (saturating).
    pub sum_ns: u64,
    /// Number of recorded values.
    pub count: u64,
}

impl Default for LogHistogram {
    fn default() -> Self {
        LogHistogram {
            buckets: [0; BUCKETS],
            sum_ns: 0,
            count: 0,
        }
    }
}

impl LogHistogram {
    /// Records one value.
    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.buckets[log2_bucket(ns)] += 1;
        self.sum_ns = self.sum_ns.saturating_add(ns);
        self.count += 1;
    }

    /// The journal's fsync durations as a histogram (same bucket scheme).
    pub fn of_syncs(stats: &JournalStats) -> Self {
        LogHistogram {
            buckets: stats.sync_ns_buckets,
            sum_ns: stats.sync_ns_sum,
            count: stats.syncs,
        }
    }

    /// Values recorded with `v <= 2^exp` nanoseconds (the cumulative count of bucket
    /// `exp`); `exp >= 64` counts everything.
    pub fn cumulative(&self, exp: u32) -> u64 {
        let last = (exp as usize).min(BUCKETS - 1);
        self.buckets[..=last].iter().sum()
    }
}

/// Lets an action through at most once per `interval_ns` of an injected clock.
///
/// The caller passes the time it already has (the matching thread reuses the clock
/// reading it took for its batch), so asking costs a comparison. The first call is
/// always due.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Debounce {
    interval_ns: u64,
    next_due_ns: u64,
}

impl Debounce {
    /// At most once per `interval_ns` (0: every time).
    pub const fn new(interval_ns: u64) -> Self {
        Debounce {
            interval_ns,
            next_due_ns: 0,
        }
    }

    /// Whether the action may run at `now_ns`. Does not start a new interval: call
    /// [`Debounce::done`] once the action actually ran (a publish that found the
    /// slot busy retries at the next chance instead of waiting a whole interval).
    #[inline]
    pub fn is_due(&self, now_ns: u64) -> bool {
        now_ns >= self.next_due_ns
    }

    /// The action ran at `now_ns`: the next one is due one interval later.
    #[inline]
    pub fn done(&mut self, now_ns: u64) {
        self.next_due_ns = now_ns.saturating_add(self.interval_ns);
    }

    /// The interval.
    pub const fn interval_ns(&self) -> u64 {
        self.interval_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_buckets_are_inclusive_powers_of_two() {
        let mut h = LogHistogram::default();
        for v in [0, 1, 2, 3, 4, 100, 128, 129, 1_000_000] {
            h.record(v);
        }
        assert_eq!(h.count, 9);
        assert_eq!(h.sum_ns, 1_000_367);
        assert_eq!(h.cumulative(0), 2); // 0, 1
        assert_eq!(h.cumulative(1), 3); // + 2
        assert_eq!(h.cumulative(2), 5); // + 3, 4
        assert_eq!(h.cumulative(6), 5);
        assert_eq!(h.cumulative(7), 7); // + 100, 128
        assert_eq!(h.cumulative(8), 8); // + 129
        assert_eq!(h.cumulative(19), 8);
        assert_eq!(h.cumulative(20), 9); // 1e6 <= 2^20
        assert_eq!(h.cumulative(200), 9);
    }

    #[test]
    fn histogram_of_syncs_copies_the_journal_counters() {
        let mut s = JournalStats::default();
        s.record_sync(3_000);
        s.record_sync(5_000_000);
        let h = LogHistogram::of_syncs(&s);
        assert_eq!((h.count, h.sum_ns), (2, 5_003_000));
        assert_eq!(h.cumulative(12), 1);
        assert_eq!(h.cumulative(23), 2);
    }

    /// With an injected clock stepping 1 µs per call over 10 ms, a 100 µs debounce
    /// lets through exactly one action per 100 µs, never two inside one interval.
    #[test]
    fn debounce_allows_at_most_one_per_interval() {
        let mut d = Debounce::new(100_000);
        let mut fired = Vec::new();
        for now in (0..10_000_000u64).step_by(1_000) {
            if d.is_due(now) {
                d.done(now);
                fired.push(now);
            }
        }
        assert_eq!(fired.len(), 100);
        assert!(fired.windows(2).all(|w| w[1] - w[0] >= 100_000));
        assert_eq!(fired[0], 0, "the first call is due");
    }

    #[test]
    fn debounce_retries_when_the_action_did_not_run() {
        let mut d = Debounce::new(1_000);
        assert!(d.is_due(5));
        // The action could not run (busy slot): still due on the next call.
        assert!(d.is_due(6));
        d.done(6);
        assert!(!d.is_due(1_005));
        assert!(d.is_due(1_006));
        let mut every = Debounce::new(0);
        every.done(7);
        assert!(every.is_due(7));
    }
}
