//! How the engine writes numbers for people, the same in `peregrine engine stats`,
//! `peregrine up` and the metrics' help text: durations in ns / µs / ms / s, counts
//! with thousands separators, prices, quantities and money as exact decimals with the
//! instrument's decimals and currency.

use peregrine_types::decimal::format_scaled;
use serde::{Deserialize, Serialize};

/// A duration in ns for people: `850 ns`, `38.1 µs`, `2.31 ms`, `1.20 s`.
pub fn fmt_ns(ns: u64) -> String {
    let f = ns as f64;
    if ns < 1_000 {
        format!("{ns} ns")
    } else if ns < 1_000_000 {
        format!("{:.1} µs", f / 1e3)
    } else if ns < 1_000_000_000 {
        format!("{:.2} ms", f / 1e6)
    } else {
        format!("{:.2} s", f / 1e9)
    }
}

/// A count with thousands separators: `1,234,567`.
pub fn fmt_count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// What the engine knows of an instrument for display.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InstrumentInfo {
    /// Instrument id.
    pub id: u32,
    /// Symbol.
    pub symbol: String,
    /// Decimals of a price unit.
    #[serde(default)]
    pub price_decimals: u32,
    /// Decimals of a quantity unit.
    #[serde(default)]
    pub qty_decimals: u32,
    /// The quote currency money is counted in (`USD`).
    #[serde(default)]
    pub currency: String,
}

impl InstrumentInfo {
    /// Plain units: symbol `#id`, no decimals, no currency.
    pub fn plain(id: u32) -> InstrumentInfo {
        InstrumentInfo {
            id,
            symbol: format!("#{id}"),
            price_decimals: 0,
            qty_decimals: 0,
            currency: String::new(),
        }
    }

    /// A price in price units.
    pub fn price(&self, units: i128) -> String {
        format_scaled(units, self.price_decimals)
    }

    /// A quantity in lots.
    pub fn qty(&self, lots: i128) -> String {
        format_scaled(lots, self.qty_decimals)
    }

    /// Money in price units × lots, with the currency: `12.34 USD`.
    pub fn money(&self, units_lots: i128) -> String {
        let text = format_scaled(units_lots, self.price_decimals + self.qty_decimals);
        if self.currency.is_empty() {
            text
        } else {
            format!("{text} {}", self.currency)
        }
    }

    /// The info for `id` in `list`, or plain units.
    pub fn find(list: &[InstrumentInfo], id: u32) -> InstrumentInfo {
        list.iter()
            .find(|i| i.id == id)
            .cloned()
            .unwrap_or_else(|| InstrumentInfo::plain(id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(fmt_ns(850), "850 ns");
        assert_eq!(fmt_ns(38_100), "38.1 µs");
        assert_eq!(fmt_ns(2_310_000), "2.31 ms");
        assert_eq!(fmt_count(1_234_567), "1,234,567");
        assert_eq!(format_scaled(-1_234, 2), "-12.34");
        assert_eq!(format_scaled(5, 3), "0.005");
        assert_eq!(format_scaled(-5, 0), "-5");
        let i = InstrumentInfo {
            id: 1,
            symbol: "PGN-USD".into(),
            price_decimals: 2,
            qty_decimals: 0,
            currency: "USD".into(),
        };
        assert_eq!(i.money(-2_934), "-29.34 USD");
        assert_eq!(i.price(10_001), "100.01");
        assert_eq!(InstrumentInfo::plain(3).money(7), "7");
    }
}
