//! The multi-instrument matching engine: routes commands to per-instrument books,
//! assigns exchange order ids, and hosts the pre-match seam.
//!
//! ```text
//!   Command ──▶ PreMatch::check (risk / balances; later issue) ──▶ OrderBook ──▶ EventSink
//!                      │ reject                                        (settlement, journal,
//!                      └──────────────────────────────────────────────▶ publish: post-match)
//! ```

use peregrine_types::{AccountId, ClientOrderId, InstrumentId, InstrumentSpec, OrderId};

use crate::book::OrderBook;
use crate::command::{Action, Command, CommandKind, NewOrder, Replace};
use crate::event::{Event, EventSink, Rejected};
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
        let instrument = match &cmd.action {
            Action::New(o) => o.instrument,
            Action::Cancel(c) => c.instrument,
            Action::Replace(r) => r.instrument,
            Action::MassCancel(m) => m.instrument,
            Action::SetStatus(s) => s.instrument,
            Action::Tick => {
                for book in self.books.iter_mut().flatten() {
                    book.advance_time(cmd.ts, sink);
                }
                return;
            }
        };
        let Some(book) = self
            .books
            .get_mut(instrument.0 as usize)
            .and_then(Option::as_mut)
        else {
            sink.push(unknown_instrument(cmd, instrument, self.next_order_id));
            if matches!(cmd.action, Action::New(_)) {
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
                book.advance_time(cmd.ts, sink);
                if let Err(reason) = self.pre.check_new(&order, book.spec()) {
                    sink.push(reject(
                        instrument,
                        CommandKind::New,
                        order.id,
                        o.client_id,
                        o.account,
                        reason,
                    ));
                    return;
                }
                // The clock has advanced: go straight to the order (no second
                // `advance_time`, no copy of the command).
                book.new_order(&order, sink);
            }
            Action::Replace(r) => {
                book.advance_time(cmd.ts, sink);
                if let Err(reason) = self.pre.check_replace(r, book.spec()) {
                    sink.push(reject(
                        instrument,
                        CommandKind::Replace,
                        r.id,
                        r.client_id,
                        r.account,
                        reason,
                    ));
                    return;
                }
                book.replace(r, sink);
            }
            _ => book.execute(cmd, sink),
        }
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
