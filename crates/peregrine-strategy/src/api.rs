//! What a strategy calls: send orders (every type and time in force), cancels and
//! replaces; read any book the engine publishes.

use peregrine_queue::shm::ShmSpscProducer;
use peregrine_types::{InstrumentId, ListKind, Price, Qty, Side};

use crate::doorbell::Doorbell;
use crate::md::{BoardReader, BookView};
use crate::msg::{NewOrder, Request};
use peregrine_queue::clock::now_ns;

/// Why a send failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ApiError {
    /// The submit ring is full: the engine is behind. Retry later.
    #[error("submit ring full")]
    Full,
    /// An order list with a number of legs its kind does not have (nothing sent).
    #[error("an order list of this kind has another number of legs")]
    BadList,
}

/// What a strategy knows of its kill switch, from the answers to its own orders: the
/// engine refuses every new order of a strategy whose kill switch is on with reason
/// [`crate::msg::reason::KILL_SWITCH`], and accepts none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KillSwitch {
    /// No order answered yet.
    Unknown,
    /// The last answer was an ack (or a replace that took effect): trading.
    Off,
    /// The last answer was a refusal by the kill switch.
    On,
}

/// A strategy's handle on the engine: the producer end of its submit ring. Client
/// order ids are assigned here, increasing from 1.
#[derive(Debug)]
pub struct Api {
    tx: ShmSpscProducer<Request>,
    board: Option<BoardReader>,
    /// Rung after every push, when the engine made one (`None`: a replay, an engine
    /// without one).
    doorbell: Option<Doorbell>,
    next_client_id: u64,
    sent: u64,
    full: u64,
    /// Simulated time, when a replay drives the strategy (`None`: the real clock).
    sim_now: Option<u64>,
    kill: KillSwitch,
}

impl Api {
    pub(crate) fn new(tx: ShmSpscProducer<Request>, board: Option<BoardReader>) -> Api {
        Api {
            tx,
            board,
            doorbell: None,
            next_client_id: 1,
            sent: 0,
            full: 0,
            sim_now: None,
            kill: KillSwitch::Unknown,
        }
    }

    /// An `Api` over a submit ring and board that something other than the runner
    /// attached: a replay (`peregrine-replay`) that drives the strategy in simulated
    /// time, in its own process, through the same calls.
    pub fn over(tx: ShmSpscProducer<Request>, board: Option<BoardReader>) -> Api {
        Api::new(tx, board)
    }

    /// Sets simulated time (`Some`): from now on [`Api::now_ns`] and the `t1` stamp of
    /// every request read it instead of the clock. A replay sets it before each
    /// callback; the runner never does.
    pub fn set_sim_time(&mut self, now: Option<u64>) {
        self.sim_now = now;
    }

    /// Notes the answer `ev` to one of the strategy's orders (the runner and a replay
    /// call it for every event): it moves [`Api::kill_switch`].
    pub fn observe(&mut self, ev: &crate::msg::Event) {
        use crate::msg::EventKind;
        match ev.kind() {
            Some(EventKind::Reject) if ev.reason == crate::msg::reason::KILL_SWITCH => {
                self.kill = KillSwitch::On;
            }
            Some(EventKind::Ack | EventKind::Replaced) => self.kill = KillSwitch::Off,
            _ => {}
        }
    }

