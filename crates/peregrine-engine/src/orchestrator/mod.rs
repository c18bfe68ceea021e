//! The orchestrator: the one thread every order passes through.
//!
//! Each loop it drains the strategies' submit rings (one shared-memory SPSC ring per
//! strategy, scanned round-robin: a mux, so strategies never share an atomic), checks
//! each new order against [`RiskEngine`] and routes it to its venue's gateway inbox;
//! then drains the completion queue, updates risk and positions, and pushes an event
//! into the owning strategy's return ring. On the first and every 32nd idle turn, and
//! every 256th turn under load, it does housekeeping: control commands, kill-switch progress, liveness, the
//! stats snapshot (see `house.rs`).
//!
//! It never blocks: a full gateway inbox rejects the order (reason `GATEWAY_BUSY`), a
//! full return ring drops the event and counts it (the strategy is not reading).

mod complete;
mod durable;
mod house;
mod report;
mod submit;
mod summary;
#[cfg(test)]
mod tests;

use std::sync::atomic::Ordering;
use std::sync::Arc;

use crossbeam_queue::ArrayQueue;
use peregrine_queue::clock::now_ns;
use peregrine_queue::{IdlePolicy, Producer};
use peregrine_strategy::msg::{Event, EventKind};
use peregrine_types::stamp;
use peregrine_types::Side;
use rustc_hash::FxHashMap;

use crate::config::{DeadPolicy, EngineConfig};
use crate::control::Shared;
use crate::counters::QueueRow;
use crate::gateway::{Completion, GatewayCmd, GatewayCounters};
use crate::latency::Latency;
use crate::rings::StrategyLink;
use crate::summary::Tally;
use peregrine_risk::{RiskEngine, StrategyId};

/// Receipt slots per strategy (a power of two): acks waiting for their t8.
const RECEIPTS: usize = 1024;

/// Where a strategy is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Liveness {
    /// Not heard from yet.
    Waiting,
    /// Heard from within the timeout.
    Alive,
    /// Silent too long or its process is gone: kill switch on, its ring files
    /// unlinked, what it still wrote answered with `STRATEGY_DOWN`. Once none of its
    /// orders is open any more the engine creates fresh rings and the slot goes back
    /// to `Waiting` for a restarted process (see `house.rs`).
    Dead,
}

/// An ack or reject waiting for the strategy's receipt (t8).
#[derive(Debug, Clone, Copy, Default)]
struct Pending {
    client_id: u64,
    ts: [u64; 8],
    scheduled_ns: u64,
}

#[derive(Debug)]
struct Slot {
    link: StrategyLink,
    /// Counters of the current ring pair, plain fields: only this thread writes them.
    rings: RingTally,
    malformed: u64,
    last_seen_ns: u64,
    pid: Option<u32>,
    state: Liveness,
    receipts: Box<[Pending]>,
    /// Incarnation: 1 for the rings made at start, +1 each time they are re-created.
    generation: u32,
    /// The death switched the strategy's kill switch on (so re-arming switches it off;
    /// a kill switch an operator or a loss breach set stays on).
    killed_by_death: bool,
    /// Requests read from the ring after the strategy was declared dead.
    after_dead: u64,
    /// Re-creating the rings failed (logged once, retried).
    rearm_failed: bool,
    /// Submit and return counts of this strategy's earlier (retired) ring pairs.
    earlier: [QueueRow; 2],
}

/// The orchestrator's own counts for one strategy's rings, since they were created.
/// The strategy's side (submit pushes and Fulls, return pops) is read from the ring
/// headers; `*_base` is the free-running index the ring had when the count started
/// (after the pre-fault lap).
#[derive(Debug, Clone, Copy, Default)]
struct RingTally {
    submit_pops: u64,
    submit_base: u64,
    ret_pushes: u64,
    ret_full: u64,
    ret_base: u64,
}

impl Slot {
    fn new(link: StrategyLink, generation: u32) -> Slot {
        let rings = RingTally {
            // Only this thread pops the submit ring and pushes the return ring, so
            // head and tail here are exactly where our counts start.
            submit_base: link.rx.counts().head,
            ret_base: link.tx.counts().tail,
            ..RingTally::default()
        };
        Slot {
            link,
            rings,
            malformed: 0,
            last_seen_ns: 0,
            pid: None,
            state: Liveness::Waiting,
            receipts: vec![Pending::default(); RECEIPTS].into_boxed_slice(),
            generation,
            killed_by_death: false,
            after_dead: 0,
            rearm_failed: false,
            earlier: Default::default(),
        }
    }
}

