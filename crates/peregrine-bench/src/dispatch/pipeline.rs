//! One run of the pipeline: N strategies → orchestrator → M gateways and back.
//!
//! ```text
//! strategy ×N --submit_q (N→1, candidate)--> orchestrator --inbox (1→1 SPSC)--> gateway ×M
//! strategy ×N <--return_q (1→1 SPSC)-- orchestrator <--completion_q (M→1, candidate)-- gateway
//! ```
//!
//! Threads share no atomics: each knows from the schedule how many orders it will see
//! and stops when it has seen them (or at the run's deadline). Every send is
//! non-blocking; a full queue is counted and retried without re-stamping, so the wait
//! shows in the latency. Bookkeeping (records, Full counts) is thread-local and
//! pre-allocated.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use peregrine_queue::pin::CoreId;
use peregrine_queue::spsc::{self, Consumer, Producer};
use peregrine_queue::{pin_current, PinOutcome, WaitStrategy};

use super::order::{stamp, Clock, Order, Work};
use super::queues::Family;
use super::schedule::{Fire, Schedule};

/// Time between creating the threads and the schedule's time zero.
const START_DELAY_NS: u64 = 50_000_000;

/// Full (backpressure) returns per hand-off point.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct FullCounts {
    /// submit_q (N → 1).
    pub submit: u64,
    /// gateway inboxes (1 → 1).
    pub inbox: u64,
    /// completion_q (M → 1).
    pub completion: u64,
    /// return queues (1 → 1).
    pub ret: u64,
}

impl FullCounts {
    /// Element-wise sum.
    pub fn add(&mut self, other: FullCounts) {
        self.submit += other.submit;
        self.inbox += other.inbox;
        self.completion += other.completion;
        self.ret += other.ret;
    }
}

/// What one run produced.
#[derive(Debug)]
pub struct RunOutput {
    /// Every order that came back, with its 8 timestamps.
    pub orders: Vec<Order>,
    /// Orders scheduled.
    pub scheduled: usize,
    /// Full counts.
    pub full: FullCounts,
    /// Pinning outcome per thread.
    pub pins: Vec<PinOutcome>,
    /// Some thread gave up at the deadline.
    pub timed_out: bool,
}

/// Everything a run needs besides the queue family.
#[derive(Debug, Clone)]
pub struct RunSetup<'a> {
    /// The schedule to replay.
    pub schedule: &'a Schedule,
    /// Gateways (M).
    pub gateways: usize,
    /// Queue capacity.
    pub capacity: usize,
    /// Busy-work iterations per order (W).
    pub work_iters: u64,
    /// Wait strategy.
    pub wait: WaitStrategy,
    /// Cores to pin to (empty: no pinning); from `available_cores` on the main thread.
    pub cores: &'a [CoreId],
    /// Extra time after the last order is due back before giving up.
    pub drain_timeout_ns: u64,
    /// The shared clock.
    pub clock: &'a Clock,
}

/// Per-thread timing context.
#[derive(Debug, Clone)]
struct Env {
    clock: Clock,
    start: u64,
    deadline: u64,
    wait: WaitStrategy,
}

