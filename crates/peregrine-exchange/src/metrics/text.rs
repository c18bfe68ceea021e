//! The Prometheus text exposition format (version 0.0.4), written by hand: a metric
//! family is a `# HELP` and a `# TYPE` line followed by its samples, one per line,
//! `name{label="value",...} value`.
//!
//! Values are written from integers exactly: counts as integers, durations as
//! seconds with up to nine decimals (`0.000000064` for 64 ns), prices as decimals
//! with the instrument's decimals ([`Decimal`]). No floating point anywhere.

use std::fmt::{self, Display, Write};

use peregrine_exchange_core::telemetry::LogHistogram;

/// The `Content-Type` of this format.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// A metric family's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Only goes up (reset on restart); the name ends in `_total`.
    Counter,
    /// Any value.
    Gauge,
    /// Cumulative `_bucket{le=...}` series, `_sum` and `_count`.
    Histogram,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Kind::Counter => "counter",
            Kind::Gauge => "gauge",
            Kind::Histogram => "histogram",
        }
    }
}

/// An exact decimal: `units / 10^decimals` (a price or quantity in its instrument's
/// units), displayed without floating point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decimal {
    /// Value in the smallest unit.
    pub units: i64,
    /// Digits after the point (at most 18).
    pub decimals: u32,
}

impl Display for Decimal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scale = 10u64.pow(self.decimals.min(18));
        let sign = if self.units < 0 { "-" } else { "" };
        let abs = self.units.unsigned_abs();
        let (int, frac) = (abs / scale, abs % scale);
        if self.decimals == 0 || frac == 0 {
            return write!(f, "{sign}{int}");
        }
        let width = self.decimals.min(18) as usize;
        let digits = format!("{frac:0width$}");
        write!(f, "{sign}{int}.{}", digits.trim_end_matches('0'))
    }
}

/// Nanoseconds displayed as seconds, exactly (`1500` → `0.0000015`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seconds(pub u64);

impl Display for Seconds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = Decimal {
            units: i64::try_from(self.0).unwrap_or(i64::MAX),
            decimals: 9,
        };
        d.fmt(f)
    }
}

/// Writes the exposition text.
#[derive(Debug, Default)]
pub struct TextEncoder {
    out: String,
}

impl TextEncoder {
    /// An empty document.
    pub fn new() -> Self {
        TextEncoder::default()
    }

    /// Starts a family: its `# HELP` and `# TYPE` lines. All its samples must follow
    /// before the next family starts.
    pub fn family(&mut self, name: &str, kind: Kind, help: &str) {
        self.out.push_str("# HELP ");
        self.out.push_str(name);
        self.out.push(' ');
        escape_into(&mut self.out, help, false);
        self.out.push_str("\n# TYPE ");
        self.out.push_str(name);
        self.out.push(' ');
        self.out.push_str(kind.as_str());
        self.out.push('\n');
    }

    /// One sample line.
    pub fn sample(&mut self, name: &str, labels: &[(&str, &str)], value: impl Display) {
        self.out.push_str(name);
        self.labels(labels, None);
        // Writing to a String cannot fail.
        let _ = writeln!(self.out, " {value}");
    }

    /// A family with one sample: HELP, TYPE and the value.
    pub fn single(&mut self, name: &str, kind: Kind, help: &str, value: impl Display) {
        self.family(name, kind, help);
        self.sample(name, &[], value);
    }

    /// The samples of one histogram series (after its [`TextEncoder::family`] line):
    /// cumulative `_bucket` lines for `le = 2^e` ns for every `e` in `exps` (in
    /// seconds), `+Inf`, then `_sum` (seconds) and `_count`.
    pub fn histogram(
        &mut self,
        name: &str,
        labels: &[(&str, &str)],
        h: &LogHistogram,
        exps: std::ops::RangeInclusive<u32>,
    ) {
        for e in exps {
            let le = Seconds(1u64.checked_shl(e).unwrap_or(u64::MAX)).to_string();
            self.bucket(name, labels, &le, h.cumulative(e));
        }
        self.bucket(name, labels, "+Inf", h.count);
        self.out.push_str(name);
        self.out.push_str("_sum");
        self.labels(labels, None);
        let _ = writeln!(self.out, " {}", Seconds(h.sum_ns));
        self.out.push_str(name);
        self.out.push_str("_count");
        self.labels(labels, None);
        let _ = writeln!(self.out, " {}", h.count);
    }

    fn bucket(&mut self, name: &str, labels: &[(&str, &str)], le: &str, count: u64) {
        self.out.push_str(name);
        self.out.push_str("_bucket");
        self.labels(labels, Some(le));
        let _ = writeln!(self.out, " {count}");
    }

