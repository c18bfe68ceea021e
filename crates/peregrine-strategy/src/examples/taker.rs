//! A taker: at random intervals, buys or sells (at random) a small quantity at a price
//! that crosses the spread around its reference mid.

use peregrine_types::{InstrumentId, Price, Qty, Side};

use crate::api::Api;
use crate::msg::Event;
use crate::strategy::Strategy;
use peregrine_types::Rng;

/// Taker settings.
#[derive(Debug, Clone)]
pub struct TakerConfig {
    /// Venue index.
    pub venue: u32,
    /// Instrument.
    pub instrument: InstrumentId,
    /// Reference mid, price units.
    pub mid: i64,
    /// How far through the mid to price, price units.
    pub cross_ticks: i64,
    /// Order size, lots.
    pub qty: i64,
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
            instrument: InstrumentId(1),
            mid: 10_000,
            cross_ticks: 10,
            qty: 1,
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
}

impl Taker {
    /// A taker with `cfg`.
    pub fn new(cfg: TakerConfig) -> Taker {
        Taker {
            rng: Rng::new(cfg.seed),
            next_ns: 0,
            position: 0,
            cfg,
        }
    }

    /// Net position from fills.
    pub fn position(&self) -> i64 {
        self.position
    }
}

impl Strategy for Taker {
    fn on_fill(&mut self, _api: &mut Api, ev: &Event) {
        self.position += match ev.side() {
            Side::Buy => ev.qty,
            Side::Sell => -ev.qty,
        };
    }

    fn on_timer(&mut self, api: &mut Api, now_ns: u64) {
        if now_ns < self.next_ns {
            return;
        }
        let side = if self.rng.next_u64() & 1 == 0 {
            Side::Buy
        } else {
            Side::Sell
        };
        // Lean against inventory so the position stays near flat.
        let side = match self.position {
            p if p > 5 => Side::Sell,
            p if p < -5 => Side::Buy,
            _ => side,
        };
        let price = match side {
            Side::Buy => self.cfg.mid + self.cfg.cross_ticks,
            Side::Sell => self.cfg.mid - self.cfg.cross_ticks,
        };
        let (price, qty) = (Price::from_raw(price.max(1)), Qty::from_raw(self.cfg.qty));
        let _ = api.send_order(self.cfg.venue, self.cfg.instrument, side, price, qty);
        self.next_ns = now_ns + self.rng.range(self.cfg.min_gap_ns, self.cfg.max_gap_ns);
    }

    fn timer_interval_ns(&self) -> u64 {
        100_000
    }
}
