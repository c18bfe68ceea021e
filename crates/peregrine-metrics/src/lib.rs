//! Peregrine's metrics endpoint, one implementation for the exchange and the engine.
//!
//! * `families`: metric families built from plain values at scrape time (the
//!   components' threads publish plain-field copies; nothing on the order path is
//!   atomic for metrics), encoded by `prometheus-client`;
//! * `document`: a scrape's whole document, `peregrine_build_info` and the
//!   standard `process_*` families (`process`, from `/proc/self`) included;
//! * `serve`: the `/metrics` and `/health` endpoint on `tiny_http`, its own
//!   thread, no async runtime.
//!
//! The public surface is the re-exports below.

#![deny(unsafe_code)]

mod document;
mod families;
mod process;
mod serve;

pub use document::{document, CONTENT_TYPE, VERSION};
pub use families::{labels, Families, HistogramValue, Kind, Labels};
pub use process::{ProcError, ProcessStats};
pub use serve::{MetricsServer, Render};
