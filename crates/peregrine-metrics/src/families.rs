//! Metric families built from plain values at scrape time, encoded by
//! `prometheus-client`.
//!
//! The exchange's threads publish plain-field copies (no atomics on the matching
//! thread); the metrics thread reads those copies, fills a [`Families`] and hands it
//! to a `prometheus-client` registry as a [`Collector`], which writes the
//! OpenMetrics text (names, `_total` suffixes, label escaping, number formatting,
//! `# EOF`). Nothing here is updated incrementally: every scrape builds a fresh set.

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric, MetricEncoder};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::MetricType;

/// Label pairs of one sample.
pub type Labels = Vec<(String, String)>;

/// Labels from `(name, value)` pairs.
pub fn labels(pairs: &[(&str, &str)]) -> Labels {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

/// A family's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Only goes up; its samples are written `NAME_total`.
    Counter,
    /// Any value.
    Gauge,
    /// `_bucket{le=...}`, `_sum` and `_count`.
    Histogram,
}

/// A histogram as recorded elsewhere: per-bucket counts by upper bound.
#[derive(Debug, Clone, PartialEq)]
pub struct HistogramValue {
    /// Sum of the observations, in the family's unit.
    pub sum: f64,
    /// Number of observations.
    pub count: u64,
    /// `(upper bound, observations in this bucket alone)`, ascending; the last
    /// bound is `f64::INFINITY`.
    pub buckets: Vec<(f64, u64)>,
}

#[derive(Debug, Clone, PartialEq)]
enum Value {
    Counter(u64),
    CounterFloat(f64),
    GaugeInt(i64),
    GaugeFloat(f64),
    Histogram(HistogramValue),
}

#[derive(Debug, Clone)]
struct Family {
    name: String,
    help: String,
    kind: Kind,
    samples: Vec<(Labels, Value)>,
}

/// Families in the order they were started. Samples go to the family started last.
#[derive(Debug, Clone, Default)]
pub struct Families {
    families: Vec<Family>,
}

impl Families {
    /// No families.
    pub fn new() -> Self {
        Families::default()
    }

    /// Starts a family named `name` (without the registry prefix, and without
    /// `_total` for a counter: the encoder appends it to the samples).
    pub fn family(&mut self, name: &str, kind: Kind, help: &str) {
        self.families.push(Family {
            name: name.to_owned(),
            help: help.to_owned(),
            kind,
            samples: Vec::new(),
        });
    }

    fn push(&mut self, labels: Labels, value: Value) {
        if let Some(f) = self.families.last_mut() {
            f.samples.push((labels, value));
        }
    }

    /// A counter sample of the current family.
    pub fn counter(&mut self, labels: Labels, value: u64) {
        self.push(labels, Value::Counter(value));
    }

    /// A floating-point counter sample of the current family.
    pub fn counter_f64(&mut self, labels: Labels, value: f64) {
        self.push(labels, Value::CounterFloat(value));
    }

    /// An integer gauge sample of the current family.
    pub fn gauge(&mut self, labels: Labels, value: i64) {
        self.push(labels, Value::GaugeInt(value));
    }

    /// A floating-point gauge sample of the current family.
    pub fn gauge_f64(&mut self, labels: Labels, value: f64) {
        self.push(labels, Value::GaugeFloat(value));
    }

    /// A histogram sample of the current family.
    pub fn histogram(&mut self, labels: Labels, value: HistogramValue) {
        self.push(labels, Value::Histogram(value));
    }

    /// A counter family with one unlabelled sample.
    pub fn single_counter(&mut self, name: &str, help: &str, value: u64) {
        self.family(name, Kind::Counter, help);
        self.counter(Labels::new(), value);
    }

    /// A gauge family with one unlabelled sample.
    pub fn single_gauge(&mut self, name: &str, help: &str, value: i64) {
        self.family(name, Kind::Gauge, help);
        self.gauge(Labels::new(), value);
    }

