//! A market maker: one bid and one ask around the mid it observes in the book, skewed
//! against its inventory, moved with replaces.
//!
//! * Mid: the book's mid (`on_book`); with one side only, that side's price ± the
//!   half spread; with an empty book (a fresh venue where the maker is the first to
//!   quote), the configured starting mid.
//! * Skew: long `n` lots, both quotes move down `n × skew_per_lot` ticks (and up when
//!   short), so its fills pull the position back to flat.
//! * A quote more than `requote_ticks` from its target is moved there with a replace
//!   once the venue has acknowledged it (one replace in flight per quote); a side that
//!   would take the position beyond `max_inventory` is not quoted.

use peregrine_types::{InstrumentId, Price, Qty, Side};

use crate::api::Api;
use crate::md::BookView;
use crate::msg::Event;
use crate::strategy::Strategy;

/// Maker settings.
#[derive(Debug, Clone)]
pub struct MakerConfig {
    /// Venue index.
    pub venue: u32,
    /// Instrument.
    pub instrument: InstrumentId,
    /// Mid to quote around before the book shows one, price units.
    pub mid: i64,
    /// Half the quoted spread, price units.
    pub half_spread: i64,
    /// Quote size, lots.
    pub qty: i64,
    /// Largest absolute inventory (position + open quote on the side), lots.
    pub max_inventory: i64,
    /// Ticks both quotes move per lot of inventory.
    pub skew_per_lot: i64,
    /// Re-quote when a quote is more than this far from target, price units.
    pub requote_ticks: i64,
    /// Timer period, ns.
    pub interval_ns: u64,
    /// Random seed (unused by the quoting logic; kept for the CLI's `--seed`).
    pub seed: u64,
}

