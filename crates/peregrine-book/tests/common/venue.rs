//! A generator of random command streams that use every venue feature: stops,
//! stop-limits, take-profits, trailing stops, icebergs, order lists (OCO, OTO, OTOCO),
//! list cancels, market-maker protection, halts, call auctions, volatility auctions
//! and the daily schedule, mixed with the plain stream of [`super::Generator`].

use peregrine_book::{
    Action, Book, CancelList, Command, Event, EventSink, ExtOrder, MarketCommand, MarketOp,
    MmpCommand, MmpOp, MmpParams, NewOrder, OrderList, Trigger,
};
use peregrine_types::{
    AccountId, AuctionKind, ClientOrderId, InstrumentSpec, ListKind, OrderId, OrderType, Price,
    Qty, Rng, Schedule, Side, StpMode, TimeInForce, TimeOfDay, Timestamp, TrailUnit, TriggerKind,
    VolatilityRule,
};

use super::{Generator, INST};

/// One step of a venue stream: a command, or an order list at a time.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Op {
    Cmd(Command),
    List(Timestamp, OrderList),
}

impl Op {
    /// Runs the step on `book`.
    pub(crate) fn apply<B: Book, S: EventSink>(&self, book: &mut B, sink: &mut S) {
        match self {
            Op::Cmd(c) => book.execute(c, sink),
            Op::List(ts, l) => book.execute_list(*ts, l, sink),
        }
    }
}

/// [`super::spec`] with a tight volatility band (20 basis points: 20 price units, 4
/// ticks, around 10,000) and a 1 ms volatility auction.
pub(crate) fn venue_spec() -> InstrumentSpec {
    InstrumentSpec {
        volatility: Some(VolatilityRule {
            band_bps: 20,
            auction_ms: 1,
        }),
        ..super::spec()
    }
}

/// [`venue_spec`] without the band but with a daily schedule (opening call 08:00,
/// open 08:30, closing call 16:00, close 16:30).
pub(crate) fn scheduled_spec() -> InstrumentSpec {
    let t = |s| TimeOfDay::parse(s).unwrap();
    InstrumentSpec {
        schedule: Some(Schedule {
            opening_call: t("08:00"),
            open: t("08:30"),
            closing_call: t("16:00"),
            close: t("16:30"),
        }),
        ..super::spec()
    }
}

/// The generator (see the module documentation).
#[derive(Debug)]
pub(crate) struct VenueGenerator {
    plain: Generator,
    rng: Rng,
    /// Ids handed to extended orders and list legs (and list ids), for cancels.
    known: Vec<(u64, u32)>,
    lists: Vec<(u64, u32)>,
    next_id: u64,
    /// Jump the clock by hours now and then (for the schedule).
    hours: bool,
    /// Alternate spells (see [`VenueGenerator::with_quiet_spells`]): steps left in
    /// the current spell, and whether it is a plain one.
    spells: Option<(u32, bool)>,
    /// Clean-up steps left before a plain spell: mass cancels of accounts 4..1,
    /// then a resume.
    cleanup: Option<u32>,
}

impl VenueGenerator {
    pub(crate) fn new(seed: u64) -> Self {
        VenueGenerator {
            plain: Generator::new(seed),
            rng: Rng::new(seed ^ 0x005e_ed0f_7e11),
            known: Vec::new(),
            lists: Vec::new(),
            next_id: 1 << 40,
            hours: false,
            spells: None,
            cleanup: None,
        }
    }

    /// A generator that alternates spells of the venue mix (without protections)
    /// and spells of plain commands only, each of the latter opened by a clean-up
    /// (every account's mass cancel, which takes its parked orders and list legs,
    /// and a resume): the book goes quiet and back, many times a stream.
    pub(crate) fn with_quiet_spells(seed: u64) -> Self {
        let mut g = Self::new(seed);
        g.spells = Some((0, true));
        g
    }

