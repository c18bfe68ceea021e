//! A market maker: one bid and one ask around a mid that drifts randomly, never
//! letting position plus open quotes on a side exceed the inventory limit. A quote more
//! than `requote_ticks` from where it should be is moved there with a replace (once the
//! venue has acknowledged it; one replace in flight per quote). The mid is a bounded
//! random walk around the configured start.

use peregrine_types::{InstrumentId, Price, Qty, Side};

use crate::api::Api;
use crate::msg::Event;
use crate::strategy::Strategy;
use peregrine_types::Rng;

/// Maker settings.
#[derive(Debug, Clone)]
pub struct MakerConfig {
    /// Venue index.
    pub venue: u32,
    /// Instrument.
    pub instrument: InstrumentId,
    /// Starting mid, price units.
    pub mid: i64,
    /// Half the quoted spread, price units.
    pub half_spread: i64,
    /// Quote size, lots.
    pub qty: i64,
    /// Largest absolute inventory (position + open quote on the side), lots.
    pub max_inventory: i64,
    /// Re-quote when a quote is this far from target, price units.
    pub requote_ticks: i64,
    /// Timer period, ns.
    pub interval_ns: u64,
    /// Random seed.
    pub seed: u64,
}

impl Default for MakerConfig {
    fn default() -> Self {
        MakerConfig {
            venue: 0,
            instrument: InstrumentId(1),
            mid: 10_000,
            half_spread: 5,
            qty: 1,
            max_inventory: 10,
            requote_ticks: 3,
            interval_ns: 1_000_000,
            seed: 1,
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Quote {
    client_id: u64,
    price: i64,
    acked: bool,
    replacing: bool,
}

/// The market maker.
#[derive(Debug)]
pub struct Maker {
    cfg: MakerConfig,
    rng: Rng,
    mid: i64,
    position: i64,
    quotes: [Option<Quote>; 2],
}

impl Maker {
    /// A maker with `cfg`.
    pub fn new(cfg: MakerConfig) -> Maker {
        Maker {
            rng: Rng::new(cfg.seed),
            mid: cfg.mid,
            position: 0,
            quotes: [None, None],
            cfg,
        }
    }

    /// Net position from fills.
    pub fn position(&self) -> i64 {
        self.position
    }

    fn target(&self, side: Side) -> i64 {
        match side {
            Side::Buy => self.mid - self.cfg.half_spread,
            Side::Sell => self.mid + self.cfg.half_spread,
        }
    }

    fn room(&self, side: Side) -> bool {
        let after = match side {
            Side::Buy => self.position + self.cfg.qty,
            Side::Sell => self.position - self.cfg.qty,
        };
        after.abs() <= self.cfg.max_inventory
    }

    fn requote(&mut self, api: &mut Api, side: Side) {
        let target = self.target(side);
        match self.quotes[side.index()] {
            Some(q)
                if q.acked
                    && !q.replacing
                    && (q.price - target).abs() > self.cfg.requote_ticks
                    && api
                        .replace(
                            q.client_id,
                            Price::from_raw(target),
                            Qty::from_raw(self.cfg.qty),
                        )
                        .is_ok() =>
            {
                self.quotes[side.index()] = Some(Quote {
                    replacing: true,
                    ..q
                });
            }
            Some(_) => {}
            None if self.room(side) && target > 0 => {
                let (price, qty) = (Price::from_raw(target), Qty::from_raw(self.cfg.qty));
                if let Ok(id) =
                    api.send_order(self.cfg.venue, self.cfg.instrument, side, price, qty)
                {
                    self.quotes[side.index()] = Some(Quote {
                        client_id: id,
                        price: target,
                        acked: false,
                        replacing: false,
                    });
                }
            }
            None => {}
        }
    }

    fn quote_mut(&mut self, client_id: u64) -> Option<&mut Quote> {
        self.quotes
            .iter_mut()
            .flatten()
            .find(|q| q.client_id == client_id)
    }

    fn done(&mut self, client_id: u64) {
        for q in &mut self.quotes {
            if q.is_some_and(|q| q.client_id == client_id) {
                *q = None;
            }
        }
    }
}

impl Strategy for Maker {
    fn on_start(&mut self, api: &mut Api) {
        self.requote(api, Side::Buy);
        self.requote(api, Side::Sell);
    }

    fn on_ack(&mut self, _api: &mut Api, ev: &Event) {
        if let Some(q) = self.quote_mut(ev.client_id) {
            q.acked = true;
        }
    }

    fn on_reject(&mut self, _api: &mut Api, ev: &Event) {
        self.done(ev.client_id);
    }

    fn on_replaced(&mut self, _api: &mut Api, ev: &Event) {
        if let Some(q) = self.quote_mut(ev.client_id) {
            q.price = ev.price;
            q.replacing = false;
        }
    }

    fn on_replace_reject(&mut self, _api: &mut Api, ev: &Event) {
        // The quote is unchanged (or already filled: its fill clears it).
        if let Some(q) = self.quote_mut(ev.client_id) {
            q.replacing = false;
        }
    }

    fn on_fill(&mut self, _api: &mut Api, ev: &Event) {
        self.position += match ev.side() {
            Side::Buy => ev.qty,
            Side::Sell => -ev.qty,
        };
        if ev.leaves == 0 {
            self.done(ev.client_id);
        }
    }

    fn on_cancelled(&mut self, _api: &mut Api, ev: &Event) {
        self.done(ev.client_id);
    }

    fn on_timer(&mut self, api: &mut Api, _now_ns: u64) {
        // A bounded random walk around the starting mid (the market-data callback is a
        // stub fed by our own fills, so it is not a price signal).
        let step = self.rng.range(0, 2) as i64 - 1;
        self.mid = (self.mid + step).clamp(self.cfg.mid - 100, self.cfg.mid + 100);
        self.requote(api, Side::Buy);
        self.requote(api, Side::Sell);
    }

    fn timer_interval_ns(&self) -> u64 {
        self.cfg.interval_ns
    }
}
