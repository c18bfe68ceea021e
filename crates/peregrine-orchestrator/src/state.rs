//! The core's state and its one entry point, [`Orchestrator::handle`].

use peregrine_risk::{RiskEngine, StrategyId};
use peregrine_strategy::msg::{Event, EventKind};
use peregrine_types::Side;
use rustc_hash::FxHashMap;

use crate::config::{CoreConfig, DeadPolicy};
use crate::io::{Input, Note, Output, Outputs};
use crate::rejects::RejectCounts;
use crate::summary::Tally;

/// Where a strategy is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Liveness {
    /// Not heard from yet.
    Waiting,
    /// Heard from within the timeout.
    Alive,
    /// Silent too long or its process is gone: kill switch on, its ring files
    /// unlinked, what it still wrote answered with `STRATEGY_DOWN`. Once none of its
    /// orders is open any more the core asks for fresh rings and the slot goes back
    /// to `Waiting` for a restarted process (see `house.rs`).
    Dead,
}

/// One strategy, as the core knows it.
#[derive(Debug, Clone)]
pub(crate) struct Slot {
    pub(crate) name: String,
    pub(crate) malformed: u64,
    pub(crate) last_seen_ns: u64,
    pub(crate) pid: Option<u32>,
    pub(crate) state: Liveness,
    /// Incarnation: 1 for the rings made at start, +1 each time they are re-created.
    pub(crate) generation: u32,
    /// The death switched the strategy's kill switch on (so re-arming switches it off;
    /// a kill switch an operator or a loss breach set stays on).
    pub(crate) killed_by_death: bool,
    /// Requests read after the strategy was declared dead.
    pub(crate) after_dead: u64,
    /// Fresh rings were asked for and not answered yet.
    pub(crate) rearm_asked: bool,
    /// Re-creating the rings failed: asked again only on the 100 ms tick.
    pub(crate) rearm_failed: bool,
    /// The extension record just read, waiting for its order (the next request), and
    /// the list leg it names.
    pub(crate) pending_ext: Option<PendingExt>,
    /// The legs of an order list read so far, waiting for the rest (`lists.rs`).
    pub(crate) pending_list: Option<Gathering>,
}

/// An extension record waiting for its order: the client id, the attributes, and
/// the list leg it names (kind, leg index).
pub(crate) type PendingExt = (
    u64,
    peregrine_types::OrderExt,
    Option<(peregrine_types::ListKind, u8)>,
);

/// The legs of one order list read so far (`lists.rs`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Gathering {
    pub(crate) kind: peregrine_types::ListKind,
    /// Legs read (the next one's index).
    pub(crate) n: u8,
    pub(crate) legs: [peregrine_strategy::msg::NewOrder; 3],
    pub(crate) t1: u64,
}

/// An order list sent and not yet resolved: who hears its status (`lists.rs`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct ListRef {
    pub(crate) strategy: u16,
    /// Leg 0's client id.
    pub(crate) client_id: u64,
    pub(crate) venue: u32,
    pub(crate) instrument: u32,
}

/// A live order.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Live {
    pub(crate) strategy: u16,
    pub(crate) client_id: u64,
    pub(crate) venue: u32,
    pub(crate) instrument: u32,
    pub(crate) side: Side,
    pub(crate) price: i64,
    pub(crate) qty: i64,
    pub(crate) leaves: i64,
    pub(crate) ts: [u64; 8],
    pub(crate) cancel_sent: bool,
    /// The strategy asked for the cancel on its way (a refusal is its business);
    /// false for the engine's own (kill switch, death).
    pub(crate) cancel_asked: bool,
    /// A replace is on its way to the venue (one at a time per order).
    pub(crate) replace_pending: bool,
}

/// A kill switch command waiting for its venues.
#[derive(Debug, Clone)]
pub(crate) struct KillJob {
    pub(crate) id: u64,
    pub(crate) scope: Option<u16>,
    pub(crate) deadline_ns: u64,
    pub(crate) cancels: u64,
}

