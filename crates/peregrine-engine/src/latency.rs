//! The orchestrator's latency histograms, one sample per order that reached a venue.
//!
//! The 7 segments between the 8 timestamps of seed 000, the round trip t8 − t1, the
//! round trip minus the venue time the gateway measured ((t8 − t1) − (t5 − t4)), and
//! the round trip minus the delay D the simulated venue scheduled. t8 is stamped in the
//! strategy process; the SDK sends it back in a receipt, which is when a sample is
//! recorded. All values in ns from `CLOCK_MONOTONIC`.

use hdrhistogram::Histogram;
use peregrine_types::stamp;

/// Names of the rows, in [`Latency::rows`] order.
pub const ROWS: [&str; 16] = [
    "submit      t1->t2",
    "orch pre    t2->t3",
    "dispatch    t3->t4",
    "venue       t4->t5",
    "completion  t5->t6",
    "orch post   t6->t7",
    "return      t7->t8",
    "round trip  t8-t1",
    "rt - venue measured",
    "rt - venue scheduled D",
    "md venue -> engine",
    "md engine -> publish",
    "md publish -> on_book",
    "md venue -> on_book",
    "md exch send -> engine",
    "md exch send -> on_book",
];

/// Index of the first market-data row in [`ROWS`].
pub const MD_ROWS: usize = 10;

/// Index of the first exchange-feed row in [`ROWS`]: the same samples as
/// `md venue -> engine` / `md venue -> on_book`, only those of books fed by an
/// exchange venue's feed (whose venue timestamp is the packet's send time), so they
/// do not mix with the simulated venues'.
pub const FEED_ROWS: usize = 14;

/// Names of the rolling-window rows ([`Latency::window`]).
pub const WINDOW_ROWS: [&str; 2] = ["round trip  t8-t1", "md venue -> on_book"];

/// The histograms.
#[derive(Debug, Clone)]
pub struct Latency {
    rows: Vec<Histogram<u64>>,
    /// Per book slot: fed by an exchange venue's feed.
    feed_slots: Vec<bool>,
    /// The current window: round trip, md venue -> on_book.
    recent: Vec<Histogram<u64>>,
    /// The last complete window.
    last: Vec<Histogram<u64>>,
}

impl Default for Latency {
    fn default() -> Self {
        Latency::new()
    }
}

impl Latency {
    /// Empty histograms, 1 ns to 60 s, 3 significant digits.
    pub fn new() -> Latency {
        let h = || Histogram::new_with_bounds(1, 60_000_000_000, 3).expect("static bounds");
        Latency {
            rows: (0..ROWS.len()).map(|_| h()).collect(),
            feed_slots: Vec::new(),
            recent: (0..WINDOW_ROWS.len()).map(|_| h()).collect(),
            last: (0..WINDOW_ROWS.len()).map(|_| h()).collect(),
        }
    }

    /// Marks which book slots an exchange feed fills (their samples also go to the
    /// `md exch send` rows).
    pub fn with_feed_slots(mut self, feed_slots: Vec<bool>) -> Latency {
        self.feed_slots = feed_slots;
        self
    }

    /// Ends the current window: it becomes [`Latency::window`], a new one starts.
    pub fn rotate_window(&mut self) {
        std::mem::swap(&mut self.recent, &mut self.last);
        self.recent.iter_mut().for_each(Histogram::reset);
    }

    /// The last complete window, in [`WINDOW_ROWS`] order.
    pub fn window(&self) -> &[Histogram<u64>] {
        &self.last
    }

    /// Records one order's stamps (all 8 must be known) and scheduled delay.
    pub fn record(&mut self, t: &[u64; 8], scheduled_ns: u64) {
        if t.contains(&0) {
            return;
        }
        for seg in 0..7 {
            self.rows[seg].saturating_record(t[seg + 1].saturating_sub(t[seg]).max(1));
        }
        let rt = t[stamp::STRATEGY_RECV].saturating_sub(t[stamp::STRATEGY_SEND]);
        let venue = t[stamp::GATEWAY_DONE].saturating_sub(t[stamp::GATEWAY_RECV]);
        self.rows[7].saturating_record(rt.max(1));
        self.recent[0].saturating_record(rt.max(1));
        self.rows[8].saturating_record(rt.saturating_sub(venue).max(1));
        self.rows[9].saturating_record(rt.saturating_sub(scheduled_ns).max(1));
    }

