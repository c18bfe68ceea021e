//! An instrument's market rules beyond its grids: the volatility band, the daily
//! auction schedule and the fee schedule. All optional; an instrument without them
//! trades continuously, never halts by itself and charges no fees.
//!
//! These are plain, validated data. The matching core applies the band and the
//! schedule (`peregrine-book`), the ledger the fees (`peregrine-ledger`);
//! `docs/auctions.md` and `docs/fees.md` explain the rules.

use serde::{Deserialize, Serialize};

use crate::decimal;
use crate::error::SpecError;

/// Nanoseconds in a day: schedules repeat every UTC day of the injected clock.
pub const DAY_NS: u64 = 86_400_000_000_000;

/// The largest fee rate magnitude, in millionths (100 %).
pub const MAX_RATE_PPM: i64 = 1_000_000;

/// The dynamic price band: a trade that would print further than `band_bps` from
/// the last trade price (the reference price before the first trade) starts a
/// volatility auction of `auction_ms` instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VolatilityRule {
    /// Half-width of the band in basis points of the last price (1..=10000).
    pub band_bps: u32,
    /// Length of the volatility auction in milliseconds (at least 1).
    pub auction_ms: u64,
}

impl VolatilityRule {
    /// The band's half-width in price units around `last` (at least one unit).
    pub fn half_width(&self, last: i64) -> i64 {
        let w = i128::from(last) * i128::from(self.band_bps) / 10_000;
        i64::try_from(w).unwrap_or(i64::MAX).max(1)
    }
}

/// A time of day (UTC of the injected clock) as `"HH:MM"` or `"HH:MM:SS"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TimeOfDay(pub u32);

impl TimeOfDay {
    /// Seconds since midnight.
    pub const fn seconds(self) -> u32 {
        self.0
    }

    /// Nanoseconds since midnight.
    pub const fn nanos(self) -> u64 {
        self.0 as u64 * 1_000_000_000
    }

    /// Parses `"HH:MM"` or `"HH:MM:SS"` (00:00:00 ..= 23:59:59).
    pub fn parse(text: &str) -> Option<TimeOfDay> {
        let mut parts = text.trim().split(':');
        let mut next = |max: u32| {
            parts
                .next()
                .filter(|p| p.len() == 2 && p.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|p| p.parse::<u32>().ok())
                .filter(|v| *v <= max)
        };
        let (h, m) = (next(23)?, next(59)?);
        let s = match parts.next() {
            None => 0,
            Some(p) if p.len() == 2 && p.bytes().all(|b| b.is_ascii_digit()) => {
                p.parse::<u32>().ok().filter(|v| *v <= 59)?
            }
            Some(_) => return None,
        };
        if parts.next().is_some() {
            return None;
        }
        Some(TimeOfDay(h * 3600 + m * 60 + s))
    }
}

impl core::fmt::Display for TimeOfDay {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let s = self.0;
        write!(f, "{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    }
}

impl Serialize for TimeOfDay {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for TimeOfDay {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        TimeOfDay::parse(&text).ok_or_else(|| {
            serde::de::Error::custom(format!("time of day {text:?}: expected HH:MM[:SS]"))
        })
    }
}

/// The daily auction schedule: an opening call from `opening_call` uncrossing at
/// `open`, continuous trading until `closing_call`, a closing call uncrossing at
/// `close`, then closed (halted) until the next day's opening call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Schedule {
    /// The opening call starts.
    pub opening_call: TimeOfDay,
    /// The opening auction uncrosses; continuous trading starts.
    pub open: TimeOfDay,
    /// The closing call starts.
    pub closing_call: TimeOfDay,
    /// The closing auction uncrosses; the instrument closes.
    pub close: TimeOfDay,
}

impl Schedule {
    /// The four times, in order of the day.
    pub fn times(&self) -> [TimeOfDay; 4] {
        [self.opening_call, self.open, self.closing_call, self.close]
    }

    fn validate(&self) -> Result<(), SpecError> {
        let t = self.times();
        if t.windows(2).all(|w| w[0] < w[1]) {
            Ok(())
        } else {
            Err(SpecError::Invalid(
                "schedule: need opening_call < open < closing_call < close",
            ))
        }
    }
}

