//! Where a REST order's time goes inside the gateway: one latency histogram per
//! stage, recorded (for each order the exchange accepts) by the request's own task and read by `/metrics` (Prometheus)
//! and `/peregrine/status` (JSON, which `peregrine gateway bench` reads).
//!
//! ```text
//!  request parsed (hyper) ─route─▶ handler entered ─checks─▶ queued to the account's
//!  session ─exchange─▶ answer read from the exchange socket (session task) ─wake─▶
//!  handler resumed ─answer─▶ body built
//!  └──────────────────────────────── total ─────────────────────────────────────┘
//! ```
//!
//! * `route`: from hyper handing the parsed request head to the service to the
//!   handler running: routing, reading the body, the extractors.
//! * `checks`: signature, parameters, rate limits, registering the order.
//! * `exchange`: the session task's turn, the write, the exchange's round trip, the
//!   read and applying the reports (stamped by the session task when it answers).
//! * `wake`: from that answer to the handler's task running again.
//! * `answer`: building the response.
//!
//! Reading and parsing the request head before, and writing the response after, are
//! hyper's and are not in `total`: the client's time minus `total` is those, plus
//! the two loopback hops.
//!
//! A histogram is an array of atomic counters on a log-linear scale (8 buckets per
//! power of two, so a bucket is at most 12.5% wide): recording is three relaxed
//! `fetch_add`s, no lock, no allocation.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use peregrine_metrics::HistogramValue;
use serde::Serialize;

/// Sub-buckets per power of two (a power of two).
const SUB: u64 = 8;
/// log2 of [`SUB`].
const SUB_BITS: u32 = 3;
/// Buckets: every `u64` of nanoseconds (the largest lands in bucket 495).
const BUCKETS: usize = 62 * SUB as usize;

/// The bucket of `ns`: values below [`SUB`] have their own; above, the power of two
/// and the next [`SUB_BITS`] bits.
fn bucket(ns: u64) -> usize {
    if ns < SUB {
        return ns as usize;
    }
    let e = 63 - ns.leading_zeros();
    let sub = (ns >> (e - SUB_BITS)) & (SUB - 1);
    (e as usize - SUB_BITS as usize + 1) * SUB as usize + sub as usize
}

/// The exclusive upper bound (ns) of bucket `i`.
fn upper(i: usize) -> u64 {
    let i = i as u64;
    if i < SUB {
        return i + 1;
    }
    let e = i / SUB - 1 + u64::from(SUB_BITS);
    let sub = i % SUB;
    let hi = u128::from(SUB + sub + 1) << (e - u64::from(SUB_BITS));
    u64::try_from(hi).unwrap_or(u64::MAX)
}

/// One stage's latencies.
#[derive(Debug)]
pub struct Latency {
    counts: Box<[AtomicU64]>,
    sum_ns: AtomicU64,
    count: AtomicU64,
}

impl Default for Latency {
    fn default() -> Self {
        Latency {
            counts: (0..BUCKETS).map(|_| AtomicU64::new(0)).collect(),
            sum_ns: AtomicU64::new(0),
            count: AtomicU64::new(0),
        }
    }
}

impl Latency {
    /// Records one duration.
    pub fn record(&self, d: Duration) {
        let ns = u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        // Relaxed: counters read together only for display; a scrape that sees a
        // bucket before its count is off by one observation at most.
        self.counts[bucket(ns)].fetch_add(1, Ordering::Relaxed);
        self.sum_ns.fetch_add(ns, Ordering::Relaxed);
        self.count.fetch_add(1, Ordering::Relaxed);
    }

    /// The non-empty buckets as `(exclusive upper bound ns, count)`, ascending.
    pub fn buckets(&self) -> Vec<(u64, u64)> {
        self.counts
            .iter()
            .enumerate()
            .filter_map(|(i, c)| {
                let n = c.load(Ordering::Relaxed);
                (n > 0).then(|| (upper(i), n))
            })
            .collect()
    }