    /// One market-data sample (all `CLOCK_MONOTONIC` ns): the venue's timestamp of a
    /// book version, when the engine received it, published it, and when a
    /// strategy's `on_book` saw it. Samples with a missing stamp are not recorded.
    pub fn record_md(&mut self, slot: usize, venue: u64, recv: u64, publish: u64, seen: u64) {
        if venue == 0 || recv == 0 || publish == 0 || seen == 0 {
            return;
        }
        if self.feed_slots.get(slot).copied().unwrap_or(false) {
            let r = &mut self.rows[FEED_ROWS..];
            r[0].saturating_record(recv.saturating_sub(venue).max(1));
            r[1].saturating_record(seen.saturating_sub(venue).max(1));
        }
        let r = &mut self.rows[MD_ROWS..];
        r[0].saturating_record(recv.saturating_sub(venue).max(1));
        r[1].saturating_record(publish.saturating_sub(recv).max(1));
        r[2].saturating_record(seen.saturating_sub(publish).max(1));
        r[3].saturating_record(seen.saturating_sub(venue).max(1));
        self.recent[1].saturating_record(seen.saturating_sub(venue).max(1));
    }

    /// The histograms, in [`ROWS`] order.
    pub fn rows(&self) -> &[Histogram<u64>] {
        &self.rows
    }

    /// Samples recorded.
    pub fn samples(&self) -> u64 {
        self.rows[7].len()
    }

    /// The table: row, n, p50, p99, p99.9, max (ns).
    pub fn render(&self) -> String {
        use crate::units::{fmt_count, fmt_ns};
        let mut s = format!(
            "{:<24}{:>10}{:>11}{:>11}{:>11}{:>12}\n",
            "latency", "n", "p50", "p99", "p99.9", "max"
        );
        for (name, h) in ROWS.iter().zip(&self.rows) {
            s += &format!(
                "{name:<24}{:>10}{:>11}{:>11}{:>11}{:>12}\n",
                fmt_count(h.len()),
                fmt_ns(h.value_at_quantile(0.5)),
                fmt_ns(h.value_at_quantile(0.99)),
                fmt_ns(h.value_at_quantile(0.999)),
                fmt_ns(h.max())
            );
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_sum_to_round_trip() {
        let mut l = Latency::new();
        l.record(&[100, 200, 300, 400, 10_400, 10_500, 10_600, 10_700], 9_000);
        assert_eq!(l.samples(), 1);
        // 3 significant digits: compare within the histogram's resolution.
        for (row, want) in [(0, 100), (3, 10_000), (7, 10_600), (8, 600), (9, 1_600)] {
            let h = &l.rows()[row];
            assert!(
                h.equivalent(h.max(), want),
                "row {row}: {} vs {want}",
                h.max()
            );
        }
        l.record_md(0, 1_000, 1_500, 1_700, 2_700);
        assert!(l.rows()[MD_ROWS + 3].equivalent(l.rows()[MD_ROWS + 3].max(), 1_700));
        l.record_md(0, 0, 1, 2, 3);
        assert_eq!(l.rows()[MD_ROWS].len(), 1);
        assert_eq!(
            l.rows()[FEED_ROWS].len(),
            0,
            "slot 0 is not an exchange feed's"
        );
        l.record(&[1, 0, 0, 0, 0, 0, 0, 9], 0);
        assert_eq!(l.samples(), 1, "incomplete stamps are not recorded");
        assert!(l.render().contains("rt - venue measured"));
    }

    #[test]
    fn exchange_feed_slots_get_their_own_rows() {
        let mut l = Latency::new().with_feed_slots(vec![false, true]);
        l.record_md(0, 1_000, 1_500, 1_700, 2_700);
        l.record_md(1, 1_000, 1_200, 1_700, 3_000);
        assert_eq!(l.rows()[MD_ROWS + 3].len(), 2);
        assert_eq!(l.rows()[FEED_ROWS].len(), 1);
        assert!(l.rows()[FEED_ROWS].equivalent(l.rows()[FEED_ROWS].max(), 200));
        assert!(l.rows()[FEED_ROWS + 1].equivalent(l.rows()[FEED_ROWS + 1].max(), 2_000));
    }
}