    /// A generator whose clock sometimes jumps by hours (for [`scheduled_spec`]).
    pub(crate) fn with_hours(seed: u64) -> Self {
        let mut g = Self::new(seed);
        g.hours = true;
        g
    }

    fn ts(&self) -> u64 {
        self.plain.ts
    }

    fn fresh(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    fn account(&mut self) -> u32 {
        1 + self.rng.below(4) as u32
    }

    fn side(&mut self) -> Side {
        if self.rng.chance(50, 100) {
            Side::Buy
        } else {
            Side::Sell
        }
    }

    /// A price near the middle, on the grid (5), sometimes off it.
    fn price(&mut self) -> i64 {
        match self.rng.below(100) {
            0 => 10_003,
            1 => 20_000,
            _ => 10_000 + 5 * (self.rng.below(17) as i64 - 8),
        }
    }

    fn qty(&mut self) -> i64 {
        match self.rng.below(100) {
            0 => 15,
            _ => 20 + 10 * self.rng.below(9) as i64,
        }
    }

    fn trigger(&mut self) -> Trigger {
        let kind = if self.rng.chance(70, 100) {
            TriggerKind::StopLoss
        } else {
            TriggerKind::TakeProfit
        };
        match self.rng.below(100) {
            0..=69 => Trigger::at(kind, Price::from_raw(self.price())),
            70..=84 => Trigger::trailing(TrailUnit::Ticks, 1 + self.rng.below(4) as i32),
            85..=94 => Trigger::trailing(TrailUnit::Bps, 5 + self.rng.below(30) as i32),
            95 => Trigger {
                kind,
                unit: TrailUnit::Ticks,
                trail: -1,
                price: Price::from_raw(0),
            },
            96 => Trigger {
                kind: TriggerKind::TakeProfit,
                ..Trigger::trailing(TrailUnit::Ticks, 2)
            },
            _ => Trigger {
                kind,
                unit: TrailUnit::None,
                trail: 3,
                price: Price::from_raw(self.price()),
            },
        }
    }

    fn order(&mut self, id: u64, account: u32, side: Side) -> NewOrder {
        let order_type = self.rng.pick(&[
            OrderType::Limit,
            OrderType::Limit,
            OrderType::Limit,
            OrderType::Market,
            OrderType::PostOnly,
        ]);
        let tif = match order_type {
            OrderType::Market => self.rng.pick(&[TimeInForce::Ioc, TimeInForce::Fok]),
            _ => self.rng.pick(&[
                TimeInForce::Gtc,
                TimeInForce::Gtc,
                TimeInForce::Gtc,
                TimeInForce::Ioc,
                TimeInForce::Fok,
                TimeInForce::Gtd,
            ]),
        };
        let expire_at = if tif == TimeInForce::Gtd {
            self.ts() + 1 + self.rng.below(400)
        } else {
            0
        };
        NewOrder {
            instrument: INST,
            id: OrderId(id),
            client_id: ClientOrderId(self.rng.below(1 << 40)),
            account: AccountId(account),
            side,
            order_type,
            tif,
            stp: self.rng.pick(&[
                StpMode::None,
                StpMode::None,
                StpMode::CancelNewest,
                StpMode::CancelOldest,
                StpMode::CancelBoth,
                StpMode::DecrementAndCancel,
            ]),
            price: Price::from_raw(self.price()),
            qty: Qty::from_raw(self.qty()),
            expire_at: Timestamp(expire_at),
        }
    }

    fn ext(&mut self, id: u64, account: u32, side: Side) -> ExtOrder {
        let mut order = self.order(id, account, side);
        let mut e = ExtOrder::plain(order);
        let roll = self.rng.below(100);
        if roll < 55 {
            e.trigger = self.trigger();
            if self.rng.chance(80, 100) && order.order_type == OrderType::PostOnly {
                order.order_type = OrderType::Limit;
                e.order = order;
            }
        }
        if (45..85).contains(&roll) {
            let d = match self.rng.below(10) {
                0 => 15,
                1 => order.qty.lots(),
                _ => 20 + 10 * self.rng.below(3) as i64,
            };
            e.display = Qty::from_raw(d);
            if self.rng.chance(85, 100) {
                e.order.order_type = OrderType::Limit;
                e.order.tif = TimeInForce::Gtc;
                e.order.expire_at = Timestamp(0);
                e.order.qty = Qty::from_raw(d.max(20) + 10 * (1 + self.rng.below(8) as i64));
            }
        }
        e
    }

    /// A limit leg away from the market on `side` (it should not take).
    fn resting_leg(&mut self, id: u64, account: u32, side: Side) -> ExtOrder {
        let mut o = self.order(id, account, side);
        o.order_type = if self.rng.chance(50, 100) {
            OrderType::PostOnly
        } else {
            OrderType::Limit
        };
        o.tif = TimeInForce::Gtc;
        o.expire_at = Timestamp(0);
        let away = 5 * (3 + self.rng.below(6) as i64);
        o.price = Price::from_raw(match side {
            Side::Buy => 10_000 - away,
            Side::Sell => 10_000 + away,
        });
        ExtOrder::plain(o)
    }

    /// A stop leg on `side`: stop-loss (the other way from the market), or take-profit.
    fn trigger_leg(&mut self, id: u64, account: u32, side: Side, rises: bool) -> ExtOrder {
        let mut e = ExtOrder::plain(self.order(id, account, side));
        if e.order.order_type == OrderType::PostOnly {
            e.order.order_type = OrderType::Limit;
        }
        let kind = if TriggerKind::StopLoss.rises(side) == rises {
            TriggerKind::StopLoss
        } else {
            TriggerKind::TakeProfit
        };
        let away = 5 * (1 + self.rng.below(6) as i64);
        let price = if rises { 10_000 + away } else { 10_000 - away };
        e.trigger = Trigger::at(kind, Price::from_raw(price));
        if kind == TriggerKind::StopLoss && self.rng.chance(20, 100) {
            e.trigger = Trigger::trailing(TrailUnit::Ticks, 1 + self.rng.below(4) as i32);
        }
        e
    }

    fn oco_pair(&mut self, account: u32, side: Side) -> [ExtOrder; 2] {
        let (a, b) = (self.fresh(), self.fresh());
        match self.rng.below(10) {
            0..=5 => {
                let limit = self.resting_leg(a, account, side);
                // The stop on the side the market must move against the limit.
                let rises = side == Side::Buy;
                let stop = self.trigger_leg(b, account, side, rises);
                if self.rng.chance(50, 100) {
                    [limit, stop]
                } else {
                    [stop, limit]
                }
            }
            6..=8 => [
                self.trigger_leg(a, account, side, true),
                self.trigger_leg(b, account, side, false),
            ],
            _ => [
                self.resting_leg(a, account, side),
                self.resting_leg(b, account, side),
            ],
        }
    }

    fn list(&mut self) -> OrderList {
        let account = self.account();
        let side = self.side();
        let kind = self
            .rng
            .pick(&[ListKind::Oco, ListKind::Oco, ListKind::Oto, ListKind::Otoco]);
        let blank = ExtOrder::plain(self.order(0, account, side));
        let mut legs = [blank; 3];
        match kind {
            ListKind::Oco => {
                let [a, b] = self.oco_pair(account, side);
                legs[0] = a;
                legs[1] = b;
            }
            _ => {
                let w = self.fresh();
                let mut working = ExtOrder::plain(self.order(w, account, side));
                if working.order.order_type == OrderType::Market {
                    working.order.order_type = OrderType::Limit;
                }
                legs[0] = working;
                let exit = side.opposite();
                if kind == ListKind::Oto {
                    let p = self.fresh();
                    legs[1] = self.ext(p, account, exit);
                    if self.rng.chance(15, 100) {
                        // A post-only exit priced through the market: refused if the
                        // book still crosses it when it is released.
                        let o = &mut legs[1];
                        *o = ExtOrder::plain(o.order);
                        o.order.order_type = OrderType::PostOnly;
                        o.order.tif = TimeInForce::Gtc;
                        o.order.expire_at = Timestamp(0);
                        o.order.price = Price::from_raw(match exit {
                            Side::Buy => 10_020,
                            Side::Sell => 9_980,
                        });
                    }
                } else {
                    let [a, b] = self.oco_pair(account, exit);
                    legs[1] = a;
                    legs[2] = b;
                }
            }
        }
        let n = kind.legs();
        for leg in &legs[..n] {
            self.known.push((leg.order.id.0, account));
        }
        self.lists.push((legs[0].order.id.0, account));
        OrderList {
            instrument: INST,
            account: AccountId(account),
            kind,
            client_id: ClientOrderId(self.rng.below(1 << 40)),
            legs,
        }
    }

    fn cmd(&self, action: Action) -> Op {
        Op::Cmd(Command {
            ts: Timestamp(self.ts()),
            action,
        })
    }

    fn mmp(&mut self) -> Op {
        let account = AccountId(self.account());
        let op = match self.rng.below(10) {
            0..=4 => MmpOp::Set(MmpParams {
                window_ns: if self.rng.chance(10, 100) {
                    0
                } else {
                    20 + self.rng.below(400)
                },
                max_qty: 40 + 20 * self.rng.below(10) as i64,
                max_fills: 1 + self.rng.below(5) as u32,
                freeze_ns: if self.rng.chance(50, 100) {
                    0
                } else {
                    50 + self.rng.below(500)
                },
            }),
            5..=7 => MmpOp::Reset,
            _ => MmpOp::Clear,
        };
        self.cmd(Action::Mmp(MmpCommand {
            instrument: INST,
            account,
            op,
            request_id: 0,
        }))
    }

    fn market(&mut self) -> Op {
        let op = match self.rng.below(10) {
            0 | 1 => MarketOp::Halt,
            2..=4 => MarketOp::Resume,
            5..=7 => MarketOp::StartAuction {
                kind: self.rng.pick(&[AuctionKind::Manual, AuctionKind::Opening]),
                duration_ns: if self.rng.chance(50, 100) {
                    0
                } else {
                    50 + self.rng.below(400)
                },
            },
            _ => MarketOp::Uncross,
        };
        self.cmd(Action::Market(MarketCommand {
            instrument: INST,
            op,
        }))
    }

    /// The next step.
    pub(crate) fn next_op(&mut self) -> Op {
        if let Some((left, plain)) = self.spells {
            let (left, plain) = if left == 0 {
                if !plain {
                    // A plain spell opens with the clean-up.
                    self.cleanup = Some(4);
                }
                (50 + self.rng.below(250) as u32, !plain)
            } else {
                (left, plain)
            };
            self.spells = Some((left - 1, plain));
            if !plain {
                loop {
                    let op = self.venue_op();
                    if !matches!(
                        op,
                        Op::Cmd(Command {
                            action: Action::Mmp(_),
                            ..
                        })
                    ) {
                        return op;
                    }
                }
            }
            self.plain.ts += self.rng.below(4);
            return match self.cleanup.take() {
                Some(0) => self.cmd(Action::Market(MarketCommand {
                    instrument: INST,
                    op: MarketOp::Resume,
                })),
                Some(k) => {
                    self.cleanup = Some(k - 1);
                    Op::Cmd(super::mass_cancel(self.ts(), k, None))
                }
                None => Op::Cmd(self.plain.next_command()),
            };
        }
        self.venue_op()
    }

    fn venue_op(&mut self) -> Op {
        if self.known.len() > 2048 {
            self.known.drain(..1024);
        }
        if self.lists.len() > 512 {
            self.lists.drain(..256);
        }
        let roll = self.rng.below(1000);
        match roll {
            0..=449 => Op::Cmd(self.plain.next_command()),
            450..=649 => {
                self.plain.ts += self.rng.below(4);
                let id = self.fresh();
                let account = self.account();
                let side = self.side();
                self.known.push((id, account));
                let e = self.ext(id, account, side);
                self.cmd(Action::NewExt(e))
            }
            650..=769 => {
                self.plain.ts += self.rng.below(4);
                Op::List(Timestamp(self.ts()), self.list())
            }
            770..=849 => {
                let (id, owner) = if self.known.is_empty() {
                    (1, 1)
                } else {
                    let n = self.known.len() as u64;
                    self.known[(n - 1 - self.rng.below(n.min(40))) as usize]
                };
                let account = if self.rng.chance(5, 100) {
                    owner % 4 + 1
                } else {
                    owner
                };
                if self.rng.chance(30, 100) {
                    let (price, qty) = (self.price(), self.qty());
                    return Op::Cmd(super::replace(self.ts(), id, account, price, qty));
                }
                Op::Cmd(super::cancel(self.ts(), id, account))
            }
            850..=889 => {
                let (id, owner) = if self.lists.is_empty() {
                    (7, 1)
                } else {
                    let n = self.lists.len() as u64;
                    self.lists[(n - 1 - self.rng.below(n.min(20))) as usize]
                };
                let account = AccountId(if self.rng.chance(5, 100) {
                    owner % 4 + 1
                } else {
                    owner
                });
                let client_id = ClientOrderId(self.rng.below(1 << 20));
                self.cmd(Action::CancelList(CancelList {
                    instrument: INST,
                    list_id: OrderId(id),
                    account,
                    client_id,
                }))
            }
            890..=929 => self.mmp(),
            930..=964 => self.market(),
            _ => {
                let jump = if self.hours && self.rng.chance(20, 100) {
                    (1 + self.rng.below(6)) * 3_600_000_000_000
                } else if self.rng.chance(10, 100) {
                    1_000_000 + self.rng.below(1_000_000)
                } else {
                    self.rng.below(300)
                };
                self.plain.ts += jump;
                Op::Cmd(super::tick(self.ts()))
            }
        }
    }
}

/// Every event kind and venue outcome a stream produced (for coverage checks).
#[derive(Debug, Default)]
pub(crate) struct Coverage {
    pub(crate) kinds: std::collections::HashSet<std::mem::Discriminant<Event>>,
    pub(crate) rejects: std::collections::HashSet<peregrine_book::RejectReason>,
    pub(crate) cancels: std::collections::HashSet<peregrine_book::CancelReason>,
    pub(crate) triggered: usize,
    pub(crate) released: usize,
    pub(crate) auction_fills: usize,
    pub(crate) iceberg_refills: usize,
    /// Steps after which the book was quiet, and how many times it became so.
    pub(crate) quiet_steps: usize,
    pub(crate) quiet_entries: usize,
}

impl Coverage {
    pub(crate) fn observe(&mut self, ev: &[Event]) {
        for e in ev {
            self.kinds.insert(std::mem::discriminant(e));
            match e {
                Event::Rejected(r) => {
                    self.rejects.insert(r.reason);
                }
                Event::List(l) => {
                    if let Some(r) = l.reason {
                        self.rejects.insert(r);
                    }
                }
                Event::Cancelled(c) => {
                    self.cancels.insert(c.reason);
                }
                Event::Triggered(t) => match t.cause {
                    peregrine_book::TriggerCause::Price => self.triggered += 1,
                    peregrine_book::TriggerCause::Released => self.released += 1,
                },
                Event::Fill(f) if f.auction => self.auction_fills += 1,
                _ => {}
            }
        }
    }
}
