//! The simulated market: one real order book per instrument (the exchange's own
//! [`peregrine_book`] matching core, so every order type, time in force and
//! self-trade rule behaves exactly as at the exchange) driven by a seeded stochastic
//! order flow, against which the engine's orders rest and fill **by queue position**.
//!
//! The flow (account 2, "the market") advances in fixed steps of simulated time. Each
//! step the instrument's *fair value* moves one tick up or down with probability
//! `move_per_mille`‰, then up to `events_per_step` events arrive, each one of:
//!
//! * a limit order (`limit_per_mille`‰): buy or sell, 1..=`max_depth_ticks` ticks from
//!   the fair value (so when the fair value has moved past stale quotes, arrivals
//!   cross them and the book follows), 1..=`max_qty` lots, GTC;
//! * a cancel (`cancel_per_mille`‰) of a random resting order of the market;
//! * otherwise a market order (IOC, protection 100 ticks away), 1..=`max_qty` lots, on
//!   the side the fair value leans to more often than not.
//!
//! The engine's orders (account 1) enter the same books. A resting order fills only
//! when the flow reaches it: after everything ahead of it at its price has traded or
//! been cancelled. Every event is mapped to the engine's [`Report`]s (its own orders)
//! and to [`MdUpdate`]s (every level change and trade: the public feed).
//!
//! Same seed and same inputs at the same times give byte-identical reports and market
//! data (`tests::same_seed_same_market`).

use peregrine_book::event::{Cancelled, Fill, Rejected};
use peregrine_book::{
    Action, Cancel, Command, CommandKind, Event, MatchingEngine, NewOrder, Replace,
};
use peregrine_queue::Producer;
use peregrine_types::Rng;
use peregrine_types::{
    AccountId, ClientOrderId, InstrumentId, InstrumentSpec, OrderId, OrderType, Price, Qty, Side,
    StpMode, TimeInForce, Timestamp,
};
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use crate::feed::MdUpdate;
use crate::{Report, VenueOrder};

/// The engine's account in the simulated books.
pub const ENGINE: AccountId = AccountId(1);
/// The simulated market's own account.
pub const MARKET: AccountId = AccountId(2);
/// Resting orders per simulated book at most.
const BOOK_CAPACITY: usize = 65_536;
/// Steps a poll catches up at most (after a long pause the rest is skipped).
const MAX_CATCH_UP: u64 = 2_000;

/// The order-flow model. Probabilities are per mille; prices in price units (ticks of
/// 1 unit).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MarketConfig {
    /// Simulated time per step, µs; default 1000.
    pub step_us: u64,
    /// Starting fair value (and the book's reference price); default 10000.
    pub mid: i64,
    /// Half-width of the price band the fair value stays in; default 2000.
    pub band: i64,
    /// Chance per step that the fair value moves one tick; default 300.
    pub move_per_mille: u32,
    /// Flow events per step at most (uniform 0..=this); default 3.
    pub events_per_step: u32,
    /// Share of limit orders among events; default 550.
    pub limit_per_mille: u32,
    /// Share of cancels among events; default 300 (the rest are market orders).
    pub cancel_per_mille: u32,
    /// Limit orders arrive 1..=this ticks from the fair value; default 8.
    pub max_depth_ticks: i64,
    /// Flow order size 1..=this lots; default 5.
    pub max_qty: i64,
    /// Resting orders of the market per book at most (a cancel is forced above);
    /// default 300.
    pub max_resting: u32,
}

impl Default for MarketConfig {
    fn default() -> Self {
        MarketConfig {
            step_us: 1_000,
            mid: 10_000,
            band: 2_000,
            move_per_mille: 300,
            events_per_step: 3,
            limit_per_mille: 550,
            cancel_per_mille: 300,
            max_depth_ticks: 8,
            max_qty: 5,
            max_resting: 300,
        }
    }
}

