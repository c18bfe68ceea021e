//! Symbols: the instruments by name and id, and exact conversion between their
//! integer units and the decimal strings of the API (never floats).

use std::collections::HashMap;

use peregrine_types::decimal::{self, DecimalError};
use peregrine_types::{InstrumentId, InstrumentSpec, InstrumentStatus};

/// True for a symbol the API can carry: 1..=20 characters of `[A-Z0-9-_.]` (the
/// pattern Binance documents for `symbol`).
pub fn valid_symbol(s: &str) -> bool {
    (1..=20).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b"-_.".contains(&b))
}

/// One instrument as the API shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Symbol {
    /// The exchange's spec (grids, limits, band, status).
    pub spec: InstrumentSpec,
    /// Base asset name (`PGN`).
    pub base: String,
    /// Quote asset name (`USD`).
    pub quote: String,
    /// Stream-name form of the symbol (lower case).
    pub lower: String,
}

/// Why a decimal parameter is not acceptable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AmountError {
    /// Not a number.
    Malformed,
    /// More decimals than the instrument has.
    TooPrecise,
    /// Zero, negative or out of range.
    OutOfRange,
}

impl From<DecimalError> for AmountError {
    fn from(e: DecimalError) -> Self {
        match e {
            DecimalError::TooPrecise { .. } => AmountError::TooPrecise,
            DecimalError::Overflow => AmountError::OutOfRange,
            _ => AmountError::Malformed,
        }
    }
}

impl Symbol {
    /// From an exchange spec; base and quote from `base`/`quote`, else from a
    /// `BASE-QUOTE` symbol, else the symbol and `?`.
    pub fn new(spec: InstrumentSpec) -> Symbol {
        let (base, quote) = match (&spec.base, &spec.quote) {
            (Some(b), Some(q)) => (b.clone(), q.clone()),
            _ => match spec.symbol.split_once('-') {
                Some((b, q)) if !b.is_empty() && !q.is_empty() => (b.into(), q.into()),
                _ => (spec.symbol.clone(), "?".into()),
            },
        };
        let lower = spec.symbol.to_ascii_lowercase();
        Symbol {
            spec,
            base,
            quote,
            lower,
        }
    }

    /// The instrument id.
    pub fn id(&self) -> InstrumentId {
        self.spec.id
    }

    /// Trading now?
    pub fn trading(&self) -> bool {
        self.spec.status == InstrumentStatus::Active
    }

    /// A price in price units as text.
    pub fn price(&self, units: i64) -> String {
        decimal::format_scaled(units, self.spec.price_decimals)
    }

    /// A quantity in quantity units as text.
    pub fn qty(&self, units: i64) -> String {
        decimal::format_scaled(units, self.spec.qty_decimals)
    }

    /// Decimals of a quote amount (price units × quantity units).
    pub fn quote_decimals(&self) -> u32 {
        self.spec.price_decimals + self.spec.qty_decimals
    }

    /// A quote amount (price × quantity, in price units × quantity units) as text.
    pub fn quote_amount(&self, units: i128) -> String {
        format_i128(units, self.quote_decimals())
    }

    /// Parses a positive price.
    pub fn parse_price(&self, text: &str) -> Result<i64, AmountError> {
        positive(text, self.spec.price_decimals)
    }

    /// Parses a positive quantity.
    pub fn parse_qty(&self, text: &str) -> Result<i64, AmountError> {
        positive(text, self.spec.qty_decimals)
    }
}

fn positive(text: &str, decimals: u32) -> Result<i64, AmountError> {
    if text.is_empty() || text.len() > 40 || text.starts_with(['+', '-']) {
        return Err(AmountError::Malformed);
    }
    let v = decimal::parse_scaled(text, decimals)?;
    if v <= 0 {
        return Err(AmountError::OutOfRange);
    }
    Ok(v)
}

/// `units` of `10^-decimals` as exact text, for amounts wider than i64.
pub fn format_i128(units: i128, decimals: u32) -> String {
    if let Ok(v) = i64::try_from(units) {
        return decimal::format_scaled(v, decimals);
    }
    let sign = if units < 0 { "-" } else { "" };
    let m = units.unsigned_abs();
    if decimals == 0 {
        return format!("{sign}{m}");
    }
    let scale = 10u128.pow(decimals.min(36));
    format!(
        "{sign}{}.{:0w$}",
        m / scale,
        m % scale,
        w = decimals as usize
    )
}

