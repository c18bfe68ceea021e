//! Counters the writer keeps about itself, for metrics: plain fields updated by the
//! owning thread (no atomics), read by copying [`JournalStats`] out of
//! [`crate::Journal::stats`].

/// Buckets of [`JournalStats::sync_ns_buckets`]: one per power of two of
/// nanoseconds, `0 ..= 64`.
pub const SYNC_BUCKETS: usize = 65;

/// What the journal has written and synced since it was opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JournalStats {
    /// Records appended.
    pub records: u64,
    /// Bytes handed to `write(2)` (records and segment headers).
    pub bytes_written: u64,
    /// `fdatasync` calls on segment files (directory syncs at rotation are not
    /// counted).
    pub syncs: u64,
    /// Sum of the durations of those syncs, nanoseconds.
    pub sync_ns_sum: u64,
    /// Sync durations by power of two: bucket `i` counts syncs that took
    /// `2^(i-1) < ns <= 2^i` nanoseconds (bucket 0: `ns <= 1`). See
    /// [`log2_bucket`].
    pub sync_ns_buckets: [u64; SYNC_BUCKETS],
    /// `fdatasync` calls on the high-water mark (one per commit that covered new
    /// records, under `Batch` and `EveryCommand`).
    pub mark_syncs: u64,
    /// Sum of the durations of those syncs, nanoseconds.
    pub mark_sync_ns_sum: u64,
    /// Segments started in a spare the helper prepared ahead
    /// ([`crate::JournalConfig::preallocate`]).
    pub segments_prepared: u64,
    /// Segments started as plain files that grow with each append (preallocation
    /// off, no spare ready yet, or the helper failed).
    pub segments_plain: u64,
    /// The helper that prepares segments failed (its error is logged); appends go
    /// on into plain segments.
    pub prepare_failed: bool,
}

impl Default for JournalStats {
    fn default() -> Self {
        JournalStats {
            records: 0,
            bytes_written: 0,
            syncs: 0,
            sync_ns_sum: 0,
            sync_ns_buckets: [0; SYNC_BUCKETS],
            mark_syncs: 0,
            mark_sync_ns_sum: 0,
            segments_prepared: 0,
            segments_plain: 0,
            prepare_failed: false,
        }
    }
}

impl JournalStats {
    /// Counts one sync that took `ns` nanoseconds.
    #[inline]
    pub fn record_sync(&mut self, ns: u64) {
        self.syncs += 1;
        self.sync_ns_sum = self.sync_ns_sum.saturating_add(ns);
        self.sync_ns_buckets[log2_bucket(ns)] += 1;
    }
}

impl JournalStats {
    /// Counts one sync of the high-water mark that took `ns` nanoseconds.
    #[inline]
    pub fn record_mark_sync(&mut self, ns: u64) {
        self.mark_syncs += 1;
        self.mark_sync_ns_sum = self.mark_sync_ns_sum.saturating_add(ns);
    }
}

/// The bucket of a duration: the smallest `i` with `ns <= 2^i` (0 for 0 and 1), so
/// a bucket's upper bound is inclusive, as a Prometheus `le` bound is.
#[inline]
pub const fn log2_bucket(ns: u64) -> usize {
    if ns <= 1 {
        0
    } else {
        (u64::BITS - (ns - 1).leading_zeros()) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_have_inclusive_upper_bounds() {
        assert_eq!(log2_bucket(0), 0);
        assert_eq!(log2_bucket(1), 0);
        assert_eq!(log2_bucket(2), 1);
        assert_eq!(log2_bucket(3), 2);
        assert_eq!(log2_bucket(4), 2);
        assert_eq!(log2_bucket(5), 3);
        assert_eq!(log2_bucket(1 << 20), 20);
        assert_eq!(log2_bucket((1 << 20) + 1), 21);
        assert_eq!(log2_bucket(u64::MAX), 64);
    }

    #[test]
    fn record_sync_counts_sums_and_buckets() {
        let mut s = JournalStats::default();
        s.record_sync(1000);
        s.record_sync(1024);
        s.record_sync(1025);
        assert_eq!(s.syncs, 3);
        assert_eq!(s.sync_ns_sum, 3049);
        assert_eq!(s.sync_ns_buckets[10], 2);
        assert_eq!(s.sync_ns_buckets[11], 1);
    }
}