/// The orchestrator core: every decision the engine makes about orders, as a state
/// machine over plain data (crate docs).
#[derive(Debug)]
pub struct Orchestrator {
    pub(crate) cfg: CoreConfig,
    pub(crate) slots: Vec<Slot>,
    pub(crate) orders: FxHashMap<u64, Live>,
    pub(crate) by_client: FxHashMap<(u16, u64), u64>,
    /// Order lists sent and not yet resolved, by their leg 0's engine id.
    pub(crate) lists: FxHashMap<u64, ListRef>,
    pub(crate) next_engine_id: u64,
    pub(crate) risk: RiskEngine,
    pub(crate) rejects: RejectCounts,
    pub(crate) kills: Vec<KillJob>,
    pub(crate) next_house_ns: u64,
    pub(crate) next_pid_tick_ns: u64,
    /// The `now` of the previous input: the engine's own loop clock.
    pub(crate) last_input_ns: u64,
    pub(crate) started_ns: u64,
    pub(crate) tally: Tally,
    /// The journal failed: nothing more is recorded, the global kill switch is on.
    pub(crate) journal_failed: bool,
    /// The longest gap of the engine's own loop, and how many gaps were excused.
    pub(crate) stalls: (u64, u64),
}

/// Housekeeping runs at most this often.
pub(crate) const HOUSE_NS: u64 = 1_000_000;
/// Re-creating a strategy's rings that failed is retried this often.
pub(crate) const RETRY_NS: u64 = 100_000_000;

impl Orchestrator {
    /// A core for `cfg`, starting at `now`: every strategy waiting, risk limits from
    /// the config, the order table reserved for `cfg.max_in_flight` orders.
    pub fn new(cfg: CoreConfig, now: u64) -> Orchestrator {
        let mut risk = RiskEngine::new(cfg.global_limits);
        for (i, s) in cfg.strategies.iter().enumerate() {
            risk.register(StrategyId(i as u16), s.limits, now);
        }
        let cap = cfg.max_in_flight.max(1);
        risk.reserve_capacity(
            cap,
            cfg.strategies.len(),
            cfg.venues.len(),
            &cfg.instruments,
        );
        let slots = cfg
            .strategies
            .iter()
            .map(|s| Slot {
                name: s.name.clone(),
                malformed: 0,
                last_seen_ns: now,
                pid: None,
                state: Liveness::Waiting,
                generation: 1,
                killed_by_death: false,
                after_dead: 0,
                rearm_asked: false,
                rearm_failed: false,
                pending_ext: None,
                pending_list: None,
            })
            .collect();
        // Twice the capacity: a hash table at most half full never needs to grow,
        // and removals leave room it reuses by rehashing in place.
        let hasher = Default::default;
        Orchestrator {
            slots,
            orders: FxHashMap::with_capacity_and_hasher(cap * 2, hasher()),
            by_client: FxHashMap::with_capacity_and_hasher(cap * 2, hasher()),
            lists: FxHashMap::with_capacity_and_hasher(cap, hasher()),
            next_engine_id: cfg.first_engine_id.max(1),
            risk,
            rejects: RejectCounts::new(),
            kills: Vec::new(),
            next_house_ns: 0,
            next_pid_tick_ns: 0,
            last_input_ns: now,
            started_ns: now,
            tally: Tally::new(cfg.venues.len()),
            journal_failed: false,
            stalls: (0, 0),
            cfg,
        }
    }

    /// Handles one input at time `now` (`CLOCK_MONOTONIC` ns, read by the shell),
    /// appending what must happen to `out`. Never blocks, never reads a clock, never
    /// allocates on the per-order path (`tests/no_alloc.rs`).
    pub fn handle(&mut self, input: Input, now: u64, out: &mut Outputs) {
        self.loop_clock(now, out);
        match input {
            Input::Request { strategy, req } => self.on_request(strategy, req, now, out),
            Input::Completion(c) => self.on_completion(c, now, out),
            Input::Tick => self.housekeeping(now, out),
            Input::Control(cmd) => self.command(cmd, now, out),
            Input::ProcessGone { strategy } => {
                if self.slot_state(strategy) == Some(Liveness::Alive) {
                    self.declare_dead(strategy, crate::DeathCause::ProcessExited, out);
                }
            }
            Input::RingsReady { strategy } => self.rearmed(strategy, out),
            Input::RingsFailed { strategy } => {
                if let Some(slot) = self.slots.get_mut(strategy as usize) {
                    slot.rearm_asked = false;
                    slot.rearm_failed = true;
                }
            }
            Input::Undelivered { venue: _, cmd } => self.undelivered(cmd, now, out),
            Input::JournalFailed => self.journal_failed(out),
        }
    }

