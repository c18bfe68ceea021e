//! Result tables: percentiles from an HDR histogram, printed and as JSON.

use hdrhistogram::Histogram;
use serde::Serialize;

/// One measured distribution (ns).
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// What.
    pub name: String,
    /// Samples.
    pub n: u64,
    /// Median.
    pub p50: u64,
    /// 90th percentile.
    pub p90: u64,
    /// 99th.
    pub p99: u64,
    /// 99.9th.
    pub p999: u64,
    /// Largest.
    pub max: u64,
    /// Throughput achieved, per second.
    pub per_sec: f64,
}

impl Row {
    /// The same row under another name.
    pub fn named(mut self, name: impl Into<String>) -> Row {
        self.name = name.into();
        self
    }

    /// From a histogram over `secs` seconds.
    pub fn from_hist(name: impl Into<String>, h: &Histogram<u64>, secs: f64) -> Row {
        Row {
            name: name.into(),
            n: h.len(),
            p50: h.value_at_quantile(0.5),
            p90: h.value_at_quantile(0.9),
            p99: h.value_at_quantile(0.99),
            p999: h.value_at_quantile(0.999),
            max: h.max(),
            per_sec: h.len() as f64 / secs.max(1e-9),
        }
    }
}

/// A titled table of rows, with notes (errors, losses).
#[derive(Debug, Clone, Serialize)]
pub struct Table {
    /// Title.
    pub title: String,
    /// Rows.
    pub rows: Vec<Row>,
    /// Notes.
    pub notes: Vec<String>,
}

/// A histogram of 1 ns .. 60 s, 3 significant digits.
pub fn hist() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 60_000_000_000, 3).expect("valid bounds")
}

fn us(ns: u64) -> String {
    format!("{:.1}", ns as f64 / 1000.0)
}

impl std::fmt::Display for Table {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "{}", self.title)?;
        writeln!(
            f,
            "  {:<44} {:>8} {:>9} {:>9} {:>9} {:>9} {:>10} {:>10}",
            "(µs)", "n", "p50", "p90", "p99", "p99.9", "max", "per s"
        )?;
        for r in &self.rows {
            writeln!(
                f,
                "  {:<44} {:>8} {:>9} {:>9} {:>9} {:>9} {:>10} {:>10.0}",
                r.name,
                r.n,
                us(r.p50),
                us(r.p90),
                us(r.p99),
                us(r.p999),
                us(r.max),
                r.per_sec
            )?;
        }
        for n in &self.notes {
            writeln!(f, "  note: {n}")?;
        }
        Ok(())
    }
}