/// Runs the pipeline once with queue family `F` at both contended points.
pub fn run<F: Family<Order>>(setup: &RunSetup<'_>) -> anyhow::Result<RunOutput> {
    let n = setup.schedule.per_strategy.len();
    let m = setup.gateways;
    let (submit_txs, submit_rx) = F::channel(n, setup.capacity)?;
    let (completion_txs, completion_rx) = F::channel(m, setup.capacity)?;
    let (inbox_txs, inbox_rxs): (Vec<_>, Vec<_>) =
        (0..m).map(|_| spsc::ring::<Order>(setup.capacity)).unzip();
    let (return_txs, return_rxs): (Vec<_>, Vec<_>) =
        (0..n).map(|_| spsc::ring::<Order>(setup.capacity)).unzip();
    let start = setup.clock.now() + START_DELAY_NS;
    let env = Env {
        clock: setup.clock.clone(),
        start,
        deadline: start + setup.schedule.last_due_ns() + setup.drain_timeout_ns,
        wait: setup.wait,
    };
    let per_venue = setup.schedule.per_venue(m);
    // Pre-size each gateway heap for its peak holding (rate x max D, with margin) so it
    // does not grow on the hot path; the whole venue share when that is smaller.
    let window = setup.schedule.last_due_ns().max(1) as f64;
    let max_delay = setup.schedule.max_delay_ns() as f64;
    let heap_capacity =
        |total: usize| total.min((total as f64 * max_delay / window * 2.0) as usize + 4096);
    let core = |k: usize| (!setup.cores.is_empty()).then(|| setup.cores[k % setup.cores.len()]);

    std::thread::scope(|scope| -> anyhow::Result<RunOutput> {
        let spawn = |name: String| std::thread::Builder::new().name(name);
        let orch = {
            let env = env.clone();
            let total = setup.schedule.len();
            let pin = core(0);
            let work = setup.work_iters;
            spawn("orchestrator".into()).spawn_scoped(scope, move || {
                let pinned = pin_current("orchestrator", pin);
                let out = orchestrator::<F>(
                    submit_rx,
                    completion_rx,
                    inbox_txs,
                    return_txs,
                    total,
                    work,
                    &env,
                );
                (pinned, out)
            })?
        };
        let mut gateways = Vec::with_capacity(m);
        for (g, (inbox, tx)) in inbox_rxs.into_iter().zip(completion_txs).enumerate() {
            let (env, total, pin) = (env.clone(), per_venue[g], core(1 + g));
            gateways.push(spawn(format!("gateway-{g}")).spawn_scoped(scope, move || {
                let pinned = pin_current(&format!("gateway-{g}"), pin);
                (
                    pinned,
                    gateway::<F>(inbox, tx, total, heap_capacity(total), &env),
                )
            })?);
        }
        let mut strategies = Vec::with_capacity(n);
        for (s, (tx, ret)) in submit_txs.into_iter().zip(return_rxs).enumerate() {
            let (env, pin) = (env.clone(), core(1 + m + s));
            let fires = &setup.schedule.per_strategy[s];
            strategies.push(spawn(format!("strategy-{s}")).spawn_scoped(scope, move || {
                let pinned = pin_current(&format!("strategy-{s}"), pin);
                (pinned, strategy::<F>(s as u16, fires, tx, ret, &env))
            })?);
        }
        let join_err = || anyhow::anyhow!("a pipeline thread panicked");
        let mut output = RunOutput {
            orders: Vec::with_capacity(setup.schedule.len()),
            scheduled: setup.schedule.len(),
            full: FullCounts::default(),
            pins: Vec::with_capacity(1 + m + n),
            timed_out: false,
        };
        let (pinned, (inbox_full, ret_full, timed_out)) = orch.join().map_err(|_| join_err())?;
        output.pins.push(pinned);
        output.full.inbox = inbox_full;
        output.full.ret = ret_full;
        output.timed_out |= timed_out;
        for handle in gateways {
            let (pinned, (full, timed_out)) = handle.join().map_err(|_| join_err())?;
            output.pins.push(pinned);
            output.full.completion += full;
            output.timed_out |= timed_out;
        }
        for handle in strategies {
            let (pinned, (records, full, timed_out)) = handle.join().map_err(|_| join_err())?;
            output.pins.push(pinned);
            output.full.submit += full;
            output.timed_out |= timed_out;
            output.orders.extend_from_slice(&records);
        }
        Ok(output)
    })
}

/// Fires the schedule and collects returns. Returns (records, submit Full count,
/// timed out).
fn strategy<F: Family<Order>>(
    id: u16,
    fires: &[Fire],
    mut tx: F::Tx,
    mut returns: Consumer<Order>,
    env: &Env,
) -> (Vec<Order>, u64, bool) {
    let mut records = Vec::with_capacity(fires.len());
    let (mut next, mut full) = (0usize, 0u64);
    let mut waiter = env.wait.waiter();
    while records.len() < fires.len() {
        let now = env.clock.now();
        let mut progress = false;
        if let Some(fire) = fires.get(next) {
            let due = env.start + fire.at_ns;
            if now >= due {
                let mut ts = [0; 8];
                // t1 is the scheduled time, not `now`: lateness counts (no coordinated
                // omission), and a retry after Full keeps the original stamp.
                ts[stamp::STRATEGY_SEND] = due;
                let order = Order {
                    seq: next as u32,
                    strategy: id,
                    venue: fire.venue,
                    delay_ns: fire.delay_ns,
                    ts,
                };
                match F::send(&mut tx, order) {
                    Ok(()) => {
                        next += 1;
                        progress = true;
                    }
                    Err(_) => full += 1,
                }
            }
        }
        while let Some(mut order) = returns.try_pop() {
            order.ts[stamp::STRATEGY_RECV] = env.clock.now();
            records.push(order);
            progress = true;
        }
        if progress {
            waiter.reset();
        } else if now > env.deadline {
            return (records, full, true);
        } else {
            waiter.idle();
        }
    }
    (records, full, false)
}

