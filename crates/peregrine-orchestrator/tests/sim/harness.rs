//! One simulated run: the engine's core and exchange adapter, the model exchange,
//! strategies, faults, invariants.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use peregrine_orchestrator::{
    Completion, CompletionKind, CoreConfig, GatewayCmd, Input, Orchestrator, Output, Outputs, Rec,
    Replayer,
};
use peregrine_risk::{Limits, StrategyId};
use peregrine_strategy::msg::{Event, EventKind, NewOrder, Request};
use peregrine_types::{InstrumentId, Price, Qty, Rng, Side};
use peregrine_venues::exchange::{ExchangeConfig, ExchangeVenue};
use peregrine_venues::Venue;
use rustc_hash::FxHashMap;

use crate::exchange::{ModelExchange, SimConnect, KEY};

/// Steps per run (1 ms of simulated time each, plus jitter).
const STEPS: u64 = 4_000;
const STRATEGIES: usize = 3;
const MAX_POSITION: i64 = 12;
const MAX_OPEN: u32 = 6;
/// Trace lines kept for a failure report.
const TRACE: usize = 60;

/// How a run ended.
#[derive(Debug)]
pub(crate) enum Outcome {
    /// Every invariant held.
    Passed,
    /// The first broken invariant.
    Failed(String),
}

/// A strategy: sends orders, cancels and replaces at random, and keeps what the engine
/// told it.
#[derive(Debug, Default)]
struct Bot {
    next_client: u64,
    /// Its open orders (client id → side) as the engine reported them.
    open: FxHashMap<u64, Side>,
    /// Detached by the engine (declared dead); back once its rings are re-created.
    detached: bool,
}

struct Sim {
    seed: u64,
    rng: Rng,
    now: u64,
    cfg: CoreConfig,
    core: Orchestrator,
    out: Outputs,
    /// What the engine journaled, in order (a crash keeps a prefix of it).
    journal: Vec<Rec>,
    /// The journal must keep at least this many records: every order handed to the
    /// venue has its `Sent` record written first (the write-ahead rule).
    durable: usize,
    x: Rc<RefCell<ModelExchange>>,
    venue: ExchangeVenue<SimConnect>,
    sabotage: bool,
    completions: VecDeque<Completion>,
    bots: Vec<Bot>,
    /// Engine order id → strategy (from the `Sent` records).
    owner: FxHashMap<u64, u16>,
    cursor: u64,
    trace: VecDeque<String>,
    full_trace: Option<Vec<String>>,
    checks: u64,
}

/// Runs `seed`; with `sabotage`, the adapter has no in-doubt state.
pub(crate) fn run_seed(seed: u64, sabotage: bool) -> Outcome {
    let mut sim = Sim::new(seed, sabotage, false);
    sim.run()
}

/// The whole trace of `seed`.
pub(crate) fn trace_of(seed: u64, sabotage: bool) -> Vec<String> {
    let mut sim = Sim::new(seed, sabotage, true);
    let outcome = sim.run();
    let mut t = sim.full_trace.take().unwrap_or_default();
    t.push(format!("{outcome:?}"));
    t
}

fn config() -> CoreConfig {
    let names: Vec<String> = (0..STRATEGIES).map(|i| format!("s{i}")).collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let mut cfg = CoreConfig::new(&refs, 1);
    for s in &mut cfg.strategies {
        s.limits = Limits {
            max_order_qty: Some(4),
            max_position: Some(MAX_POSITION),
            max_open_orders: Some(MAX_OPEN),
            ..Limits::default()
        };
    }
    cfg.venues[0].name = "px".into();
    cfg.heartbeat_timeout_ns = 500_000_000;
    cfg.journal = true;
    cfg
}

fn venue(x: &Rc<RefCell<ModelExchange>>, sabotage: bool) -> ExchangeVenue<SimConnect> {
    let mut c = ExchangeConfig::new("127.0.0.1:1", 1, "unused");
    c.key_file = None;
    c.key = Some(KEY.to_hex());
    c.reconnect_ms = 20;
    let mut v = ExchangeVenue::with_connect("px", c, SimConnect(Rc::clone(x)))
        .expect("a valid config")
        .with_first_request_id(1 << 40);
    if sabotage {
        v.sabotage_no_in_doubt();
    }
    v
}

