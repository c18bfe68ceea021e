//! The multi-instrument matching engine: routes commands to per-instrument books,
//! assigns exchange order ids, and hosts the pre-match seam.
//!
//! ```text
//!   Command ──▶ PreMatch::check (risk / balances; later issue) ──▶ OrderBook ──▶ EventSink
//!                      │ reject                                        (settlement, journal,
//!                      └──────────────────────────────────────────────▶ publish: post-match)
//! ```

use peregrine_types::{AccountId, ClientOrderId, InstrumentId, InstrumentSpec, OrderId};

use peregrine_types::{ListKind, Timestamp};

use crate::book::OrderBook;
use crate::command::{Action, Command, CommandKind, NewOrder, OrderList, Replace};
use crate::event::{Event, EventSink, ListStatus, ListUpdate, Rejected};
use crate::index::{Ladder, LevelIndex};
use crate::reject::RejectReason;
use crate::{Book, StateHash};

/// A stage that may refuse new orders and replaces before they reach a book (balance
/// reservation, pre-trade risk). It sees only admitted commands; everything a book does
/// afterwards reaches the post-match stages through the [`EventSink`].
pub trait PreMatch {
    /// Checks a new order (its exchange id already assigned).
    fn check_new(&mut self, order: &NewOrder, spec: &InstrumentSpec) -> Result<(), RejectReason>;
    /// Checks a replace.
    fn check_replace(
        &mut self,
        replace: &Replace,
        spec: &InstrumentSpec,
    ) -> Result<(), RejectReason>;
    /// Sees every event a book produces, as it is produced and before the engine's
    /// sink does (the ledger settles here, the fee stage prices fills), so a check
    /// made later in the same command (an OTO leg released by a fill) sees its effect.
    /// The default does nothing.
    #[inline]
    fn on_event(&mut self, event: &mut Event) {
        let _ = event;
    }
    /// Called once per command, before its events, with the command's time (the fee
    /// stage's day). The default does nothing.
    #[inline]
    fn begin(&mut self, now: Timestamp) {
        let _ = now;
    }
}

/// The sink a book writes to inside the engine: each event goes through the
/// pre-match stage's [`PreMatch::on_event`] first, and the book's own admissions
/// (released list legs) through its [`PreMatch::check_new`].
struct Staged<'a, P, S> {
    pre: &'a mut P,
    sink: &'a mut S,
}

impl<P: PreMatch, S: EventSink> EventSink for Staged<'_, P, S> {
    #[inline]
    fn push(&mut self, mut event: Event) {
        self.pre.on_event(&mut event);
        self.sink.push(event);
    }

    #[inline]
    fn admit(&mut self, order: &NewOrder, spec: &InstrumentSpec) -> Result<(), RejectReason> {
        self.pre.check_new(order, spec)
    }
}

/// The empty pre-match stage.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoPreMatch;

impl PreMatch for NoPreMatch {
    #[inline]
    fn check_new(&mut self, _: &NewOrder, _: &InstrumentSpec) -> Result<(), RejectReason> {
        Ok(())
    }
    #[inline]
    fn check_replace(&mut self, _: &Replace, _: &InstrumentSpec) -> Result<(), RejectReason> {
        Ok(())
    }
}

/// Books indexed by instrument id, one sequence of exchange order ids.
#[derive(Debug)]
pub struct MatchingEngine<L: LevelIndex = Ladder, P: PreMatch = NoPreMatch> {
    books: Vec<Option<OrderBook<L>>>,
    next_order_id: u64,
    pre: P,
}

/// Starting the engine failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EngineError {
    /// Two specs share an id.
    #[error("instrument {0} defined twice")]
    DuplicateInstrument(InstrumentId),
    /// A spec failed validation.
    #[error("instrument {0}: {1}")]
    BadSpec(InstrumentId, peregrine_types::SpecError),
    /// Instrument ids index a table; keep them small.
    #[error("instrument id {0} too large (max 65535)")]
    IdTooLarge(InstrumentId),
}

