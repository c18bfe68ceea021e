//! A taker: at random intervals it takes liquidity at the touch with an IOC order
//! (buys at the best ask, sells at the best bid, for at most what is shown there),
//! leaning against its inventory so the position stays near flat. It reads the book
//! with `Api::book` when it fires (polling; it needs no subscription). A venue whose
//! book the engine does not publish (an empty board slot: no market data from that
//! venue) is taken blind: an IOC `cross_ticks` through its reference mid, unless
//! `book_venue` names another venue whose book is the same market (the FIX gateway in
//! front of an exchange whose feed the engine reads under another venue name).

use peregrine_types::{InstrumentId, Price, Qty, Side};

use crate::api::Api;
use crate::msg::{Event, NewOrder};
use crate::strategy::Strategy;
use peregrine_types::Rng;

/// Taker settings.
#[derive(Debug, Clone)]
pub struct TakerConfig {
    /// Venue index.
    pub venue: u32,
    /// Venue whose book it reads, if not `venue`: another route to the same market.
    pub book_venue: Option<u32>,
    /// Instrument.
    pub instrument: InstrumentId,
    /// Reference mid for a venue without market data, price units.
    pub mid: i64,
    /// How far through the reference mid it prices without market data.
    pub cross_ticks: i64,
    /// Order size at most, lots.
    pub qty: i64,
    /// Largest absolute position it builds, lots.
    pub max_position: i64,
    /// Shortest pause between orders, ns.
    pub min_gap_ns: u64,
    /// Longest pause between orders, ns.
    pub max_gap_ns: u64,
    /// Random seed.
    pub seed: u64,
}

impl Default for TakerConfig {
    fn default() -> Self {
        TakerConfig {
            venue: 0,
            book_venue: None,
            instrument: InstrumentId(1),
            mid: 10_000,
            cross_ticks: 10,
            qty: 1,
            max_position: 10,
            min_gap_ns: 200_000,
            max_gap_ns: 2_000_000,
            seed: 2,
        }
    }
}

/// The taker.
#[derive(Debug)]
pub struct Taker {
    cfg: TakerConfig,
    rng: Rng,
    next_ns: u64,
    position: i64,
    /// IOC orders sent and not answered yet.
    in_flight: u32,
    /// IOC orders sent.
    pub sent: u64,
}

/// IOC orders the taker keeps on their way at most: a slow venue (or a loaded
/// machine) slows it down instead of piling orders up against its limits.
const MAX_IN_FLIGHT: u32 = 4;

impl Taker {
    /// A taker with `cfg`.
    pub fn new(cfg: TakerConfig) -> Taker {
        Taker {
            rng: Rng::new(cfg.seed),
            next_ns: 0,
            position: 0,
            in_flight: 0,
            sent: 0,
            cfg,
        }
    }

    /// Net position from fills.
    pub fn position(&self) -> i64 {
        self.position
    }

    /// Which side to take: random, but against the inventory once it is half the
    /// limit.
    fn side(&mut self) -> Side {
        let half = self.cfg.max_position / 2;
        match self.position {
            p if p > half => Side::Sell,
            p if p < -half => Side::Buy,
            _ if self.rng.next_u64() & 1 == 0 => Side::Buy,
            _ => Side::Sell,
        }
    }
}

impl Taker {
    fn answered(&mut self) {
        self.in_flight = self.in_flight.saturating_sub(1);
    }
}

impl Strategy for Taker {
    fn on_fill(&mut self, _api: &mut Api, ev: &Event) {
        self.position += match ev.side() {
            Side::Buy => ev.qty,
            Side::Sell => -ev.qty,
        };
        if ev.leaves == 0 {
            self.answered();
        }
    }

    fn on_cancelled(&mut self, _api: &mut Api, ev: &Event) {
        if ev.leaves == 0 {
            self.answered();
        }
    }

    fn on_reject(&mut self, _api: &mut Api, _ev: &Event) {
        self.answered();
    }

    fn on_timer(&mut self, api: &mut Api, now_ns: u64) {
        if now_ns < self.next_ns || self.in_flight >= MAX_IN_FLIGHT {
            return;
        }
        self.next_ns = now_ns + self.rng.range(self.cfg.min_gap_ns, self.cfg.max_gap_ns);
        let book = api.book(
            self.cfg.book_venue.unwrap_or(self.cfg.venue),
            self.cfg.instrument,
        );
        let side = self.side();
        let room = match side {
            Side::Buy => self.cfg.max_position - self.position,
            Side::Sell => self.cfg.max_position + self.position,
        };
        let (price, shown) = match book.filter(|b| b.seq > 0) {
            Some(b) => {
                let touch = match side {
                    Side::Buy => b.best_ask(),
                    Side::Sell => b.best_bid(),
                };
                let Some(touch) = touch else { return };
                (touch.price.units(), touch.qty.lots())
            }
            // No market data from this venue: cross the reference mid.
            None => match side {
                Side::Buy => (self.cfg.mid + self.cfg.cross_ticks, self.cfg.qty),
                Side::Sell => (self.cfg.mid - self.cfg.cross_ticks, self.cfg.qty),
            },
        };
        let qty = self.cfg.qty.min(shown).min(room);
        if qty <= 0 || price <= 0 {
            return;
        }
        let order = NewOrder::limit(
            self.cfg.venue,
            self.cfg.instrument,
            side,
            Price::from_raw(price),
            Qty::from_raw(qty),
        )
        .ioc();
        if api.send(order).is_ok() {
            self.sent += 1;
            self.in_flight += 1;
        }
    }

    fn timer_interval_ns(&self) -> u64 {
        100_000
    }
}
