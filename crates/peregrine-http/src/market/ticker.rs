//! 24-hour rolling statistics: one computation ([`DayStats::from_bars`]) for the REST
//! `ticker/24hr` (bars read from the history store) and the `@ticker` /
//! `@miniTicker` streams (bars kept in memory by [`Rolling`], seeded from the store
//! at start).
//!
//! The window is Binance's: from `now - 24 h` to now, at one-minute granularity
//! (the 1-minute bars opening at or after `now - 24 h`); `prevClosePrice` is the
//! last price before the window.

use std::collections::VecDeque;

use super::kline::{Bar, Interval};
use super::symbols::{format_i128, Symbol};
use super::LastTrade;

/// The length of the window, ms.
pub const DAY_MS: i64 = 86_400_000;

/// The statistics of one window, in integer units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DayStats {
    /// Window start, ms.
    pub open_time: i64,
    /// Window end, ms.
    pub close_time: i64,
    /// The window's trades merged into one bar (`None`: no trade in the window).
    pub day: Option<Bar>,
    /// The last price before the window.
    pub prev_close: Option<i64>,
}

impl DayStats {
    /// From the 1-minute bars of the window (in time order; bars opening before
    /// `now - 24 h` are left out) and the last price before it.
    pub fn from_bars(
        bars: impl IntoIterator<Item = Bar>,
        prev_close: Option<i64>,
        now_ms: i64,
    ) -> DayStats {
        let open_time = now_ms - DAY_MS;
        let day = bars
            .into_iter()
            .filter(|b| b.open_time >= open_time)
            .reduce(|mut a, b| {
                a.merge(&b);
                a
            });
        DayStats {
            open_time: open_time.max(0),
            close_time: now_ms,
            day,
            prev_close,
        }
    }

    /// Last − open (0 without trades).
    pub fn change(&self) -> i64 {
        self.day.map_or(0, |b| b.close - b.open)
    }

    /// (Last − open) / open × 100, with 3 decimals, from integers.
    pub fn change_percent(&self) -> String {
        let pct = self.day.map_or(0, |b| {
            i128::from(b.close - b.open) * 100_000 / i128::from(b.open.max(1))
        });
        format_i128(pct, 3)
    }

    /// Quote volume / volume in price units, rounded half up (0 without trades).
    pub fn weighted_avg(&self) -> i64 {
        self.day.map_or(0, |b| avg(b.quote_volume, b.volume))
    }

    /// The last price: the window's close, else the last before it, else 0.
    pub fn last_price(&self) -> i64 {
        self.day.map(|b| b.close).or(self.prev_close).unwrap_or(0)
    }
}

/// `quote / qty` in price units, rounded half up (0 for no quantity).
pub fn avg(quote: i128, qty: i64) -> i64 {
    if qty <= 0 {
        return 0;
    }
    let q = i128::from(qty);
    ((quote * 2 + q) / (2 * q)) as i64
}

/// The last 24 hours of one symbol's trades as 1-minute bars, in memory.
#[derive(Debug, Clone, Default)]
pub struct Rolling {
    bars: VecDeque<Bar>,
    prev_close: Option<i64>,
}

impl Rolling {
    /// From the store: the 1-minute bars of the last day (time order) and the last
    /// price before them.
    pub fn seed(bars: Vec<Bar>, prev_close: Option<i64>) -> Rolling {
        Rolling {
            bars: bars.into(),
            prev_close,
        }
    }

    /// Adds a trade (a trade older than the newest bar's minute merges into
    /// nothing: the feed delivers trades in order).
    pub fn add(&mut self, t: &LastTrade, buyer_taker: bool) {
        let open = Interval::M1.open_time(t.time_ms as i64);
        let bar = Bar::from_trade(open, t.id, t.price, t.qty, buyer_taker);
        match self.bars.back_mut() {
            Some(b) if b.open_time == open => b.merge(&bar),
            Some(b) if b.open_time > open => {}
            _ => self.bars.push_back(bar),
        }
    }

    /// Drops the bars that left the window at `now_ms` (their close becomes the
    /// previous close); true when any did.
    pub fn advance(&mut self, now_ms: i64) -> bool {
        let start = now_ms - DAY_MS;
        let mut dropped = false;
        while let Some(b) = self.bars.front() {
            if b.open_time >= start {
                break;
            }
            self.prev_close = Some(b.close);
            self.bars.pop_front();
            dropped = true;
        }
        dropped
    }

    /// The statistics at `now_ms`.
    pub fn stats(&self, now_ms: i64) -> DayStats {
        DayStats::from_bars(self.bars.iter().copied(), self.prev_close, now_ms)
    }
}