/// A live order.
#[derive(Debug, Clone, Copy)]
struct Live {
    strategy: u16,
    client_id: u64,
    venue: u32,
    instrument: u32,
    side: Side,
    price: i64,
    qty: i64,
    leaves: i64,
    ts: [u64; 8],
    cancel_sent: bool,
    /// A replace is on its way to the venue (one at a time per order).
    replace_pending: bool,
}

/// The orchestrator's end of one gateway.
#[derive(Debug)]
pub struct GatewayLink {
    /// Venue name.
    pub name: String,
    /// Inbox, producer end.
    pub inbox: Producer<GatewayCmd>,
    /// The gateway's counters (it writes inbox pops and completion pushes).
    pub counters: Arc<GatewayCounters>,
    /// Names the venue's reject reasons ([`peregrine_venues::Venue::reason_name`]).
    pub reason_name: peregrine_venues::ReasonNames,
}

#[derive(Debug, Clone)]
struct KillJob {
    id: u64,
    scope: Option<u16>,
    deadline_ns: u64,
    cancels: u64,
}

/// The orchestrator thread's state.
#[derive(Debug)]
pub struct Orchestrator {
    engine: String,
    slots: Vec<Slot>,
    scan_from: usize,
    gateways: Vec<GatewayLink>,
    completions: Arc<ArrayQueue<Completion>>,
    completion_pops: u64,
    orders: FxHashMap<u64, Live>,
    by_client: FxHashMap<(u16, u64), u64>,
    next_engine_id: u64,
    risk: RiskEngine,
    latency: Latency,
    instruments: Vec<u32>,
    engine_rejects: FxHashMap<u16, u64>,
    /// New-order rejects by (venue, the venue's reason).
    venue_rejects: FxHashMap<(u32, u16), u64>,
    instrument_info: Vec<crate::units::InstrumentInfo>,
    kills: Vec<KillJob>,
    heartbeat_timeout_ns: u64,
    on_dead: DeadPolicy,
    stats_interval_ns: u64,
    next_house_ns: u64,
    next_stats_ns: u64,
    next_window_ns: u64,
    next_pid_check_ns: u64,
    started_ns: u64,
    shared: Arc<Shared>,
    wait: IdlePolicy,
    /// Where the ring files are (to re-create a dead strategy's rings).
    dir: std::path::PathBuf,
    ring_capacity: usize,
    md_capacity: usize,
    /// Hands re-created market-data rings to the market-data thread.
    md_attach: Option<Arc<ArrayQueue<crate::market::thread::Attach>>>,
    /// The market-data thread's counters (for the snapshot).
    md_counters: Option<Arc<crate::market::thread::MdCounters>>,
    /// The journal, when recovery is configured.
    journal: Option<crate::durable::EngineJournal>,
    tally: Tally,
}

impl Orchestrator {
    /// An orchestrator over the given links; strategies are registered with risk in
    /// config order (strategy id = index).
    pub fn new(
        cfg: &EngineConfig,
        strategies: Vec<StrategyLink>,
        gateways: Vec<GatewayLink>,
        completions: Arc<ArrayQueue<Completion>>,
        shared: Arc<Shared>,
    ) -> Orchestrator {
        let now = now_ns();
        let mut risk = RiskEngine::new(cfg.global_limits);
        for (i, s) in cfg.strategies.iter().enumerate() {
            risk.register(StrategyId(i as u16), s.limits, now);
        }
        let slots = strategies.into_iter().map(|l| Slot::new(l, 1)).collect();
        Orchestrator {
            engine: cfg.name.clone(),
            slots,
            scan_from: 0,
            gateways,
            completions,
            completion_pops: 0,
            orders: FxHashMap::default(),
            by_client: FxHashMap::default(),
            next_engine_id: 1,
            risk,
            latency: Latency::new().with_feed_slots(cfg.exchange_feed_slots()),
            instruments: cfg.instruments.clone(),
            engine_rejects: FxHashMap::default(),
            venue_rejects: FxHashMap::default(),
            instrument_info: cfg
                .instruments
                .iter()
                .map(|i| crate::units::InstrumentInfo::find(&cfg.instrument_info, *i))
                .collect(),
            kills: Vec::new(),
            heartbeat_timeout_ns: cfg.liveness.heartbeat_timeout_ms * 1_000_000,
            on_dead: cfg.liveness.on_dead,
            stats_interval_ns: cfg.stats_interval_ms * 1_000_000,
            next_house_ns: 0,
            next_stats_ns: 0,
            next_window_ns: 0,
            next_pid_check_ns: 0,
            started_ns: now,
            shared,
            wait: cfg.orchestrator.idle_policy(),
            dir: cfg.dir(),
            ring_capacity: cfg.ring_capacity,
            md_capacity: cfg.market_data.ring_capacity,
            md_attach: None,
            md_counters: None,
            journal: None,
            tally: Tally::new(cfg.venues.len()),
        }
    }