impl Default for MakerConfig {
    fn default() -> Self {
        MakerConfig {
            venue: 0,
            instrument: InstrumentId(1),
            mid: 10_000,
            half_spread: 2,
            qty: 1,
            max_inventory: 10,
            skew_per_lot: 1,
            requote_ticks: 0,
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
    mid: i64,
    position: i64,
    quotes: [Option<Quote>; 2],
    /// Replaces sent.
    pub replaces: u64,
}

impl Maker {
    /// A maker with `cfg`.
    pub fn new(cfg: MakerConfig) -> Maker {
        Maker {
            mid: cfg.mid,
            position: 0,
            quotes: [None, None],
            replaces: 0,
            cfg,
        }
    }

    /// Net position from fills.
    pub fn position(&self) -> i64 {
        self.position
    }

    /// The mid it quotes around now.
    pub fn mid(&self) -> i64 {
        self.mid
    }

    /// Target price of `side`: around the mid, skewed against the inventory.
    pub fn target(&self, side: Side) -> i64 {
        let skewed = self.mid - self.position * self.cfg.skew_per_lot;
        match side {
            Side::Buy => skewed - self.cfg.half_spread,
            Side::Sell => skewed + self.cfg.half_spread,
        }
    }

    fn room(&self, side: Side) -> bool {
        let after = match side {
            Side::Buy => self.position + self.cfg.qty,
            Side::Sell => self.position - self.cfg.qty,
        };
        after.abs() <= self.cfg.max_inventory
    }

    /// The mid this book implies, if any. A best level that is only this maker's own
    /// quote (its price, at most its size) says nothing about the market: were it
    /// counted, a book the maker alone quotes (a venue without other flow) would feed
    /// its own skew back into its mid and walk the price away.
    fn observe(&mut self, book: &BookView) {
        let h = self.cfg.half_spread;
        let others = |side: Side, l: Option<crate::md::Level>| {
            l.filter(|l| {
                let own = self.quotes[side.index()].is_some_and(|q| q.price == l.price.units());
                !(own && l.qty.lots() <= self.cfg.qty)
            })
        };
        let (bid, ask) = (
            others(Side::Buy, book.best_bid()),
            others(Side::Sell, book.best_ask()),
        );
        self.mid = match (bid, ask) {
            (Some(b), Some(a)) => (b.price.units() + a.price.units()).div_euclid(2),
            (Some(b), None) => b.price.units() + h,
            (None, Some(a)) => a.price.units() - h,
            (None, None) => self.mid,
        };
    }

    fn requote(&mut self, api: &mut Api, side: Side) {
        let target = self.target(side);
        match self.quotes[side.index()] {
            Some(q)
                if q.acked
                    && !q.replacing
                    && (q.price - target).abs() > self.cfg.requote_ticks
                    && target > 0
                    && api
                        .replace(
                            q.client_id,
                            Price::from_raw(target),
                            Qty::from_raw(self.cfg.qty),
                        )
                        .is_ok() =>
            {
                self.replaces += 1;
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

    fn requote_both(&mut self, api: &mut Api) {
        self.requote(api, Side::Buy);
        self.requote(api, Side::Sell);
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
        if let Some(book) = api.book(self.cfg.venue, self.cfg.instrument) {
            self.observe(&book);
        }
        self.requote_both(api);
    }

    fn on_book(&mut self, api: &mut Api, instrument: InstrumentId, book: &BookView) {
        if instrument == self.cfg.instrument && book.venue == self.cfg.venue {
            self.observe(book);
            self.requote_both(api);
        }
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

    fn on_fill(&mut self, api: &mut Api, ev: &Event) {
        self.position += match ev.side() {
            Side::Buy => ev.qty,
            Side::Sell => -ev.qty,
        };
        if ev.leaves == 0 {
            self.done(ev.client_id);
        }
        self.requote_both(api);
    }

    fn on_cancelled(&mut self, _api: &mut Api, ev: &Event) {
        if ev.leaves == 0 {
            self.done(ev.client_id);
        }
    }

    fn on_timer(&mut self, api: &mut Api, _now_ns: u64) {
        self.requote_both(api);
    }

    fn timer_interval_ns(&self) -> u64 {
        self.cfg.interval_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::md::Level;

    fn lvl(p: i64) -> Level {
        Level {
            price: Price::from_raw(p),
            qty: Qty::from_raw(1),
            orders: 1,
        }
    }

    #[test]
    fn quotes_follow_the_book_and_skew_against_inventory() {
        let mut m = Maker::new(MakerConfig::default());
        m.observe(&BookView::new(0, InstrumentId(1), &[lvl(99)], &[lvl(103)]));
        assert_eq!(m.mid(), 101);
        assert_eq!((m.target(Side::Buy), m.target(Side::Sell)), (99, 103));
        m.position = 4; // long: both quotes lower, so it sells sooner
        assert_eq!((m.target(Side::Buy), m.target(Side::Sell)), (95, 99));
        m.observe(&BookView::new(0, InstrumentId(1), &[], &[lvl(110)]));
        assert_eq!(m.mid(), 108);
        m.observe(&BookView::default());
        assert_eq!(m.mid(), 108, "an empty book keeps the last mid");
        m.position = 10;
        assert!(!m.room(Side::Buy) && m.room(Side::Sell));
    }

    #[test]
    fn its_own_quotes_do_not_move_its_mid() {
        let mut m = Maker::new(MakerConfig::default());
        m.observe(&BookView::new(0, InstrumentId(1), &[lvl(99)], &[lvl(103)]));
        assert_eq!(m.mid(), 101);
        let quote = |price| {
            Some(Quote {
                client_id: 1,
                price,
                acked: true,
                replacing: false,
            })
        };
        // Short 3: its skewed quotes 102/106 are the whole book; the mid stays.
        m.position = -3;
        m.quotes = [quote(102), quote(106)];
        m.observe(&BookView::new(0, InstrumentId(1), &[lvl(102)], &[lvl(106)]));
        assert_eq!(m.mid(), 101, "its own skew does not feed back");
        // Someone else's ask below its own: that side counts.
        m.observe(&BookView::new(0, InstrumentId(1), &[lvl(102)], &[lvl(104)]));
        assert_eq!(m.mid(), 102);
        // More than its size at its price: others are there too.
        let big = Level {
            price: Price::from_raw(102),
            qty: Qty::from_raw(m.cfg.qty + 1),
            orders: 2,
        };
        m.observe(&BookView::new(0, InstrumentId(1), &[big], &[lvl(106)]));
        assert_eq!(m.mid(), 102 + m.cfg.half_spread);
    }
}