/// `<symbol>@ticker` (`24hrTicker`) and, without the book and last-trade fields,
/// `<symbol>@miniTicker` (`24hrMiniTicker`): the event's JSON.
pub fn event(
    sym: &Symbol,
    s: &DayStats,
    top: super::book::Top,
    last: Option<LastTrade>,
    mini: bool,
    now_ms: u64,
) -> serde_json::Value {
    let b = s.day;
    let price = |v: i64| sym.price(v);
    let open = b.map_or(0, |b| b.open);
    let mut v = serde_json::json!({
        "e": if mini { "24hrMiniTicker" } else { "24hrTicker" },
        "E": now_ms,
        "s": sym.spec.symbol,
        "c": price(s.last_price()),
        "o": price(open),
        "h": price(b.map_or(0, |b| b.high)),
        "l": price(b.map_or(0, |b| b.low)),
        "v": sym.qty(b.map_or(0, |b| b.volume)),
        "q": sym.quote_amount(b.map_or(0, |b| b.quote_volume)),
    });
    if mini {
        return v;
    }
    let level =
        |l: Option<(i64, i64)>| l.map_or((price(0), sym.qty(0)), |(p, q)| (price(p), sym.qty(q)));
    let ((bp, bq), (ap, aq)) = (level(top.0), level(top.1));
    if let Some(o) = v.as_object_mut() {
        for (k, x) in [
            ("p", price(s.change())),
            ("P", s.change_percent()),
            ("w", price(s.weighted_avg())),
            ("x", price(s.prev_close.unwrap_or(0))),
            ("Q", sym.qty(last.map_or(0, |t| t.qty))),
            ("b", bp),
            ("B", bq),
            ("a", ap),
            ("A", aq),
        ] {
            o.insert(k.into(), x.into());
        }
        o.insert("O".into(), s.open_time.into());
        o.insert("C".into(), s.close_time.into());
        o.insert("F".into(), b.map_or(-1, |b| b.first_trade as i64).into());
        o.insert("L".into(), b.map_or(-1, |b| b.last_trade as i64).into());
        o.insert("n".into(), b.map_or(0, |b| b.trades).into());
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trade(id: u64, price: i64, qty: i64, time_ms: u64) -> LastTrade {
        LastTrade {
            id,
            price,
            qty,
            time_ms,
        }
    }

    #[test]
    fn the_window_rolls_by_the_minute_and_keeps_the_previous_close() {
        let t0: u64 = 1_700_000_000_000 / 60_000 * 60_000;
        let mut r = Rolling::default();
        r.add(&trade(1, 100, 2, t0), true);
        r.add(&trade(2, 110, 1, t0 + 30_000), false);
        r.add(&trade(3, 90, 3, t0 + 3_600_000), true);
        let s = r.stats(t0 as i64 + 3_600_000);
        let day = s.day.unwrap();
        assert_eq!((day.open, day.high, day.low, day.close), (100, 110, 90, 90));
        assert_eq!((day.volume, day.trades), (6, 3));
        assert_eq!(s.change(), -10);
        assert_eq!(s.change_percent(), "-10.000");
        // (200 + 110 + 270) / 6 = 96.67 -> 97
        assert_eq!(s.weighted_avg(), 97);
        assert_eq!(s.prev_close, None);
        // A day and a minute later, the first minute's bar has left the window.
        let later = t0 as i64 + DAY_MS + 60_000;
        assert!(r.advance(later));
        let s = r.stats(later);
        assert_eq!(s.prev_close, Some(110));
        assert_eq!(s.day.unwrap().trades, 1);
        assert!(!r.advance(later));
        // Everything gone: the last price is the previous close.
        assert!(r.advance(later + DAY_MS));
        let s = r.stats(later + DAY_MS);
        assert_eq!((s.day, s.last_price()), (None, 90));
    }

    #[test]
    fn a_late_trade_of_an_older_minute_is_not_counted_twice() {
        let mut r = Rolling::default();
        r.add(&trade(1, 100, 1, 120_000), true);
        r.add(&trade(2, 100, 1, 60_000), true);
        assert_eq!(r.stats(180_000).day.unwrap().trades, 1);
    }

    #[test]
    fn ticker_and_mini_ticker_events_have_binance_fields() {
        let mut spec = peregrine_types::InstrumentSpec::example(1);
        spec.symbol = "PGN-USD".into();
        spec.price_decimals = 2;
        let sym = Symbol::new(spec);
        let mut r = Rolling::default();
        r.add(&trade(7, 10_000, 3, 60_000), true);
        let s = r.stats(120_000);
        let full = event(&sym, &s, (Some((9_950, 4)), None), None, false, 5);
        assert_eq!(full["e"], "24hrTicker");
        assert_eq!(full["c"], "100.00");
        assert_eq!(full["b"], "99.50");
        assert_eq!(full["a"], "0.00");
        assert_eq!((full["F"].as_i64(), full["L"].as_i64()), (Some(7), Some(7)));
        let mini = event(&sym, &s, (None, None), None, true, 5);
        assert_eq!(mini["e"], "24hrMiniTicker");
        assert!(mini.get("b").is_none() && mini.get("P").is_none());
        assert_eq!(mini["v"], full["v"]);
    }
}
