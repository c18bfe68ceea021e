//! The Raft log on `peregrine-journal`: record payloads, the durable journal +
//! snapshot store and its recovery, and the in-memory view raft-rs reads.

pub mod cache;
pub mod durable;
pub mod records;
pub mod snapshot;

pub use cache::LogCache;
pub use durable::{DurableLog, LogOptions, Recovered};
pub use snapshot::{SnapshotData, SnapshotFile};
