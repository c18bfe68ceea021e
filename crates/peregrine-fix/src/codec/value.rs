//! Field values: integers, decimals, chars and booleans, parsed from and written to
//! bytes without allocating. Decimals are exact (`peregrine_types::decimal`).

use peregrine_types::decimal::{self, DecimalError};

/// A FIX `int`/`SeqNum`/`Length` without sign: 1 to 20 ASCII digits. `None` on
/// anything else or on overflow.
pub fn parse_u64(v: &[u8]) -> Option<u64> {
    if v.is_empty() || v.len() > 20 {
        return None;
    }
    let mut n: u64 = 0;
    for &b in v {
        if !b.is_ascii_digit() {
            return None;
        }
        n = n.checked_mul(10)?.checked_add(u64::from(b - b'0'))?;
    }
    Some(n)
}

/// A FIX `int` with an optional leading '-'.
pub fn parse_i64(v: &[u8]) -> Option<i64> {
    match v.split_first() {
        Some((b'-', rest)) => {
            let m = parse_u64(rest)?;
            0i64.checked_sub_unsigned(m)
        }
        _ => i64::try_from(parse_u64(v)?).ok(),
    }
}

/// A FIX `Price`/`Qty`/`float` as an exact count of `10^-decimals` units.
pub fn parse_decimal(v: &[u8], decimals: u32) -> Result<i64, DecimalError> {
    // FIX floats are ASCII digits, one '.', a leading '-': anything else is refused
    // by `parse_scaled`; a non-UTF-8 byte is refused here.
    let text = core::str::from_utf8(v).map_err(|_| DecimalError::InvalidChar('\u{FFFD}'))?;
    if text.trim().len() != text.len() {
        return Err(DecimalError::InvalidChar(' '));
    }
    decimal::parse_scaled(text, decimals)
}

/// A single-character field.
pub fn parse_char(v: &[u8]) -> Option<u8> {
    match v {
        [c] => Some(*c),
        _ => None,
    }
}

/// A FIX `Boolean`: `Y` or `N`.
pub fn parse_bool(v: &[u8]) -> Option<bool> {
    match v {
        b"Y" => Some(true),
        b"N" => Some(false),
        _ => None,
    }
}

/// Appends `n` in decimal.
pub fn write_u64(out: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
}

/// Appends `n` in decimal with a leading '-' when negative.
pub fn write_i64(out: &mut Vec<u8>, n: i64) {
    if n < 0 {
        out.push(b'-');
    }
    write_u64(out, n.unsigned_abs());
}

/// Appends `units` of `10^-decimals` as an exact decimal.
pub fn write_decimal(out: &mut Vec<u8>, units: i64, decimals: u32) {
    decimal::write_scaled(units, decimals, out);
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn integers() {
        assert_eq!(parse_u64(b"0"), Some(0));
        assert_eq!(parse_u64(b"007"), Some(7));
        assert_eq!(parse_u64(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_u64(b"18446744073709551616"), None);
        assert_eq!(parse_u64(b""), None);
        assert_eq!(parse_u64(b"-1"), None);
        assert_eq!(parse_u64(b"1 "), None);
        assert_eq!(parse_i64(b"-5"), Some(-5));
        assert_eq!(parse_i64(b"-9223372036854775808"), Some(i64::MIN));
        assert_eq!(parse_i64(b"9223372036854775808"), None);
        assert_eq!(parse_i64(b"-"), None);
    }

    #[test]
    fn decimals_are_exact() {
        assert_eq!(parse_decimal(b"100.25", 2), Ok(10025));
        assert_eq!(parse_decimal(b"100.250", 2), Ok(10025));
        assert!(parse_decimal(b"100.255", 2).is_err());
        assert!(parse_decimal(b" 1", 2).is_err());
        assert!(parse_decimal(b"1e3", 2).is_err());
        assert!(parse_decimal(&[0xFF], 2).is_err());
        let mut out = Vec::new();
        write_decimal(&mut out, 10025, 2);
        assert_eq!(out, b"100.25");
    }

    proptest! {
        #[test]
        fn prop_integers_round_trip(n in any::<i64>()) {
            let mut out = Vec::new();
            write_i64(&mut out, n);
            prop_assert_eq!(parse_i64(&out), Some(n));
        }
    }
}