impl Sim {
    fn new(seed: u64, sabotage: bool, full: bool) -> Sim {
        let now = 1_000_000_000;
        let cfg = config();
        let x = Rc::new(RefCell::new(ModelExchange::new(seed, now)));
        let venue = venue(&x, sabotage);
        let mut sim = Sim {
            seed,
            rng: Rng::new(seed ^ 0x51_u64),
            now,
            core: Orchestrator::new(cfg.clone(), now),
            cfg,
            out: Outputs::default(),
            journal: Vec::new(),
            durable: 0,
            x,
            venue,
            sabotage,
            completions: VecDeque::new(),
            bots: (0..STRATEGIES)
                .map(|_| Bot {
                    next_client: 1,
                    ..Bot::default()
                })
                .collect(),
            owner: FxHashMap::default(),
            cursor: 0,
            trace: VecDeque::new(),
            full_trace: full.then(Vec::new),
            checks: 0,
        };
        sim.roster();
        sim
    }

    fn roster(&mut self) {
        self.journal.push(Rec::Roster {
            strategies: self.cfg.strategies.iter().map(|s| s.name.clone()).collect(),
            venues: vec!["px".into()],
        });
        self.durable = self.journal.len();
    }

    fn log(&mut self, line: String) {
        if let Some(t) = self.full_trace.as_mut() {
            t.push(format!("{:>12} {line}", self.now));
        }
        if self.trace.len() == TRACE {
            self.trace.pop_front();
        }
        self.trace.push_back(format!("{:>12} {line}", self.now));
    }

    fn fail(&self, why: String) -> Outcome {
        let trace: Vec<&str> = self.trace.iter().map(String::as_str).collect();
        Outcome::Failed(format!(
            "{why} (seed {}, sabotage {}; last events:\n  {})",
            self.seed,
            self.sabotage,
            trace.join("\n  ")
        ))
    }

    fn run(&mut self) -> Outcome {
        for step in 0..STEPS {
            self.now += 1_000_000 + self.rng.range(0, 200_000);
            self.x.borrow_mut().advance(self.now);
            self.faults(step);
            for s in 0..STRATEGIES as u16 {
                self.strategy_turn(s);
            }
            self.poll_venue();
            self.drain_completions();
            self.input(Input::Tick);
            if let Err(why) = self.check_limits() {
                return self.fail(why);
            }
            if self.quiet() {
                if let Err(why) = self.check_drift() {
                    return self.fail(why);
                }
            }
        }
        // Wind down: no faults, no new orders; everything settles.
        self.x.borrow_mut().down = false;
        for _ in 0..2_000 {
            self.now += 1_000_000;
            self.x.borrow_mut().advance(self.now);
            self.heartbeats();
            self.poll_venue();
            self.drain_completions();
            self.input(Input::Tick);
            if self.quiet() {
                break;
            }
        }
        if !self.quiet() {
            return self.fail("the run did not settle: in doubt or on the wire at the end".into());
        }
        match self.check_drift() {
            Err(why) => self.fail(why),
            Ok(()) if self.checks == 0 => self.fail("no quiet point to check drift at".into()),
            Ok(()) => Outcome::Passed,
        }
    }

    /// Faults drawn from the seed.
    fn faults(&mut self, step: u64) {
        let r = self.rng.range(0, 9_999);
        if r < 40 {
            // How the drop meets the requests of this step: none in flight; written
            // into a link already broken (lost); or handled by the exchange with its
            // answers still unread (lost with the connection: the case the adapter's
            // in-doubt state exists for).
            let mode = self.rng.range(0, 2);
            let how = [" (nothing in flight)", " (cut first)", " (answers unread)"][mode as usize];
            self.log(format!("fault: connection drops{how}"));
            if mode == 1 {
                self.x.borrow_mut().cut();
            }
            if mode > 0 {
                // A few requests go out before the drop is noticed.
                for s in 0..STRATEGIES as u16 {
                    self.strategy_turn(s);
                }
            }
            self.x.borrow_mut().drop_connection();
        } else if r < 50 {
            self.log("fault: exchange down".into());
            let mut x = self.x.borrow_mut();
            x.drop_connection();
            x.down = true;
        } else if r < 56 && step > 100 {
            self.restart_engine();
        }
        if self.x.borrow().down && self.rng.range(0, 99) < 5 {
            self.log("exchange back".into());
            self.x.borrow_mut().down = false;
        }
    }

