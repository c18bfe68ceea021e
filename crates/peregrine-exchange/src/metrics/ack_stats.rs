//! The order→ack stages ([`crate::metrics::ack`]) as the hub holds them.

use peregrine_exchange_core::telemetry::LogHistogram;

/// The stages, in order (`total` last).
pub(crate) const STAGES: [&str; 9] = [
    "decode", "queue", "append", "match", "encode", "batch", "durable", "write", "total",
];

/// Stage histograms as published (power-of-two buckets, like every latency metric).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct AckStats {
    /// By [`STAGES`] index.
    pub stages: [LogHistogram; 9],
}
