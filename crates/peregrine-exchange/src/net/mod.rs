//! The network side: the session table (listener, sessions, routing of reports),
//! each session's protocol and socket, and the polling loops of both topologies
//! ([`compact`]: one thread; [`split`]: ingestion and matching threads joined by
//! `peregrine_queue::spsc` rings).

pub mod admission;
pub mod compact;
pub mod credentials;
pub mod report;
pub mod session;
pub mod split;
pub mod table;

/// Iterations between housekeeping polls (accept, recovery service, feed
/// heartbeat, telemetry).
pub const HOUSEKEEPING_EVERY: u64 = 64;
