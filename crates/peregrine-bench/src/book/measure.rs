//! Timing: per-op latency with the TSC (quanta), and whole-run throughput.

use hdrhistogram::Histogram;
use serde::Serialize;

use super::candidates::Candidate;
use super::workload::Scenario;

/// One candidate on one scenario.
#[derive(Debug, Clone, Serialize)]
pub(super) struct Stats {
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
    /// Steps per second over untimed replays of all steps (restoring steps included):
    /// each replay is timed in consecutive chunks of 1,024 steps (fewer for short
    /// scenarios) and this is the chunk size over the median chunk time of all
    /// repeats, so preemptions on a loaded machine spoil some chunks, not the figure.
    pub ops_per_sec: f64,
    /// Wall time of a whole untimed replay, microseconds (median of the repeats).
    pub run_us: f64,
}

/// The cost of the timing itself: median of back-to-back TSC reads, in ns.
pub(super) fn timer_overhead_ns(clock: &quanta::Clock) -> u64 {
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
pub(super) fn measure<C: Candidate>(s: &Scenario, clock: &quanta::Clock, repeats: usize) -> Stats {
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
    let (mut runs, mut chunks) = (Vec::new(), Vec::new());
    for _ in 0..repeats.max(1) {
        let r = replay::<C>(s, clock);
        runs.push(r.total_ns);
        chunks.extend(r.chunk_ns);
    }
    runs.sort_by(f64::total_cmp);
    chunks.sort_by(f64::total_cmp);
    let run_ns = runs[runs.len() / 2].max(1.0);
    let chunk_ns = chunks[chunks.len() / 2].max(1.0);
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
        ops_per_sec: chunk_len(s) as f64 / (chunk_ns / 1e9),
        run_us: run_ns / 1e3,
    }
}

/// Steps per timed chunk of an untimed replay (the last, shorter chunk is not
/// counted): short enough that most chunks see no preemption on a loaded machine,
/// long enough that the two clock reads per chunk cost nothing.
fn chunk_len(s: &Scenario) -> usize {
    (s.steps.len() / 20).clamp(1, 1_024)
}

/// The throughput method of every bench here: a run timed in consecutive chunks of
/// `len` steps (the clock is read only between chunks), whose median chunk time gives
/// steps per second; preemption on a loaded machine spoils some chunks, not the
/// figure. [`Chunks::step`] after each step; [`Chunks::finish`] at the end.
#[derive(Debug)]
pub(crate) struct Chunks<'c> {
    clock: &'c quanta::Clock,
    len: usize,
    done: usize,
    start: u64,
    last: u64,
    chunk_ns: Vec<f64>,
}

impl<'c> Chunks<'c> {
    /// Starts timing now, in chunks of `len` steps.
    pub(crate) fn start(clock: &'c quanta::Clock, len: usize) -> Chunks<'c> {
        let now = clock.raw();
        Chunks {
            clock,
            len: len.max(1),
            done: 0,
            start: now,
            last: now,
            chunk_ns: Vec::new(),
        }
    }

    /// One step done.
    #[inline]
    pub(crate) fn step(&mut self) {
        self.done += 1;
        if self.done.is_multiple_of(self.len) {
            let now = self.clock.raw();
            self.chunk_ns
                .push(self.clock.delta_as_nanos(self.last, now) as f64);
            self.last = now;
        }
    }

    /// Whole time and the complete chunks' times (ns).
    pub(crate) fn finish(self) -> (f64, Vec<f64>) {
        let end = self.clock.raw();
        (
            self.clock.delta_as_nanos(self.start, end) as f64,
            self.chunk_ns,
        )
    }
}

/// One untimed replay: whole time and per-chunk times (ns).
struct Replay {
    total_ns: f64,
    chunk_ns: Vec<f64>,
}

/// Builds a fresh book, runs the setup, and times an untimed replay of every step,
/// reading the clock only between chunks.
fn replay<C: Candidate>(s: &Scenario, clock: &quanta::Clock) -> Replay {
    let mut book = C::build(s);
    for op in &s.setup {
        book.apply(op);
    }
    let mut chunks = Chunks::start(clock, chunk_len(s));
    for (i, (op, _)) in s.steps.iter().enumerate() {
        book.apply_next(op, &s.steps[i + 1..]);
        chunks.step();
    }
    let (total_ns, chunk_ns) = chunks.finish();
    std::hint::black_box(&book);
    Replay { total_ns, chunk_ns }
}