    /// For Prometheus: counts below `le` = 2^e and 1.5 × 2^e ns for `e` in `exps`
    /// (both are bucket edges, so no bucket is split), and `+Inf`.
    pub fn prometheus(&self, exps: std::ops::RangeInclusive<u32>) -> HistogramValue {
        let fine = self.buckets();
        let total: u64 = fine.iter().map(|b| b.1).sum();
        // Both lists ascend: one walk moves each fine bucket into its `le`.
        let mut rest = fine.iter().peekable();
        let mut out = Vec::new();
        for le in exps.flat_map(|e| [1u64 << e, 3u64 << (e - 1)]) {
            let mut n = 0;
            while let Some((_, c)) = rest.next_if(|b| b.0 <= le) {
                n += c;
            }
            out.push((le as f64 / 1e9, n));
        }
        out.push((f64::INFINITY, rest.map(|b| b.1).sum()));
        HistogramValue {
            sum: self.sum_ns.load(Ordering::Relaxed) as f64 / 1e9,
            count: total,
            buckets: out,
        }
    }
}

/// When hyper handed a request to the service (a request extension, set by the
/// server for every request).
#[derive(Debug, Clone, Copy)]
pub struct Arrived(pub Instant);

/// The stages of a `POST /api/v3/order` (module docs).
#[derive(Debug, Default)]
pub struct OrderStages {
    /// Request handed to the service → handler entered.
    pub route: Latency,
    /// Handler entered → queued to the session.
    pub checks: Latency,
    /// Queued → answered by the session task.
    pub exchange: Latency,
    /// Answered → handler resumed.
    pub wake: Latency,
    /// Resumed → response built.
    pub answer: Latency,
    /// Request handed to the service → response built.
    pub total: Latency,
}

/// One stage as `/peregrine/status` shows it.
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq, Eq)]
pub struct StageSnapshot {
    /// Stage name.
    pub stage: String,
    /// Non-empty buckets: `(exclusive upper bound ns, count)`, ascending.
    pub buckets: Vec<(u64, u64)>,
}