/// One fee tier: the rates that apply from `min_volume` of 30-day traded notional
/// on the instrument (decimal text in whole quote units).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FeeTier {
    /// 30-day volume (quote notional, decimal text) from which this tier applies.
    pub min_volume: String,
    /// Maker rate in millionths of the notional (negative: a rebate).
    pub maker_ppm: i64,
    /// Taker rate in millionths of the notional.
    pub taker_ppm: i64,
}

/// An instrument's fees: base maker and taker rates in millionths of the trade's
/// notional (100 = 1 basis point), and volume tiers that lower them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FeeSchedule {
    /// Base maker rate (negative: a rebate).
    pub maker_ppm: i64,
    /// Base taker rate (never negative).
    pub taker_ppm: i64,
    /// Tiers by 30-day volume, ascending by `min_volume`. Default: none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tiers: Vec<FeeTier>,
}

/// One resolved tier: the 30-day volume in quote units from which the rates apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResolvedTier {
    /// Volume threshold in quote units (price unit × quantity unit).
    pub min_volume: i128,
    /// Maker rate, millionths.
    pub maker_ppm: i64,
    /// Taker rate, millionths.
    pub taker_ppm: i64,
}

impl FeeSchedule {
    /// The tiers in quote units, the base rates first (threshold 0). `quote_decimals`
    /// is the decimals of the quote unit (price decimals + quantity decimals).
    pub fn resolve(&self, quote_decimals: u32) -> Result<Vec<ResolvedTier>, SpecError> {
        let mut out = vec![ResolvedTier {
            min_volume: 0,
            maker_ppm: self.maker_ppm,
            taker_ppm: self.taker_ppm,
        }];
        for t in &self.tiers {
            let v = parse_volume(&t.min_volume, quote_decimals)?;
            if out.last().is_some_and(|p| p.min_volume >= v) {
                return Err(SpecError::Invalid(
                    "fees: tiers must be in strictly ascending min_volume above 0",
                ));
            }
            out.push(ResolvedTier {
                min_volume: v,
                maker_ppm: t.maker_ppm,
                taker_ppm: t.taker_ppm,
            });
        }
        Ok(out)
    }

    /// The largest positive rate any tier charges (what a buy order reserves for its
    /// fees); 0 when every rate is a rebate or zero.
    pub fn max_charge_ppm(&self) -> i64 {
        let rates = [self.maker_ppm, self.taker_ppm]
            .into_iter()
            .chain(self.tiers.iter().flat_map(|t| [t.maker_ppm, t.taker_ppm]));
        rates.max().unwrap_or(0).max(0)
    }

    fn validate(&self, quote_decimals: u32) -> Result<(), SpecError> {
        let tiers = self.resolve(quote_decimals)?;
        let mut min_taker = i64::MAX;
        let mut max_rebate = 0i64;
        for t in &tiers {
            if t.maker_ppm.abs() > MAX_RATE_PPM || t.taker_ppm.abs() > MAX_RATE_PPM {
                return Err(SpecError::Invalid("fees: a rate is beyond 100 %"));
            }
            if t.taker_ppm < 0 {
                return Err(SpecError::Invalid("fees: taker rates cannot be negative"));
            }
            min_taker = min_taker.min(t.taker_ppm);
            max_rebate = max_rebate.max(-t.maker_ppm);
        }
        if max_rebate > min_taker {
            return Err(SpecError::Invalid(
                "fees: a maker rebate larger than the smallest taker rate would pay out \
                 more than the fee account collects",
            ));
        }
        Ok(())
    }
}

fn parse_volume(text: &str, decimals: u32) -> Result<i128, SpecError> {
    // Volumes may exceed an i64 of quote units: parse the integer part and the
    // fraction separately.
    let (int, frac) = text.trim().split_once('.').unwrap_or((text.trim(), ""));
    let whole: i128 = int
        .parse::<u64>()
        .map_err(|_| SpecError::Invalid("fees: min_volume must be a positive decimal"))?
        .into();
    let part = if frac.is_empty() {
        0
    } else {
        decimal::parse_scaled(&format!("0.{frac}"), decimals)?
    };
    whole
        .checked_mul(10i128.pow(decimals))
        .and_then(|w| w.checked_add(i128::from(part)))
        .ok_or(SpecError::Invalid("fees: min_volume out of range"))
}

