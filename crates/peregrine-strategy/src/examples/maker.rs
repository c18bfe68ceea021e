//! A market maker: one bid and one ask around the mid it observes in the book, skewed
//! against its inventory, moved with replaces.
//!
//! * Mid: the book's mid (`on_book`); with one side only, that side's price ± the
//!   half spread; with an empty book (a fresh venue where the maker is the first to
//!   quote), the configured starting mid. A best level that may be the maker's own
//!   quote (one order, at most its size, at a price it quoted on that side lately)
//!   does not count: the feed can show a quote's old price after the replace is
//!   acknowledged, and a maker that read its own skewed quote as the market would
//!   walk the price away.
//! * Anchor: with `anchor_per_mille` above 0 the mid leans that far towards the
//!   configured `mid` (a fair value from elsewhere), so a market with little other
//!   liquidity stays near it while resting orders of others still move it.
//! * Skew: long `n` lots, both quotes move down `n × skew_per_lot` ticks (and up when
//!   short), so its fills pull the position back to flat.
//! * A quote more than `requote_ticks` from its target is moved there with a replace
//!   once the venue has acknowledged it (one replace in flight per quote); a side that
//!   would take the position beyond `max_inventory` is not quoted.
//! * Orders a person places by hand: a best level further than `max_deviation` from
//!   the last trade (the reference) is not the market, so an order far away does not
//!   move the mid; the mid and both quotes stay within `max_deviation` of the last
//!   trade, inside the engine's price collar around it, whatever the book shows. A
//!   refused order or replace (a risk limit, the kill switch) holds new ones back
//!   for 1, 2, 4, ... up to [`MAX_HOLD`] timer ticks, so a refusing venue or engine
//!   sees a few attempts a second, not a flood, and quoting resumes by itself once
//!   they are accepted again.

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
    /// How far the quoted mid leans towards `mid`, per mille: 0 follows the book
    /// alone, 1000 ignores it.
    pub anchor_per_mille: i64,
    /// How far from the last trade (before one: `mid`) its quotes, its mid and the
    /// best levels it takes for the market may be, price units (0: no limit).
    pub max_deviation: i64,
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
            anchor_per_mille: 0,
            // Within the shipped configs' price collar (500) around the last trade.
            max_deviation: 300,
            seed: 1,
        }
    }
}

/// The longest pause after refusals, timer ticks.
pub const MAX_HOLD: u32 = 256;

#[derive(Debug, Clone, Copy)]
struct Quote {
    client_id: u64,
    price: i64,
    acked: bool,
    replacing: bool,
}

/// Prices per side the maker remembers as possibly its own on the feed.
const RECENT: usize = 8;

/// The market maker.
#[derive(Debug)]
pub struct Maker {
    cfg: MakerConfig,
    mid: i64,
    position: i64,
    quotes: [Option<Quote>; 2],
    /// Prices quoted lately, per side (order prices and replace targets, newest
    /// last): the feed may still show any of them.
    recent: [[i64; RECENT]; 2],
    /// The last trade at its venue (its own fills included), price units.
    last_trade: Option<i64>,
    /// Timer ticks before it sends again (after a refusal).
    hold: u32,
    /// The current pause length after refusals, ticks (0: none refused lately).
    backoff: u32,
    /// Replaces sent.
    pub replaces: u64,
    /// Orders and replaces refused.
    pub refused: u64,
}