    /// The kill switch as the answers to this strategy's orders show it.
    pub fn kill_switch(&self) -> KillSwitch {
        self.kill
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
    /// `.gtd(expiry)`, `.stp(mode)`, `.stop(price)`, `.take_profit(price)`,
    /// `.trailing_ticks(n)`, `.trailing_bps(n)`, `.iceberg(display)`); its
    /// `client_id` is assigned here and returned. A stop or an iceberg goes as two
    /// records (its extension, then the order), pushed together or not at all.
    pub fn send(&mut self, order: NewOrder) -> Result<u64, ApiError> {
        let order = NewOrder {
            client_id: self.next_client_id,
            ..order
        };
        let now = self.now_ns();
        if !order.ext.is_plain() {
            if !self.tx.has_room(2) {
                self.full += 1;
                return Err(ApiError::Full);
            }
            self.push_quiet(Request::ext(&order, now))?;
        }
        self.send_raw(Request::new_order(&order, now))?;
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
        self.send_raw(Request::cancel(client_id, self.now_ns()))
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
        self.send_raw(Request::replace(
            client_id,
            new_price,
            new_qty,
            self.now_ns(),
        ))
    }

    /// Rings `doorbell` after every push from now on (the runner, at attach).
    pub(crate) fn with_doorbell(mut self, doorbell: Option<Doorbell>) -> Api {
        self.doorbell = doorbell;
        self
    }

    /// Sends an order list of `kind` (OCO: two legs, either of which cancels the
    /// other; OTO: a working leg, then a pending leg released when it fills; OTOCO: a
    /// working leg, then two pending legs released as an OCO). `legs` must hold
    /// exactly `kind.legs()` orders on one venue and instrument. The legs get
    /// consecutive client ids, returned (the first is the list's: its `ListStatus`
    /// events carry it). Each leg goes as its extension record (naming the list kind
    /// and leg index) then the order: all pushed together or none
    /// ([`ApiError::Full`]). A venue without lists refuses every leg (reason 209).
    /// Cancelling any leg cancels the whole list at the venue.
    pub fn send_list(
        &mut self,
        kind: ListKind,
        legs: &[NewOrder],
    ) -> Result<std::ops::Range<u64>, ApiError> {
        if legs.len() != kind.legs() {
            return Err(ApiError::BadList);
        }
        if !self.tx.has_room(2 * legs.len() as u64) {
            self.full += 1;
            return Err(ApiError::Full);
        }
        let first = self.next_client_id;
        let now = self.now_ns();
        for (i, leg) in legs.iter().enumerate() {
            let o = NewOrder {
                client_id: first + i as u64,
                ..*leg
            };
            self.push_quiet(Request::list_leg(&o, kind, i as u8, now))?;
            if i + 1 == legs.len() {
                self.send_raw(Request::new_order(&o, now))?;
            } else {
                self.push_quiet(Request::new_order(&o, now))?;
            }
        }
        self.next_client_id += legs.len() as u64;
        Ok(first..self.next_client_id)
    }

    /// Pushes without ringing the doorbell (the first record of a group).
    fn push_quiet(&mut self, request: Request) -> Result<(), ApiError> {
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

    /// Pushes a raw request as is (the runner's heartbeats; tests use it to send
    /// malformed bytes to the engine).
    pub fn send_raw(&mut self, request: Request) -> Result<(), ApiError> {
        match self.tx.try_push(request) {
            Ok(()) => {
                self.sent += 1;
                if let Some(d) = &self.doorbell {
                    d.ring();
                }
                Ok(())
            }
            Err(_) => {
                self.full += 1;
                Err(ApiError::Full)
            }
        }
    }

    /// The clock timestamps are read from (`CLOCK_MONOTONIC` ns), or simulated time
    /// under a replay ([`Api::set_sim_time`]).
    pub fn now_ns(&self) -> u64 {
        self.sim_now.unwrap_or_else(now_ns)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::msg::{reason, Event, EventKind};
    use peregrine_queue::shm::ShmSpsc;

    /// A stop goes as its extension record and its order, both or neither: a ring with
    /// room for one refuses it whole.
    #[test]
    fn a_stop_is_pushed_whole_or_not_at_all() {
        use crate::msg::{Command, NewOrder};
        let dir = tempfile::tempdir().unwrap();
        let ring = ShmSpsc::<Request>::create(&dir.path().join("s"), 2).unwrap();
        let mut rx = ring.consumer().unwrap();
        let mut api = Api::over(ring.producer().unwrap(), None);
        let stop = NewOrder::limit(
            0,
            InstrumentId(1),
            Side::Sell,
            Price::from_raw(90),
            Qty::from_raw(1),
        )
        .stop(Price::from_raw(99));
        api.cancel(7).unwrap();
        assert_eq!(api.send(stop), Err(ApiError::Full));
        assert!(matches!(
            rx.try_pop().unwrap().decode(),
            Ok(Command::Cancel { .. })
        ));
        assert_eq!(rx.try_pop(), None, "no half of the stop");
        let id = api.send(stop).unwrap();
        assert!(
            matches!(rx.try_pop().unwrap().decode(), Ok(Command::Ext { client_id, .. }) if client_id == id)
        );
        assert!(matches!(rx.try_pop().unwrap().decode(), Ok(Command::New(o)) if o.client_id == id));
    }

    /// An order list goes as its legs' record pairs, all or none, each extension
    /// naming the list kind and the leg; a wrong number of legs sends nothing.
    #[test]
    fn a_list_is_pushed_whole_or_not_at_all() {
        use crate::msg::{Command, NewOrder};
        let dir = tempfile::tempdir().unwrap();
        let ring = ShmSpsc::<Request>::create(&dir.path().join("s"), 4).unwrap();
        let mut rx = ring.consumer().unwrap();
        let mut api = Api::over(ring.producer().unwrap(), None);
        let leg = NewOrder::limit(
            0,
            InstrumentId(1),
            Side::Sell,
            Price::from_raw(90),
            Qty::from_raw(1),
        );
        assert_eq!(api.send_list(ListKind::Oco, &[leg]), Err(ApiError::BadList));
        api.cancel(7).unwrap();
        // 1 of 4 slots used: no room for the list's 4 records.
        assert_eq!(
            api.send_list(ListKind::Oco, &[leg, leg.stop(Price::from_raw(99))]),
            Err(ApiError::Full)
        );
        assert!(matches!(
            rx.try_pop().unwrap().decode(),
            Ok(Command::Cancel { .. })
        ));
        assert_eq!(rx.try_pop(), None, "no part of the list");
        let ids = api
            .send_list(ListKind::Oco, &[leg, leg.stop(Price::from_raw(99))])
            .unwrap();
        assert_eq!(ids.end - ids.start, 2);
        for (i, id) in ids.enumerate() {
            assert!(matches!(
                rx.try_pop().unwrap().decode(),
                Ok(Command::Ext { client_id, list: Some((ListKind::Oco, l)), .. })
                    if client_id == id && l as usize == i
            ));
            assert!(
                matches!(rx.try_pop().unwrap().decode(), Ok(Command::New(o)) if o.client_id == id)
            );
        }
    }

    /// Simulated time stamps requests; the kill switch follows the answers.
    #[test]
    fn sim_time_and_kill_switch_state() {
        let dir = tempfile::tempdir().unwrap();
        let ring = ShmSpsc::<Request>::create(&dir.path().join("s"), 8).unwrap();
        let mut rx = ring.consumer().unwrap();
        let mut api = Api::over(ring.producer().unwrap(), None);
        api.set_sim_time(Some(42));
        assert_eq!(api.now_ns(), 42);
        let id = api
            .send_order(
                0,
                InstrumentId(1),
                Side::Buy,
                Price::from_raw(1),
                Qty::from_raw(1),
            )
            .unwrap();
        api.cancel(id).unwrap();
        assert_eq!(rx.try_pop().unwrap().t1, 42);
        assert_eq!(rx.try_pop().unwrap().t1, 42);
        api.set_sim_time(None);
        assert!(api.now_ns() > 42);
        assert_eq!(api.kill_switch(), KillSwitch::Unknown);
        let ev = |kind: EventKind, r: u16| Event {
            kind: kind as u8,
            reason: r,
            ..Event::default()
        };
        api.observe(&ev(EventKind::Reject, 101));
        assert_eq!(api.kill_switch(), KillSwitch::Unknown, "another reason");
        api.observe(&ev(EventKind::Reject, reason::KILL_SWITCH));
        assert_eq!(api.kill_switch(), KillSwitch::On);
        api.observe(&ev(EventKind::Fill, 0));
        assert_eq!(api.kill_switch(), KillSwitch::On);
        api.observe(&ev(EventKind::Ack, 0));
        assert_eq!(api.kill_switch(), KillSwitch::Off);
    }
}
