//! The `[backpressure]` section: when the exchange refuses requests `busy` instead of
//! queueing them (docs/exchange.md and docs/cluster.md, "Overload").

use serde::{Deserialize, Serialize};

/// Limits on the commands executed and not yet durable (on a cluster: not yet
/// replicated to a majority). Past either limit, new orders and replaces are
/// answered `Rejected` with reason `busy` (19) at once, nothing entered; cancels and
/// mass cancels only past twice the limit. 0 turns a limit off.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BackpressureConfig {
    /// Commands executed and waiting for their sync (replication), at most.
    /// Default 100,000.
    pub max_in_flight: u64,
    /// Milliseconds the oldest of them may wait. Default 100: an exchange that cannot
    /// make its results durable within 100 ms says so instead of letting clients
    /// wait for their own timeouts.
    pub max_delay_ms: u64,
}

impl Default for BackpressureConfig {
    fn default() -> Self {
        BackpressureConfig {
            max_in_flight: 100_000,
            max_delay_ms: 100,
        }
    }
}
