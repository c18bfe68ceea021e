//! What the matching thread counts and copies for readers, off the order path: its
//! counters and request-latency histograms ([`CoreMetrics`] → [`StatsSlot`]) and the
//! books' top levels ([`DepthPublisher`] → [`DepthSlot`]). Both publish at most once
//! per interval and never wait for a reader.

mod counters;
mod depth;
mod hist;
mod stages;

pub use counters::{
    CoreMetrics, CoreStats, StatsSlot, CANCEL_REASONS, CANCEL_SLOTS, ORDER_TYPES, REJECT_SLOTS,
    REQUEST_KINDS,
};
pub use depth::{BookDepth, DepthLevel, DepthPublisher, DepthSlot, DepthSnapshot};
pub use hist::{Debounce, LogHistogram, BUCKETS};
pub use stages::{Stamps, Stopwatch};
