//! The challenge's rules mapped onto Peregrine's book: one message in, the book's
//! events out as the challenge's reports.
//!
//! | Message | Book command(s) | Reports |
//! |---|---|---|
//! | new order | `New` (GTC, or IOC when `ioc`), STP off | `Accepted` → OrderAck; each `Fill` → Trade; IOC `Cancelled` (unfilled) → CancelAck |
//! | cancel | `Cancel` | `Cancelled` → CancelAck; `Rejected` (unknown order) → CancelReject |
//! | modify | `Cancel`, then `New` GTC at the new price and quantity on the message's side | each `Fill` of the reinsert → Trade; then one ModifyAck; a failed cancel → ModifyReject |
//!
//! Trades carry the maker's price (the book's rule) and the sequence number of the
//! message that caused them. A modify is always cancel + reinsert, so it always loses
//! queue priority, even where Peregrine's own `Replace` would keep it (same price,
//! no larger quantity).
//!
//! Inputs outside the domain (a side byte other than 0/1, a price outside
//! `1..=MAX_PRICE_TICKS`, a zero quantity, a duplicate live id, a full book) have no
//! report kind in the ABI: a new order is refused without any report, a modify gets
//! a ModifyReject and the order stays as it was. Each is counted in [`Stats`].

use peregrine_book::{Action, Cancel, Command, NewOrder, Replace, Stage};
use peregrine_book::{Event, EventSink, Ladder, OpenIds, OrderBook, ReferenceBook};
use peregrine_types::{
    AccountId, ClientOrderId, InstrumentId, InstrumentSpec, InstrumentStatus, OrderId, OrderType,
    Price, Qty, Side, StpMode, TimeInForce, Timestamp,
};

use crate::abi::{CancelMsg, ModifyMsg, NewOrderMsg, Report, ReportKind};

/// One message of a batch, its kind decoded.
#[derive(Debug, Clone, Copy)]
pub enum Msg<'a> {
    /// A new order.
    New(&'a NewOrderMsg),
    /// A cancel.
    Cancel(&'a CancelMsg),
    /// A modify.
    Modify(&'a ModifyMsg),
}
use crate::matcher::Matcher;

/// The highest price in ticks the book accepts (the lowest is 1). 262,143 ticks is
/// $1,310.715 at the challenge's $0.005 tick: the challenge's workload moves around
/// 33,504 ticks and its conformance cases reach 200,000.
pub const MAX_PRICE_TICKS: i64 = 262_143;

/// Resting orders the book holds (all memory is allocated at `engine_init`).
pub const CAPACITY: usize = 1 << 18;

const INSTRUMENT: InstrumentId = InstrumentId(1);
const ACCOUNT: AccountId = AccountId(1);

/// The instrument the ABI trades: tick 1, lot 1, quantities up to `u32::MAX`, prices
/// `1..=MAX_PRICE_TICKS`, no fees, no auctions, no volatility band.
pub fn challenge_spec() -> InstrumentSpec {
    let mut spec = InstrumentSpec::example(INSTRUMENT.0);
    spec.symbol = "CAPI".to_string();
    spec.price_decimals = 3;
    spec.qty_decimals = 0;
    spec.tick_size = 1;
    spec.lot_size = 1;
    spec.min_qty = 1;
    spec.max_qty = i64::from(u32::MAX);
    spec.reference_price = MAX_PRICE_TICKS / 2 + 1;
    spec.band = MAX_PRICE_TICKS / 2;
    spec.status = InstrumentStatus::Active;
    spec
}

/// Distances (in messages) at which [`Adapter::on_batch`] prefetches each stage.
/// Only the first stage (address arithmetic and prefetches, no reads): the book's
/// deeper stages read the id table to find the node, which at the challenge's
/// depths cost more than they saved (docs/capi.md).
pub const BATCH_LOOKAHEAD: [(usize, Stage); 1] = [(4, Stage::Ids)];

/// Where reports go.
pub trait ReportSink {
    /// Delivers one report.
    fn push(&mut self, report: &Report);
}

impl ReportSink for Vec<Report> {
    fn push(&mut self, report: &Report) {
        Vec::push(self, *report);
    }
}

/// Messages the ABI has no report for (see the module docs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// New orders refused without a report.
    pub refused_new: u64,
    /// Modifies answered with a ModifyReject although the order rests (input
    /// outside the domain).
    pub refused_modify: u64,
}

/// The book the library ships: the ladder of price levels and the open-addressing
/// id table, since the ABI's order ids are the client's (sparse, in any order), not
/// the dense increasing ids the exchange assigns and the default id window expects.
pub type CapiBook = OrderBook<Ladder, OpenIds>;

/// The challenge's engine over one Peregrine book.
#[derive(Debug)]
pub struct Adapter<B: Matcher = CapiBook> {
    book: B,
    spec: InstrumentSpec,
    stats: Stats,
}

impl Adapter<CapiBook> {
    /// The shipped configuration: [`CapiBook`] over [`challenge_spec`], room for
    /// [`CAPACITY`] orders.
    pub fn new() -> Self {
        Adapter::with_book(CapiBook::new(challenge_spec(), CAPACITY))
    }
}

impl Default for Adapter<CapiBook> {
    fn default() -> Self {
        Self::new()
    }
}

impl Adapter<ReferenceBook> {
    /// The same mapping over the naive reference book (for differential tests).
    pub fn reference(capacity: usize) -> Self {
        Adapter::with_book(ReferenceBook::new(challenge_spec(), capacity))
    }
}

/// Which step of which message the book's events answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    New,
    Cancel,
    ModifyCancel,
    ModifyReinsert,
}

