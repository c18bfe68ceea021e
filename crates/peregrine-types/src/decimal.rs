//! Exact conversion between decimal text and fixed-point integers.
//!
//! Only used at the edges (config, CLI, reports). `"150.05"` at 2 decimals is `15005`;
//! `"150.055"` at 2 decimals is an error, never a rounding.

/// Decimal text could not be converted exactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum DecimalError {
    /// Empty input, or a sign with no digits.
    #[error("empty number")]
    Empty,
    /// A character other than digits, one '.', and a leading sign.
    #[error("invalid character {0:?} in number")]
    InvalidChar(char),
    /// More fractional digits than the unit allows (non-zero ones): the value is not
    /// representable exactly.
    #[error("{given} decimal places given, at most {allowed} allowed")]
    TooPrecise {
        /// Significant fractional digits in the text.
        given: u32,
        /// Decimals of the unit.
        allowed: u32,
    },
    /// The value does not fit in an `i64` of units.
    #[error("number out of range")]
    Overflow,
    /// More decimals requested than an i64 can scale by.
    #[error("scale of {0} decimals is not supported (max 18)")]
    BadScale(u32),
}

/// The largest supported number of decimals (10^18 fits in i64).
pub const MAX_DECIMALS: u32 = 18;

/// Parses `text` as a decimal number and returns it in units of `10^-decimals`.
pub fn parse_scaled(text: &str, decimals: u32) -> Result<i64, DecimalError> {
    if decimals > MAX_DECIMALS {
        return Err(DecimalError::BadScale(decimals));
    }
    let text = text.trim();
    let (negative, body) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let (int_part, frac_part) = match body.split_once('.') {
        Some((i, f)) => (i, f),
        None => (body, ""),
    };
    if int_part.is_empty() && frac_part.is_empty() {
        return Err(DecimalError::Empty);
    }
    for c in int_part.chars().chain(frac_part.chars()) {
        if !c.is_ascii_digit() {
            return Err(DecimalError::InvalidChar(c));
        }
    }
    let significant = frac_part.trim_end_matches('0');
    if significant.len() as u32 > decimals {
        return Err(DecimalError::TooPrecise {
            given: significant.len() as u32,
            allowed: decimals,
        });
    }
    let mut value: i128 = 0;
    for b in int_part.bytes() {
        value = value * 10 + i128::from(b - b'0');
        if value > i64::MAX as i128 {
            return Err(DecimalError::Overflow);
        }
    }
    let mut scaled = value;
    let mut frac = significant.bytes();
    for _ in 0..decimals {
        let digit = frac.next().map_or(0, |b| i128::from(b - b'0'));
        scaled = scaled * 10 + digit;
    }
    let signed = if negative { -scaled } else { scaled };
    i64::try_from(signed).map_err(|_| DecimalError::Overflow)
}

/// Formats `units` of `10^-decimals` as decimal text, exactly (`15005`, 2 → `"150.05"`).
pub fn format_scaled(units: i64, decimals: u32) -> String {
    if decimals == 0 {
        return units.to_string();
    }
    let magnitude = units.unsigned_abs();
    let scale = 10u64.pow(decimals.min(MAX_DECIMALS));
    let sign = if units < 0 { "-" } else { "" };
    format!(
        "{sign}{}.{:0width$}",
        magnitude / scale,
        magnitude % scale,
        width = decimals as usize
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_exactly() {
        assert_eq!(parse_scaled("150.05", 2), Ok(15005));
        assert_eq!(parse_scaled("150.050", 2), Ok(15005));
        assert_eq!(parse_scaled("150", 2), Ok(15000));
        assert_eq!(parse_scaled(".5", 2), Ok(50));
        assert_eq!(parse_scaled("-1.25", 2), Ok(-125));
        assert_eq!(parse_scaled("+7", 0), Ok(7));
        assert_eq!(parse_scaled("0.1", 1), Ok(1));
    }

    #[test]
    fn rejects_inexact_and_garbage() {
        assert_eq!(
            parse_scaled("150.055", 2),
            Err(DecimalError::TooPrecise {
                given: 3,
                allowed: 2
            })
        );
        assert_eq!(parse_scaled("", 2), Err(DecimalError::Empty));
        assert_eq!(parse_scaled("-", 2), Err(DecimalError::Empty));
        assert_eq!(parse_scaled("1e5", 2), Err(DecimalError::InvalidChar('e')));
        assert_eq!(
            parse_scaled("1.2.3", 2),
            Err(DecimalError::InvalidChar('.'))
        );
        assert_eq!(
            parse_scaled("99999999999999999999", 0),
            Err(DecimalError::Overflow)
        );
        assert_eq!(
            parse_scaled("9223372036854775807", 1),
            Err(DecimalError::Overflow)
        );
        assert_eq!(parse_scaled("1", 19), Err(DecimalError::BadScale(19)));
    }

    #[test]
    fn formats_exactly() {
        assert_eq!(format_scaled(15005, 2), "150.05");
        assert_eq!(format_scaled(-5, 3), "-0.005");
        assert_eq!(format_scaled(42, 0), "42");
    }

    proptest! {
        #[test]
        fn prop_format_parse_round_trip(v in any::<i64>().prop_filter("not MIN", |v| *v != i64::MIN), d in 0u32..=8) {
            prop_assert_eq!(parse_scaled(&format_scaled(v, d), d), Ok(v));
        }
    }
}
