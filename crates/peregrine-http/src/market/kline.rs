//! Klines (candlesticks): intervals as Binance names them, and the aggregation of
//! trades into bars. Pure functions, shared by the live streams and the history
//! writer.
//!
//! Bars are aligned as Binance aligns them, in UTC: fixed-length intervals to
//! multiples of their length since the Unix epoch, weeks to Mondays 00:00, months to
//! the first day of the month.

/// A kline interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Interval {
    /// `1s`
    S1,
    /// `1m`
    M1,
    /// `3m`
    M3,
    /// `5m`
    M5,
    /// `15m`
    M15,
    /// `30m`
    M30,
    /// `1h`
    H1,
    /// `2h`
    H2,
    /// `4h`
    H4,
    /// `6h`
    H6,
    /// `8h`
    H8,
    /// `12h`
    H12,
    /// `1d`
    D1,
    /// `3d`
    D3,
    /// `1w`
    W1,
    /// `1M`
    Mo1,
}

const MS_MIN: i64 = 60_000;
const MS_HOUR: i64 = 60 * MS_MIN;
const MS_DAY: i64 = 24 * MS_HOUR;

impl Interval {
    /// Every interval, shortest first.
    pub const ALL: [Interval; 16] = [
        Interval::S1,
        Interval::M1,
        Interval::M3,
        Interval::M5,
        Interval::M15,
        Interval::M30,
        Interval::H1,
        Interval::H2,
        Interval::H4,
        Interval::H6,
        Interval::H8,
        Interval::H12,
        Interval::D1,
        Interval::D3,
        Interval::W1,
        Interval::Mo1,
    ];

    /// The API name.
    pub const fn name(self) -> &'static str {
        match self {
            Interval::S1 => "1s",
            Interval::M1 => "1m",
            Interval::M3 => "3m",
            Interval::M5 => "5m",
            Interval::M15 => "15m",
            Interval::M30 => "30m",
            Interval::H1 => "1h",
            Interval::H2 => "2h",
            Interval::H4 => "4h",
            Interval::H6 => "6h",
            Interval::H8 => "8h",
            Interval::H12 => "12h",
            Interval::D1 => "1d",
            Interval::D3 => "3d",
            Interval::W1 => "1w",
            Interval::Mo1 => "1M",
        }
    }

    /// From the API name (case-sensitive: `1m` is a minute, `1M` a month).
    pub fn parse(s: &str) -> Option<Interval> {
        Interval::ALL.iter().copied().find(|i| i.name() == s)
    }

    /// Fixed length in ms (`None` for months).
    pub const fn fixed_ms(self) -> Option<i64> {
        Some(match self {
            Interval::S1 => 1_000,
            Interval::M1 => MS_MIN,
            Interval::M3 => 3 * MS_MIN,
            Interval::M5 => 5 * MS_MIN,
            Interval::M15 => 15 * MS_MIN,
            Interval::M30 => 30 * MS_MIN,
            Interval::H1 => MS_HOUR,
            Interval::H2 => 2 * MS_HOUR,
            Interval::H4 => 4 * MS_HOUR,
            Interval::H6 => 6 * MS_HOUR,
            Interval::H8 => 8 * MS_HOUR,
            Interval::H12 => 12 * MS_HOUR,
            Interval::D1 => MS_DAY,
            Interval::D3 => 3 * MS_DAY,
            Interval::W1 => 7 * MS_DAY,
            Interval::Mo1 => return None,
        })
    }

    /// Open time of the bar containing `t_ms`.
    pub fn open_time(self, t_ms: i64) -> i64 {
        match self {
            // 1970-01-01 was a Thursday: Mondays are 4 days later (mod 7).
            Interval::W1 => {
                let week = 7 * MS_DAY;
                (t_ms - 4 * MS_DAY).div_euclid(week) * week + 4 * MS_DAY
            }
            Interval::Mo1 => {
                let (y, m, _) = civil_from_days(t_ms.div_euclid(MS_DAY));
                days_from_civil(y, m, 1) * MS_DAY
            }
            other => {
                let len = other.fixed_ms().unwrap_or(MS_MIN);
                t_ms.div_euclid(len) * len
            }
        }
    }

    /// Close time (last ms) of the bar opening at `open_ms`.
    pub fn close_time(self, open_ms: i64) -> i64 {
        self.next_open(open_ms) - 1
    }

    /// Open time of the bar after the one opening at `open_ms`.
    pub fn next_open(self, open_ms: i64) -> i64 {
        match self.fixed_ms() {
            Some(len) => open_ms + len,
            None => {
                let (y, m, _) = civil_from_days(open_ms.div_euclid(MS_DAY));
                let (y, m) = if m == 12 { (y + 1, 1) } else { (y, m + 1) };
                days_from_civil(y, m, 1) * MS_DAY
            }
        }
    }

    /// The stored interval this one is built from when read from history: `1m` bars
    /// make minutes and hours below one, `1h` bars hours, `1d` bars days, weeks and
    /// months; `1s` comes from trades (`None`).
    pub const fn stored_base(self) -> Option<Interval> {
        match self {
            Interval::S1 => None,
            Interval::M1 | Interval::M3 | Interval::M5 | Interval::M15 | Interval::M30 => {
                Some(Interval::M1)
            }
            Interval::H1
            | Interval::H2
            | Interval::H4
            | Interval::H6
            | Interval::H8
            | Interval::H12 => Some(Interval::H1),
            Interval::D1 | Interval::D3 | Interval::W1 | Interval::Mo1 => Some(Interval::D1),
        }
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day number (inverse of [`days_from_civil`]).
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// One bar, in integer units (prices in price units, volumes in quantity units,
/// quote volumes in price × quantity units).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bar {
    /// Open time, ms.
    pub open_time: i64,
    /// Open price.
    pub open: i64,
    /// High.
    pub high: i64,
    /// Low.
    pub low: i64,
    /// Close.
    pub close: i64,
    /// Base volume.
    pub volume: i64,
    /// Quote volume.
    pub quote_volume: i128,
    /// Trades.
    pub trades: u64,
    /// Base volume bought by takers.
    pub taker_buy_volume: i64,
    /// Quote volume bought by takers.
    pub taker_buy_quote: i128,
    /// First trade id.
    pub first_trade: u64,
    /// Last trade id.
    pub last_trade: u64,
}

