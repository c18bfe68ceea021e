//! Timing: per-op latency with the TSC (quanta), and whole-run throughput.

use hdrhistogram::Histogram;
use serde::Serialize;

use super::candidates::Candidate;
use super::workload::Scenario;

/// One candidate on one scenario.
#[derive(Debug, Clone, Serialize)]
pub struct Stats {
    /// Scenario name.
    pub scenario: String,
    /// Candidate name.
    pub candidate: &'static str,
    /// Timed operations.
    pub ops: u64,
    /// Nanoseconds per timed op, including one timer read (see `timer_overhead_ns`).
    pub min: u64,
    /// Median.
    pub p50: u64,
    /// 90th percentile.
    pub p90: u64,
    /// 99th percentile.
    pub p99: u64,
    /// 99.9th percentile.
    pub p999: u64,
    /// Largest.
    pub max: u64,
    /// Mean.
    pub mean: f64,
    /// Steps per second over an untimed replay of all steps (restoring steps included),
    /// median of the repeats.
    pub ops_per_sec: f64,
    /// Wall time of that untimed replay, microseconds (median).
    pub run_us: f64,
}

/// The cost of the timing itself: median of back-to-back TSC reads, in ns.
pub fn timer_overhead_ns(clock: &quanta::Clock) -> u64 {
    let mut h = Histogram::<u64>::new_with_bounds(1, 1_000_000, 3).expect("static bounds");
    for _ in 0..200_000 {
        let a = clock.raw();
        let b = clock.raw();
        let _ = h.record(clock.delta_as_nanos(a, b).max(1));
    }
    h.value_at_quantile(0.5)
}

/// Runs `s` on a fresh `C`: one pass timing each op, then `repeats` untimed passes for
/// throughput.
pub fn measure<C: Candidate>(s: &Scenario, clock: &quanta::Clock, repeats: usize) -> Stats {
    // Warm-up: one untimed replay, so caches, branch predictors, the allocator and the
    // CPU clock are in the same state for every candidate.
    let _ = replay::<C>(s, clock);
    let mut hist = Histogram::<u64>::new_with_bounds(1, 100_000_000_000, 3).expect("static bounds");
    let mut book = C::build(s);
    for op in &s.setup {
        book.apply(op);
    }
    for (i, (op, timed)) in s.steps.iter().enumerate() {
        let next = &s.steps[i + 1..];
        if *timed {
            let a = clock.raw();
            book.apply_next(op, next);
            let b = clock.raw();
            let _ = hist.record(clock.delta_as_nanos(a, b).max(1));
        } else {
            book.apply_next(op, next);
        }
    }
    drop(book);
    let mut runs: Vec<f64> = (0..repeats.max(1)).map(|_| replay::<C>(s, clock)).collect();
    runs.sort_by(f64::total_cmp);
    let run_ns = runs[runs.len() / 2].max(1.0);
    Stats {
        scenario: s.name.clone(),
        candidate: C::NAME,
        ops: hist.len(),
        min: hist.min(),
        p50: hist.value_at_quantile(0.50),
        p90: hist.value_at_quantile(0.90),
        p99: hist.value_at_quantile(0.99),
        p999: hist.value_at_quantile(0.999),
        max: hist.max(),
        mean: hist.mean(),
        ops_per_sec: s.steps.len() as f64 / (run_ns / 1e9),
        run_us: run_ns / 1e3,
    }
}

/// Builds a fresh book, runs the setup, and times an untimed replay of every step (ns).
fn replay<C: Candidate>(s: &Scenario, clock: &quanta::Clock) -> f64 {
    let mut book = C::build(s);
    for op in &s.setup {
        book.apply(op);
    }
    let a = clock.raw();
    for (i, (op, _)) in s.steps.iter().enumerate() {
        book.apply_next(op, &s.steps[i + 1..]);
    }
    let b = clock.raw();
    std::hint::black_box(&book);
    clock.delta_as_nanos(a, b) as f64
}
