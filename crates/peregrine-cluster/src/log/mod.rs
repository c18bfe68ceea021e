//! The Raft log on `peregrine-journal`: record payloads, the durable journal +
//! snapshot store and its recovery, the in-memory view raft-rs reads, and the sync
//! thread that makes the journal durable off the node's thread.

pub mod cache;
pub mod durable;
pub mod offline;
pub mod records;
pub mod snapshot;
pub mod sync;

pub use cache::LogCache;
pub use durable::{DurableLog, LogOptions, Recovered, SnapshotDone, SnapshotWrite};
pub use offline::{replay_offline, OfflineReplay};
pub use snapshot::{SnapshotData, SnapshotFile};
pub use sync::Syncer;