    /// A floating-point gauge family with one unlabelled sample.
    pub fn single_gauge_f64(&mut self, name: &str, help: &str, value: f64) {
        self.family(name, Kind::Gauge, help);
        self.gauge_f64(Labels::new(), value);
    }
}

fn encode_value(value: &Value, encoder: MetricEncoder<'_>) -> Result<(), std::fmt::Error> {
    let mut encoder = encoder;
    match value {
        Value::Counter(v) => ConstCounter::new(*v).encode(encoder),
        Value::CounterFloat(v) => ConstCounter::new(*v).encode(encoder),
        Value::GaugeInt(v) => ConstGauge::new(*v).encode(encoder),
        Value::GaugeFloat(v) => ConstGauge::new(*v).encode(encoder),
        Value::Histogram(h) => encoder.encode_histogram::<Labels>(h.sum, h.count, &h.buckets, None),
    }
}

impl Collector for Families {
    fn encode(&self, mut encoder: DescriptorEncoder<'_>) -> Result<(), std::fmt::Error> {
        for f in &self.families {
            let kind = match f.kind {
                Kind::Counter => MetricType::Counter,
                Kind::Gauge => MetricType::Gauge,
                Kind::Histogram => MetricType::Histogram,
            };
            let family = encoder.encode_descriptor(&f.name, &f.help, None, kind)?;
            match f.samples.as_slice() {
                // One unlabelled sample: encoded on the descriptor itself (a label set,
                // even an empty one, would be written `name{}`).
                [(labels, value)] if labels.is_empty() => encode_value(value, family)?,
                samples => {
                    let mut family = family;
                    for (labels, value) in samples {
                        encode_value(value, family.encode_family(labels)?)?;
                    }
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prometheus_client::registry::Registry;

    fn encode(f: Families) -> String {
        let mut reg = Registry::default();
        reg.sub_registry_with_prefix("peregrine_test")
            .register_collector(Box::new(f));
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &reg).unwrap();
        out
    }

    #[test]
    fn families_encode_as_openmetrics() {
        let mut f = Families::new();
        f.single_counter("trades", "Fills.", 7);
        f.family("rejects", Kind::Counter, "Rejects.");
        f.counter(labels(&[("reason", "invalid_qty"), ("code", "1")]), 2);
        f.single_gauge("g", "Signed.", -3);
        f.family("price", Kind::Gauge, "A \"price\".");
        f.gauge_f64(labels(&[("instrument", "A\"B\\C\nD")]), 99.5);
        f.family("lat_seconds", Kind::Histogram, "Latency.");
        f.histogram(
            labels(&[("cmd", "new")]),
            HistogramValue {
                sum: 5.5,
                count: 6,
                buckets: vec![(6.4e-8, 2), (1.28e-7, 2), (f64::INFINITY, 2)],
            },
        );
        let want = "\
# HELP peregrine_test_trades Fills.
# TYPE peregrine_test_trades counter
peregrine_test_trades_total 7
# HELP peregrine_test_rejects Rejects.
# TYPE peregrine_test_rejects counter
peregrine_test_rejects_total{reason=\"invalid_qty\",code=\"1\"} 2
# HELP peregrine_test_g Signed.
# TYPE peregrine_test_g gauge
peregrine_test_g -3
# HELP peregrine_test_price A \"price\".
# TYPE peregrine_test_price gauge
peregrine_test_price{instrument=\"A\\\"B\\\\C\\nD\"} 99.5
# HELP peregrine_test_lat_seconds Latency.
# TYPE peregrine_test_lat_seconds histogram
peregrine_test_lat_seconds_sum{cmd=\"new\"} 5.5
peregrine_test_lat_seconds_count{cmd=\"new\"} 6
peregrine_test_lat_seconds_bucket{le=\"6.4e-8\",cmd=\"new\"} 2
peregrine_test_lat_seconds_bucket{le=\"1.28e-7\",cmd=\"new\"} 4
peregrine_test_lat_seconds_bucket{le=\"+Inf\",cmd=\"new\"} 6
# EOF
";
        assert_eq!(encode(f), want);
    }
}