/// Turns one command's events into reports.
struct Translate<'a, R: ReportSink> {
    out: &'a mut R,
    seq: u64,
    step: Step,
    /// The cancel step found the order resting.
    cancelled: bool,
    /// The book refused the command.
    rejected: bool,
}

impl<R: ReportSink> EventSink for Translate<'_, R> {
    // Always inlined, so that the book's events the ABI has no report for (level
    // updates, accepted replaces) are never built.
    #[inline(always)]
    fn push(&mut self, event: Event) {
        let r = match event {
            Event::Accepted(a) if self.step == Step::New => Report {
                kind: ReportKind::OrderAck as u8,
                side: a.side as u8,
                sequence_number: self.seq,
                order_id: a.id.0,
                price_ticks: a.price.units(),
                quantity: lots_u32(a.qty),
                ..Report::default()
            },
            Event::Fill(f) => Report {
                kind: ReportKind::Trade as u8,
                side: f.taker_side as u8,
                sequence_number: self.seq,
                order_id: f.taker_id.0,
                price_ticks: f.price.units(),
                quantity: lots_u32(f.qty),
                maker_order_id: f.maker_id.0,
                taker_order_id: f.taker_id.0,
                ..Report::default()
            },
            Event::Cancelled(c) => {
                self.cancelled = true;
                if self.step == Step::ModifyCancel {
                    return;
                }
                // A user cancel, or the IOC residual of a new order.
                Report {
                    kind: ReportKind::CancelAck as u8,
                    side: c.side as u8,
                    sequence_number: self.seq,
                    order_id: c.id.0,
                    price_ticks: c.price.units(),
                    quantity: lots_u32(c.qty),
                    ..Report::default()
                }
            }
            Event::Rejected(r) => {
                self.rejected = true;
                if self.step != Step::Cancel {
                    return;
                }
                Report {
                    kind: ReportKind::CancelReject as u8,
                    sequence_number: self.seq,
                    order_id: r.id.0,
                    ..Report::default()
                }
            }
            _ => return,
        };
        self.out.push(&r);
    }
}

#[inline]
fn lots_u32(q: Qty) -> u32 {
    u32::try_from(q.lots()).unwrap_or(u32::MAX)
}

#[inline]
fn side_of(b: u8) -> Option<Side> {
    match b {
        0 => Some(Side::Buy),
        1 => Some(Side::Sell),
        _ => None,
    }
}

