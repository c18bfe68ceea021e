//! Synthetic order-by-order days, written in the exact ITCH 5.0 and LOBSTER formats.
//!
//! Real ITCH and LOBSTER days cannot be shipped in this repository (their licences do
//! not allow it), and large tests need days of any size, so [`generate`] makes them:
//! a seeded zero-intelligence order flow (passive limit orders placed a geometric
//! number of ticks behind the touch, marketable orders that sweep the book, partial
//! cancels, deletes, cancel-replaces and hidden-order trades), run through
//! Peregrine's own book ([`peregrine_book::OrderBook`], ids as given) so that every
//! message is consistent: executions name the resting orders in the order price-time
//! priority reaches them, with the quantities the book actually traded. The writers
//! ([`ItchWriter`], [`LobsterWriter`]) encode the stream; LOBSTER's order book file is
//! the generator's book after each message.

mod writer;

pub use writer::{ItchWriter, LobsterWriter, Sink};

use peregrine_book::{Action, Cancel, Command, Event, Ladder, NewOrder, OrderBook, Replace};
use peregrine_types::{
    AccountId, ClientOrderId, InstrumentId, InstrumentSpec, InstrumentStatus, OrderId, OrderType,
    Price, Qty, Rng, Side, StpMode, TimeInForce, Timestamp,
};
use rustc_hash::FxHashMap;

use crate::data::L3;

/// What to generate.
#[derive(Debug, Clone)]
pub struct SynthConfig {
    /// Random seed: the same seed gives the same day, byte for byte.
    pub seed: u64,
    /// Messages to write (book messages and trades).
    pub events: u64,
    /// Symbol.
    pub symbol: String,
    /// First message time, ns since midnight (default 9:30).
    pub start_ns: u64,
    /// Mean time between messages, ns.
    pub mean_gap_ns: u64,
    /// Starting mid price, four decimals (1_500_000 is $150.00).
    pub mid: i64,
    /// Tick, price units (100 is one cent).
    pub tick: i64,
    /// Resting orders per side the flow keeps near.
    pub depth: usize,
}

impl Default for SynthConfig {
    fn default() -> Self {
        SynthConfig {
            seed: 1,
            events: 100_000,
            symbol: "SYNTH".into(),
            start_ns: 34_200_000_000_000,
            mean_gap_ns: 50_000,
            mid: 1_500_000,
            tick: 100,
            depth: 150,
        }
    }
}

impl SynthConfig {
    /// The instrument the generated day trades: four price decimals, whole shares,
    /// a band of ±50% around the starting mid.
    pub fn spec(&self) -> InstrumentSpec {
        InstrumentSpec {
            id: InstrumentId(1),
            symbol: self.symbol.clone(),
            price_decimals: 4,
            qty_decimals: 0,
            tick_size: self.tick,
            lot_size: 1,
            min_qty: 1,
            max_qty: 1_000_000_000,
            reference_price: self.mid,
            band: self.mid / 2 / self.tick * self.tick,
            status: InstrumentStatus::Active,
            base: None,
            quote: None,
            volatility: None,
            schedule: None,
            fees: None,
        }
    }
}

/// The flow's state: its book, its live orders, its clock and randomness.
struct Flow {
    cfg: SynthConfig,
    book: OrderBook<Ladder>,
    rng: Rng,
    ts: u64,
    next_ref: u64,
    /// Live order references, and where each one is there, its side and price.
    live: Vec<u64>,
    index: FxHashMap<u64, Slot>,
    /// Live orders per side.
    counts: [usize; 2],
    events: Vec<Event>,
    /// Messages of the current step: (message, book changed).
    out: Vec<L3>,
    last_trade: i64,
}

const ACCOUNT: AccountId = AccountId(1);

/// A live order's place in `Flow::live`, side and price.
#[derive(Debug, Clone, Copy)]
struct Slot {
    pos: usize,
    side: Side,
    price: i64,
}

impl Flow {
    fn new(cfg: SynthConfig) -> Flow {
        let capacity = cfg.depth * 8 + 1_024;
        Flow {
            book: OrderBook::new(cfg.spec(), capacity),
            rng: Rng::new(cfg.seed),
            ts: cfg.start_ns,
            next_ref: 1,
            live: Vec::with_capacity(capacity),
            index: FxHashMap::default(),
            counts: [0; 2],
            events: Vec::with_capacity(256),
            out: Vec::with_capacity(64),
            last_trade: cfg.mid,
            cfg,
        }
    }

