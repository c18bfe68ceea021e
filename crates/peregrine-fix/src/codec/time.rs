//! FIX `UTCTimestamp` (`YYYYMMDD-HH:MM:SS[.fff[fff[fff]]]`) to and from nanoseconds
//! since the Unix epoch, with civil-date arithmetic on integers (no clock is read
//! here: the caller passes time in).

const NANOS_PER_SEC: u64 = 1_000_000_000;
const SECS_PER_DAY: u64 = 86_400;

/// How many fraction digits a written timestamp has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Precision {
    /// Seconds.
    Seconds,
    /// Milliseconds (what every FIX 4.4 engine reads).
    #[default]
    Millis,
    /// Microseconds.
    Micros,
    /// Nanoseconds.
    Nanos,
}

impl Precision {
    const fn digits(self) -> u32 {
        match self {
            Precision::Seconds => 0,
            Precision::Millis => 3,
            Precision::Micros => 6,
            Precision::Nanos => 9,
        }
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    // Shift the year to start in March so the leap day is the year's last day.
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let year_of_era = y - era * 400;
    let m = i64::from(month);
    let day_of_year = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The civil date of a day count since 1970-01-01: (year, month, day).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let mp = (5 * day_of_year + 2) / 153;
    let day = (day_of_year - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

fn digits(v: &[u8]) -> Option<u32> {
    v.iter().try_fold(0u32, |acc, &b| {
        b.is_ascii_digit().then(|| acc * 10 + u32::from(b - b'0'))
    })
}

/// Parses a `UTCTimestamp` into nanoseconds since the Unix epoch. Years 1970 to 2554
/// (what a u64 of nanoseconds holds);
/// a leap second (`:60`) is read as `:59.999999999`. `None` if malformed.
pub fn parse_utc_timestamp(v: &[u8]) -> Option<u64> {
    if v.len() < 17 || v[8] != b'-' || v[11] != b':' || v[14] != b':' {
        return None;
    }
    let year = digits(&v[0..4])?;
    let month = digits(&v[4..6])?;
    let day = digits(&v[6..8])?;
    let hour = digits(&v[9..11])?;
    let minute = digits(&v[12..14])?;
    let mut second = digits(&v[15..17])?;
    let mut nanos = 0u64;
    if v.len() > 17 {
        let frac = &v[18..];
        if v[17] != b'.' || frac.is_empty() || frac.len() > 9 {
            return None;
        }
        nanos = u64::from(digits(frac)?) * 10u64.pow(9 - frac.len() as u32);
    }
    let days_in_month = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        _ => return None,
    };
    if year < 1970 || day == 0 || day > days_in_month || hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    if second == 60 {
        second = 59;
        nanos = NANOS_PER_SEC - 1;
    }
    let days = days_from_civil(i64::from(year), month, day) as u64;
    let secs =
        days * SECS_PER_DAY + u64::from(hour) * 3600 + u64::from(minute) * 60 + u64::from(second);
    secs.checked_mul(NANOS_PER_SEC)?.checked_add(nanos)
}

/// Whether [`parse_utc_timestamp`] reads `v`, without computing the time (the
/// dictionary's format check): the same fields and ranges; a year from 2554, where
/// the nanoseconds may not fit a u64, is decided by the parse itself.
pub(crate) fn is_utc_timestamp(v: &[u8]) -> bool {
    if v.len() < 17 || v[8] != b'-' || v[11] != b':' || v[14] != b':' {
        return false;
    }
    let (Some(year), Some(month), Some(day)) =
        (digits(&v[0..4]), digits(&v[4..6]), digits(&v[6..8]))
    else {
        return false;
    };
    let (Some(hour), Some(minute), Some(second)) =
        (digits(&v[9..11]), digits(&v[12..14]), digits(&v[15..17]))
    else {
        return false;
    };
    if v.len() > 17 {
        let frac = &v[18..];
        if v[17] != b'.' || frac.is_empty() || frac.len() > 9 || digits(frac).is_none() {
            return false;
        }
    }
    let days_in_month = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        _ => return false,
    };
    if year < 1970 || day == 0 || day > days_in_month || hour > 23 || minute > 59 || second > 60 {
        return false;
    }
    year < 2554 || parse_utc_timestamp(v).is_some()
}

/// Appends `ns` (since the Unix epoch) as a `UTCTimestamp` of the given precision
/// (truncated, never rounded up).
pub fn write_utc_timestamp(out: &mut Vec<u8>, ns: u64, precision: Precision) {
    let secs = ns / NANOS_PER_SEC;
    let (year, month, day) = civil_from_days((secs / SECS_PER_DAY) as i64);
    let tod = secs % SECS_PER_DAY;
    let mut buf = [0u8; 27];
    let put = |buf: &mut [u8], at: usize, v: u64, width: usize| {
        let mut v = v;
        for i in (0..width).rev() {
            buf[at + i] = b'0' + (v % 10) as u8;
            v /= 10;
        }
    };
    put(&mut buf, 0, year as u64, 4);
    put(&mut buf, 4, u64::from(month), 2);
    put(&mut buf, 6, u64::from(day), 2);
    buf[8] = b'-';
    put(&mut buf, 9, tod / 3600, 2);
    buf[11] = b':';
    put(&mut buf, 12, tod / 60 % 60, 2);
    buf[14] = b':';
    put(&mut buf, 15, tod % 60, 2);
    let d = precision.digits() as usize;
    let mut len = 17;
    if d > 0 {
        buf[17] = b'.';
        let frac = (ns % NANOS_PER_SEC) / 10u64.pow(9 - d as u32);
        put(&mut buf, 18, frac, d);
        len = 18 + d;
    }
    out.extend_from_slice(&buf[..len]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn known_dates() {
        assert_eq!(parse_utc_timestamp(b"19700101-00:00:00"), Some(0));
        assert_eq!(
            parse_utc_timestamp(b"20240229-12:34:56.789"),
            Some(1_709_210_096_789_000_000)
        );
        let mut out = Vec::new();
        write_utc_timestamp(&mut out, 1_709_210_096_789_123_456, Precision::Nanos);
        assert_eq!(out, b"20240229-12:34:56.789123456");
        out.clear();
        write_utc_timestamp(&mut out, 1_709_210_096_789_123_456, Precision::Millis);
        assert_eq!(out, b"20240229-12:34:56.789");
        out.clear();
        write_utc_timestamp(&mut out, 1_709_210_096_789_123_456, Precision::Seconds);
        assert_eq!(out, b"20240229-12:34:56");
    }

    #[test]
    fn malformed_timestamps_are_refused() {
        for bad in [
            &b"20240230-00:00:00"[..],
            b"20230229-00:00:00",
            b"20241301-00:00:00",
            b"20240101-24:00:00",
            b"20240101-00:60:00",
            b"20240101 00:00:00",
            b"20240101-00:00:00.",
            b"20240101-00:00:00.1234567890",
            b"20240101-00:00:0x",
            b"19691231-23:59:59",
            b"2024",
            b"99991231-23:59:59",
        ] {
            assert_eq!(
                parse_utc_timestamp(bad),
                None,
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
        assert!(parse_utc_timestamp(b"20161231-23:59:60").is_some());
    }

    proptest! {
        #[test]
        fn prop_timestamps_round_trip(ns in 0u64..16_725_225_600_000_000_000) {
            let mut out = Vec::new();
            write_utc_timestamp(&mut out, ns, Precision::Nanos);
            prop_assert_eq!(parse_utc_timestamp(&out), Some(ns));
        }

        /// The dictionary's shape check reads exactly what the parse reads: drawn
        /// near the format (any digits in each place, years to 9999, both sides of
        /// the u64 limit in 2554, fractions of 0 to 10 digits, stray characters).
        #[test]
        fn prop_the_format_check_accepts_what_the_parse_reads(
            y in prop_oneof![Just("2554".to_string()), Just("2553".to_string()), "[0-9]{4}", "19[6-9][0-9]|20[0-9]{2}"],
            mo in "[0-9]{2}|0[1-9]|1[0-2]", d in "[0-9]{2}|[0-2][0-9]|3[01]",
            h in "[0-9]{2}|[01][0-9]|2[0-3]", mi in "[0-9]{2}|[0-5][0-9]", s in "[0-9]{2}|[0-5][0-9]|60",
            sep in prop_oneof![8 => Just("-:.".to_string()), 1 => "[-:. x]{3}"],
            frac in "|[0-9]{0,10}|[0-9x]{1,3}",
        ) {
            let sep = sep.as_bytes();
            let dot = if frac.is_empty() { String::new() } else { format!("{}{frac}", sep[2] as char) };
            let v = format!("{y}{mo}{d}{}{h}{}{mi}{}{s}{dot}", sep[0] as char, sep[1] as char, sep[1] as char);
            prop_assert_eq!(is_utc_timestamp(v.as_bytes()), parse_utc_timestamp(v.as_bytes()).is_some(), "{}", v);
        }

        #[test]
        fn prop_the_format_check_agrees_on_any_bytes(v in proptest::collection::vec(any::<u8>(), 0..30)) {
            prop_assert_eq!(is_utc_timestamp(&v), parse_utc_timestamp(&v).is_some());
        }
    }
}
