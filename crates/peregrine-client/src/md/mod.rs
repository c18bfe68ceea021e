//! Market data: the L2 [`book`] built from the feed, the recovery service's client
//! ([`recovery`]: snapshots and replays) and the [`subscriber`] that ties them to the
//! UDP feed with gap detection.

pub mod book;
pub mod recovery;
pub mod subscriber;

pub use book::{L2Book, Level};
pub use recovery::{replay, snapshot, Snapshot};
pub use subscriber::{MdEvent, Subscriber, SubscriberConfig};