impl<L: LevelIndex> MatchingEngine<L, NoPreMatch> {
    /// An engine with one book per spec, each holding up to `capacity_per_book` orders.
    pub fn new(specs: &[InstrumentSpec], capacity_per_book: usize) -> Result<Self, EngineError> {
        Self::with_pre_match(specs, capacity_per_book, NoPreMatch)
    }
}

impl<L: LevelIndex, P: PreMatch> MatchingEngine<L, P> {
    /// An engine with a pre-match stage.
    pub fn with_pre_match(
        specs: &[InstrumentSpec],
        capacity_per_book: usize,
        pre: P,
    ) -> Result<Self, EngineError> {
        let mut books: Vec<Option<OrderBook<L>>> = Vec::new();
        for spec in specs {
            spec.validate()
                .map_err(|e| EngineError::BadSpec(spec.id, e))?;
            let i = spec.id.0 as usize;
            if i > u16::MAX as usize {
                return Err(EngineError::IdTooLarge(spec.id));
            }
            if books.len() <= i {
                books.resize_with(i + 1, || None);
            }
            if books[i].is_some() {
                return Err(EngineError::DuplicateInstrument(spec.id));
            }
            books[i] = Some(OrderBook::new(spec.clone(), capacity_per_book));
        }
        Ok(MatchingEngine {
            books,
            next_order_id: 1,
            pre,
        })
    }

    /// The book of an instrument.
    pub fn book(&self, id: InstrumentId) -> Option<&OrderBook<L>> {
        self.books.get(id.0 as usize).and_then(Option::as_ref)
    }

    /// Every book, by instrument id.
    pub fn books(&self) -> impl Iterator<Item = &OrderBook<L>> {
        self.books.iter().flatten()
    }

    /// The earliest expiry of a resting GTD order on any book (`None`: none rests);
    /// a `Tick` at or after it expires the order ([`OrderBook::next_expiry`]).
    pub fn next_expiry(&mut self) -> Option<peregrine_types::Timestamp> {
        self.books
            .iter_mut()
            .flatten()
            .filter_map(OrderBook::next_expiry)
            .min()
    }

    /// The id the next accepted order will get.
    pub fn next_order_id(&self) -> OrderId {
        OrderId(self.next_order_id)
    }

    /// The book of an instrument, mutably: for restoring a snapshot with
    /// [`OrderBook::restore`], not for trading around the engine.
    pub fn book_mut(&mut self, instrument: InstrumentId) -> Option<&mut OrderBook<L>> {
        self.books
            .get_mut(instrument.0 as usize)
            .and_then(Option::as_mut)
    }

    /// Sets the id the next accepted order gets (restoring a snapshot).
    pub fn set_next_order_id(&mut self, id: OrderId) {
        self.next_order_id = id.0;
    }

    /// The pre-match stage.
    pub fn pre_match(&mut self) -> &mut P {
        &mut self.pre
    }

    /// The pre-match stage, read-only (snapshots, state hashes, queries).
    pub fn pre_match_ref(&self) -> &P {
        &self.pre
    }

    /// The same books and order ids behind another pre-match stage (e.g. an exchange
    /// that decides after construction whether balances are on).
    pub fn with_stage<Q: PreMatch>(self, pre: Q) -> MatchingEngine<L, Q> {
        MatchingEngine {
            books: self.books,
            next_order_id: self.next_order_id,
            pre,
        }
    }

