//! What a strategy calls: send orders (every type and time in force), cancels and
//! replaces; read any book the engine publishes.

use peregrine_queue::shm::ShmSpscProducer;
use peregrine_types::{InstrumentId, Price, Qty, Side};

use crate::clock::now_ns;
use crate::md::{BoardReader, BookView};
use crate::msg::{NewOrder, Request};

/// Why a send failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ApiError {
    /// The submit ring is full: the engine is behind. Retry later.
    #[error("submit ring full")]
    Full,
}

/// A strategy's handle on the engine: the producer end of its submit ring. Client
/// order ids are assigned here, increasing from 1.
#[derive(Debug)]
pub struct Api {
    tx: ShmSpscProducer<Request>,
    board: Option<BoardReader>,
    next_client_id: u64,
    sent: u64,
    full: u64,
}

impl Api {
    pub(crate) fn new(tx: ShmSpscProducer<Request>, board: Option<BoardReader>) -> Api {
        Api {
            tx,
            board,
            next_client_id: 1,
            sent: 0,
            full: 0,
        }
    }

    /// Sends a new GTC limit order; returns its client order id.
    pub fn send_order(
        &mut self,
        venue: u32,
        instrument: InstrumentId,
        side: Side,
        price: Price,
        qty: Qty,
    ) -> Result<u64, ApiError> {
        self.send(NewOrder::limit(venue, instrument, side, price, qty))
    }

    /// Sends a new order of any type and time in force (see [`NewOrder`]'s builders:
    /// `NewOrder::limit(..).ioc()`, `NewOrder::market(..)`, `.post_only()`,
    /// `.gtd(expiry)`, `.stp(mode)`); its `client_id` is assigned here and returned.
    pub fn send(&mut self, order: NewOrder) -> Result<u64, ApiError> {
        let order = NewOrder {
            client_id: self.next_client_id,
            ..order
        };
        self.send_raw(Request::new_order(&order, now_ns()))?;
        self.next_client_id += 1;
        Ok(order.client_id)
    }

    /// The current book of (`venue`, `instrument`), copied out of the engine's board
    /// (top levels, never torn; `seq` 0 until the venue published anything). `None` if
    /// the engine has no such book.
    pub fn book(&self, venue: u32, instrument: InstrumentId) -> Option<BookView> {
        let board = self.board.as_ref()?;
        board.read(board.slot_of(venue, instrument)?)
    }

    /// The book in board slot `slot` (what an `MdEvent` names).
    pub(crate) fn book_at(&self, slot: usize) -> Option<BookView> {
        self.board.as_ref()?.read(slot)
    }

    /// Asks the engine to cancel an open order.
    pub fn cancel(&mut self, client_id: u64) -> Result<(), ApiError> {
        self.send_raw(Request::cancel(client_id, now_ns()))
    }

    /// Asks the engine to change an open order's limit price and open quantity (what
    /// is still to be filled). The order keeps `client_id`; the answer is an event of
    /// kind `Replaced` or `ReplaceReject` ([`crate::Strategy::on_replaced`],
    /// [`crate::Strategy::on_replace_reject`]). One replace per order at a time.
    pub fn replace(
        &mut self,
        client_id: u64,
        new_price: Price,
        new_qty: Qty,
    ) -> Result<(), ApiError> {
        self.send_raw(Request::replace(client_id, new_price, new_qty, now_ns()))
    }

    /// Pushes a raw request as is (the runner's heartbeats; tests use it to send
    /// malformed bytes to the engine).
    pub fn send_raw(&mut self, request: Request) -> Result<(), ApiError> {
        match self.tx.try_push(request) {
            Ok(()) => {
                self.sent += 1;
                Ok(())
            }
            Err(_) => {
                self.full += 1;
                Err(ApiError::Full)
            }
        }
    }

    /// The clock timestamps are read from (`CLOCK_MONOTONIC` ns).
    pub fn now_ns(&self) -> u64 {
        now_ns()
    }

    /// Requests pushed so far.
    pub fn sent(&self) -> u64 {
        self.sent
    }

    /// Pushes refused because the ring was full.
    pub fn full(&self) -> u64 {
        self.full
    }
}