    /// The engine crashes and restarts: a new core from the journal (whose unwritten
    /// tail is lost), a new adapter resuming the report stream from the journaled
    /// position, every strategy a new incarnation.
    fn restart_engine(&mut self) {
        let keep = self
            .rng
            .range(self.durable as u64, self.journal.len() as u64) as usize;
        self.log(format!(
            "fault: engine crash; journal keeps {keep} of {} records",
            self.journal.len()
        ));
        self.journal.truncate(keep);
        let mut rep = Replayer::new(&self.cfg, self.now);
        for rec in self.journal.iter().cloned() {
            rep.apply(rec);
        }
        let recovered = rep.finish();
        self.cursor = recovered.cursors[0].unwrap_or(0);
        self.venue = venue(&self.x, self.sabotage).with_resume(self.cursor);
        let mut settled = Vec::new();
        for o in &recovered.orders {
            if let Some(report) = self.venue.restore(o) {
                settled.push(Completion {
                    venue: 0,
                    engine_id: o.engine_id,
                    kind: CompletionKind::Report(report),
                    t3: 0,
                    t4: self.now,
                    t5: self.now,
                    scheduled_ns: 0,
                });
            }
        }
        self.x.borrow_mut().drop_connection();
        self.core = Orchestrator::new(self.cfg.clone(), self.now);
        self.roster();
        self.core
            .restore(recovered, settled, self.now, &mut self.out);
        self.carry_out();
        self.completions.clear();
        for b in &mut self.bots {
            *b = Bot {
                next_client: 1,
                ..Bot::default()
            };
        }
    }

    fn heartbeats(&mut self) {
        for s in 0..STRATEGIES as u16 {
            if !self.bots[s as usize].detached {
                self.request(s, Request::heartbeat(1 + u32::from(s), self.now));
            }
        }
    }

    fn strategy_turn(&mut self, s: u16) {
        if self.bots[s as usize].detached {
            return;
        }
        let r = self.rng.range(0, 99);
        let fair = self.x.borrow().fair();
        if r < 10 {
            self.request(s, Request::heartbeat(1 + u32::from(s), self.now));
        } else if r < 30 {
            let b = &mut self.bots[s as usize];
            let id = b.next_client;
            b.next_client += 1;
            let side = if self.rng.next_u64() & 1 == 0 {
                Side::Buy
            } else {
                Side::Sell
            };
            let off = self.rng.range(0, 6) as i64 - 2;
            let price = match side {
                Side::Buy => fair + off,
                Side::Sell => fair - off,
            };
            let qty = 1 + self.rng.range(0, 3) as i64;
            let mut o = NewOrder::limit(
                0,
                InstrumentId(1),
                side,
                Price::from_raw(price),
                Qty::from_raw(qty),
            );
            o.client_id = id;
            if self.rng.range(0, 3) == 0 {
                o = o.ioc();
            }
            self.request(s, Request::new_order(&o, self.now));
        } else if r < 38 {
            if let Some(id) = self.pick_open(s) {
                self.request(s, Request::cancel(id, self.now));
            }
        } else if r < 44 {
            if let Some(id) = self.pick_open(s) {
                let price = fair + self.rng.range(0, 8) as i64 - 4;
                let qty = 1 + self.rng.range(0, 3) as i64;
                self.request(
                    s,
                    Request::replace(id, Price::from_raw(price), Qty::from_raw(qty), self.now),
                );
            }
        }
    }

    fn pick_open(&mut self, s: u16) -> Option<u64> {
        let mut ids: Vec<u64> = self.bots[s as usize].open.keys().copied().collect();
        ids.sort_unstable();
        if ids.is_empty() {
            return None;
        }
        Some(ids[self.rng.range(0, ids.len() as u64 - 1) as usize])
    }

    fn request(&mut self, s: u16, req: Request) {
        self.input(Input::Request { strategy: s, req });
    }

    fn input(&mut self, input: Input) {
        self.core.handle(input, self.now, &mut self.out);
        self.carry_out();
    }

    /// Carries out the core's outputs, as the engine's shell does.
    fn carry_out(&mut self) {
        let outs: Vec<Output> = self.out.drain().collect();
        for o in outs {
            match o {
                Output::Record(rec) => {
                    if let Rec::Sent(s) = &rec {
                        self.owner.insert(s.engine_id, s.strategy);
                    }
                    self.journal.push(rec);
                }
                Output::Gateway { cmd, .. } => {
                    // The records before it are written first (the write-ahead rule).
                    self.durable = self.journal.len();
                    self.gateway(cmd);
                }
                Output::Event { strategy, event } => self.event(strategy, &event),
                Output::RetireRings { strategy } => {
                    self.log(format!("s{strategy} declared dead"));
                    self.bots[strategy as usize].detached = true;
                }
                Output::RecreateRings { strategy } => {
                    self.bots[strategy as usize] = Bot {
                        next_client: 1,
                        ..Bot::default()
                    };
                    self.core
                        .handle(Input::RingsReady { strategy }, self.now, &mut self.out);
                    self.carry_out();
                }
                Output::Reply(_) | Output::Publish | Output::Note(_) => {}
            }
        }
    }