impl MarketConfig {
    /// Problems with these settings (empty: fine).
    pub fn problems(&self, at: &str) -> Vec<String> {
        let mut p = Vec::new();
        if self.step_us == 0 {
            p.push(format!("{at}.step_us must be > 0"));
        }
        if self.mid <= 0 || self.band <= 0 || self.band >= self.mid {
            p.push(format!("{at}: need 0 < band < mid"));
        }
        if self.max_depth_ticks <= 0 || self.max_depth_ticks * 4 > self.band {
            p.push(format!("{at}.max_depth_ticks must be in 1..=band/4"));
        }
        if self.max_qty <= 0 {
            p.push(format!("{at}.max_qty must be > 0"));
        }
        if self.limit_per_mille + self.cancel_per_mille > 1_000 || self.move_per_mille > 1_000 {
            p.push(format!("{at}: probabilities are per mille (at most 1000)"));
        }
        p
    }
}

/// One instrument's flow state.
#[derive(Debug)]
struct Flow {
    instrument: InstrumentId,
    fair: i64,
    /// The market's resting orders, for random cancels.
    live: Vec<OrderId>,
    at: FxHashMap<OrderId, usize>,
    /// Market data could not be pushed (ring full): send a fresh book when it fits.
    resync: bool,
}

impl Flow {
    fn add(&mut self, id: OrderId) {
        self.at.insert(id, self.live.len());
        self.live.push(id);
    }

    fn remove(&mut self, id: OrderId) {
        if let Some(i) = self.at.remove(&id) {
            self.live.swap_remove(i);
            if let Some(moved) = self.live.get(i) {
                self.at.insert(*moved, i);
            }
        }
    }
}

/// The simulated books and their flow.
#[derive(Debug)]
pub struct SimMarket {
    cfg: MarketConfig,
    engine: MatchingEngine,
    flows: Vec<Flow>,
    rng: Rng,
    events: Vec<Event>,
    clock: u64,
    next_step: u64,
    ours: FxHashMap<u64, OrderId>,
    md: Option<Producer<MdUpdate>>,
    /// Steps skipped after long pauses.
    pub skipped_steps: u64,
    /// Trades printed.
    pub trades: u64,
}

impl SimMarket {
    /// Books for `instruments`, flow seeded with `seed`, market data into `md`.
    pub fn new(
        cfg: MarketConfig,
        instruments: &[u32],
        seed: u64,
        md: Option<Producer<MdUpdate>>,
    ) -> SimMarket {
        let specs: Vec<InstrumentSpec> = instruments
            .iter()
            .map(|id| InstrumentSpec {
                reference_price: cfg.mid,
                band: cfg.band,
                symbol: format!("SIM{id}"),
                ..InstrumentSpec::example(*id)
            })
            .collect();
        // Only fails for duplicate or huge ids, which the engine config refuses first.
        let engine = MatchingEngine::new(&specs, BOOK_CAPACITY)
            .unwrap_or_else(|_| MatchingEngine::new(&[], 1).expect("empty engine"));
        SimMarket {
            flows: instruments
                .iter()
                .map(|id| Flow {
                    instrument: InstrumentId(*id),
                    fair: cfg.mid,
                    live: Vec::with_capacity(cfg.max_resting as usize + 64),
                    at: FxHashMap::default(),
                    resync: false,
                })
                .collect(),
            cfg,
            engine,
            rng: Rng::new(seed),
            events: Vec::with_capacity(4_096),
            clock: 0,
            next_step: 0,
            ours: FxHashMap::default(),
            md,
            skipped_steps: 0,
            trades: 0,
        }
    }

    fn step_ns(&self) -> u64 {
        self.cfg.step_us * 1_000
    }

    /// Runs every flow step due by `now`.
    pub fn advance(&mut self, now: u64, out: &mut dyn FnMut(Report)) {
        if self.next_step == 0 {
            self.next_step = now;
        }
        let step = self.step_ns();
        if now > self.next_step + MAX_CATCH_UP * step {
            let skip = (now - self.next_step) / step - MAX_CATCH_UP;
            self.skipped_steps += skip;
            self.next_step += skip * step;
        }
        while self.next_step <= now {
            let t = self.next_step;
            for fi in 0..self.flows.len() {
                self.step(fi, t, out);
            }
            self.next_step += step;
        }
    }

