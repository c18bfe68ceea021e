//! The exchange core a replay drives: Peregrine's sans-IO venue core
//! ([`peregrine_exchange_core::Core`]) without a journal, on a manual clock that the
//! replay moves to each message's time. Every order, recorded or the strategy's, is an
//! order-entry request of a session, exactly as the server hands them over; the core
//! sequences, matches and routes it, and the replay reads the book events of each
//! request back ([`Venue::submit`]).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use peregrine_book::{Event, Ladder, OrderBook};
use peregrine_exchange_core::{Clock, Core, NoLog, Outbox, SessionKey, VenueSpec};
use peregrine_types::{AccountId, InstrumentId, InstrumentSpec, OrderId, Timestamp};
use peregrine_wire::v2::{Inbound, Outbound};

/// The account of the strategy's orders (recorded orders are
/// [`crate::recorded::MARKET`]'s).
pub const STRATEGY: AccountId = AccountId(2);

/// The replay reads book events, not the wire reports: they are dropped here.
#[derive(Debug, Default)]
struct Discard;

impl Outbox for Discard {
    #[inline]
    fn report(&mut self, _: AccountId, _: Outbound, _: SessionKey) {}
    #[inline]
    fn answer(&mut self, _: SessionKey, _: Outbound) {}
    #[inline]
    fn wants_reports(&self) -> bool {
        false
    }
}

/// Why a venue could not be built.
#[derive(Debug, thiserror::Error)]
pub enum VenueError {
    /// The instrument spec is refused by the book.
    #[error("instrument: {0}")]
    Spec(#[from] peregrine_book::engine::EngineError),
}

/// One instrument's exchange core on a manual clock.
#[derive(Debug)]
pub struct Venue {
    core: Core<NoLog>,
    clock: Arc<AtomicU64>,
    instrument: InstrumentId,
    now: u64,
    out: Discard,
    /// Every event of every request since the last [`Venue::take_tapped`], when on.
    tap: Option<Vec<Event>>,
}

impl Venue {
    /// A core for `spec` holding up to `capacity` resting orders (and tracking as
    /// many owners) without growing.
    pub fn new(spec: InstrumentSpec, capacity: usize) -> Result<Venue, VenueError> {
        let instrument = spec.id;
        let clock = Arc::new(AtomicU64::new(0));
        let venue = VenueSpec {
            instruments: vec![spec],
            arena_capacity: capacity,
            balances: None,
            fee_account: None,
            admins: Vec::new(),
        };
        let core = venue.core(NoLog, Clock::manual(Arc::clone(&clock)), capacity)?;
        Ok(Venue {
            core,
            clock,
            instrument,
            now: 0,
            out: Discard,
            tap: None,
        })
    }

    /// The instrument.
    pub fn instrument(&self) -> InstrumentId {
        self.instrument
    }

    /// Runs `msg` from `account` at `ts` (never earlier than the last request: the
    /// core's clock does not go back) and returns the book events it caused.
    #[inline]
    pub fn submit(&mut self, ts: u64, account: AccountId, msg: &Inbound) -> &[Event] {
        self.now = self.now.max(ts);
        // Relaxed: the clock's value is the whole message; this thread reads it.
        self.clock.store(self.now, Ordering::Relaxed);
        let key = SessionKey::new(account.0, 0);
        // `NoLog` never fails: an error here would be the journal's.
        let _ = self
            .core
            .handle_at(key, account, msg, Timestamp(self.now), &mut self.out);
        let events = self.core.last_events();
        if let Some(tap) = self.tap.as_mut() {
            tap.extend_from_slice(events);
        }
        events
    }

    /// Keeps every event of every request from now on, until taken (a replay with a
    /// strategy reads all of them; without one, nothing is kept).
    pub fn tap(&mut self) {
        self.tap.get_or_insert_with(|| Vec::with_capacity(1_024));
    }

    /// The events kept since the last call (empty if the tap is off); hand the vector
    /// back with [`Venue::untap`] to reuse it.
    pub fn take_tapped(&mut self) -> Vec<Event> {
        match self.tap.as_mut() {
            Some(t) => std::mem::take(t),
            None => Vec::new(),
        }
    }

    /// Returns a vector taken with [`Venue::take_tapped`], emptied, for reuse.
    pub fn untap(&mut self, mut v: Vec<Event>) {
        v.clear();
        if let Some(t) = self.tap.as_mut() {
            if t.is_empty() {
                *t = v;
            }
        }
    }

    /// The id the next new order gets.
    pub fn next_order_id(&self) -> OrderId {
        self.core.engine().next_order_id()
    }

    /// The instrument's book.
    pub fn book(&self) -> &OrderBook<Ladder> {
        self.core
            .engine()
            .book(self.instrument)
            .expect("the venue was built with this instrument")
    }

    /// The core's state hash (engine state: every resting order, clocks, sequences).
    pub fn state_hash(&self) -> String {
        self.core.state_hash().to_string()
    }

    /// The current time of the core.
    pub fn now(&self) -> u64 {
        self.now
    }
}
