//! Shared test helpers: command builders, a seeded command generator and an
//! implementation-independent checker of conservation, FIFO and crossing.
#![allow(dead_code)]

pub(crate) mod venue;

use std::collections::HashMap;

use peregrine_book::{
    Action, Book, Cancel, Command, Event, MassCancel, NewOrder, Replace, RestingOrder, SetStatus,
};
use peregrine_types::{
    AccountId, ClientOrderId, InstrumentId, InstrumentSpec, InstrumentStatus, OrderId, OrderType,
    Price, Qty, Rng, Side, StpMode, TimeInForce, Timestamp,
};

/// Tick 5, lot 10, qty 20..=10_000, band 10_000 ± 500.
pub(crate) fn spec() -> InstrumentSpec {
    InstrumentSpec {
        tick_size: 5,
        lot_size: 10,
        min_qty: 20,
        max_qty: 10_000,
        band: 500,
        ..InstrumentSpec::example(1)
    }
}

pub(crate) const INST: InstrumentId = InstrumentId(1);

/// A GTC limit order.
pub(crate) fn limit(id: u64, account: u32, side: Side, price: i64, qty: i64) -> NewOrder {
    NewOrder {
        instrument: INST,
        id: OrderId(id),
        client_id: ClientOrderId(id.wrapping_add(1000)),
        account: AccountId(account),
        side,
        order_type: OrderType::Limit,
        tif: TimeInForce::Gtc,
        stp: StpMode::None,
        price: Price::from_raw(price),
        qty: Qty::from_raw(qty),
        expire_at: Timestamp(0),
    }
}

pub(crate) fn new(ts: u64, o: NewOrder) -> Command {
    Command {
        ts: Timestamp(ts),
        action: Action::New(o),
    }
}

pub(crate) fn cancel(ts: u64, id: u64, account: u32) -> Command {
    Command {
        ts: Timestamp(ts),
        action: Action::Cancel(Cancel {
            instrument: INST,
            id: OrderId(id),
            account: AccountId(account),
            client_id: ClientOrderId(id.wrapping_add(9_000)),
        }),
    }
}

pub(crate) fn replace(ts: u64, id: u64, account: u32, price: i64, qty: i64) -> Command {
    Command {
        ts: Timestamp(ts),
        action: Action::Replace(Replace {
            instrument: INST,
            id: OrderId(id),
            account: AccountId(account),
            client_id: ClientOrderId(id.wrapping_add(5_000)),
            price: Price::from_raw(price),
            qty: Qty::from_raw(qty),
        }),
    }
}

pub(crate) fn mass_cancel(ts: u64, account: u32, side: Option<Side>) -> Command {
    Command {
        ts: Timestamp(ts),
        action: Action::MassCancel(MassCancel {
            instrument: INST,
            account: AccountId(account),
            side,
        }),
    }
}

pub(crate) fn set_status(ts: u64, status: InstrumentStatus) -> Command {
    Command {
        ts: Timestamp(ts),
        action: Action::SetStatus(SetStatus {
            instrument: INST,
            status,
        }),
    }
}

pub(crate) fn tick(ts: u64) -> Command {
    Command {
        ts: Timestamp(ts),
        action: Action::Tick,
    }
}

/// Runs one command and returns its events.
pub(crate) fn run<B: Book>(book: &mut B, cmd: Command) -> Vec<Event> {
    let mut ev = Vec::new();
    book.execute(&cmd, &mut ev);
    ev
}

/// All resting orders in priority order.
pub(crate) fn orders<B: Book>(book: &B) -> Vec<RestingOrder> {
    let mut v = Vec::new();
    book.for_each_order(&mut |o| v.push(*o));
    v
}

/// Generates random but meaningful command streams for [`spec`]: prices near the
/// middle so orders cross often, four accounts so STP triggers, every kind / TIF / STP
/// mode, some invalid fields, cancels and replaces of live and dead ids, mass cancels,
/// halts and resumes, and time moving so GTD orders expire.
#[derive(Debug)]
pub(crate) struct Generator {
    rng: Rng,
    ts: u64,
    next_id: u64,
    ids: Vec<(u64, u32)>,
    halted: bool,
    /// With `spread`: the next id of a second, descending sequence far above the
    /// first, so ids arrive out of order and far apart.
    high_id: Option<u64>,
}

impl Generator {
    pub(crate) fn new(seed: u64) -> Generator {
        Generator {
            rng: Rng::new(seed),
            ts: 1,
            next_id: 1,
            ids: Vec::new(),
            halted: false,
            high_id: None,
        }
    }

    /// Like [`Generator::new`], but new order ids are far apart and out of order:
    /// 4% jump ahead by up to 2^32, 2% come from a descending sequence near 2^62, so
    /// that an id-table window slides often and many live orders sit behind it.
    pub(crate) fn spread(seed: u64) -> Generator {
        Generator {
            high_id: Some(1 << 62),
            ..Generator::new(seed)
        }
    }