    fn step(&mut self, fi: usize, t: u64, out: &mut dyn FnMut(Report)) {
        let cfg = self.cfg;
        let lo = cfg.mid - cfg.band + 4 * cfg.max_depth_ticks;
        let hi = cfg.mid + cfg.band - 4 * cfg.max_depth_ticks;
        if self.rng.range(0, 999) < u64::from(cfg.move_per_mille) {
            let d = if self.rng.next_u64() & 1 == 0 { 1 } else { -1 };
            self.flows[fi].fair = (self.flows[fi].fair + d).clamp(lo, hi);
        }
        let mut n = self.rng.range(0, u64::from(cfg.events_per_step));
        if self.flows[fi].live.len() > cfg.max_resting as usize {
            self.cancel_random(fi, t, out);
        }
        while n > 0 {
            n -= 1;
            let r = self.rng.range(0, 999) as u32;
            if r < cfg.limit_per_mille {
                self.flow_limit(fi, t, out);
            } else if r < cfg.limit_per_mille + cfg.cancel_per_mille {
                self.cancel_random(fi, t, out);
            } else {
                self.flow_market(fi, t, out);
            }
        }
    }

    fn flow_order(
        &mut self,
        fi: usize,
        t: u64,
        side: Side,
        ty: OrderType,
        price: i64,
        out: &mut dyn FnMut(Report),
    ) {
        let qty = self.rng.range(1, self.cfg.max_qty as u64) as i64;
        self.market_order(fi, t, side, ty, price, qty, out);
    }

