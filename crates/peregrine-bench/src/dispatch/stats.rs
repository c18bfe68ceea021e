//! Per-run statistics: percentiles, the 7 segments, and the Little's-law check.
//!
//! Everything is computed after the run from the orders' timestamps, so the hot path
//! carries no counters.

use peregrine_types::stamp;

use super::order::Order;
use super::pipeline::FullCounts;

/// The 7 segments: name, from-stamp, to-stamp, and what kind of hand-off it is.
pub const SEGMENTS: [(&str, usize, usize, &str); 7] = [
    (
        "submit",
        stamp::STRATEGY_SEND,
        stamp::ORCH_RECV_SUBMIT,
        "MPSC, candidate",
    ),
    (
        "orch_pre_dispatch",
        stamp::ORCH_RECV_SUBMIT,
        stamp::ORCH_DISPATCH,
        "internal, includes W",
    ),
    (
        "dispatch",
        stamp::ORCH_DISPATCH,
        stamp::GATEWAY_RECV,
        "SPSC, fixed",
    ),
    (
        "venue_service",
        stamp::GATEWAY_RECV,
        stamp::GATEWAY_DONE,
        "venue D + gateway lateness",
    ),
    (
        "completion",
        stamp::GATEWAY_DONE,
        stamp::ORCH_RECV_COMPLETION,
        "MPSC, candidate",
    ),
    (
        "orch_post_process",
        stamp::ORCH_RECV_COMPLETION,
        stamp::ORCH_RETURN,
        "internal",
    ),
    (
        "return",
        stamp::ORCH_RETURN,
        stamp::STRATEGY_RECV,
        "SPSC, fixed",
    ),
];

/// Percentiles of one latency, in ns.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct Pcts {
    /// Median.
    pub p50: u64,
    /// 99th percentile.
    pub p99: u64,
    /// 99.9th percentile.
    pub p999: u64,
    /// Maximum.
    pub max: u64,
    /// Mean.
    pub mean: f64,
}

/// Nearest-rank percentile of sorted values: the smallest value with at least `q` of
/// the values at or below it. 0 for no values.
pub fn percentile(sorted: &[u64], q: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

impl Pcts {
    /// Sorts `values` and summarises them.
    pub fn of(values: &mut [u64]) -> Self {
        values.sort_unstable();
        let sum: u128 = values.iter().map(|&v| u128::from(v)).sum();
        Self {
            p50: percentile(values, 0.50),
            p99: percentile(values, 0.99),
            p999: percentile(values, 0.999),
            max: values.last().copied().unwrap_or(0),
            mean: if values.is_empty() {
                0.0
            } else {
                sum as f64 / values.len() as f64
            },
        }
    }
}

/// Little's law for the dispatch system (orders between t1 and t4, or between t5 and
/// t8): the time-averaged number in flight measured over the middle 80% of the fire
/// span, against arrival rate × mean rt-venue of the orders fired in that span. In a
/// steady state they agree; a backlog that grows during the run makes them diverge.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct Little {
    /// Orders fired per second in the measured span.
    pub throughput_per_s: f64,
    /// Mean rt-venue of those orders, ns.
    pub mean_latency_ns: f64,
    /// throughput × mean latency.
    pub predicted_in_flight: f64,
    /// Time-averaged count in flight, from the timestamps.
    pub measured_in_flight: f64,
}

impl Little {
    /// measured / predicted (1 when both are 0).
    pub fn ratio(&self) -> f64 {
        if self.predicted_in_flight == 0.0 {
            if self.measured_in_flight == 0.0 {
                1.0
            } else {
                f64::INFINITY
            }
        } else {
            self.measured_in_flight / self.predicted_in_flight
        }
    }

    /// Computes the check from completed orders.
    pub fn of(orders: &[Order]) -> Self {
        let sends = orders.iter().map(|o| o.ts[stamp::STRATEGY_SEND]);
        let (Some(first), Some(last)) = (sends.clone().min(), sends.max()) else {
            return Self::default();
        };
        let span = last - first;
        let (a, b) = (first + span / 10, first + span - span / 10);
        if b <= a {
            return Self::default();
        }
        let overlap = |s: u64, e: u64| e.min(b).saturating_sub(s.max(a));
        let mut busy_ns: u128 = 0;
        let (mut arrivals, mut latency_sum) = (0u64, 0u128);
        for o in orders {
            let t = &o.ts;
            busy_ns += u128::from(overlap(t[0], t[3])) + u128::from(overlap(t[4], t[7]));
            if (a..b).contains(&t[0]) {
                arrivals += 1;
                latency_sum += u128::from(rt_venue(o));
            }
        }
        let window = (b - a) as f64;
        let throughput_per_ns = arrivals as f64 / window;
        let mean = if arrivals == 0 {
            0.0
        } else {
            latency_sum as f64 / arrivals as f64
        };
        Self {
            throughput_per_s: throughput_per_ns * 1e9,
            mean_latency_ns: mean,
            predicted_in_flight: throughput_per_ns * mean,
            measured_in_flight: busy_ns as f64 / window,
        }
    }
}

/// Round trip minus the measured venue time.
pub fn rt_venue(o: &Order) -> u64 {
    let rt = o.ts[stamp::STRATEGY_RECV].saturating_sub(o.ts[stamp::STRATEGY_SEND]);
    rt.saturating_sub(o.ts[stamp::GATEWAY_DONE].saturating_sub(o.ts[stamp::GATEWAY_RECV]))
}

