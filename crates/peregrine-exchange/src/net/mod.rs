//! The network side: the session table (listener, sessions, routing of reports),
//! each session's protocol and socket, and the polling loops of both topologies
//! ([`compact`]: one thread; [`split`]: ingestion and matching threads joined by
//! `peregrine_queue::spsc` rings).

pub(crate) mod admission;
pub(crate) mod compact;
pub(crate) mod credentials;
pub(crate) mod report;
pub(crate) mod session;
pub(crate) mod split;
pub(crate) mod table;

/// Iterations between housekeeping polls (accept, recovery service, feed
/// heartbeat, telemetry).
pub(crate) const HOUSEKEEPING_EVERY: u64 = 64;
