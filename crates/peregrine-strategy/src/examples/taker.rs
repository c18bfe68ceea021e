//! A taker: at random intervals it takes liquidity at the touch with an IOC order
//! (buys at the best ask, sells at the best bid, for at most what is shown there),
//! leaning against its inventory so the position stays near flat. It reads the book
//! with `Api::book` when it fires (polling; it needs no subscription). A venue whose
//! book the engine does not publish (an empty board slot: no market data from that
//! venue) is taken blind: an IOC `cross_ticks` through its reference mid, unless
//! `book_venue` names another venue whose book is the same market (the FIX gateway in
//! front of an exchange whose feed the engine reads under another venue name).
//!
//! Orders a person places by hand: a touch further than `max_deviation` from the
//! last price it traded at (before any: `mid`) is not taken (the engine's price
//! collar around the last trade would refuse it, and it is not the market; after
//! [`FAR_IN_A_ROW`] such touches in a row it takes the market as moved); a
//! refused order (a risk limit, the kill switch) pauses it for twice as long as the
//! last refusal did, up to [`MAX_PAUSE_NS`], so a refusing engine sees a few orders
//! a second; a fill ends the pause.

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
    /// The furthest from its last trade price it takes a touch, price units (0: no
    /// limit).
    pub max_deviation: i64,
    /// Random seed.
    pub seed: u64,
}

/// The longest pause after refusals, ns.
pub const MAX_PAUSE_NS: u64 = 250_000_000;

/// Touches too far from its last fill in a row, after which the taker follows the
/// market there (it moved while the taker did not trade).
pub const FAR_IN_A_ROW: u32 = 50;

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
            // Within the shipped configs' price collar (500) around the last trade.
            max_deviation: 300,
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
    /// The price of its last fill.
    last_fill: Option<i64>,
    /// The pause after the latest refusal, ns (0: none lately).
    pause_ns: u64,
    /// A refusal came since the last timer: pause before the next order.
    refused: bool,
    /// Touches skipped in a row as too far.
    far_in_a_row: u32,
    /// IOC orders sent.
    pub sent: u64,
    /// Touches not taken: too far from its last trade price.
    pub skipped_far: u64,
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
            last_fill: None,
            pause_ns: 0,
            refused: false,
            far_in_a_row: 0,
            sent: 0,
            skipped_far: 0,
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
        self.last_fill = Some(ev.price);
        self.pause_ns = 0;
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
        self.refused = true;
    }

    fn on_timer(&mut self, api: &mut Api, now_ns: u64) {
        if std::mem::take(&mut self.refused) {
            self.pause_ns = (self.pause_ns * 2).clamp(self.cfg.max_gap_ns.max(1), MAX_PAUSE_NS);
            self.next_ns = now_ns + self.pause_ns;
        }
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
        let reference = self.last_fill.unwrap_or(self.cfg.mid);
        if self.cfg.max_deviation > 0 && (price - reference).abs() > self.cfg.max_deviation {
            self.skipped_far += 1;
            self.far_in_a_row += 1;
            if self.far_in_a_row < FAR_IN_A_ROW {
                return;
            }
        }
        self.far_in_a_row = 0;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::md::{BookView, Level};
    use crate::msg::{Command, Request};
    use peregrine_queue::shm::{ShmSpsc, ShmSpscConsumer};

    fn lvl(p: i64) -> Level {
        Level {
            price: Price::from_raw(p),
            qty: Qty::from_raw(3),
            orders: 1,
        }
    }

    fn sent(rx: &mut ShmSpscConsumer<Request>) -> Vec<(u64, i64)> {
        let mut out = Vec::new();
        while let Some(r) = rx.try_pop() {
            if let Ok(Command::New(o)) = r.decode() {
                out.push((r.client_id, o.price.units()));
            }
        }
        out
    }

    /// The taker against a book it reads from the board: a person's bid far below
    /// the market is not hit; near it, it is.
    #[test]
    fn a_touch_far_from_its_last_trade_is_not_taken_and_refusals_slow_it_down() {
        let dir = tempfile::tempdir().unwrap();
        let ring = ShmSpsc::<Request>::create(&dir.path().join("submit"), 4096).unwrap();
        let mut rx = ring.consumer().unwrap();
        let mut board = crate::md::BoardWriter::create(
            &crate::md::board::path(dir.path()),
            &[(0, InstrumentId(1))],
        )
        .unwrap();
        let reader = crate::md::BoardReader::attach(&crate::md::board::path(dir.path())).unwrap();
        let mut api = Api::new(ring.producer().unwrap(), Some(reader));
        let mut t = Taker::new(TakerConfig {
            max_position: 1_000,
            ..TakerConfig::default()
        });
        let mut book = |bid: i64, ask: i64| {
            let mut b = BookView::new(0, InstrumentId(1), &[lvl(bid)], &[lvl(ask)]);
            b.seq = 1;
            board.publish(0, &b);
        };
        // A person's bid at 94.50 and ask at 106.00 are the whole book: nothing is
        // taken (until FAR_IN_A_ROW touches say the market is there).
        book(9_450, 10_600);
        let mut now = 0;
        for _ in 0..(FAR_IN_A_ROW - 1) {
            now += 10_000_000;
            t.on_timer(&mut api, now);
        }
        assert!(sent(&mut rx).is_empty());
        assert_eq!(t.skipped_far, u64::from(FAR_IN_A_ROW - 1));
        // The market near 100.00: taken.
        book(9_999, 10_001);
        now += 10_000_000;
        t.on_timer(&mut api, now);
        let orders = sent(&mut rx);
        assert_eq!(orders.len(), 1);
        assert!(orders[0].1 == 9_999 || orders[0].1 == 10_001, "{orders:?}");
        // Every order refused (a kill switch) for 10 s: the pauses grow to
        // MAX_PAUSE_NS, a few orders a second.
        let start = now;
        let mut refused = 0;
        while now < start + 10_000_000_000 {
            now += 100_000;
            for (id, p) in sent(&mut rx) {
                refused += 1;
                t.on_reject(
                    &mut api,
                    &Event {
                        client_id: id,
                        price: p,
                        ..Event::default()
                    },
                );
            }
            t.on_timer(&mut api, now);
        }
        assert!(
            refused <= 10 * 4 + 10,
            "{refused} orders in 10 s against a kill switch"
        );
        assert!(refused >= 10, "{refused}: it kept trying");
    }
}
