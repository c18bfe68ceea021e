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

use peregrine_types::stamp;

use super::order::{Clock, Order, Work};
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

/// What each pipeline thread hands back when it stops.
#[derive(Debug, Default)]
struct ThreadReport {
    /// Completed orders (strategies only).
    records: Vec<Order>,
    /// Full counts of the queues this thread sends on.
    full: FullCounts,
    /// Gave up at the deadline.
    timed_out: bool,
}

impl RunSetup<'_> {
    /// The core for thread `k` (orchestrator 0, gateways, then strategies), if pinning.
    fn core(&self, k: usize) -> Option<CoreId> {
        (!self.cores.is_empty()).then(|| self.cores[k % self.cores.len()])
    }

    /// Gateway heap size for `total` orders: peak holding (rate x max D, with margin),
    /// so the heap does not grow on the hot path; the whole share when that is smaller.
    fn heap_capacity(&self, total: usize) -> usize {
        let span = self.schedule.last_due_ns().max(1) as f64;
        let max_delay = self.schedule.max_delay_ns() as f64;
        total.min((total as f64 * max_delay / span * 2.0) as usize + 4096)
    }

    fn env(&self) -> Env {
        let start = self.clock.now() + START_DELAY_NS;
        Env {
            clock: self.clock.clone(),
            start,
            deadline: start + self.schedule.last_due_ns() + self.drain_timeout_ns,
            wait: self.wait,
        }
    }
}

fn spsc_rings(count: usize, capacity: usize) -> (Vec<Producer<Order>>, Vec<Consumer<Order>>) {
    (0..count).map(|_| spsc::ring(capacity)).unzip()
}

/// Spawns a named scoped thread that pins itself first.
fn spawn_pinned<'scope, R: Send + 'scope>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    name: String,
    core: Option<CoreId>,
    body: impl FnOnce() -> R + Send + 'scope,
) -> std::io::Result<std::thread::ScopedJoinHandle<'scope, (PinOutcome, R)>> {
    std::thread::Builder::new()
        .name(name.clone())
        .spawn_scoped(scope, move || (pin_current(&name, core), body()))
}

/// Runs the pipeline once with queue family `F` at both contended points.
pub fn run<F: Family<Order>>(setup: &RunSetup<'_>) -> anyhow::Result<RunOutput> {
    let (n, m) = (setup.schedule.per_strategy.len(), setup.gateways);
    let (submit_txs, submit_rx) = F::channel(n, setup.capacity)?;
    let (completion_txs, completion_rx) = F::channel(m, setup.capacity)?;
    let (inbox_txs, inbox_rxs) = spsc_rings(m, setup.capacity);
    let (return_txs, return_rxs) = spsc_rings(n, setup.capacity);
    let env = setup.env();
    let per_venue = setup.schedule.per_venue(m);
    std::thread::scope(|scope| -> anyhow::Result<RunOutput> {
        let mut handles = Vec::with_capacity(1 + m + n);
        let (orch_env, total, work) = (env.clone(), setup.schedule.len(), setup.work_iters);
        let ends = OrchEnds::<F> {
            submit: submit_rx,
            completion: completion_rx,
            inboxes: inbox_txs,
            returns: return_txs,
        };
        handles.push(spawn_pinned(
            scope,
            "orchestrator".into(),
            setup.core(0),
            move || orchestrator::<F>(ends, total, work, &orch_env),
        )?);
        for (g, (inbox, tx)) in inbox_rxs.into_iter().zip(completion_txs).enumerate() {
            let (env, total) = (env.clone(), per_venue[g]);
            let heap = setup.heap_capacity(total);
            handles.push(spawn_pinned(
                scope,
                format!("gateway-{g}"),
                setup.core(1 + g),
                move || gateway::<F>(inbox, tx, total, heap, &env),
            )?);
        }
        for (s, (tx, ret)) in submit_txs.into_iter().zip(return_rxs).enumerate() {
            let (env, fires) = (env.clone(), &setup.schedule.per_strategy[s]);
            let core = setup.core(1 + m + s);
            handles.push(spawn_pinned(
                scope,
                format!("strategy-{s}"),
                core,
                move || strategy::<F>(s as u16, fires, tx, ret, &env),
            )?);
        }
        let mut output = RunOutput {
            orders: Vec::with_capacity(setup.schedule.len()),
            scheduled: setup.schedule.len(),
            full: FullCounts::default(),
            pins: Vec::with_capacity(handles.len()),
            timed_out: false,
        };
        for handle in handles {
            let (pinned, report) = handle
                .join()
                .map_err(|_| anyhow::anyhow!("a pipeline thread panicked"))?;
            output.pins.push(pinned);
            output.full.add(report.full);
            output.timed_out |= report.timed_out;
            output.orders.extend_from_slice(&report.records);
        }
        Ok(output)
    })
}