    /// An order of the market itself (tests place them by hand).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn market_order(
        &mut self,
        fi: usize,
        t: u64,
        side: Side,
        ty: OrderType,
        price: i64,
        qty: i64,
        out: &mut dyn FnMut(Report),
    ) {
        let order = NewOrder {
            instrument: self.flows[fi].instrument,
            id: OrderId(0),
            client_id: ClientOrderId(0),
            account: MARKET,
            side,
            order_type: ty,
            tif: if ty == OrderType::Market {
                TimeInForce::Ioc
            } else {
                TimeInForce::Gtc
            },
            stp: StpMode::None,
            price: Price::from_raw(price),
            qty: Qty::from_raw(qty),
            expire_at: Timestamp(0),
        };
        let id = self.engine.next_order_id();
        self.run(fi, t, Action::New(order), out);
        let rests = self
            .engine
            .book(self.flows[fi].instrument)
            .is_some_and(|b| b.order_qty(id).is_some());
        if rests {
            self.flows[fi].add(id);
        }
    }

    fn flow_limit(&mut self, fi: usize, t: u64, out: &mut dyn FnMut(Report)) {
        let side = if self.rng.next_u64() & 1 == 0 {
            Side::Buy
        } else {
            Side::Sell
        };
        let d = self.rng.range(1, self.cfg.max_depth_ticks as u64) as i64;
        let fair = self.flows[fi].fair;
        let price = match side {
            Side::Buy => fair - d,
            Side::Sell => fair + d,
        };
        self.flow_order(fi, t, side, OrderType::Limit, price, out);
    }

    fn flow_market(&mut self, fi: usize, t: u64, out: &mut dyn FnMut(Report)) {
        let instrument = self.flows[fi].instrument;
        let fair = self.flows[fi].fair;
        let mid = self.engine.book(instrument).and_then(|b| {
            let (bid, ask) = (b.best(Side::Buy)?, b.best(Side::Sell)?);
            Some((bid.0.units() + ask.0.units()) / 2)
        });
        // Buy more often when the fair value is above the book's mid, and vice versa.
        let lean = mid.map_or(0, |m| (fair - m).clamp(-3, 3) * 100);
        let buy = (self.rng.range(0, 999) as i64) < 500 + lean;
        let (side, price) = if buy {
            (Side::Buy, fair + 100)
        } else {
            (Side::Sell, fair - 100)
        };
        self.flow_order(fi, t, side, OrderType::Market, price, out);
    }

    fn cancel_random(&mut self, fi: usize, t: u64, out: &mut dyn FnMut(Report)) {
        let f = &self.flows[fi];
        if f.live.is_empty() {
            return;
        }
        let id = f.live[self.rng.range(0, f.live.len() as u64 - 1) as usize];
        let cancel = Cancel {
            instrument: f.instrument,
            id,
            account: MARKET,
            client_id: ClientOrderId(0),
        };
        self.run(fi, t, Action::Cancel(cancel), out);
    }

    fn flow_index(&self, instrument: InstrumentId) -> Option<usize> {
        self.flows.iter().position(|f| f.instrument == instrument)
    }

    /// An engine order reaches the market at `now`.
    pub fn submit(&mut self, o: &VenueOrder, now: u64, out: &mut dyn FnMut(Report)) {
        let Some(fi) = self.flow_index(o.instrument) else {
            return out(Report::Rejected {
                engine_id: o.engine_id,
                reason: peregrine_book::RejectReason::UnknownInstrument.code(),
            });
        };
        let order = NewOrder {
            instrument: o.instrument,
            id: OrderId(0),
            client_id: ClientOrderId(o.engine_id),
            account: ENGINE,
            side: o.side,
            order_type: o.order_type,
            tif: o.tif,
            stp: o.stp,
            price: o.price,
            qty: o.qty,
            expire_at: Timestamp(o.expire_at),
        };
        self.run(fi, now, Action::New(order), out);
    }

    /// A cancel of engine order `engine_id` reaches the market.
    pub fn cancel(&mut self, engine_id: u64, now: u64, out: &mut dyn FnMut(Report)) {
        let Some((fi, id)) = self.locate(engine_id) else {
            return out(Report::CancelRejected {
                engine_id,
                reason: peregrine_book::RejectReason::UnknownOrder.code(),
            });
        };
        let cancel = Cancel {
            instrument: self.flows[fi].instrument,
            id,
            account: ENGINE,
            client_id: ClientOrderId(engine_id),
        };
        self.run(fi, now, Action::Cancel(cancel), out);
    }

    /// A replace of engine order `engine_id` reaches the market.
    pub fn replace(
        &mut self,
        engine_id: u64,
        price: Price,
        qty: Qty,
        now: u64,
        out: &mut dyn FnMut(Report),
    ) {
        let Some((fi, id)) = self.locate(engine_id) else {
            return out(Report::ReplaceRejected {
                engine_id,
                reason: peregrine_book::RejectReason::UnknownOrder.code(),
            });
        };
        let replace = Replace {
            instrument: self.flows[fi].instrument,
            id,
            account: ENGINE,
            client_id: ClientOrderId(engine_id),
            price,
            qty,
        };
        self.run(fi, now, Action::Replace(replace), out);
    }

    fn locate(&self, engine_id: u64) -> Option<(usize, OrderId)> {
        let id = *self.ours.get(&engine_id)?;
        let fi = self.flows.iter().position(|f| {
            self.engine
                .book(f.instrument)
                .is_some_and(|b| b.order_qty(id).is_some())
        })?;
        Some((fi, id))
    }

    /// Sends market data into `tx` from now on.
    pub fn set_md(&mut self, tx: Producer<MdUpdate>) {
        self.md = Some(tx);
    }

    /// Whether engine order `engine_id` is open in the simulated books.
    pub fn knows(&self, engine_id: u64) -> bool {
        self.ours.contains_key(&engine_id)
    }

    /// Engine orders resting in the simulated books.
    pub fn open_orders(&self) -> usize {
        self.ours.len()
    }

    /// The fair value of instrument `i` (tests, reports).
    pub fn fair(&self, instrument: InstrumentId) -> Option<i64> {
        self.flow_index(instrument).map(|i| self.flows[i].fair)
    }

    /// Runs one command on the books and maps what happened.
    fn run(&mut self, fi: usize, t: u64, action: Action, out: &mut dyn FnMut(Report)) {
        self.clock = self.clock.max(t);
        self.events.clear();
        let cmd = Command {
            ts: Timestamp(self.clock),
            action,
        };
        self.engine.execute(&cmd, &mut self.events);
        let events = std::mem::take(&mut self.events);
        for ev in &events {
            self.map(fi, ev, out);
        }
        self.events = events;
        self.md_push(fi, MdUpdate::End);
    }

    fn map(&mut self, fi: usize, ev: &Event, out: &mut dyn FnMut(Report)) {
        let ts = self.clock;
        match *ev {
            Event::Accepted(a) if a.account == ENGINE => {
                self.ours.insert(a.client_id.0, a.id);
                out(Report::Ack {
                    engine_id: a.client_id.0,
                    venue_id: a.id.0,
                });
            }
            Event::Rejected(r) if r.account == ENGINE => out(rejected(&r)),
            Event::Fill(f) => self.fill(fi, &f, out),
            Event::Cancelled(c) => self.cancelled(fi, &c, out),
            Event::Replaced(r) if r.account == ENGINE => out(Report::Replaced {
                engine_id: r.client_id.0,
                price: r.price,
                qty: r.qty,
            }),
            Event::LevelChanged(l) => self.md_push(
                fi,
                MdUpdate::Level {
                    instrument: l.instrument,
                    side: l.side,
                    price: l.price,
                    qty: l.qty,
                    orders: l.count,
                    ts,
                },
            ),
            _ => {}
        }
    }

    fn fill(&mut self, fi: usize, f: &Fill, out: &mut dyn FnMut(Report)) {
        self.trades += 1;
        for (account, client, id, leaves) in [
            (
                f.maker_account,
                f.maker_client_id,
                f.maker_id,
                f.maker_leaves,
            ),
            (
                f.taker_account,
                f.taker_client_id,
                f.taker_id,
                f.taker_leaves,
            ),
        ] {
            if account == ENGINE {
                if leaves.is_zero() {
                    self.ours.remove(&client.0);
                }
                out(Report::Fill {
                    engine_id: client.0,
                    price: f.price,
                    qty: f.qty,
                    leaves,
                });
            } else if leaves.is_zero() {
                self.flows[fi].remove(id);
            }
        }
        self.md_push(
            fi,
            MdUpdate::Trade {
                instrument: f.instrument,
                trade_id: f.trade_id,
                price: f.price,
                qty: f.qty,
                aggressor: f.taker_side,
                ts: self.clock,
            },
        );
    }

    fn cancelled(&mut self, fi: usize, c: &Cancelled, out: &mut dyn FnMut(Report)) {
        if c.account != ENGINE {
            if c.leaves.is_zero() {
                self.flows[fi].remove(c.id);
            }
            return;
        }
        if c.leaves.is_zero() {
            self.ours.remove(&c.client_id.0);
        }
        out(Report::Cancelled {
            engine_id: c.client_id.0,
            qty: c.qty,
            leaves: c.leaves,
        });
    }

    /// Market data for the md thread; a full ring costs a resync of the book later.
    fn md_push(&mut self, fi: usize, u: MdUpdate) {
        let clock = self.clock;
        let Some(tx) = self.md.as_mut() else { return };
        if self.flows[fi].resync {
            // A fresh book when it fits: clear, every level, end.
            let instrument = self.flows[fi].instrument;
            let Some(book) = self.engine.book(instrument) else {
                return;
            };
            let mut levels = Vec::new();
            for side in [Side::Buy, Side::Sell] {
                book.visit_depth(side, usize::MAX, &mut |price, qty, count| {
                    levels.push(MdUpdate::Level {
                        instrument,
                        side,
                        price,
                        qty,
                        orders: count,
                        ts: clock,
                    })
                });
            }
            if tx.free_slots() < levels.len() + 2 {
                return;
            }
            let _ = tx.try_push(MdUpdate::Clear { instrument });
            for l in levels {
                let _ = tx.try_push(l);
            }
            let _ = tx.try_push(MdUpdate::End);
            self.flows[fi].resync = false;
            return;
        }
        if tx.try_push(u).is_err() {
            self.flows[fi].resync = true;
        }
    }
}

fn rejected(r: &Rejected) -> Report {
    let (engine_id, reason) = (r.client_id.0, r.reason.code());
    match r.command {
        CommandKind::Cancel => Report::CancelRejected { engine_id, reason },
        CommandKind::Replace => Report::ReplaceRejected { engine_id, reason },
        _ => Report::Rejected { engine_id, reason },
    }
}