/// Validates the optional rules of an instrument with `quote_decimals`.
pub(crate) fn validate(
    volatility: Option<&VolatilityRule>,
    schedule: Option<&Schedule>,
    fees: Option<&FeeSchedule>,
    quote_decimals: u32,
) -> Result<(), SpecError> {
    if let Some(v) = volatility {
        if !(1..=10_000).contains(&v.band_bps) || v.auction_ms == 0 {
            return Err(SpecError::Invalid(
                "volatility: need band_bps in 1..=10000 and auction_ms >= 1",
            ));
        }
        if v.auction_ms > DAY_NS / 1_000_000 {
            return Err(SpecError::Invalid("volatility: auction_ms above one day"));
        }
    }
    if let Some(s) = schedule {
        s.validate()?;
    }
    if let Some(f) = fees {
        f.validate(quote_decimals)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_of_day_parse_and_print() {
        assert_eq!(TimeOfDay::parse("08:00"), Some(TimeOfDay(8 * 3600)));
        assert_eq!(TimeOfDay::parse("23:59:59"), Some(TimeOfDay(86_399)));
        for bad in [
            "24:00",
            "8:00",
            "08:60",
            "08:00:60",
            "08:00:00:00",
            "",
            "ab:cd",
        ] {
            assert_eq!(TimeOfDay::parse(bad), None, "{bad}");
        }
        assert_eq!(TimeOfDay(9 * 3600 + 5).to_string(), "09:00:05");
    }

    fn fees(maker: i64, taker: i64, tiers: &[(&str, i64, i64)]) -> FeeSchedule {
        FeeSchedule {
            maker_ppm: maker,
            taker_ppm: taker,
            tiers: tiers
                .iter()
                .map(|&(v, m, t)| FeeTier {
                    min_volume: v.into(),
                    maker_ppm: m,
                    taker_ppm: t,
                })
                .collect(),
        }
    }

    #[test]
    fn fee_tiers_resolve_to_quote_units() {
        let f = fees(
            1000,
            2000,
            &[("1000000", 500, 1500), ("5000000.5", -100, 1000)],
        );
        let t = f.resolve(2).unwrap();
        assert_eq!(t.len(), 3);
        assert_eq!(t[1].min_volume, 100_000_000);
        assert_eq!(t[2].min_volume, 500_000_050);
        assert_eq!(f.max_charge_ppm(), 2000);
        assert!(f.validate(2).is_ok());
    }

    #[test]
    fn bad_fee_schedules_are_refused() {
        assert!(
            fees(-3000, 2000, &[]).validate(2).is_err(),
            "rebate > taker"
        );
        assert!(fees(0, -1, &[]).validate(2).is_err(), "negative taker");
        assert!(fees(0, 2_000_000, &[]).validate(2).is_err(), "beyond 100 %");
        assert!(fees(0, 10, &[("5", 0, 5), ("5", 0, 4)])
            .validate(2)
            .is_err());
        assert!(fees(0, 10, &[("x", 0, 5)]).validate(2).is_err());
        assert!(fees(0, 10, &[("1.001", 0, 5)]).validate(2).is_err());
        assert_eq!(fees(-5, -5, &[]).max_charge_ppm(), 0);
    }

    #[test]
    fn rules_validate() {
        let v = VolatilityRule {
            band_bps: 500,
            auction_ms: 5_000,
        };
        assert!(validate(Some(&v), None, None, 2).is_ok());
        assert_eq!(v.half_width(10_000), 500);
        assert_eq!(v.half_width(1), 1);
        let bad = VolatilityRule { band_bps: 0, ..v };
        assert!(validate(Some(&bad), None, None, 2).is_err());
        let t = |s| TimeOfDay::parse(s).unwrap();
        let s = Schedule {
            opening_call: t("08:00"),
            open: t("08:10"),
            closing_call: t("16:00"),
            close: t("16:05"),
        };
        assert!(validate(None, Some(&s), None, 2).is_ok());
        let swapped = Schedule {
            open: t("07:00"),
            ..s
        };
        assert!(validate(None, Some(&swapped), None, 2).is_err());
    }
}