    /// The engine's own loop clock: a gap since the previous input longer than
    /// `stall_ns` is time the engine itself did not run. Nobody's silence during it
    /// counts: every liveness deadline moves by the gap.
    fn loop_clock(&mut self, now: u64, out: &mut Outputs) {
        let gap = now.saturating_sub(self.last_input_ns);
        self.last_input_ns = self.last_input_ns.max(now);
        if gap <= self.cfg.stall_ns {
            return;
        }
        for slot in &mut self.slots {
            slot.last_seen_ns = slot.last_seen_ns.saturating_add(gap).min(now);
        }
        self.stalls = (self.stalls.0.max(gap), self.stalls.1 + 1);
        out.push(Output::Note(Note::Stalled { gap_ns: gap }));
    }

    pub(crate) fn slot_state(&self, s: u16) -> Option<Liveness> {
        self.slots.get(s as usize).map(|x| x.state)
    }

    /// Pushes an event to strategy `s`, counting it.
    pub(crate) fn emit(&mut self, s: u16, ev: Event, out: &mut Outputs) {
        self.tally.on_event(&ev);
        out.push(Output::Event {
            strategy: s,
            event: ev,
        });
    }

    /// Appends a journal record (with a journal that has not failed).
    pub(crate) fn record(&self, rec: crate::Rec, out: &mut Outputs) {
        if self.cfg.journal && !self.journal_failed {
            out.push(Output::Record(rec));
        }
    }

    fn journal_failed(&mut self, out: &mut Outputs) {
        if self.journal_failed {
            return;
        }
        self.journal_failed = true;
        if !self.risk.is_global_killed() {
            self.risk.kill(None);
        }
        out.push(Output::Note(Note::JournalFailed));
    }

    /// Turns journaling on or off: with it on, every state change the engine must
    /// not forget is an [`Output::Record`] (before anything that depends on it).
    pub fn set_journaling(&mut self, on: bool) {
        self.cfg.journal = on;
    }

    /// The configuration.
    pub fn config(&self) -> &CoreConfig {
        &self.cfg
    }

    /// The risk engine (positions, rejects), for tests and reports.
    pub fn risk(&self) -> &RiskEngine {
        &self.risk
    }

    /// Orders in flight.
    pub fn in_flight(&self) -> usize {
        self.orders.len()
    }

    /// Orders in flight of strategy `s`.
    pub fn in_flight_of(&self, s: u16) -> usize {
        self.orders.values().filter(|o| o.strategy == s).count()
    }

    /// A strategy's liveness.
    pub fn liveness(&self, s: u16) -> Liveness {
        self.slots[s as usize].state
    }

    /// A strategy's process id, from its heartbeats.
    pub fn pid(&self, s: u16) -> Option<u32> {
        self.slots[s as usize].pid
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

    /// Strategies, in config order.
    pub fn strategies(&self) -> impl Iterator<Item = &str> {
        self.slots.iter().map(|s| s.name.as_str())
    }

    /// Counts of what went back to strategies.
    pub fn tally(&self) -> &Tally {
        &self.tally
    }

    /// The longest gap of the engine's own loop so far (ns) and how many gaps over
    /// `stall_ns` there were.
    pub fn stalls(&self) -> (u64, u64) {
        self.stalls
    }

    /// Open orders per venue (index = venue).
    pub fn open_by_venue(&self) -> Vec<u64> {
        let mut v = vec![0u64; self.cfg.venues.len()];
        for o in self.orders.values() {
            if let Some(n) = v.get_mut(o.venue as usize) {
                *n += 1;
            }
        }
        v
    }

    /// Whether the death of strategy `s` cancels its orders.
    pub(crate) fn cancels_on_death(&self) -> bool {
        self.cfg.on_dead == DeadPolicy::Cancel
    }

    /// The time the core was made.
    pub fn started_ns(&self) -> u64 {
        self.started_ns
    }
}

/// An event about order `o`.
pub(crate) fn event(kind: EventKind, o: &Live) -> Event {
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