impl Bar {
    /// A bar holding one trade.
    pub fn from_trade(
        open_time: i64,
        trade_id: u64,
        price: i64,
        qty: i64,
        buyer_taker: bool,
    ) -> Bar {
        let quote = i128::from(price) * i128::from(qty);
        Bar {
            open_time,
            open: price,
            high: price,
            low: price,
            close: price,
            volume: qty,
            quote_volume: quote,
            trades: 1,
            taker_buy_volume: if buyer_taker { qty } else { 0 },
            taker_buy_quote: if buyer_taker { quote } else { 0 },
            first_trade: trade_id,
            last_trade: trade_id,
        }
    }

    /// Adds a later bar (or trade) of the same period.
    pub fn merge(&mut self, later: &Bar) {
        self.high = self.high.max(later.high);
        self.low = self.low.min(later.low);
        self.close = later.close;
        self.volume = self.volume.saturating_add(later.volume);
        self.quote_volume += later.quote_volume;
        self.trades += later.trades;
        self.taker_buy_volume = self.taker_buy_volume.saturating_add(later.taker_buy_volume);
        self.taker_buy_quote += later.taker_buy_quote;
        self.last_trade = later.last_trade;
    }
}

/// Rolls bars of a finer interval (in time order) up into `interval`.
pub fn roll_up(interval: Interval, bars: impl IntoIterator<Item = Bar>) -> Vec<Bar> {
    let mut out: Vec<Bar> = Vec::new();
    for b in bars {
        let open = interval.open_time(b.open_time);
        match out.last_mut() {
            Some(last) if last.open_time == open => last.merge(&b),
            _ => out.push(Bar {
                open_time: open,
                ..b
            }),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn names_round_trip() {
        for i in Interval::ALL {
            assert_eq!(Interval::parse(i.name()), Some(i));
        }
        assert_eq!(Interval::parse("1M"), Some(Interval::Mo1));
        assert_eq!(Interval::parse("1m"), Some(Interval::M1));
        assert_eq!(Interval::parse("2m"), None);
    }

    #[test]
    fn alignment() {
        // 2026-11-23 (a Monday) 10:17:42.123 UTC.
        let day = days_from_civil(2026, 11, 23);
        assert_eq!(civil_from_days(day), (2026, 11, 23));
        let t = day * MS_DAY + 10 * MS_HOUR + 17 * MS_MIN + 42_123;
        assert_eq!(
            Interval::M1.open_time(t),
            day * MS_DAY + 10 * MS_HOUR + 17 * MS_MIN
        );
        assert_eq!(
            Interval::M15.open_time(t),
            day * MS_DAY + 10 * MS_HOUR + 15 * MS_MIN
        );
        assert_eq!(Interval::H4.open_time(t), day * MS_DAY + 8 * MS_HOUR);
        assert_eq!(Interval::W1.open_time(t), day * MS_DAY);
        assert_eq!(Interval::W1.open_time(t + 6 * MS_DAY), day * MS_DAY);
        assert_eq!(Interval::W1.open_time(t - MS_DAY), (day - 7) * MS_DAY);
        assert_eq!(
            Interval::Mo1.open_time(t),
            days_from_civil(2026, 11, 1) * MS_DAY
        );
        assert_eq!(
            Interval::Mo1.next_open(days_from_civil(2026, 12, 1) * MS_DAY),
            days_from_civil(2027, 1, 1) * MS_DAY
        );
        assert_eq!(Interval::M1.close_time(0), 59_999);
        assert_eq!(days_from_civil(1970, 1, 1), 0);
    }

    #[test]
    fn roll_up_merges_by_period() {
        let a = Bar::from_trade(0, 1, 100, 2, true);
        let b = Bar::from_trade(60_000, 2, 105, 1, false);
        let c = Bar::from_trade(180_000, 3, 95, 4, true);
        let r = roll_up(Interval::M3, [a, b, c]);
        assert_eq!(r.len(), 2);
        assert_eq!(
            (r[0].open, r[0].high, r[0].low, r[0].close),
            (100, 105, 100, 105)
        );
        assert_eq!((r[0].volume, r[0].trades, r[0].taker_buy_volume), (3, 2, 2));
        assert_eq!((r[0].first_trade, r[0].last_trade), (1, 2));
        assert_eq!(r[1].open_time, 180_000);
    }

    proptest! {
        #[test]
        fn prop_bar_contains_its_time(t in -10_000_000_000_000i64..10_000_000_000_000, i in 0usize..16) {
            let iv = Interval::ALL[i];
            let open = iv.open_time(t);
            prop_assert!(open <= t);
            prop_assert!(t <= iv.close_time(open));
            prop_assert_eq!(iv.open_time(open), open);
            prop_assert_eq!(iv.open_time(iv.next_open(open)), iv.next_open(open));
        }

        #[test]
        fn prop_civil_round_trip(z in -1_000_000i64..1_000_000) {
            let (y, m, d) = civil_from_days(z);
            prop_assert_eq!(days_from_civil(y, m, d), z);
        }

        #[test]
        fn prop_roll_up_of_minutes_equals_direct_aggregation(
            trades in proptest::collection::vec((0i64..86_400_000, 1i64..1000, 1i64..50, any::<bool>()), 1..200)
        ) {
            let mut trades = trades;
            trades.sort_by_key(|t| t.0);
            let bars = |iv: Interval| {
                let mut out: Vec<Bar> = Vec::new();
                for (n, &(t, p, q, b)) in trades.iter().enumerate() {
                    let bar = Bar::from_trade(iv.open_time(t), n as u64, p, q, b);
                    match out.last_mut() {
                        Some(l) if l.open_time == bar.open_time => l.merge(&bar),
                        _ => out.push(bar),
                    }
                }
                out
            };
            for iv in [Interval::M5, Interval::H1, Interval::H4, Interval::D1] {
                prop_assert_eq!(roll_up(iv, bars(Interval::M1)), bars(iv));
            }
        }
    }
}