    fn fresh_id(&mut self) -> u64 {
        if let Some(high) = self.high_id {
            match self.rng.below(100) {
                0..=3 => self.next_id += 1 + self.rng.below(1 << 32),
                4 | 5 => {
                    self.high_id = Some(high - 1 - self.rng.below(1 << 20));
                    return high;
                }
                _ => {}
            }
        }
        self.next_id += 1;
        self.next_id
    }

    fn price(&mut self) -> i64 {
        let r = &mut self.rng;
        match r.below(100) {
            0 => 10_000 + 3, // off tick
            1 => 20_000,     // out of band
            2 => -5,         // invalid
            _ => 10_000 + 5 * (r.below(13) as i64 - 6),
        }
    }

    fn qty(&mut self) -> i64 {
        let r = &mut self.rng;
        match r.below(100) {
            0 => 15,     // off lot
            1 => 0,      // invalid
            2 => 20_000, // above max
            3 => 10,     // below min
            _ => 20 + 10 * r.below(7) as i64,
        }
    }

    fn new_order(&mut self) -> Command {
        let r = &mut self.rng;
        let id = if !self.ids.is_empty() && r.chance(2, 100) {
            // A duplicate id, from the newest few so that it is often still live
            // (a dead id is accepted again; only a live one is a duplicate).
            let n = self.ids.len();
            self.ids[n - 1 - self.rng.below(n.min(16) as u64) as usize].0
        } else {
            self.fresh_id()
        };
        let account = 1 + self.rng.below(4) as u32;
        let side = if self.rng.chance(50, 100) {
            Side::Buy
        } else {
            Side::Sell
        };
        let order_type = self.rng.pick(&[
            OrderType::Limit,
            OrderType::Limit,
            OrderType::Limit,
            OrderType::Limit,
            OrderType::Market,
            OrderType::PostOnly,
            OrderType::PostOnly,
        ]);
        let tif = self.rng.pick(&[
            TimeInForce::Gtc,
            TimeInForce::Gtc,
            TimeInForce::Gtc,
            TimeInForce::Ioc,
            TimeInForce::Fok,
            TimeInForce::Gtd,
        ]);
        let stp = self.rng.pick(&[
            StpMode::None,
            StpMode::CancelNewest,
            StpMode::CancelOldest,
            StpMode::CancelBoth,
            StpMode::DecrementAndCancel,
        ]);
        let expire_at = match (tif, self.rng.below(10)) {
            (TimeInForce::Gtd, 0) => self.ts, // not in the future
            (TimeInForce::Gtd, _) => self.ts + 1 + self.rng.below(200),
            (_, 0) => 77, // expiry on a non-GTD order
            _ => 0,
        };
        let (price, qty) = (self.price(), self.qty());
        self.ids.push((id, account));
        new(
            self.ts,
            NewOrder {
                instrument: INST,
                id: OrderId(id),
                client_id: ClientOrderId(self.rng.below(1 << 40)),
                account: AccountId(account),
                side,
                order_type,
                tif,
                stp,
                price: Price::from_raw(price),
                qty: Qty::from_raw(qty),
                expire_at: Timestamp(expire_at),
            },
        )
    }

    fn known(&mut self) -> (u64, u32) {
        if self.ids.is_empty() || self.rng.chance(3, 100) {
            return (999_999, 1);
        }
        // Prefer recent ids: they are more likely to be live.
        let n = self.ids.len() as u64;
        let back = self.rng.below(n.min(60));
        let (id, owner) = self.ids[(n - 1 - back) as usize];
        let account = if self.rng.chance(8, 100) {
            owner % 4 + 1
        } else {
            owner
        };
        (id, account)
    }

    pub(crate) fn next_command(&mut self) -> Command {
        self.ts += self.rng.below(4);
        if self.ids.len() > 4096 {
            self.ids.drain(..2048);
        }
        let roll = self.rng.below(1000);
        match roll {
            0..=549 => self.new_order(),
            550..=749 => {
                let (id, account) = self.known();
                cancel(self.ts, id, account)
            }
            750..=969 => {
                let (id, account) = self.known();
                let (price, qty) = (self.price(), self.qty());
                replace(self.ts, id, account, price, qty)
            }
            970..=984 => {
                let account = 1 + self.rng.below(4) as u32;
                let side = self.rng.pick(&[None, Some(Side::Buy), Some(Side::Sell)]);
                mass_cancel(self.ts, account, side)
            }
            985..=989 => {
                self.halted = !self.halted;
                let status = if self.halted {
                    InstrumentStatus::Halted
                } else {
                    InstrumentStatus::Active
                };
                set_status(self.ts, status)
            }
            _ => {
                self.ts += self.rng.below(100);
                tick(self.ts)
            }
        }
    }
}

