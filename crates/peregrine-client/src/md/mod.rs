//! Market data: the L2 [`book`] built from the feed, the recovery service's client
//! ([`fetch`]: a non-blocking request; [`recovery`]: the blocking calls; [`backoff`]:
//! when to try it again after a failure) and the [`subscriber`] that ties them to the
//! UDP feed with gap detection.

pub mod backoff;
pub mod book;
pub mod fetch;
pub mod recovery;
pub mod socket;
pub mod subscriber;

pub use book::{L2Book, Level};
pub use fetch::{Fetch, Fetched, Snapshot};
pub use recovery::{replay, snapshot};
pub use socket::open_feed;
pub use subscriber::{MdEvent, Subscriber, SubscriberConfig};