    fn run(&mut self, cmd: Action) {
        self.events.clear();
        let c = Command {
            ts: Timestamp(self.ts),
            action: cmd,
        };
        self.book.execute(&c, &mut self.events);
    }

    fn forget(&mut self, r: u64) {
        if let Some(slot) = self.index.remove(&r) {
            self.counts[slot.side.index()] -= 1;
            self.live.swap_remove(slot.pos);
            if let Some(&moved) = self.live.get(slot.pos) {
                if let Some(m) = self.index.get_mut(&moved) {
                    m.pos = slot.pos;
                }
            }
        }
    }

    fn remember(&mut self, r: u64, side: Side, price: i64) {
        let slot = Slot {
            pos: self.live.len(),
            side,
            price,
        };
        self.index.insert(r, slot);
        self.counts[side.index()] += 1;
        self.live.push(r);
    }

    /// A quantity: mostly round lots of 100, sometimes an odd lot.
    fn qty(&mut self) -> i64 {
        if self.rng.chance(1, 10) {
            self.rng.range(1, 99) as i64
        } else {
            100 * (1 + self.rng.below(3) + self.rng.below(3) * self.rng.below(4)) as i64
        }
    }

    /// A passive price `k` ticks behind the touch (geometric `k`).
    fn passive_price(&mut self, side: Side) -> i64 {
        let tick = self.cfg.tick;
        let mut k = 0;
        while k < 40 && self.rng.chance(3, 5) {
            k += 1;
        }
        let anchor = match (side, self.book.best(side.opposite()), self.book.best(side)) {
            (Side::Buy, Some((ask, _, _)), _) => ask.units() - tick,
            (Side::Sell, Some((bid, _, _)), _) => bid.units() + tick,
            (_, None, Some((own, _, _))) => own.units(),
            (_, None, None) => self.last_trade / tick * tick,
        };
        match side {
            Side::Buy => anchor - k * tick,
            Side::Sell => anchor + k * tick,
        }
    }

    fn in_band(&self, price: i64) -> bool {
        let s = self.book.spec();
        price >= s.band_low() && price <= s.band_high() && price > 0
    }

    fn add(&mut self, side: Side) {
        let price = self.passive_price(side);
        if !self.in_band(price) {
            return;
        }
        let qty = self.qty();
        let r = self.next_ref;
        self.next_ref += 1;
        self.run(Action::New(new_order(
            r,
            side,
            price,
            qty,
            TimeInForce::Gtc,
        )));
        if self.rests(r) {
            self.remember(r, side, price);
            self.out.push(L3::Add {
                order_ref: r,
                side,
                price,
                qty,
            });
        }
    }

    fn rests(&self, r: u64) -> bool {
        self.book.order_qty(OrderId(r)).is_some()
    }

    /// A marketable order: sweeps up to a few ticks through the touch; a fifth of them
    /// rest their remainder (executions, then the remainder's add).
    fn take(&mut self, side: Side) {
        let Some((touch, _, _)) = self.book.best(side.opposite()) else {
            return;
        };
        let through = self.rng.below(3) as i64 * self.cfg.tick;
        let price = match side {
            Side::Buy => touch.units() + through,
            Side::Sell => touch.units() - through,
        };
        if !self.in_band(price) {
            return;
        }
        let qty = self.qty() * (1 + self.rng.below(3) as i64);
        let rest = self.rng.chance(1, 5);
        let r = self.next_ref;
        self.next_ref += 1;
        let tif = if rest {
            TimeInForce::Gtc
        } else {
            TimeInForce::Ioc
        };
        self.run(Action::New(new_order(r, side, price, qty, tif)));
        let mut traded = 0;
        for i in 0..self.events.len() {
            if let Event::Fill(f) = self.events[i] {
                self.out.push(L3::Execute {
                    order_ref: f.maker_id.0,
                    qty: f.qty.lots(),
                });
                traded += f.qty.lots();
                self.last_trade = f.price.units();
                if f.maker_leaves.is_zero() {
                    self.forget(f.maker_id.0);
                }
            }
        }
        if rest && self.rests(r) {
            self.remember(r, side, price);
            self.out.push(L3::Add {
                order_ref: r,
                side,
                price,
                qty: qty - traded,
            });
        }
    }

    /// A random live order: its reference, open quantity and slot.
    fn pick(&mut self) -> Option<(u64, i64, Slot)> {
        if self.live.is_empty() {
            return None;
        }
        let r = self.live[self.rng.below(self.live.len() as u64) as usize];
        Some((
            r,
            self.book.order_qty(OrderId(r))?.lots(),
            *self.index.get(&r)?,
        ))
    }