/// The queue ends the orchestrator owns.
struct OrchEnds<F: Family<Order>> {
    submit: F::Rx,
    completion: F::Rx,
    inboxes: Vec<Producer<Order>>,
    returns: Vec<Producer<Order>>,
}

/// Fires the schedule and collects returns.
fn strategy<F: Family<Order>>(
    id: u16,
    fires: &[Fire],
    mut tx: F::Tx,
    mut returns: Consumer<Order>,
    env: &Env,
) -> ThreadReport {
    let mut records = Vec::with_capacity(fires.len());
    let (mut next, mut full) = (0usize, 0u64);
    let mut waiter = env.wait.idler();
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
            break;
        } else {
            waiter.idle();
        }
    }
    ThreadReport {
        timed_out: records.len() < fires.len(),
        records,
        full: FullCounts {
            submit: full,
            ..FullCounts::default()
        },
    }
}

/// The orchestrator's state: its queue ends, an order per direction waiting for room,
/// and its counters.
struct Orchestrator<'a, F: Family<Order>> {
    ends: OrchEnds<F>,
    pending_dispatch: Option<Order>,
    pending_return: Option<Order>,
    work_iters: u64,
    env: &'a Env,
    full: FullCounts,
    returned: usize,
}

impl<F: Family<Order>> Orchestrator<'_, F> {
    /// Takes one submit (or the one waiting for room), does W, pushes it to its gateway.
    /// Returns whether an order moved.
    fn dispatch_one(&mut self) -> bool {
        let (ends, env, work_iters) = (&mut self.ends, self.env, self.work_iters);
        let Some(order) = self.pending_dispatch.take().or_else(|| {
            F::recv(&mut ends.submit).map(|mut order| {
                order.ts[stamp::ORCH_RECV_SUBMIT] = env.clock.now();
                Work::run(work_iters);
                order.ts[stamp::ORCH_DISPATCH] = env.clock.now();
                order
            })
        }) else {
            return false;
        };
        match ends.inboxes[usize::from(order.venue)].try_push(order) {
            Ok(()) => true,
            Err(e) => {
                self.full.inbox += 1;
                self.pending_dispatch = Some(e.into_inner());
                false
            }
        }
    }

    /// Takes one completion (or the one waiting for room) and returns it to its
    /// strategy. Returns whether an order moved.
    fn return_one(&mut self) -> bool {
        let (ends, env) = (&mut self.ends, self.env);
        let Some(order) = self.pending_return.take().or_else(|| {
            F::recv(&mut ends.completion).map(|mut order| {
                order.ts[stamp::ORCH_RECV_COMPLETION] = env.clock.now();
                order.ts[stamp::ORCH_RETURN] = env.clock.now();
                order
            })
        }) else {
            return false;
        };
        match ends.returns[usize::from(order.strategy)].try_push(order) {
            Ok(()) => {
                self.returned += 1;
                true
            }
            Err(e) => {
                self.full.ret += 1;
                self.pending_return = Some(e.into_inner());
                false
            }
        }
    }
}

/// Routes submits to gateways (after W of busy work) and completions to strategies,
/// one of each per loop, until every order has been returned.
fn orchestrator<F: Family<Order>>(
    ends: OrchEnds<F>,
    total: usize,
    work_iters: u64,
    env: &Env,
) -> ThreadReport {
    let mut orch = Orchestrator::<F> {
        ends,
        pending_dispatch: None,
        pending_return: None,
        work_iters,
        env,
        full: FullCounts::default(),
        returned: 0,
    };
    let mut waiter = env.wait.idler();
    while orch.returned < total {
        let dispatched = orch.dispatch_one();
        let returned = orch.return_one();
        if dispatched || returned {
            waiter.reset();
        } else if env.clock.now() > env.deadline {
            break;
        } else {
            waiter.idle();
        }
    }
    ThreadReport {
        records: Vec::new(),
        full: orch.full,
        timed_out: orch.returned < total,
    }
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

/// Holds each order for its D in a min-heap, then sends it back.
fn gateway<F: Family<Order>>(
    mut inbox: Consumer<Order>,
    mut tx: F::Tx,
    total: usize,
    heap_capacity: usize,
    env: &Env,
) -> ThreadReport {
    let mut heap: BinaryHeap<Reverse<Held>> = BinaryHeap::with_capacity(heap_capacity);
    let (mut full, mut released) = (0u64, 0usize);
    let mut pending: Option<Order> = None;
    let mut waiter = env.wait.idler();
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
            break;
        } else {
            waiter.idle();
        }
    }
    ThreadReport {
        records: Vec::new(),
        full: FullCounts {
            completion: full,
            ..FullCounts::default()
        },
        timed_out: released < total,
    }
}
