//! Wall-clock timestamps as UTC text (RFC 3339, millisecond precision), for logs an
//! operator compares across machines: `2026-11-27T14:03:09.125Z`.

use core::fmt;

/// Nanoseconds since the Unix epoch, shown as UTC (`Display`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Utc(pub u64);

impl Utc {
    /// The wall clock now ([`crate::wall_ns`]).
    pub fn now() -> Utc {
        Utc(crate::wall_ns())
    }
}

/// The proleptic Gregorian date of a day number since 1970-01-01 (Howard Hinnant's
/// `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

impl fmt::Display for Utc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const DAY_S: u64 = 86_400;
        let secs = self.0 / 1_000_000_000;
        let ms = (self.0 % 1_000_000_000) / 1_000_000;
        let (y, mo, d) = civil_from_days((secs / DAY_S) as i64);
        let s = secs % DAY_S;
        write!(
            f,
            "{y:04}-{mo:02}-{d:02}T{:02}:{:02}:{:02}.{ms:03}Z",
            s / 3_600,
            s % 3_600 / 60,
            s % 60
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_instants() {
        assert_eq!(Utc(0).to_string(), "1970-01-01T00:00:00.000Z");
        // 2000-02-29 (a leap day of a century leap year) 12:34:56.789.
        assert_eq!(
            Utc(951_827_696_789_000_000).to_string(),
            "2000-02-29T12:34:56.789Z"
        );
        // 2026-11-27T00:00:00Z, a day boundary.
        assert_eq!(
            Utc(1_795_737_600_000_000_000).to_string(),
            "2026-11-27T00:00:00.000Z"
        );
        assert_eq!(Utc(u64::MAX).to_string().len(), 24);
    }

    #[test]
    fn every_day_number_maps_to_a_valid_date_in_order() {
        let mut last = (1969, 12, 31);
        for day in 0..200_000 {
            let (y, m, d) = civil_from_days(day);
            assert!((1..=12).contains(&m) && (1..=31).contains(&d));
            assert!((y, m, d) > last, "day {day}");
            last = (y, m, d);
        }
    }
}