/// Tracks every order's life from the event stream alone and checks, against a book's
/// resting orders, that quantity is conserved (accepted + replace deltas = filled +
/// cancelled + open), that FIFO order within a level follows the time each order last
/// gained priority, and that the book is not crossed.
#[derive(Debug, Default)]
pub(crate) struct Ledger {
    /// id → (quantity in, filled, cancelled)
    life: HashMap<u64, (i64, i64, i64)>,
    /// id → sequence number of the event that last gave the order time priority
    priority: HashMap<u64, u64>,
    events_seen: u64,
}

impl Ledger {
    pub(crate) fn observe(&mut self, events: &[Event]) {
        for e in events {
            self.events_seen += 1;
            match e {
                Event::Accepted(a) => {
                    self.life.insert(a.id.0, (a.qty.lots(), 0, 0));
                    self.priority.insert(a.id.0, self.events_seen);
                }
                Event::Replaced(r) => {
                    let l = self
                        .life
                        .get_mut(&r.id.0)
                        .expect("replace of unknown order");
                    let open = l.0 - l.1 - l.2;
                    l.0 += r.qty.lots() - open;
                    if !r.priority_kept {
                        self.priority.insert(r.id.0, self.events_seen);
                    }
                }
                Event::Triggered(t) => {
                    assert!(self.life.contains_key(&t.id.0), "trigger of unknown order");
                    self.priority.insert(t.id.0, self.events_seen);
                }
                Event::Fill(f) => {
                    assert!(f.qty.lots() > 0, "empty fill");
                    self.life.get_mut(&f.maker_id.0).expect("maker").1 += f.qty.lots();
                    self.life.get_mut(&f.taker_id.0).expect("taker").1 += f.qty.lots();
                }
                Event::Cancelled(c) => {
                    assert!(c.qty.lots() > 0, "empty cancel");
                    self.life
                        .get_mut(&c.id.0)
                        .expect("cancel of unknown order")
                        .2 += c.qty.lots();
                }
                _ => {}
            }
        }
    }

    pub(crate) fn check(&self, resting: &[RestingOrder]) -> Result<(), String> {
        self.check_venue(resting, &[], true)
    }

    /// [`Ledger::check`] with the parked orders (accepted, not in the book: their whole
    /// quantity is open), and crossing checked only in continuous trading. Icebergs
    /// lose priority at each refill without an event, so FIFO is checked between
    /// other orders only.
    pub(crate) fn check_venue(
        &self,
        resting: &[RestingOrder],
        parked: &[peregrine_book::ParkedOrder],
        continuous: bool,
    ) -> Result<(), String> {
        let mut open: HashMap<u64, i64> = HashMap::new();
        for o in resting {
            open.insert(o.id.0, o.qty.lots());
        }
        for p in parked {
            open.insert(p.order.order.id.0, p.order.order.qty.lots());
        }
        for (id, (qty_in, filled, cancelled)) in &self.life {
            let o = open.get(id).copied().unwrap_or(0);
            if qty_in - filled - cancelled != o || o < 0 {
                return Err(format!(
                    "order {id}: in {qty_in} filled {filled} cancelled {cancelled} open {o}"
                ));
            }
        }
        for w in resting.windows(2) {
            let (a, b) = (&w[0], &w[1]);
            let icebergs = !a.display.is_zero() || !b.display.is_zero();
            if a.side == b.side
                && a.price == b.price
                && !icebergs
                && self.priority[&a.id.0] >= self.priority[&b.id.0]
            {
                return Err(format!(
                    "FIFO broken at {}: {} before {}",
                    a.price, a.id, b.id
                ));
            }
        }
        let best_bid = resting
            .iter()
            .filter(|o| o.side == Side::Buy)
            .map(|o| o.price)
            .max();
        let best_ask = resting
            .iter()
            .filter(|o| o.side == Side::Sell)
            .map(|o| o.price)
            .min();
        if let (Some(b), Some(a), true) = (best_bid, best_ask, continuous) {
            if b >= a {
                return Err(format!("crossed: {b} >= {a}"));
            }
        }
        Ok(())
    }
}

/// Builder-style tweaks for test orders.
pub(crate) trait NewOrderExt: Sized {
    fn tif(self, tif: TimeInForce) -> Self;
    fn with_tif(self, tif: TimeInForce) -> Self {
        self.tif(tif)
    }
    fn with_type(self, t: OrderType) -> Self;
    fn with_stp(self, stp: StpMode) -> Self;
    fn with_expiry(self, at: u64) -> Self;
    fn on(self, instrument: InstrumentId) -> Self;
}

impl NewOrderExt for NewOrder {
    fn tif(self, tif: TimeInForce) -> Self {
        NewOrder { tif, ..self }
    }
    fn with_type(self, order_type: OrderType) -> Self {
        NewOrder { order_type, ..self }
    }
    fn with_stp(self, stp: StpMode) -> Self {
        NewOrder { stp, ..self }
    }
    fn with_expiry(self, at: u64) -> Self {
        NewOrder {
            expire_at: Timestamp(at),
            ..self
        }
    }
    fn on(self, instrument: InstrumentId) -> Self {
        NewOrder { instrument, ..self }
    }
}
