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
/// Takes any integer up to `i128`, so sums and products (PnL, notional) format the same
/// way as prices and quantities. Decimals above 38 are clamped.
pub fn format_scaled(units: impl Into<i128>, decimals: u32) -> String {
    let units: i128 = units.into();
    if decimals == 0 {
        return units.to_string();
    }
    let magnitude = units.unsigned_abs();
    let scale = 10u128.pow(decimals.min(38));
    let sign = if units < 0 { "-" } else { "" };
    format!(
        "{sign}{}.{:0width$}",
        magnitude / scale,
        magnitude % scale,
        width = decimals as usize
    )
}

/// Appends `units` of `10^-decimals` to `out` as decimal text, exactly, without
/// allocating when `out` has room (the same text as [`format_scaled`]; codecs that
/// write into a reusable buffer use this one). Decimals above [`MAX_DECIMALS`] are
/// clamped.
pub fn write_scaled(units: i64, decimals: u32, out: &mut Vec<u8>) {
    let decimals = decimals.min(MAX_DECIMALS) as usize;
    if units < 0 {
        out.push(b'-');
    }
    let mut magnitude = units.unsigned_abs();
    // Written backwards: `decimals` fraction digits, '.', then at least one integer
    // digit. 20 integer digits hold u64::MAX, plus 18 fraction digits and the point.
    let mut digits = [0u8; 40];
    let mut n = 0;
    for _ in 0..decimals {
        digits[n] = b'0' + (magnitude % 10) as u8;
        magnitude /= 10;
        n += 1;
    }
    if decimals > 0 {
        digits[n] = b'.';
        n += 1;
    }
    loop {
        digits[n] = b'0' + (magnitude % 10) as u8;
        magnitude /= 10;
        n += 1;
        if magnitude == 0 {
            break;
        }
    }
    out.extend(digits[..n].iter().rev());
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
        // Wider than i64: sums and products (PnL in price x qty units).
        let wide = i128::from(i64::MAX) * 1_000;
        assert_eq!(format_scaled(wide, 4), "922337203685477580.7000");
        assert_eq!(format_scaled(-wide, 0), "-9223372036854775807000");
        assert_eq!(format_scaled(i128::MIN, 38).len(), 1 + 1 + 1 + 38);
    }

    #[test]
    fn writes_like_format() {
        for (units, d) in [
            (15005, 2),
            (-5, 3),
            (42, 0),
            (0, 0),
            (0, 2),
            (7, 1),
            (i64::MIN, 4),
            (i64::MAX, 18),
        ] {
            let mut out = Vec::new();
            write_scaled(units, d, &mut out);
            assert_eq!(
                String::from_utf8(out).unwrap(),
                format_scaled(units, d),
                "{units} {d}"
            );
        }
    }

    proptest! {
        #[test]
        fn prop_write_scaled_equals_format_scaled(v in any::<i64>(), d in 0u32..=18) {
            let mut out = Vec::new();
            write_scaled(v, d, &mut out);
            prop_assert_eq!(String::from_utf8(out).unwrap(), format_scaled(v, d));
        }

        #[test]
        fn prop_format_parse_round_trip(v in any::<i64>().prop_filter("not MIN", |v| *v != i64::MIN), d in 0u32..=8) {
            prop_assert_eq!(parse_scaled(&format_scaled(v, d), d), Ok(v));
        }
    }
}