impl<B: Matcher> Adapter<B> {
    /// The mapping over `book` (which must trade [`challenge_spec`]).
    pub fn with_book(book: B) -> Self {
        Adapter {
            book,
            spec: challenge_spec(),
            stats: Stats::default(),
        }
    }

    /// The book.
    pub fn book(&self) -> &B {
        &self.book
    }

    /// Messages answered outside the ABI's report kinds.
    pub fn stats(&self) -> Stats {
        self.stats
    }

    /// A limit order with a price and quantity inside the domain, or `None`.
    #[inline]
    fn order(&self, id: u64, side: u8, price: i64, qty: u32, tif: TimeInForce) -> Option<Command> {
        let side = side_of(side)?;
        let (price, qty) = (Price::from_raw(price), Qty::from_raw(i64::from(qty)));
        if qty.lots() <= 0 || self.spec.check_price(price).is_err() {
            return None;
        }
        Some(Command {
            ts: Timestamp(0),
            action: Action::New(NewOrder {
                instrument: INSTRUMENT,
                id: OrderId(id),
                client_id: ClientOrderId(id),
                account: ACCOUNT,
                side,
                order_type: OrderType::Limit,
                tif,
                stp: StpMode::None,
                price,
                qty,
                expire_at: Timestamp(0),
            }),
        })
    }

    #[inline]
    fn run<R: ReportSink>(
        &mut self,
        cmd: &Command,
        out: &mut R,
        seq: u64,
        step: Step,
    ) -> (bool, bool) {
        let mut t = Translate {
            out,
            seq,
            step,
            cancelled: false,
            rejected: false,
        };
        self.book.execute(cmd, &mut t);
        (t.cancelled, t.rejected)
    }

    /// A new order: OrderAck, a Trade per fill, a CancelAck for an IOC residual.
    pub fn on_new<R: ReportSink>(&mut self, m: &NewOrderMsg, out: &mut R) {
        let tif = if m.ioc != 0 {
            TimeInForce::Ioc
        } else {
            TimeInForce::Gtc
        };
        let Some(cmd) = self.order(m.order_id, m.side, m.price_ticks, m.quantity, tif) else {
            self.stats.refused_new += 1;
            return;
        };
        let (_, rejected) = self.run(&cmd, out, m.sequence_number, Step::New);
        if rejected {
            self.stats.refused_new += 1;
        }
    }

    /// A cancel: CancelAck if the order rests, CancelReject otherwise.
    pub fn on_cancel<R: ReportSink>(&mut self, m: &CancelMsg, out: &mut R) {
        let cmd = cancel_cmd(m.order_id);
        self.run(&cmd, out, m.sequence_number, Step::Cancel);
    }

    /// A modify, as cancel + reinsert (losing priority): a Trade per fill of the
    /// reinsert, then a ModifyAck; a ModifyReject if the order does not rest.
    pub fn on_modify<R: ReportSink>(&mut self, m: &ModifyMsg, out: &mut R) {
        let seq = m.sequence_number;
        let reject = Report {
            kind: ReportKind::ModifyReject as u8,
            sequence_number: seq,
            order_id: m.order_id,
            ..Report::default()
        };
        // Checked before the cancel, so that a reinsert the book would refuse leaves
        // the order where it was.
        let Some(reinsert) = self.order(
            m.order_id,
            m.side,
            m.new_price_ticks,
            m.new_quantity,
            TimeInForce::Gtc,
        ) else {
            self.stats.refused_modify += 1;
            out.push(&reject);
            return;
        };
        let (cancelled, _) = self.run(&cancel_cmd(m.order_id), out, seq, Step::ModifyCancel);
        if !cancelled {
            out.push(&reject);
            return;
        }
        // The cancel freed the id and a slot, and the order was checked: the reinsert
        // cannot be refused.
        let (_, rejected) = self.run(&reinsert, out, seq, Step::ModifyReinsert);
        debug_assert!(!rejected, "reinsert of a checked order was refused");
        out.push(&Report {
            kind: ReportKind::ModifyAck as u8,
            side: m.side,
            sequence_number: seq,
            order_id: m.order_id,
            price_ticks: m.new_price_ticks,
            quantity: m.new_quantity,
            ..Report::default()
        });
    }