    /// Applies one command. A new order gets the next exchange id whatever the outcome
    /// (ids are unique, not gap-free). `Tick` advances every book's clock.
    pub fn execute<S: EventSink>(&mut self, cmd: &Command, sink: &mut S) {
        self.pre.begin(cmd.ts);
        let mut staged = Staged {
            pre: &mut self.pre,
            sink,
        };
        let Some(instrument) = cmd.action.instrument() else {
            for book in self.books.iter_mut().flatten() {
                book.advance_time(cmd.ts, &mut staged);
                book.finish_command(&mut staged);
            }
            return;
        };
        let Some(book) = self
            .books
            .get_mut(instrument.0 as usize)
            .and_then(Option::as_mut)
        else {
            staged.push(unknown_instrument(cmd, instrument, self.next_order_id));
            if matches!(cmd.action, Action::New(_) | Action::NewExt(_)) {
                self.next_order_id += 1;
            }
            return;
        };
        match &cmd.action {
            Action::New(o) => {
                let order = NewOrder {
                    id: OrderId(self.next_order_id),
                    ..*o
                };
                self.next_order_id += 1;
                book.advance_time(cmd.ts, &mut staged);
                match staged.pre.check_new(&order, book.spec()) {
                    Err(reason) => staged.push(reject(
                        instrument,
                        CommandKind::New,
                        order.id,
                        o.client_id,
                        o.account,
                        reason,
                    )),
                    // The clock has advanced: go straight to the order (no second
                    // `advance_time`, no copy of the command).
                    Ok(()) => book.new_order(&order, &mut staged),
                }
                book.finish_command(&mut staged);
            }
            Action::NewExt(e) => {
                let mut ext = *e;
                ext.order.id = OrderId(self.next_order_id);
                self.next_order_id += 1;
                book.advance_time(cmd.ts, &mut staged);
                match staged.pre.check_new(&ext.order, book.spec()) {
                    Err(reason) => staged.push(reject(
                        instrument,
                        CommandKind::New,
                        ext.order.id,
                        e.order.client_id,
                        e.order.account,
                        reason,
                    )),
                    Ok(()) => book.new_ext(&ext, &mut staged),
                }
                book.finish_command(&mut staged);
            }
            Action::Replace(r) => {
                book.advance_time(cmd.ts, &mut staged);
                match staged.pre.check_replace(r, book.spec()) {
                    Err(reason) => staged.push(reject(
                        instrument,
                        CommandKind::Replace,
                        r.id,
                        r.client_id,
                        r.account,
                        reason,
                    )),
                    Ok(()) => book.replace(r, &mut staged),
                }
                book.finish_command(&mut staged);
            }
            _ => book.execute(cmd, &mut staged),
        }
    }

    /// Enters an order list at `ts`. Its legs get the next exchange ids in leg order
    /// whatever the outcome; the list's id is leg 0's. The pre-match stage checks the
    /// legs that are active or parked at entry (an OTO's pending legs when they are
    /// released); any refusal rejects the whole list.
    pub fn execute_list<S: EventSink>(&mut self, ts: Timestamp, list: &OrderList, sink: &mut S) {
        self.pre.begin(ts);
        let mut staged = Staged {
            pre: &mut self.pre,
            sink,
        };
        let n = list.kind.legs();
        let mut list = *list;
        for (i, leg) in list.legs.iter_mut().enumerate().take(n) {
            leg.order.id = OrderId(self.next_order_id + i as u64);
        }
        self.next_order_id += n as u64;
        let rejected = |reason, leg: usize| {
            Event::List(ListUpdate {
                instrument: list.instrument,
                list_id: list.legs[0].order.id,
                client_id: list.client_id,
                account: list.account,
                kind: list.kind,
                status: ListStatus::Rejected,
                legs: std::array::from_fn(|i| {
                    if i < n {
                        list.legs[i].order.id
                    } else {
                        OrderId(0)
                    }
                }),
                reason: Some(reason),
                leg: leg as u8,
            })
        };
        let Some(book) = self
            .books
            .get_mut(list.instrument.0 as usize)
            .and_then(Option::as_mut)
        else {
            staged.push(rejected(RejectReason::UnknownInstrument, 0));
            return;
        };
        book.advance_time(ts, &mut staged);
        for (i, leg) in list.legs.iter().enumerate().take(n) {
            let pending = list.kind != ListKind::Oco && i > 0;
            if pending || leg.order.instrument != list.instrument {
                continue;
            }
            if let Err(reason) = staged.pre.check_new(&leg.order, book.spec()) {
                staged.push(rejected(reason, i));
                book.finish_command(&mut staged);
                return;
            }
        }
        book.enter_list(&list, &mut staged);
    }