/// Every symbol, by name and by id.
#[derive(Debug, Clone, Default)]
pub struct Symbols {
    list: Vec<Symbol>,
    by_name: HashMap<String, usize>,
    by_lower: HashMap<String, usize>,
    by_id: HashMap<u32, usize>,
}

impl Symbols {
    /// From the exchange's specs.
    pub fn new(specs: &[InstrumentSpec]) -> Symbols {
        let mut s = Symbols::default();
        for spec in specs {
            let i = s.list.len();
            let sym = Symbol::new(spec.clone());
            s.by_name.insert(sym.spec.symbol.clone(), i);
            s.by_lower.insert(sym.lower.clone(), i);
            s.by_id.insert(sym.spec.id.0, i);
            s.list.push(sym);
        }
        s
    }

    /// By exact API name (`PGN-USD`).
    pub fn get(&self, name: &str) -> Option<&Symbol> {
        self.by_name.get(name).map(|&i| &self.list[i])
    }

    /// By stream name (`pgn-usd`).
    pub fn by_stream_name(&self, lower: &str) -> Option<&Symbol> {
        self.by_lower.get(lower).map(|&i| &self.list[i])
    }

    /// By instrument id.
    pub fn by_id(&self, id: InstrumentId) -> Option<&Symbol> {
        self.by_id.get(&id.0).map(|&i| &self.list[i])
    }

    /// Dense index of an instrument (0..len), for per-symbol tables.
    pub fn index_of(&self, id: InstrumentId) -> Option<usize> {
        self.by_id.get(&id.0).copied()
    }

    /// All, in config order.
    pub fn all(&self) -> &[Symbol] {
        &self.list
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn sym(pd: u32, qd: u32) -> Symbol {
        let mut spec = InstrumentSpec::example(1);
        spec.symbol = "PGN-USD".into();
        spec.price_decimals = pd;
        spec.qty_decimals = qd;
        Symbol::new(spec)
    }

    #[test]
    fn base_and_quote_come_from_the_symbol_or_the_spec() {
        let s = sym(2, 0);
        assert_eq!((s.base.as_str(), s.quote.as_str()), ("PGN", "USD"));
        let mut spec = InstrumentSpec::example(2);
        spec.base = Some("AAA".into());
        spec.quote = Some("BBB".into());
        let s = Symbol::new(spec);
        assert_eq!((s.base.as_str(), s.quote.as_str()), ("AAA", "BBB"));
    }

    #[test]
    fn amounts_are_exact_text() {
        let s = sym(2, 3);
        assert_eq!(s.price(10_050), "100.50");
        assert_eq!(s.qty(1_500), "1.500");
        assert_eq!(s.quote_amount(10_050 * 1_500), "150.75000");
        assert_eq!(s.parse_price("100.5"), Ok(10_050));
        assert_eq!(s.parse_price("100.505"), Err(AmountError::TooPrecise));
        assert_eq!(s.parse_price("100.500000"), Ok(10_050));
        assert_eq!(s.parse_price("0"), Err(AmountError::OutOfRange));
        assert_eq!(s.parse_price("-1"), Err(AmountError::Malformed));
        assert_eq!(s.parse_price("1e3"), Err(AmountError::Malformed));
        assert_eq!(s.parse_price(""), Err(AmountError::Malformed));
        assert_eq!(
            s.parse_qty("99999999999999999999"),
            Err(AmountError::OutOfRange)
        );
    }

    #[test]
    fn wide_amounts_format_exactly() {
        let big = i128::from(i64::MAX) * 10 + 5;
        assert_eq!(format_i128(big, 2), "922337203685477580.75");
        assert_eq!(format_i128(-big, 0), "-92233720368547758075");
    }

    #[test]
    fn symbol_pattern() {
        assert!(valid_symbol("PGN-USD"));
        assert!(valid_symbol("BTCUSDT"));
        assert!(!valid_symbol("pgn-usd"));
        assert!(!valid_symbol(""));
        assert!(!valid_symbol("A/B"));
        assert!(!valid_symbol("ABCDEFGHIJKLMNOPQRSTU"));
    }

    proptest! {
        #[test]
        fn prop_price_text_round_trips(units in 1i64..i64::MAX, pd in 0u32..9) {
            let s = sym(pd, 0);
            prop_assert_eq!(s.parse_price(&s.price(units)), Ok(units));
        }
    }
}
