//! The Raft node: driver (ready handling, apply, snapshots), options, membership,
//! status.

pub mod driver;
mod logger;
pub mod membership;
pub mod options;
pub mod status;

pub use driver::{Event, Node, SnapshotRunner};
pub use membership::MembershipChange;
pub use options::NodeOptions;
pub use status::{hex, PeerProgress, Role, Status};