    fn labels(&mut self, labels: &[(&str, &str)], le: Option<&str>) {
        if labels.is_empty() && le.is_none() {
            return;
        }
        self.out.push('{');
        let mut first = true;
        let all = labels.iter().copied().chain(le.map(|v| ("le", v)));
        for (k, v) in all {
            if !first {
                self.out.push(',');
            }
            first = false;
            self.out.push_str(k);
            self.out.push_str("=\"");
            escape_into(&mut self.out, v, true);
            self.out.push('"');
        }
        self.out.push('}');
    }

    /// The document.
    pub fn finish(self) -> String {
        self.out
    }
}

/// Escapes `\` and newline (and `"` in label values) as the format requires.
fn escape_into(out: &mut String, text: &str, quote: bool) {
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '"' if quote => out.push_str("\\\""),
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_registry_renders_exactly() {
        let mut e = TextEncoder::new();
        e.single(
            "peregrine_exchange_trades_total",
            Kind::Counter,
            "Fills.",
            7u64,
        );
        e.family(
            "peregrine_exchange_rejects_total",
            Kind::Counter,
            "Rejects.",
        );
        e.sample(
            "peregrine_exchange_rejects_total",
            &[("reason", "invalid_qty"), ("code", "1")],
            2u64,
        );
        e.sample(
            "peregrine_exchange_rejects_total",
            &[("reason", "book_full"), ("code", "13")],
            0u64,
        );
        e.single("g", Kind::Gauge, "Signed.", -3i64);
        let want = "\
# HELP peregrine_exchange_trades_total Fills.
# TYPE peregrine_exchange_trades_total counter
peregrine_exchange_trades_total 7
# HELP peregrine_exchange_rejects_total Rejects.
# TYPE peregrine_exchange_rejects_total counter
peregrine_exchange_rejects_total{reason=\"invalid_qty\",code=\"1\"} 2
peregrine_exchange_rejects_total{reason=\"book_full\",code=\"13\"} 0
# HELP g Signed.
# TYPE g gauge
g -3
";
        assert_eq!(e.finish(), want);
    }

    #[test]
    fn histogram_buckets_are_cumulative_in_seconds() {
        let mut h = LogHistogram::default();
        for v in [50, 64, 65, 100, 1000, 5_000_000_000] {
            h.record(v);
        }
        let mut e = TextEncoder::new();
        e.family("lat_seconds", Kind::Histogram, "Latency.");
        e.histogram("lat_seconds", &[("cmd", "new")], &h, 6..=8);
        let want = "\
# HELP lat_seconds Latency.
# TYPE lat_seconds histogram
lat_seconds_bucket{cmd=\"new\",le=\"0.000000064\"} 2
lat_seconds_bucket{cmd=\"new\",le=\"0.000000128\"} 4
lat_seconds_bucket{cmd=\"new\",le=\"0.000000256\"} 4
lat_seconds_bucket{cmd=\"new\",le=\"+Inf\"} 6
lat_seconds_sum{cmd=\"new\"} 5.000001279
lat_seconds_count{cmd=\"new\"} 6
";
        assert_eq!(e.finish(), want);
    }

    #[test]
    fn label_values_and_help_are_escaped() {
        let mut e = TextEncoder::new();
        e.family("m", Kind::Gauge, "a \\ back\nslash \"quoted\"");
        e.sample("m", &[("instrument", "A\"B\\C\nD")], 1u64);
        let want = "\
# HELP m a \\\\ back\\nslash \"quoted\"
# TYPE m gauge
m{instrument=\"A\\\"B\\\\C\\nD\"} 1
";
        assert_eq!(e.finish(), want);
    }

    #[test]
    fn decimals_and_seconds_are_exact() {
        let d = |units, decimals| Decimal { units, decimals }.to_string();
        assert_eq!(d(10_005, 2), "100.05");
        assert_eq!(d(10_000, 2), "100");
        assert_eq!(d(10_050, 2), "100.5");
        assert_eq!(d(7, 3), "0.007");
        assert_eq!(d(-7, 3), "-0.007");
        assert_eq!(d(42, 0), "42");
        assert_eq!(d(i64::MIN, 18), "-9.223372036854775808");
        assert_eq!(Seconds(0).to_string(), "0");
        assert_eq!(Seconds(1_500).to_string(), "0.0000015");
        assert_eq!(Seconds(1 << 30).to_string(), "1.073741824");
        assert_eq!(Seconds(u64::MAX).to_string(), "9223372036.854775807");
    }
}