    fn cancel(&mut self, partial: bool) {
        let Some((r, leaves, slot)) = self.pick() else {
            return;
        };
        if partial && leaves > 1 {
            let cut = self.rng.range(1, leaves as u64 - 1) as i64;
            self.run(Action::Replace(Replace {
                instrument: InstrumentId(1),
                id: OrderId(r),
                account: ACCOUNT,
                client_id: ClientOrderId(r),
                price: Price::from_raw(slot.price),
                qty: Qty::from_raw(leaves - cut),
            }));
            self.out.push(L3::Cancel {
                order_ref: r,
                qty: cut,
            });
        } else {
            self.run(Action::Cancel(Cancel {
                instrument: InstrumentId(1),
                id: OrderId(r),
                account: ACCOUNT,
                client_id: ClientOrderId(r),
            }));
            self.forget(r);
            self.out.push(L3::Delete { order_ref: r });
        }
    }

    fn replace(&mut self) {
        let Some((old, _, slot)) = self.pick() else {
            return;
        };
        let side = slot.side;
        self.run(Action::Cancel(Cancel {
            instrument: InstrumentId(1),
            id: OrderId(old),
            account: ACCOUNT,
            client_id: ClientOrderId(old),
        }));
        self.forget(old);
        let price = self.passive_price(side);
        let qty = self.qty();
        if !self.in_band(price) {
            self.out.push(L3::Delete { order_ref: old });
            return;
        }
        let new = self.next_ref;
        self.next_ref += 1;
        self.run(Action::New(new_order(
            new,
            side,
            price,
            qty,
            TimeInForce::Gtc,
        )));
        if self.rests(new) {
            self.remember(new, side, price);
            self.out.push(L3::Replace {
                old_ref: old,
                new_ref: new,
                price,
                qty,
            });
        } else {
            self.out.push(L3::Delete { order_ref: old });
        }
    }

    fn hidden_trade(&mut self) {
        let (Some((b, _, _)), Some((a, _, _))) =
            (self.book.best(Side::Buy), self.book.best(Side::Sell))
        else {
            return;
        };
        let mid = (b.units() + a.units()) / 2 / self.cfg.tick * self.cfg.tick;
        let aggressor = if self.rng.chance(1, 2) {
            Side::Buy
        } else {
            Side::Sell
        };
        let qty = self.qty();
        self.out.push(L3::Trade {
            aggressor,
            price: mid,
            qty,
        });
    }

    /// One step of the flow: its messages in `self.out`.
    fn step(&mut self) {
        self.out.clear();
        let gap = self.cfg.mean_gap_ns as f64
            * -(1.0 - self.rng.below(1 << 53) as f64 / (1u64 << 53) as f64).ln();
        self.ts += (gap as u64).max(1);
        let side = if self.rng.chance(1, 2) {
            Side::Buy
        } else {
            Side::Sell
        };
        let resting = self.counts[side.index()];
        if resting < self.cfg.depth / 4 {
            self.add(side);
            return;
        }
        let crowded = resting > self.cfg.depth * 2;
        match self.rng.below(100) {
            _ if crowded => self.cancel(false),
            0..=41 => self.add(side),
            42..=45 => self.take(side),
            46..=53 => self.cancel(true),
            54..=88 => self.cancel(false),
            89..=98 => self.replace(),
            _ => self.hidden_trade(),
        }
    }
}

fn new_order(r: u64, side: Side, price: i64, qty: i64, tif: TimeInForce) -> NewOrder {
    NewOrder {
        instrument: InstrumentId(1),
        id: OrderId(r),
        client_id: ClientOrderId(r),
        account: ACCOUNT,
        side,
        order_type: OrderType::Limit,
        tif,
        stp: StpMode::None,
        price: Price::from_raw(price),
        qty: Qty::from_raw(qty),
        expire_at: Timestamp(0),
    }
}

/// Generates `cfg.events` messages into `sink`; returns how many were written.
pub fn generate(cfg: &SynthConfig, sink: &mut dyn Sink) -> std::io::Result<u64> {
    let mut flow = Flow::new(cfg.clone());
    sink.begin(cfg)?;
    let mut written = 0;
    while written < cfg.events {
        flow.step();
        for i in 0..flow.out.len() {
            if written == cfg.events {
                break;
            }
            let msg = flow.out[i];
            sink.message(flow.ts, &msg)?;
            written += 1;
        }
    }
    sink.end(flow.ts)?;
    Ok(written)
}

#[cfg(test)]
mod tests;
