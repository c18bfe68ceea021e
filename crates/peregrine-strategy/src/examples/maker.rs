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
            recent: [[0; RECENT]; 2],
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
    /// mid and walk the price away. Then the lean towards the anchor.
    fn observe(&mut self, book: &BookView) {
        let h = self.cfg.half_spread;
        let others =
            |side: Side, l: Option<crate::md::Level>| l.filter(|l| !self.maybe_own(side, l));
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
        self.mid = seen + (self.cfg.mid - seen) * w / 1_000;
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
        // Short 3: its skewed quotes 102/106 are the whole book; the mid stays.
        m.position = -3;
        m.quoted(Side::Buy, 102);
        m.quoted(Side::Sell, 106);
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
        // Two orders at its price: one is someone else's.
        let two = Level {
            orders: 2,
            ..lvl(106)
        };
        m.observe(&BookView::new(0, InstrumentId(1), &[lvl(102)], &[two]));
        assert_eq!(m.mid(), 106 - m.cfg.half_spread);
    }

    #[test]
    fn a_quote_the_feed_shows_late_is_still_its_own() {
        let mut m = Maker::new(MakerConfig::default());
        // It quoted 98/102, then moved its bid to 97 and the venue acknowledged the
        // replace; the feed still shows the bid at 98.
        m.quoted(Side::Buy, 98);
        m.quoted(Side::Sell, 102);
        m.quoted(Side::Buy, 97);
        m.observe(&BookView::new(0, InstrumentId(1), &[lvl(98)], &[lvl(102)]));
        assert_eq!(m.mid(), 10_000, "neither side is anyone else's");
        // A price it quoted RECENT moves ago is forgotten.
        for p in 0..RECENT as i64 {
            m.quoted(Side::Buy, 90 - p);
        }
        m.observe(&BookView::new(0, InstrumentId(1), &[lvl(98)], &[]));
        assert_eq!(m.mid(), 98 + m.cfg.half_spread);
    }

    #[test]
    fn the_anchor_pulls_the_mid_towards_the_reference() {
        let cfg = MakerConfig {
            anchor_per_mille: 100,
            ..MakerConfig::default()
        };
        let mut m = Maker::new(cfg);
        // Someone else's quotes around 10_500: 10% of the way back to 10_000.
        m.observe(&BookView::new(
            0,
            InstrumentId(1),
            &[lvl(10_499)],
            &[lvl(10_501)],
        ));
        assert_eq!(m.mid(), 10_450);
        // An empty book: the mid converges on the reference.
        for _ in 0..200 {
            m.observe(&BookView::default());
        }
        assert!((m.mid() - 10_000).abs() < 10, "{}", m.mid());
        // Without an anchor the book alone sets it.
        let mut free = Maker::new(MakerConfig::default());
        free.observe(&BookView::new(
            0,
            InstrumentId(1),
            &[lvl(10_499)],
            &[lvl(10_501)],
        ));
        assert_eq!(free.mid(), 10_500);
    }

    /// A venue where the maker alone rests orders and takers fill its quotes (its
    /// inventory walks within the limit); the feed shows the book 0 to 2 moves late.
    /// Returns how far its mid got from the start. `forgetful` keeps only its
    /// current quote as "own" (the rule before the recent prices).
    fn drift_with_a_late_feed(m: &mut Maker, forgetful: bool) -> i64 {
        let mut rng = peregrine_types::Rng::new(7);
        let mut shown = std::collections::VecDeque::new();
        let start = m.mid();
        let mut worst = 0;
        for _ in 0..20_000 {
            // A fill moves the position one lot, towards flat near the limit.
            let up = match m.position {
                p if p >= 8 => false,
                p if p <= -8 => true,
                _ => rng.chance(1, 2),
            };
            m.position += if up { 1 } else { -1 };
            let (bid, ask) = (m.target(Side::Buy), m.target(Side::Sell));
            if forgetful {
                m.recent = [[bid; RECENT], [ask; RECENT]];
            } else {
                m.quoted(Side::Buy, bid);
                m.quoted(Side::Sell, ask);
            }
            shown.push_back((bid, ask));
            while shown.len() > 1 + rng.below(3) as usize {
                shown.pop_front();
            }
            let (b, a) = shown[0];
            m.observe(&BookView::new(0, InstrumentId(1), &[lvl(b)], &[lvl(a)]));
            worst = worst.max((m.mid() - start).abs());
        }
        worst
    }

    #[test]
    fn a_late_feed_does_not_walk_the_mid() {
        let mut m = Maker::new(MakerConfig::default());
        assert_eq!(drift_with_a_late_feed(&mut m, false), 0);
        // Negative control: knowing only its current quote, the same flow walks it.
        let mut forgetful = Maker::new(MakerConfig::default());
        let walked = drift_with_a_late_feed(&mut forgetful, true);
        assert!(walked > 100, "the control must walk: {walked}");
        // The anchor holds even the forgetful maker (a walk of up to 8 units per
        // update against a pull of 1%: within about 800).
        let anchored = MakerConfig {
            anchor_per_mille: 10,
            ..MakerConfig::default()
        };
        let held = drift_with_a_late_feed(&mut Maker::new(anchored), true);
        assert!(
            held <= 800 && held * 4 < walked,
            "{held} (unanchored: {walked})"
        );
    }
}