/// Everything reported about one run.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct RunStats {
    /// Orders that came back.
    pub completed: usize,
    /// Orders scheduled but not back by the deadline.
    pub missing: usize,
    /// Round trip t8 − t1.
    pub rt: Pcts,
    /// Round trip minus measured venue time (t5 − t4).
    pub rt_venue: Pcts,
    /// Round trip minus the scheduled D: also counts gateway lateness.
    pub rt_minus_d: Pcts,
    /// The 7 segments, in [`SEGMENTS`] order.
    pub segments: Vec<Pcts>,
    /// Full counts.
    pub full: FullCounts,
    /// Little's-law check.
    pub little: Little,
    /// Orders whose timestamps are not non-decreasing (should be 0).
    pub out_of_order: usize,
    /// Largest backwards step between consecutive stamps of one order, ns.
    pub max_backstep_ns: u64,
    /// A thread gave up at the deadline.
    pub timed_out: bool,
}

impl RunStats {
    /// Summarises one run.
    pub fn of(orders: &[Order], scheduled: usize, full: FullCounts, timed_out: bool) -> Self {
        let column = |f: &dyn Fn(&Order) -> u64| {
            let mut values: Vec<u64> = orders.iter().map(f).collect();
            Pcts::of(&mut values)
        };
        let rt = column(&|o| o.ts[7].saturating_sub(o.ts[0]));
        let rt_venue_p = column(&rt_venue);
        let rt_minus_d = column(&|o| o.ts[7].saturating_sub(o.ts[0]).saturating_sub(o.delay_ns));
        let segments = SEGMENTS
            .iter()
            .map(|&(_, from, to, _)| column(&|o| o.ts[to].saturating_sub(o.ts[from])))
            .collect();
        Self {
            completed: orders.len(),
            missing: scheduled.saturating_sub(orders.len()),
            rt,
            rt_venue: rt_venue_p,
            rt_minus_d,
            segments,
            full,
            little: Little::of(orders),
            out_of_order: orders.iter().filter(|o| !o.ts.is_sorted()).count(),
            max_backstep_ns: orders
                .iter()
                .flat_map(|o| o.ts.windows(2).map(|w| w[0].saturating_sub(w[1])))
                .max()
                .unwrap_or(0),
            timed_out,
        }
    }
}

/// Median of `values` (mean of the middle two for an even count); 0 for none.
pub fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// (max − min) / median, the run-to-run spread; 0 when the median is 0.
pub fn spread(values: &[f64]) -> f64 {
    let m = median(values);
    let max = values.iter().copied().fold(f64::MIN, f64::max);
    let min = values.iter().copied().fold(f64::MAX, f64::min);
    if m == 0.0 || values.is_empty() {
        0.0
    } else {
        (max - min) / m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<u64> = (1..=1000).collect();
        assert_eq!(percentile(&v, 0.5), 500);
        assert_eq!(percentile(&v, 0.99), 990);
        assert_eq!(percentile(&v, 0.999), 999);
        assert_eq!(percentile(&v, 1.0), 1000);
        assert_eq!(percentile(&v, 0.0), 1);
        assert_eq!(percentile(&[], 0.5), 0);
        assert_eq!(percentile(&[7], 0.999), 7);
        let mut w = vec![5, 1, 3, 2, 4];
        let p = Pcts::of(&mut w);
        assert_eq!((p.p50, p.p99, p.max), (3, 5, 5));
        assert!((p.mean - 3.0).abs() < 1e-12);
    }

    #[test]
    fn median_and_spread() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median(&[]), 0.0);
        assert!((spread(&[9.0, 10.0, 11.0]) - 0.2).abs() < 1e-12);
        assert_eq!(spread(&[0.0, 0.0]), 0.0);
    }

    /// Order fired at `t1`, dispatch legs of `pre` and `post` ns around a venue `d`.
    fn order(t1: u64, pre: u64, d: u64, post: u64) -> Order {
        let mut o = Order {
            delay_ns: d,
            ..Order::default()
        };
        o.ts = [
            t1,
            t1,
            t1,
            t1 + pre,
            t1 + pre + d,
            t1 + pre + d,
            t1 + pre + d,
            t1 + pre + d + post,
        ];
        o
    }

    #[test]
    fn littles_law_in_steady_state() {
        // One order every 100 ns, rt-venue 1000 ns: 10 in flight on average.
        let orders: Vec<Order> = (0..100_000)
            .map(|i| order(i * 100, 400, 5_000, 600))
            .collect();
        let l = Little::of(&orders);
        assert!((l.throughput_per_s - 1e7).abs() / 1e7 < 1e-3, "{l:?}");
        assert!((l.mean_latency_ns - 1000.0).abs() < 1e-9);
        assert!((l.predicted_in_flight - 10.0).abs() < 0.01, "{l:?}");
        assert!((l.ratio() - 1.0).abs() < 0.01, "{l:?}");
    }

    #[test]
    fn littles_law_flags_a_growing_backlog() {
        // Latency grows with every order: in flight keeps rising, the ratio drifts.
        let orders: Vec<Order> = (0..10_000).map(|i| order(i * 100, 10 * i, 0, 0)).collect();
        assert!((Little::of(&orders).ratio() - 1.0).abs() > 0.05);
        assert_eq!(Little::of(&[]).ratio(), 1.0);
    }

    #[test]
    fn run_stats_from_orders() {
        let mut orders: Vec<Order> = (0..10).map(|i| order(i * 1000, 100, 50, 10)).collect();
        orders[3].ts[2] = 0; // out of order
        let s = RunStats::of(&orders, 12, FullCounts::default(), false);
        assert_eq!((s.completed, s.missing, s.out_of_order), (10, 2, 1));
        assert_eq!(s.max_backstep_ns, 3000);
        assert_eq!(s.rt.p50, 160);
        assert_eq!(s.rt_venue.p50, 110);
        assert_eq!(s.rt_minus_d.p50, 110);
        assert_eq!(s.segments.len(), 7);
        assert_eq!(s.segments[3].p50, 50);
    }
}