impl Maker {
    /// A maker with `cfg`.
    pub fn new(cfg: MakerConfig) -> Maker {
        Maker {
            mid: cfg.mid,
            position: 0,
            quotes: [None, None],
            recent: [[0; RECENT]; 2],
            last_trade: None,
            hold: 0,
            backoff: 0,
            replaces: 0,
            refused: 0,
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

    /// The price the market trades at: the last trade, else the configured mid.
    pub fn reference(&self) -> i64 {
        self.last_trade.unwrap_or(self.cfg.mid)
    }

    /// `price` kept within `max_deviation` of the reference.
    fn bounded(&self, price: i64) -> i64 {
        let d = self.cfg.max_deviation;
        if d <= 0 {
            return price;
        }
        let r = self.reference();
        price.clamp(r - d, r + d)
    }

    /// Target price of `side`: around the mid, skewed against the inventory, within
    /// `max_deviation` of the last trade.
    pub fn target(&self, side: Side) -> i64 {
        let skewed = self.mid - self.position * self.cfg.skew_per_lot;
        self.bounded(match side {
            Side::Buy => skewed - self.cfg.half_spread,
            Side::Sell => skewed + self.cfg.half_spread,
        })
    }

    /// Whether `level` is too far from the last trade to be the market.
    fn far(&self, level: &crate::md::Level) -> bool {
        self.cfg.max_deviation > 0
            && (level.price.units() - self.reference()).abs() > self.cfg.max_deviation
    }

    /// A refusal: hold new orders back, twice as long as the last time.
    fn refused(&mut self) {
        self.refused += 1;
        self.backoff = (self.backoff * 2).clamp(1, MAX_HOLD);
        self.hold = self.backoff;
    }

    fn room(&self, side: Side) -> bool {
        let after = match side {
            Side::Buy => self.position + self.cfg.qty,
            Side::Sell => self.position - self.cfg.qty,
        };
        after.abs() <= self.cfg.max_inventory
    }

    /// Remembers `price` as quoted on `side`.
    fn quoted(&mut self, side: Side, price: i64) {
        let recent = &mut self.recent[side.index()];
        if recent[RECENT - 1] != price {
            recent.rotate_left(1);
            recent[RECENT - 1] = price;
        }
    }

    /// Whether `level`, the best on `side`, may be only this maker's own quote: one
    /// order (or a venue that does not count orders), at most its size, at a price it
    /// quoted there lately.
    fn maybe_own(&self, side: Side, level: &crate::md::Level) -> bool {
        level.orders <= 1
            && level.qty.lots() <= self.cfg.qty
            && self.recent[side.index()].contains(&level.price.units())
    }

    /// The mid this book implies, if any. A best level that may be only this maker's
    /// own quote says nothing about the market: were it counted, a book the maker
    /// alone quotes (a venue without other flow) would feed its own skew back into its
    /// mid and walk the price away. Nor does one far from the last trade (an order
    /// placed by hand away from the market). Then the lean towards the anchor, and
    /// the bound around the last trade.
    fn observe(&mut self, book: &BookView) {
        let h = self.cfg.half_spread;
        let others = |side: Side, l: Option<crate::md::Level>| {
            l.filter(|l| !self.maybe_own(side, l) && !self.far(l))
        };
        let (bid, ask) = (
            others(Side::Buy, book.best_bid()),
            others(Side::Sell, book.best_ask()),
        );
        let seen = match (bid, ask) {
            (Some(b), Some(a)) => (b.price.units() + a.price.units()).div_euclid(2),
            (Some(b), None) => b.price.units() + h,
            (None, Some(a)) => a.price.units() - h,
            (None, None) => self.mid,
        };
        let w = self.cfg.anchor_per_mille.clamp(0, 1_000);
        // Truncates towards zero: no pull either way inside 1000 / w units.
        self.mid = self.bounded(seen + (self.cfg.mid - seen) * w / 1_000);
    }

    fn requote(&mut self, api: &mut Api, side: Side) {
        if self.hold > 0 {
            return;
        }
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
                self.quoted(side, target);
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
                    self.quoted(side, target);
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
        self.backoff = 0;
    }

    fn on_reject(&mut self, _api: &mut Api, ev: &Event) {
        self.done(ev.client_id);
        self.refused();
    }

    fn on_replaced(&mut self, _api: &mut Api, ev: &Event) {
        if let Some(q) = self.quote_mut(ev.client_id) {
            q.price = ev.price;
            q.replacing = false;
        }
        self.backoff = 0;
    }

    fn on_replace_reject(&mut self, _api: &mut Api, ev: &Event) {
        // The quote is unchanged (or already filled: its fill clears it).
        if let Some(q) = self.quote_mut(ev.client_id) {
            q.replacing = false;
        }
        self.refused();
    }

    fn on_trade(&mut self, _api: &mut Api, trade: &crate::md::Trade) {
        if trade.venue == self.cfg.venue && trade.instrument == self.cfg.instrument {
            self.last_trade = Some(trade.price.units());
        }
    }

    fn on_fill(&mut self, api: &mut Api, ev: &Event) {
        self.last_trade = Some(ev.price);
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
        self.hold = self.hold.saturating_sub(1);
        self.requote_both(api);
    }

    fn timer_interval_ns(&self) -> u64 {
        self.cfg.interval_ns
    }
}

#[cfg(test)]
#[path = "maker_tests.rs"]
mod tests;
