//! Metrics off the order path: the [`hub::MetricsHub`] the matching stage and the
//! session layer publish into (at most once per interval), the session layer's
//! counters ([`sessions`]) and the families rendered from its copies ([`render`]);
//! `peregrine-metrics` encodes and serves them (`/metrics`, `/health`).

pub(crate) mod ack;
pub(crate) mod ack_stats;
pub(crate) mod hub;
pub(crate) mod render;
pub(crate) mod sessions;