    /// When any book next has timed work (see [`OrderBook::next_timer`]).
    pub fn next_timer(&self) -> Option<Timestamp> {
        self.books
            .iter()
            .flatten()
            .filter_map(|b| b.next_timer())
            .min()
    }

    /// Starts loading the memory `cmd` will touch in its book, as far as `stage`
    /// allows (see [`crate::Stage`]). Changes nothing.
    #[inline]
    pub fn prefetch(&self, cmd: &Command, stage: crate::Stage) {
        let instrument = match &cmd.action {
            Action::New(o) => o.instrument,
            Action::Cancel(c) => c.instrument,
            Action::Replace(r) => r.instrument,
            _ => return,
        };
        if let Some(book) = self.book(instrument) {
            book.prefetch(cmd, stage);
        }
    }

    /// Runs `cmds` in order with the book's prefetch pipeline ([`crate::LOOKAHEAD`]).
    /// Produces exactly the events of calling [`MatchingEngine::execute`] on each.
    pub fn execute_batch<S: EventSink>(&mut self, cmds: &[Command], sink: &mut S) {
        for i in 0..cmds.len() {
            for (d, stage) in crate::LOOKAHEAD {
                if let Some(c) = cmds.get(i + d) {
                    self.prefetch(c, stage);
                }
            }
            self.execute(&cmds[i], sink);
        }
    }

    /// Blake3 over the next order id and every book's state hash, by instrument id.
    pub fn state_hash(&self) -> StateHash {
        let mut h = blake3::Hasher::new();
        h.update(&self.next_order_id.to_le_bytes());
        for (i, book) in self.books.iter().enumerate() {
            if let Some(book) = book {
                h.update(&(i as u32).to_le_bytes());
                h.update(&book.state_hash().0);
            }
        }
        StateHash(*h.finalize().as_bytes())
    }
}

fn reject(
    instrument: InstrumentId,
    command: CommandKind,
    id: OrderId,
    client_id: ClientOrderId,
    account: AccountId,
    reason: RejectReason,
) -> Event {
    Event::Rejected(Rejected {
        instrument,
        command,
        id,
        client_id,
        account,
        reason,
    })
}

fn unknown_instrument(cmd: &Command, instrument: InstrumentId, next_id: u64) -> Event {
    let (command, id, client_id, account) = match &cmd.action {
        Action::New(o) => (CommandKind::New, OrderId(next_id), o.client_id, o.account),
        Action::NewExt(e) => (
            CommandKind::New,
            OrderId(next_id),
            e.order.client_id,
            e.order.account,
        ),
        Action::CancelList(c) => (CommandKind::CancelList, c.list_id, c.client_id, c.account),
        Action::Mmp(m) => (CommandKind::Mmp, OrderId(0), ClientOrderId(0), m.account),
        Action::Market(_) => (
            CommandKind::Market,
            OrderId(0),
            ClientOrderId(0),
            AccountId(0),
        ),
        Action::Cancel(c) => (CommandKind::Cancel, c.id, c.client_id, c.account),
        Action::Replace(r) => (CommandKind::Replace, r.id, r.client_id, r.account),
        Action::MassCancel(m) => (
            CommandKind::MassCancel,
            OrderId(0),
            ClientOrderId(0),
            m.account,
        ),
        Action::SetStatus(_) | Action::Tick => (
            CommandKind::SetStatus,
            OrderId(0),
            ClientOrderId(0),
            AccountId(0),
        ),
    };
    reject(
        instrument,
        command,
        id,
        client_id,
        account,
        RejectReason::UnknownInstrument,
    )
}
