//! A mean-reversion taker, the example to copy for a strategy that reads the book:
//! it keeps an exponential moving average of the mid (`on_book`), and when the mid
//! strays more than `threshold` ticks from it, trades towards the average with an IOC
//! at the touch: sells when the mid is high, buys when it is low. A cool-down between
//! trades and a position limit keep it modest. All arithmetic is integer: the average
//! is kept in 1/1024ths of a price unit.

use peregrine_types::{InstrumentId, Price, Qty, Side};

use crate::api::Api;
use crate::md::BookView;
use crate::msg::{Event, NewOrder};
use crate::strategy::Strategy;

/// Fixed-point scale of the average.
const SCALE: i64 = 1_024;

/// Reverter settings.
#[derive(Debug, Clone)]
pub struct ReverterConfig {
    /// Venue index.
    pub venue: u32,
    /// Instrument.
    pub instrument: InstrumentId,
    /// The average moves 1/`smoothing` of the way to each new mid.
    pub smoothing: i64,
    /// Trade when the mid is this many ticks from the average.
    pub threshold: i64,
    /// Order size, lots.
    pub qty: i64,
    /// Largest absolute position, lots.
    pub max_position: i64,
    /// Pause after each order, ns.
    pub cooldown_ns: u64,
}

impl Default for ReverterConfig {
    fn default() -> Self {
        ReverterConfig {
            venue: 0,
            instrument: InstrumentId(1),
            smoothing: 64,
            threshold: 2,
            qty: 1,
            max_position: 8,
            cooldown_ns: 5_000_000,
        }
    }
}

/// The strategy.
#[derive(Debug)]
pub struct Reverter {
    cfg: ReverterConfig,
    /// The average mid, × [`SCALE`]; 0 until the first book.
    ema: i64,
    position: i64,
    next_ns: u64,
    /// Orders sent.
    pub sent: u64,
}

impl Reverter {
    /// A reverter with `cfg`.
    pub fn new(cfg: ReverterConfig) -> Reverter {
        Reverter {
            cfg,
            ema: 0,
            position: 0,
            next_ns: 0,
            sent: 0,
        }
    }

    /// The average mid, price units.
    pub fn average(&self) -> i64 {
        self.ema / SCALE
    }

    /// Folds a mid into the average; returns the side to trade, if any.
    pub fn signal(&mut self, mid: i64) -> Option<Side> {
        if self.ema == 0 {
            self.ema = mid * SCALE;
            return None;
        }
        self.ema += (mid * SCALE - self.ema) / self.cfg.smoothing.max(1);
        let gap = mid - self.average();
        let limit = self.cfg.max_position;
        if gap > self.cfg.threshold && self.position - self.cfg.qty >= -limit {
            Some(Side::Sell)
        } else if gap < -self.cfg.threshold && self.position + self.cfg.qty <= limit {
            Some(Side::Buy)
        } else {
            None
        }
    }
}

impl Strategy for Reverter {
    fn on_book(&mut self, api: &mut Api, instrument: InstrumentId, book: &BookView) {
        if instrument != self.cfg.instrument || book.venue != self.cfg.venue {
            return;
        }
        let Some(mid) = book.mid() else { return };
        let Some(side) = self.signal(mid.units()) else {
            return;
        };
        let now = api.now_ns();
        if now < self.next_ns {
            return;
        }
        let touch = match side {
            Side::Buy => book.best_ask(),
            Side::Sell => book.best_bid(),
        };
        let Some(touch) = touch else { return };
        let qty = self.cfg.qty.min(touch.qty.lots());
        let order = NewOrder::limit(
            self.cfg.venue,
            instrument,
            side,
            Price::from_raw(touch.price.units()),
            Qty::from_raw(qty),
        )
        .ioc();
        if api.send(order).is_ok() {
            self.sent += 1;
            self.next_ns = now + self.cfg.cooldown_ns;
        }
    }

    fn on_fill(&mut self, _api: &mut Api, ev: &Event) {
        self.position += match ev.side() {
            Side::Buy => ev.qty,
            Side::Sell => -ev.qty,
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trades_against_moves_away_from_the_average() {
        let mut r = Reverter::new(ReverterConfig::default());
        assert_eq!(r.signal(10_000), None, "the first mid seeds the average");
        assert_eq!(r.signal(10_001), None, "within the threshold");
        assert_eq!(r.signal(10_010), Some(Side::Sell), "high: sell");
        assert_eq!(r.signal(9_990), Some(Side::Buy), "low: buy");
        r.position = 8;
        assert_eq!(r.signal(9_980), None, "at the position limit");
        assert!((r.average() - 10_000).abs() <= 1);
    }
}
