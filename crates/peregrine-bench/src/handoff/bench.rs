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
    let mut waiter = wait.idler();
    while let Err(back) = F::send(tx, value) {
        value = back;
        waiter.idle();
    }
}

#[inline]
fn recv_spin<F: Family<u64>>(rx: &mut F::Rx, wait: WaitStrategy) -> u64 {
    let mut waiter = wait.idler();
    loop {
        if let Some(value) = F::recv(rx) {
            return value;
        }
        waiter.idle();
    }
}

// Every thread body below takes its queue handles *by value*, so they live on that
// thread's own stack. Borrowing them from the spawning frame put the producer's and the
// consumer's private indices next to each other on one cache line: false sharing that
// cut one-way throughput by up to 3x and made it depend on struct sizes.

/// The echo side of the ping-pong: returns every value until [`STOP`].
fn echo<F: Family<u64>>(
    mut rx: F::Rx,
    mut tx: F::Tx,
    wait: WaitStrategy,
    core: Option<CoreId>,
) -> PinOutcome {
    let pinned = pin_current("echo", core);
    loop {
        let value = recv_spin::<F>(&mut rx, wait);
        send_spin::<F>(&mut tx, value, wait);
        if value == STOP {
            return pinned;
        }
    }
}

/// The timing side of the ping-pong.
fn ping<F: Family<u64>>(
    mut tx: F::Tx,
    mut rx: F::Rx,
    (warmup, iters): (u64, u64),
    wait: WaitStrategy,
    core: Option<CoreId>,
) -> anyhow::Result<(Histogram<u64>, PinOutcome)> {
    let pinned = pin_current("ping", core);
    let mut hist = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3)?;
    // Both stamps of a round trip are taken on this thread, so the TSC's lack of
    // ordering across threads does not matter here.
    let clock = Clock::new(ClockKind::Tsc);
    for i in 0..warmup + iters {
        let start = clock.now();
        send_spin::<F>(&mut tx, i, wait);
        let back = recv_spin::<F>(&mut rx, wait);
        let rtt = clock.now().saturating_sub(start);
        debug_assert_eq!(back, i);
        if i >= warmup {
            hist.saturating_record(rtt.max(1));
        }
    }
    send_spin::<F>(&mut tx, STOP, wait);
    recv_spin::<F>(&mut rx, wait);
    Ok((hist, pinned))
}

fn sender<F: Family<u64>>(mut txs: Vec<F::Tx>) -> anyhow::Result<F::Tx> {
    txs.pop().ok_or_else(|| anyhow::anyhow!("no sender"))
}

/// Runs `warmup + iters` round trips; returns percentiles of the last `iters` and the
/// pinning outcomes.
pub fn ping_pong<F: Family<u64>>(
    plan: &Plan<'_>,
    warmup: u64,
    iters: u64,
) -> anyhow::Result<(RoundTrip, Vec<PinOutcome>)> {
    let (ping_txs, ping_rx) = F::channel(1, plan.capacity)?;
    let (pong_txs, pong_rx) = F::channel(1, plan.capacity)?;
    let (ping_tx, pong_tx) = (sender::<F>(ping_txs)?, sender::<F>(pong_txs)?);
    let (wait, core_a, core_b) = (plan.wait, plan.core(0), plan.core(1));
    let join = |_| anyhow::anyhow!("a hand-off thread panicked");
    let (hist, pins) = std::thread::scope(|scope| -> anyhow::Result<_> {
        let echo = scope.spawn(move || echo::<F>(ping_rx, pong_tx, wait, core_b));
        let pinger =
            scope.spawn(move || ping::<F>(ping_tx, pong_rx, (warmup, iters), wait, core_a));
        let (hist, ping_pin) = pinger.join().map_err(join)??;
        Ok((hist, vec![ping_pin, echo.join().map_err(join)?]))
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

fn produce<F: Family<u64>>(
    mut tx: F::Tx,
    count: u64,
    plan: (WaitStrategy, Option<CoreId>),
    barrier: &Barrier,
) {
    pin_current("producer", plan.1);
    barrier.wait();
    for i in 0..count {
        send_spin::<F>(&mut tx, i, plan.0);
    }
}

fn consume<F: Family<u64>>(
    mut rx: F::Rx,
    count: u64,
    plan: (WaitStrategy, Option<CoreId>),
    barrier: &Barrier,
) -> f64 {
    pin_current("consumer", plan.1);
    barrier.wait();
    let start = Instant::now();
    let mut sum = 0u64;
    for _ in 0..count {
        sum = sum.wrapping_add(recv_spin::<F>(&mut rx, plan.0));
    }
    std::hint::black_box(sum);
    start.elapsed().as_secs_f64()
}

/// Moves `count` values one way; returns millions of messages per second.
pub fn throughput<F: Family<u64>>(plan: &Plan<'_>, count: u64) -> anyhow::Result<f64> {
    let (txs, rx) = F::channel(1, plan.capacity)?;
    let tx = sender::<F>(txs)?;
    let barrier = &Barrier::new(2);
    let (a, b) = ((plan.wait, plan.core(0)), (plan.wait, plan.core(1)));
    let join = |_| anyhow::anyhow!("a hand-off thread panicked");
    let elapsed = std::thread::scope(|scope| -> anyhow::Result<f64> {
        let producer = scope.spawn(move || produce::<F>(tx, count, a, barrier));
        let consumer = scope.spawn(move || consume::<F>(rx, count, b, barrier));
        producer.join().map_err(join)?;
        consumer.join().map_err(join)
    })?;
    Ok(count as f64 / elapsed / 1e6)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dispatch::queues::{ArrayQ, PeregrineSpsc, ShmMpscRing};
    use peregrine_testkit::with_timeout;

    const PLAN: Plan<'static> = Plan {
        capacity: 64,
        cores: &[],
        wait: WaitStrategy::SpinThenYield,
    };

    #[test]
    fn ping_pong_orders_percentiles() {
        with_timeout(120, || {
            let (rt, pins) = ping_pong::<PeregrineSpsc>(&PLAN, 10, 200).unwrap();
            assert!(rt.p50 <= rt.p90 && rt.p90 <= rt.p99 && rt.p99 <= rt.p999);
            assert!(rt.p999 <= rt.max && rt.p50 > 0);
            assert_eq!(pins.len(), 2);
            ping_pong::<ShmMpscRing>(&PLAN, 0, 50).unwrap();
        });
    }

    #[test]
    fn throughput_moves_everything() {
        with_timeout(120, || {
            assert!(throughput::<ArrayQ>(&PLAN, 10_000).unwrap() > 0.0)
        });
    }
}
