//! Snapshot store: atomic, CRC-checked snapshot files with retention.

mod format;
mod prune;
mod store;

pub use format::{SnapshotDefect, SNAPSHOT_HEADER_LEN, SNAPSHOT_VERSION};
pub use prune::{prune_segments, prune_segments_in};
pub use store::{
    LatestSnapshot, SkippedSnapshot, Snapshot, SnapshotConfig, SnapshotError, SnapshotStore,
    SnapshotWritten,
};