/// Routes submits to gateways (after W of busy work) and completions to strategies.
/// Returns (inbox Full count, return Full count, timed out).
fn orchestrator<F: Family<Order>>(
    mut submit: F::Rx,
    mut completion: F::Rx,
    mut inboxes: Vec<Producer<Order>>,
    mut returns: Vec<Producer<Order>>,
    total: usize,
    work_iters: u64,
    env: &Env,
) -> (u64, u64, bool) {
    let (mut inbox_full, mut ret_full, mut returned) = (0u64, 0u64, 0usize);
    let mut pending_dispatch: Option<Order> = None;
    let mut pending_return: Option<Order> = None;
    let mut waiter = env.wait.waiter();
    while returned < total {
        let mut progress = false;
        let order = pending_dispatch.take().or_else(|| {
            F::recv(&mut submit).map(|mut order| {
                order.ts[stamp::ORCH_RECV_SUBMIT] = env.clock.now();
                Work::run(work_iters);
                order.ts[stamp::ORCH_DISPATCH] = env.clock.now();
                order
            })
        });
        if let Some(order) = order {
            match inboxes[usize::from(order.venue)].try_push(order) {
                Ok(()) => progress = true,
                Err(e) => {
                    inbox_full += 1;
                    pending_dispatch = Some(e.into_inner());
                }
            }
        }
        let done = pending_return.take().or_else(|| {
            F::recv(&mut completion).map(|mut order| {
                order.ts[stamp::ORCH_RECV_COMPLETION] = env.clock.now();
                order.ts[stamp::ORCH_RETURN] = env.clock.now();
                order
            })
        });
        if let Some(order) = done {
            match returns[usize::from(order.strategy)].try_push(order) {
                Ok(()) => {
                    returned += 1;
                    progress = true;
                }
                Err(e) => {
                    ret_full += 1;
                    pending_return = Some(e.into_inner());
                }
            }
        }
        if progress {
            waiter.reset();
        } else if env.clock.now() > env.deadline {
            return (inbox_full, ret_full, true);
        } else {
            waiter.idle();
        }
    }
    (inbox_full, ret_full, false)
}

/// An order held by a gateway until `release_at`; ordered by (release_at, strategy,
/// seq), which is unique per order.
#[derive(Debug)]
struct Held {
    release_at: u64,
    order: Order,
}

impl Held {
    fn key(&self) -> (u64, u16, u32) {
        (self.release_at, self.order.strategy, self.order.seq)
    }
}

impl PartialEq for Held {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl Eq for Held {}

impl PartialOrd for Held {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Held {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key().cmp(&other.key())
    }
}

/// Holds each order for its D in a min-heap, then sends it back. Returns (completion
/// Full count, timed out).
fn gateway<F: Family<Order>>(
    mut inbox: Consumer<Order>,
    mut tx: F::Tx,
    total: usize,
    heap_capacity: usize,
    env: &Env,
) -> (u64, bool) {
    let mut heap: BinaryHeap<Reverse<Held>> = BinaryHeap::with_capacity(heap_capacity);
    let (mut full, mut released) = (0u64, 0usize);
    let mut pending: Option<Order> = None;
    let mut waiter = env.wait.waiter();
    while released < total {
        let mut progress = false;
        while let Some(mut order) = inbox.try_pop() {
            let now = env.clock.now();
            order.ts[stamp::GATEWAY_RECV] = now;
            heap.push(Reverse(Held {
                release_at: now + order.delay_ns,
                order,
            }));
            progress = true;
        }
        loop {
            let order = match pending.take() {
                Some(order) => order,
                None => match heap.peek() {
                    Some(Reverse(top)) if top.release_at <= env.clock.now() => {
                        let Some(Reverse(held)) = heap.pop() else {
                            break;
                        };
                        let mut order = held.order;
                        order.ts[stamp::GATEWAY_DONE] = env.clock.now();
                        order
                    }
                    _ => break,
                },
            };
            match F::send(&mut tx, order) {
                Ok(()) => {
                    released += 1;
                    progress = true;
                }
                Err(order) => {
                    full += 1;
                    pending = Some(order);
                    break;
                }
            }
        }
        if progress {
            waiter.reset();
        } else if env.clock.now() > env.deadline {
            return (full, true);
        } else {
            waiter.idle();
        }
    }
    (full, false)
}