    /// Connects the market-data thread: re-created strategies' md rings go to it
    /// through `attach`; its counters appear in the snapshot.
    pub fn with_market_data(
        mut self,
        attach: Arc<ArrayQueue<crate::market::thread::Attach>>,
        counters: Arc<crate::market::thread::MdCounters>,
    ) -> Orchestrator {
        self.md_attach = Some(attach);
        self.md_counters = Some(counters);
        self
    }

    /// The thread body: loops until `shared.stop`, then publishes a last snapshot.
    pub fn run(mut self) -> Orchestrator {
        let mut waiter = self.wait.idler();
        let (mut turns, mut idle_turns) = (0u32, 0u32);
        // Relaxed: a stop flag; nothing is published through it.
        while !self.shared.stop.load(Ordering::Relaxed) {
            let busy = self.poll_once();
            turns = turns.wrapping_add(1);
            idle_turns = if busy { 0 } else { idle_turns.wrapping_add(1) };
            // Housekeeping reads the clock (~23 ns): every 32nd idle turn, and every
            // 256th turn under load, so polling stays tight.
            if idle_turns % 32 == 1 || turns.is_multiple_of(256) {
                self.housekeeping(now_ns());
            }
            if busy {
                waiter.reset();
            } else {
                waiter.idle();
            }
        }
        self.publish(now_ns());
        self
    }

    /// One pass over every input; true if anything was done.
    pub fn poll_once(&mut self) -> bool {
        let mut busy = false;
        let n = self.slots.len();
        for step in 0..n {
            let s = (self.scan_from + step) % n;
            if let Some(req) = self.slots[s].link.rx.try_pop() {
                let t2 = now_ns();
                self.slots[s].rings.submit_pops += 1;
                self.on_request(s as u16, req, t2);
                self.scan_from = (s + 1) % n;
                busy = true;
                break;
            }
        }
        if let Some(c) = self.completions.pop() {
            let t6 = now_ns();
            self.completion_pops += 1;
            self.on_completion(c, t6);
            busy = true;
        }
        if busy {
            self.commit_journal();
        }
        busy
    }

    /// Pushes an event to strategy `s`, stamping t7; counts a full ring.
    fn emit(&mut self, s: u16, mut ev: Event) {
        let slot = &mut self.slots[s as usize];
        ev.ts[stamp::ORCH_RETURN] = now_ns();
        self.tally.on_event(&ev);
        match slot.link.tx.try_push(ev) {
            Ok(()) => slot.rings.ret_pushes += 1,
            Err(_) => slot.rings.ret_full += 1,
        }
        if matches!(
            ev.kind(),
            Some(
                EventKind::Ack | EventKind::Reject | EventKind::Replaced | EventKind::ReplaceReject
            )
        ) {
            let p = &mut slot.receipts[ev.client_id as usize & (RECEIPTS - 1)];
            *p = Pending {
                client_id: ev.client_id,
                ts: ev.ts,
                scheduled_ns: ev.scheduled_delay_ns,
            };
        }
    }

    /// The risk engine (positions, rejects), for tests and reports.
    pub fn risk(&self) -> &RiskEngine {
        &self.risk
    }

    /// The latency histograms.
    pub fn latency(&self) -> &Latency {
        &self.latency
    }

    /// Orders in flight.
    pub fn in_flight(&self) -> usize {
        self.orders.len()
    }

    /// A strategy's liveness.
    pub fn liveness(&self, s: u16) -> Liveness {
        self.slots[s as usize].state
    }

    /// Malformed requests from strategy `s`.
    pub fn malformed(&self, s: u16) -> u64 {
        self.slots[s as usize].malformed
    }

    /// Strategy `s`'s incarnation: 1 at start, +1 each time its rings are re-created.
    pub fn generation(&self, s: u16) -> u32 {
        self.slots[s as usize].generation
    }

    /// Requests strategy `s` wrote after it was declared dead (each new order among them
    /// rejected with `STRATEGY_DOWN`).
    pub fn after_dead(&self, s: u16) -> u64 {
        self.slots[s as usize].after_dead
    }
}

/// An event about order `o`.
fn event(kind: EventKind, o: &Live) -> Event {
    Event {
        kind: kind as u8,
        side: o.side as u8,
        instrument: o.instrument,
        client_id: o.client_id,
        venue: o.venue,
        price: o.price,
        qty: o.qty,
        leaves: o.leaves,
        ts: o.ts,
        ..Event::default()
    }
}
