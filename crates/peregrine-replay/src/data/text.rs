//! Field parsing shared by the text formats: comma-separated fields, integers,
//! exact decimals ([`peregrine_types::decimal`]), and seconds with a fraction.

use peregrine_types::decimal::parse_scaled;

/// The fields of one comma-separated line (no quoting: none of the formats quote).
pub fn fields(line: &str) -> std::str::Split<'_, char> {
    line.split(',')
}

/// A signed integer field.
pub fn int(field: Option<&str>, what: &str) -> Result<i64, String> {
    let f = field.ok_or_else(|| format!("missing {what}"))?.trim();
    f.parse::<i64>()
        .map_err(|_| format!("{what} {f:?} is not an integer"))
}

/// A decimal field in units of `10^-decimals`, exactly (a value with more significant
/// decimals is an error, never rounded).
pub fn scaled(field: Option<&str>, decimals: u32, what: &str) -> Result<i64, String> {
    let f = field.ok_or_else(|| format!("missing {what}"))?.trim();
    parse_scaled(f, decimals).map_err(|e| format!("{what} {f:?}: {e}"))
}

/// Seconds with an optional fraction (`"34200.004241176"`) as nanoseconds.
pub fn seconds_ns(field: Option<&str>, what: &str) -> Result<u64, String> {
    let f = field.ok_or_else(|| format!("missing {what}"))?.trim();
    let ns = parse_scaled(f, 9).map_err(|e| format!("{what} {f:?}: {e}"))?;
    u64::try_from(ns).map_err(|_| format!("{what} {f:?} is negative"))
}

/// How many significant decimals a decimal number has (`"2683.80000000"` → 1).
pub fn significant_decimals(text: &str) -> u32 {
    match text.trim().split_once('.') {
        Some((_, frac)) => frac.trim_end_matches('0').len() as u32,
        None => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers() {
        assert_eq!(int(Some(" 42"), "x"), Ok(42));
        assert!(int(Some("4x"), "x").is_err());
        assert!(int(None, "x").is_err());
        assert_eq!(scaled(Some("2683.80000000"), 2, "p"), Ok(268_380));
        assert!(scaled(Some("2683.805"), 2, "p").is_err());
        assert_eq!(
            seconds_ns(Some("34200.004241176"), "t"),
            Ok(34_200_004_241_176)
        );
        assert_eq!(seconds_ns(Some("1"), "t"), Ok(1_000_000_000));
        assert!(seconds_ns(Some("-1"), "t").is_err());
        assert!(seconds_ns(Some("1.0000000001"), "t").is_err());
        assert_eq!(significant_decimals("2683.80000000"), 1);
        assert_eq!(significant_decimals("0.00310000"), 4);
        assert_eq!(significant_decimals("18640"), 0);
        assert_eq!(fields("a,b,,c").collect::<Vec<_>>(), ["a", "b", "", "c"]);
    }
}