impl OrderStages {
    /// Every stage with its name, in path order.
    pub fn all(&self) -> [(&'static str, &Latency); 6] {
        [
            ("route", &self.route),
            ("checks", &self.checks),
            ("exchange", &self.exchange),
            ("wake", &self.wake),
            ("answer", &self.answer),
            ("total", &self.total),
        ]
    }

    /// Every stage's buckets.
    pub fn snapshot(&self) -> Vec<StageSnapshot> {
        self.all()
            .into_iter()
            .map(|(stage, l)| StageSnapshot {
                stage: stage.into(),
                buckets: l.buckets(),
            })
            .collect()
    }

    /// Records an order answered at `built` (its response built).
    pub fn record(&self, s: &OrderStamps, built: Instant) {
        let d = |a: Instant, b: Instant| b.saturating_duration_since(a);
        self.route.record(d(s.arrived, s.entered));
        self.checks.record(d(s.entered, s.queued));
        self.exchange.record(d(s.queued, s.answered));
        self.wake.record(d(s.answered, s.resumed));
        self.answer.record(d(s.resumed, built));
        self.total.record(d(s.arrived, built));
    }
}

/// The instants of one order's way through the gateway.
#[derive(Debug, Clone, Copy)]
pub struct OrderStamps {
    /// Handed to the service ([`Arrived`]).
    pub arrived: Instant,
    /// Handler entered.
    pub entered: Instant,
    /// Queued to the session.
    pub queued: Instant,
    /// Answered by the session task.
    pub answered: Instant,
    /// Handler resumed.
    pub resumed: Instant,
}

/// The value at quantile `q` of a bucket list (such as the difference of two
/// snapshots), interpolated linearly inside its bucket; `None` when empty.
pub fn quantile(buckets: &[(u64, u64)], q: f64) -> Option<u64> {
    let total: u64 = buckets.iter().map(|b| b.1).sum();
    if total == 0 {
        return None;
    }
    let rank = (q.clamp(0.0, 1.0) * total as f64).max(1.0);
    let mut seen = 0u64;
    for &(hi, n) in buckets {
        if n == 0 {
            continue;
        }
        if (seen + n) as f64 >= rank {
            let lo = lower(hi);
            let frac = (rank - seen as f64) / n as f64;
            return Some(lo + ((hi - lo) as f64 * frac) as u64);
        }
        seen += n;
    }
    buckets.last().map(|b| b.0)
}

/// The inclusive lower bound of the bucket whose exclusive upper bound is `hi`.
fn lower(hi: u64) -> u64 {
    let i = bucket(hi.saturating_sub(1));
    if i == 0 {
        0
    } else {
        upper(i - 1)
    }
}

/// `after − before`, bucket by bucket (counts only grow, so never negative).
pub fn difference(after: &[(u64, u64)], before: &[(u64, u64)]) -> Vec<(u64, u64)> {
    after
        .iter()
        .map(|&(hi, n)| {
            let was = before.iter().find(|b| b.0 == hi).map_or(0, |b| b.1);
            (hi, n.saturating_sub(was))
        })
        .filter(|b| b.1 > 0)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_contiguous_and_at_most_an_eighth_wide() {
        let mut lo = 0;
        for i in 0..BUCKETS {
            let hi = upper(i);
            assert!(hi > lo, "bucket {i}: {lo}..{hi}");
            assert_eq!(bucket(lo), i, "lower edge of bucket {i}");
            assert_eq!(bucket(hi - 1), i, "top of bucket {i}");
            if lo >= SUB && hi < u64::MAX {
                assert!((hi - lo) * SUB <= lo, "bucket {i} {lo}..{hi} too wide");
            }
            lo = hi;
        }
        assert_eq!(
            bucket(u64::MAX),
            BUCKETS - 1,
            "the largest value has a bucket"
        );
    }

    #[test]
    fn prometheus_edges_are_bucket_edges_so_counts_are_exact() {
        let l = Latency::default();
        for us in [1u64, 30, 31, 32, 33, 47, 48, 49, 100, 5_000] {
            l.record(Duration::from_micros(us));
        }
        let h = l.prometheus(10..=30);
        assert_eq!(h.count, 10);
        let at = |le_ns: u64| -> u64 {
            h.buckets
                .iter()
                .take_while(|b| b.0 <= le_ns as f64 / 1e9 + 1e-15)
                .map(|b| b.1)
                .sum()
        };
        // 2^15 ns = 32.768 µs: 1, 30, 31, 32 µs are at or below it.
        assert_eq!(at(1 << 15), 4);
        // 1.5 × 2^15 ns = 49.152 µs: everything up to 49 µs.
        assert_eq!(at(3 << 14), 8);
        assert_eq!(h.buckets.iter().map(|b| b.1).sum::<u64>(), 10);
        assert!((h.sum - 5_371e-6).abs() < 1e-9, "{}", h.sum);
    }

    /// `q` is within a bucket's width (12.5%) of `ns`.
    fn near(ns: u64, q: u64) -> bool {
        q.abs_diff(ns) <= ns / 8 + 1
    }

    #[test]
    fn quantiles_of_a_difference_fall_in_the_right_bucket() {
        let l = Latency::default();
        for _ in 0..100 {
            l.record(Duration::from_micros(1_000));
        }
        let before = l.buckets();
        for _ in 0..90 {
            l.record(Duration::from_micros(100));
        }
        for _ in 0..10 {
            l.record(Duration::from_micros(300));
        }
        let d = difference(&l.buckets(), &before);
        assert_eq!(d.iter().map(|b| b.1).sum::<u64>(), 100, "only the new ones");
        let p50 = quantile(&d, 0.5).unwrap();
        assert!(near(100_000, p50), "{p50}");
        let p99 = quantile(&d, 0.99).unwrap();
        assert!(near(300_000, p99), "{p99}");
        assert_eq!(quantile(&[], 0.5), None);
    }

    #[test]
    fn stages_add_up_to_the_total() {
        let s = OrderStages::default();
        let t0 = Instant::now();
        let st = OrderStamps {
            arrived: t0,
            entered: t0 + Duration::from_micros(20),
            queued: t0 + Duration::from_micros(30),
            answered: t0 + Duration::from_micros(130),
            resumed: t0 + Duration::from_micros(160),
        };
        s.record(&st, t0 + Duration::from_micros(170));
        let one = |l: &Latency| quantile(&l.buckets(), 0.5).unwrap();
        assert!(near(20_000, one(&s.route)));
        assert!(near(10_000, one(&s.checks)));
        assert!(near(100_000, one(&s.exchange)));
        assert!(near(30_000, one(&s.wake)));
        assert!(near(10_000, one(&s.answer)));
        assert!(near(170_000, one(&s.total)));
        assert!(
            !near(170_000, one(&s.exchange)),
            "the control: stages differ"
        );
    }
}
