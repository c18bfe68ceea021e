//! Metrics off the order path: the [`hub::MetricsHub`] the matching stage and the
//! session layer publish into (at most once per interval), the session layer's
//! counters ([`sessions`]), the Prometheus text rendering ([`render`], [`text`]) and
//! the HTTP endpoint serving it ([`http`]).

pub mod ack;
pub mod ack_stats;
pub mod http;
pub mod hub;
pub mod render;
pub mod sessions;
pub mod text;