    /// What the gateway thread does with a command.
    fn gateway(&mut self, cmd: GatewayCmd) {
        let now = self.now;
        let (id, r) = match cmd {
            GatewayCmd::ListLeg { .. } => unreachable!("the simulated strategies send no lists"),
            GatewayCmd::New(o) => (
                o.engine_id,
                self.venue
                    .submit(o, now)
                    .map_err(CompletionKind::SubmitFailed),
            ),
            GatewayCmd::Cancel(id) => (
                id,
                self.venue
                    .cancel(id, now)
                    .map_err(CompletionKind::CancelFailed),
            ),
            GatewayCmd::Replace {
                engine_id,
                price,
                qty,
            } => (
                engine_id,
                self.venue
                    .replace(engine_id, price, qty, now)
                    .map_err(CompletionKind::ReplaceFailed),
            ),
        };
        let owner = self
            .owner
            .get(&id)
            .map_or("?".to_owned(), |s| format!("s{s}"));
        self.log(format!("gateway {owner} {cmd:?} -> {r:?}"));
        if let Err(kind) = r {
            self.completions.push_back(completion(id, kind, now));
        }
    }

    fn poll_venue(&mut self) {
        let now = self.now;
        let mut got = Vec::new();
        self.venue.poll(now, &mut |r| got.push(r));
        for r in got {
            self.log(format!("report {r:?}"));
            self.completions
                .push_back(completion(r.engine_id(), CompletionKind::Report(r), now));
        }
        if let Some(c) = self.venue.report_cursor().filter(|c| *c != self.cursor) {
            self.cursor = c;
            self.completions
                .push_back(completion(0, CompletionKind::Cursor(c), now));
        }
        self.venue.drain_log(&mut |_| {});
    }

    fn drain_completions(&mut self) {
        while let Some(c) = self.completions.pop_front() {
            self.input(Input::Completion(c));
        }
    }

    fn event(&mut self, s: u16, ev: &Event) {
        let b = &mut self.bots[s as usize];
        match ev.kind() {
            Some(EventKind::Ack) => {
                b.open.insert(ev.client_id, ev.side());
            }
            Some(EventKind::Fill | EventKind::Cancelled) if ev.leaves == 0 => {
                b.open.remove(&ev.client_id);
            }
            Some(EventKind::Reject) => {
                b.open.remove(&ev.client_id);
            }
            _ => {}
        }
    }

    /// Nothing on the wire or in doubt: the engine and the exchange must agree.
    fn quiet(&self) -> bool {
        let x = self.x.borrow();
        x.logged_in()
            && x.pending_out() == 0
            && self.venue.connected()
            && !self.venue.in_recovery()
            && self.venue.in_doubt() == 0
            && self.completions.is_empty()
    }

    fn check_limits(&self) -> Result<(), String> {
        let risk = self.core.risk();
        for s in 0..STRATEGIES as u16 {
            let p = risk.positions().get(StrategyId(s), InstrumentId(1)).net;
            if p.abs() > MAX_POSITION {
                return Err(format!(
                    "strategy s{s}: position {p} beyond the limit {MAX_POSITION}"
                ));
            }
        }
        Ok(())
    }

    fn check_drift(&mut self) -> Result<(), String> {
        self.checks += 1;
        let x = self.x.borrow();
        let mut venue_net = [0i64; STRATEGIES];
        for (key, net) in &x.fills_by_key {
            let Some(s) = self.owner.get(key) else {
                return Err(format!(
                    "drift: the exchange has fills of order {key}, which the engine never sent"
                ));
            };
            venue_net[*s as usize] += net;
        }
        let risk = self.core.risk();
        for (s, want) in venue_net.iter().enumerate() {
            let got = risk
                .positions()
                .get(StrategyId(s as u16), InstrumentId(1))
                .net;
            if got != *want {
                return Err(format!(
                    "drift: strategy s{s} holds {got} lots in the engine, {want} at the exchange"
                ));
            }
        }
        Ok(())
    }
}

fn completion(engine_id: u64, kind: CompletionKind, now: u64) -> Completion {
    Completion {
        venue: 0,
        engine_id,
        kind,
        t3: 0,
        t4: now,
        t5: now,
        scheduled_ns: 0,
    }
}
