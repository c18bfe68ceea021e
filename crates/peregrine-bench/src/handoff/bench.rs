//! The two measurements, generic over a queue [`Family`] carrying `u64`.
//!
//! * Ping-pong: thread A sends a value over queue 1, thread B echoes it over queue 2,
//!   A times the round trip with the TSC clock. One message in flight, so this is the
//!   hand-off latency including both cache-line transfers.
//! * Throughput: A pushes `count` values as fast as the queue accepts them, B pops them;
//!   messages per second over the whole transfer.
//!
//! Both threads are pinned (to cores handed in by the caller, listed once on the main
//! thread) and spin with the configured wait strategy.

use std::sync::Barrier;
use std::time::Instant;

use hdrhistogram::Histogram;
use peregrine_queue::pin::CoreId;
use peregrine_queue::{pin_current, PinOutcome, WaitStrategy};

use crate::dispatch::order::{Clock, ClockKind};
use crate::dispatch::queues::Family;

/// Stop value for the echo thread.
const STOP: u64 = u64::MAX;

/// Ping-pong round-trip percentiles in ns.
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct RoundTrip {
    /// Median.
    pub p50: u64,
    /// 90th percentile.
    pub p90: u64,
    /// 99th percentile.
    pub p99: u64,
    /// 99.9th percentile.
    pub p999: u64,
    /// Maximum.
    pub max: u64,
}

/// How to run one measurement.
#[derive(Debug, Clone, Copy)]
pub struct Plan<'a> {
    /// Queue capacity.
    pub capacity: usize,
    /// Cores for thread A and thread B (empty: no pinning).
    pub cores: &'a [CoreId],
    /// Idle behaviour.
    pub wait: WaitStrategy,
}

impl Plan<'_> {
    fn core(&self, k: usize) -> Option<CoreId> {
        (!self.cores.is_empty()).then(|| self.cores[k % self.cores.len()])
    }
}

#[inline]
fn send_spin<F: Family<u64>>(tx: &mut F::Tx, mut value: u64, wait: WaitStrategy) {
    let mut waiter = wait.waiter();
    while let Err(back) = F::send(tx, value) {
        value = back;
        waiter.idle();
    }
}

#[inline]
fn recv_spin<F: Family<u64>>(rx: &mut F::Rx, wait: WaitStrategy) -> u64 {
    let mut waiter = wait.waiter();
    loop {
        if let Some(value) = F::recv(rx) {
            return value;
        }
        waiter.idle();
    }
}

/// Runs `warmup + iters` round trips; returns percentiles of the last `iters` and the
/// pinning outcomes.
pub fn ping_pong<F: Family<u64>>(
    plan: &Plan<'_>,
    warmup: u64,
    iters: u64,
) -> anyhow::Result<(RoundTrip, Vec<PinOutcome>)> {
    let (mut ping_tx, mut ping_rx) = F::channel(1, plan.capacity)?;
    let (mut pong_tx, mut pong_rx) = F::channel(1, plan.capacity)?;
    let (mut ping_tx, mut pong_tx) = (
        ping_tx.pop().ok_or_else(|| anyhow::anyhow!("no sender"))?,
        pong_tx.pop().ok_or_else(|| anyhow::anyhow!("no sender"))?,
    );
    let mut hist = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3)?;
    // Both stamps of a round trip are taken on one thread, so the TSC's lack of
    // ordering across threads does not matter here.
    let clock = Clock::new(ClockKind::Tsc);
    let wait = plan.wait;
    let (core_a, core_b) = (plan.core(0), plan.core(1));
    let pins = std::thread::scope(|scope| -> anyhow::Result<Vec<PinOutcome>> {
        let echo = scope.spawn(move || {
            let pinned = pin_current("echo", core_b);
            loop {
                let value = recv_spin::<F>(&mut ping_rx, wait);
                send_spin::<F>(&mut pong_tx, value, wait);
                if value == STOP {
                    return pinned;
                }
            }
        });
        let pinger = scope.spawn(|| {
            let pinned = pin_current("ping", core_a);
            for i in 0..warmup + iters {
                let start = clock.now();
                send_spin::<F>(&mut ping_tx, i, wait);
                let back = recv_spin::<F>(&mut pong_rx, wait);
                let rtt = clock.now() - start;
                debug_assert_eq!(back, i);
                if i >= warmup {
                    hist.saturating_record(rtt.max(1));
                }
            }
            send_spin::<F>(&mut ping_tx, STOP, wait);
            recv_spin::<F>(&mut pong_rx, wait);
            pinned
        });
        let join = |_| anyhow::anyhow!("a hand-off thread panicked");
        Ok(vec![
            pinger.join().map_err(join)?,
            echo.join().map_err(join)?,
        ])
    })?;
    let rt = RoundTrip {
        p50: hist.value_at_quantile(0.50),
        p90: hist.value_at_quantile(0.90),
        p99: hist.value_at_quantile(0.99),
        p999: hist.value_at_quantile(0.999),
        max: hist.max(),
    };
    Ok((rt, pins))
}

/// Moves `count` values one way; returns millions of messages per second.
pub fn throughput<F: Family<u64>>(plan: &Plan<'_>, count: u64) -> anyhow::Result<f64> {
    let (mut txs, mut rx) = F::channel(1, plan.capacity)?;
    let mut tx = txs.pop().ok_or_else(|| anyhow::anyhow!("no sender"))?;
    let barrier = Barrier::new(2);
    let wait = plan.wait;
    let (core_a, core_b) = (plan.core(0), plan.core(1));
    let elapsed = std::thread::scope(|scope| -> anyhow::Result<f64> {
        let producer = scope.spawn(|| {
            pin_current("producer", core_a);
            barrier.wait();
            for i in 0..count {
                send_spin::<F>(&mut tx, i, wait);
            }
        });
        let consumer = scope.spawn(|| {
            pin_current("consumer", core_b);
            barrier.wait();
            let start = Instant::now();
            let mut sum = 0u64;
            for _ in 0..count {
                sum = sum.wrapping_add(recv_spin::<F>(&mut rx, wait));
            }
            std::hint::black_box(sum);
            start.elapsed().as_secs_f64()
        });
        let join = |_| anyhow::anyhow!("a hand-off thread panicked");
        producer.join().map_err(join)?;
        consumer.join().map_err(join)
    })?;
    Ok(count as f64 / elapsed / 1e6)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dispatch::queues::{ArrayQ, PeregrineSpsc, ShmMpscRing};

    const PLAN: Plan<'static> = Plan {
        capacity: 64,
        cores: &[],
        wait: WaitStrategy::SpinThenYield,
    };

    #[test]
    fn ping_pong_orders_percentiles() {
        let (rt, pins) = ping_pong::<PeregrineSpsc>(&PLAN, 10, 200).unwrap();
        assert!(rt.p50 <= rt.p90 && rt.p90 <= rt.p99 && rt.p99 <= rt.p999);
        assert!(rt.p999 <= rt.max && rt.p50 > 0);
        assert_eq!(pins.len(), 2);
        ping_pong::<ShmMpscRing>(&PLAN, 0, 50).unwrap();
    }

    #[test]
    fn throughput_moves_everything() {
        assert!(throughput::<ArrayQ>(&PLAN, 10_000).unwrap() > 0.0);
    }
}