    /// One message, as its own entry point would run it.
    #[inline]
    pub fn on_msg<R: ReportSink>(&mut self, m: Msg<'_>, out: &mut R) {
        match m {
            Msg::New(n) => self.on_new(n, out),
            Msg::Cancel(c) => self.on_cancel(c, out),
            Msg::Modify(m) => self.on_modify(m, out),
        }
    }

    /// Runs `n` messages in order, `msg(i)` giving the i-th (`None`: skipped), with
    /// exactly the reports of running each alone; each message's memory (id-table
    /// entry, price level) is loaded a few messages before it runs
    /// ([`BATCH_LOOKAHEAD`]), so that the cache misses of consecutive messages overlap.
    #[inline]
    pub fn on_batch<'a, R: ReportSink>(
        &mut self,
        n: usize,
        msg: impl Fn(usize) -> Option<Msg<'a>>,
        out: &mut R,
    ) {
        for i in 0..n {
            for (d, stage) in BATCH_LOOKAHEAD {
                if i + d < n {
                    if let Some(m) = msg(i + d) {
                        self.prefetch(m, stage);
                    }
                }
            }
            if let Some(m) = msg(i) {
                self.on_msg(m, out);
            }
        }
    }

    /// Starts loading what `m` will touch, as far as `stage` allows; changes nothing.
    #[inline]
    fn prefetch(&self, m: Msg<'_>, stage: Stage) {
        let cmd = match m {
            Msg::New(n) => {
                match self.order(
                    n.order_id,
                    n.side,
                    n.price_ticks,
                    n.quantity,
                    TimeInForce::Gtc,
                ) {
                    Some(c) => c,
                    None => return,
                }
            }
            Msg::Cancel(c) => cancel_cmd(c.order_id),
            Msg::Modify(m) => Command {
                ts: Timestamp(0),
                action: Action::Replace(Replace {
                    instrument: INSTRUMENT,
                    id: OrderId(m.order_id),
                    account: ACCOUNT,
                    client_id: ClientOrderId(m.order_id),
                    price: Price::from_raw(m.new_price_ticks),
                    qty: Qty::from_raw(i64::from(m.new_quantity)),
                }),
            },
        };
        self.book.prefetch(&cmd, stage);
        if let (Msg::New(n), Stage::Ids) = (m, stage) {
            // The duplicate-id check reads the id-table entry, which for client ids
            // is anywhere: a cancel's first stage loads exactly that entry.
            self.book.prefetch(&cancel_cmd(n.order_id), Stage::Ids);
        }
    }

    /// Best bid in ticks, `i64::MIN` when no bid rests.
    #[inline]
    pub fn best_bid(&self) -> i64 {
        self.book.best(Side::Buy).unwrap_or(i64::MIN)
    }

    /// Best ask in ticks, `i64::MAX` when no ask rests.
    #[inline]
    pub fn best_ask(&self) -> i64 {
        self.book.best(Side::Sell).unwrap_or(i64::MAX)
    }

    /// Resting quantity at `price` on `side` (0 buy, 1 sell); 0 for an empty level,
    /// a price outside the domain or a side byte other than 0/1.
    #[inline]
    pub fn depth_at(&self, price: i64, side: u8) -> u64 {
        match side_of(side) {
            Some(s) if self.spec.check_price(Price::from_raw(price)).is_ok() => {
                self.book.depth(s, price)
            }
            _ => 0,
        }
    }
}

#[inline]
fn cancel_cmd(id: u64) -> Command {
    Command {
        ts: Timestamp(0),
        action: Action::Cancel(Cancel {
            instrument: INSTRUMENT,
            id: OrderId(id),
            account: ACCOUNT,
            client_id: ClientOrderId(id),
        }),
    }
}
