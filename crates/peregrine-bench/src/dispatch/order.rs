//! The order that travels the pipeline, the clock that stamps it, and the busy work.

use std::hint::black_box;
use std::time::Instant;

use peregrine_queue::clock::now_ns;
use peregrine_types::stamp::Stamps;

/// One order: plain old data so the shared-memory ring can carry it. 80 bytes.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct Order {
    /// Position in the strategy's schedule.
    pub seq: u32,
    /// Owning strategy.
    pub strategy: u16,
    /// Destination gateway.
    pub venue: u16,
    /// Scheduled venue delay D in ns.
    pub delay_ns: u64,
    /// t1..t8 in ns since the run's clock base; see [`peregrine_types::stamp`].
    pub ts: Stamps,
}

/// Which time source stamps the orders.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ClockKind {
    /// `CLOCK_MONOTONIC` ([`peregrine_queue::clock::now_ns`], the order path's clock;
    /// vDSO, ordered read: stamps taken on two threads after a hand-off never go
    /// backwards).
    Monotonic,
    /// Raw TSC through `quanta`: cheaper, but `rdtsc` is not ordered with the queue's
    /// loads, so a consumer's stamp can land a few ns before the producer's.
    Tsc,
}

impl std::str::FromStr for ClockKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "monotonic" => Ok(Self::Monotonic),
            "tsc" => Ok(Self::Tsc),
            other => Err(format!(
                "unknown clock {other:?} (expected monotonic or tsc)"
            )),
        }
    }
}

/// A nanosecond clock relative to a base taken at construction.
#[derive(Debug, Clone)]
pub struct Clock {
    kind: ClockKind,
    tsc: quanta::Clock,
    tsc_base: u64,
    mono_base: u64,
}

impl Clock {
    /// Calibrates the TSC (once) and sets the base to now.
    pub fn new(kind: ClockKind) -> Self {
        let tsc = quanta::Clock::new();
        let tsc_base = tsc.raw();
        Self {
            kind,
            tsc,
            tsc_base,
            mono_base: now_ns(),
        }
    }

    /// Nanoseconds since the base.
    #[inline]
    pub fn now(&self) -> u64 {
        match self.kind {
            ClockKind::Tsc => self.tsc.delta_as_nanos(self.tsc_base, self.tsc.raw()),
            ClockKind::Monotonic => now_ns().wrapping_sub(self.mono_base),
        }
    }

    /// Mean cost of one [`Clock::now`] with each kind, in ns: (TSC, monotonic).
    pub fn overhead_ns(reads: u32) -> (f64, f64) {
        let per_read = |kind| {
            let clock = Clock::new(kind);
            let start = Instant::now();
            for _ in 0..reads {
                black_box(clock.now());
            }
            start.elapsed().as_nanos() as f64 / f64::from(reads)
        };
        (per_read(ClockKind::Tsc), per_read(ClockKind::Monotonic))
    }
}

/// Busy work of a calibrated length: a dependent arithmetic chain the optimiser cannot
/// remove.
#[derive(Debug, Clone, Copy)]
pub struct Work {
    /// Loop iterations per nanosecond, measured once.
    iters_per_ns: f64,
}

#[inline(never)]
fn spin(iters: u64) -> u64 {
    let mut x = black_box(0x9E37_79B9_7F4A_7C15u64);
    for _ in 0..iters {
        x = black_box(x.rotate_left(5) ^ 0x5851_F42D);
    }
    x
}

impl Work {
    /// Times `spin` against the clock: best of a few tries, so a preempted try does not
    /// make the loop look slow.
    pub fn calibrate() -> Self {
        const ITERS: u64 = 2_000_000;
        let best_ns = (0..5)
            .map(|_| {
                let start = Instant::now();
                black_box(spin(ITERS));
                start.elapsed().as_nanos().max(1) as f64
            })
            .fold(f64::INFINITY, f64::min);
        Self {
            iters_per_ns: ITERS as f64 / best_ns,
        }
    }

    /// Iterations that take about `ns`.
    pub fn iters_for(&self, ns: u64) -> u64 {
        (ns as f64 * self.iters_per_ns).round() as u64
    }

    /// Nanoseconds per iteration.
    pub fn ns_per_iter(&self) -> f64 {
        1.0 / self.iters_per_ns
    }

    /// Burns `iters` iterations.
    #[inline]
    pub fn run(iters: u64) {
        if iters > 0 {
            black_box(spin(iters));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_layout_has_no_padding() {
        assert_eq!(std::mem::size_of::<Order>(), 80);
        assert_eq!(std::mem::offset_of!(Order, strategy), 4);
        assert_eq!(std::mem::offset_of!(Order, venue), 6);
        assert_eq!(std::mem::offset_of!(Order, delay_ns), 8);
        assert_eq!(std::mem::offset_of!(Order, ts), 16);
    }

    #[test]
    fn clock_is_monotonic_on_one_thread() {
        for kind in [ClockKind::Tsc, ClockKind::Monotonic] {
            let clock = Clock::new(kind);
            let a = clock.now();
            let b = clock.now();
            assert!(b >= a);
        }
        assert_eq!("tsc".parse(), Ok(ClockKind::Tsc));
        assert!("wall".parse::<ClockKind>().is_err());
    }

    #[test]
    fn work_scales_with_ns() {
        let work = Work::calibrate();
        assert_eq!(work.iters_for(0), 0);
        assert!(work.iters_for(2000) >= work.iters_for(1000));
        Work::run(work.iters_for(100));
    }
}
