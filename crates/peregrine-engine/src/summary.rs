//! The engine's numbers as a struct, for programs (`peregrine up`) rather than people:
//! the types are the orchestrator core's ([`peregrine_orchestrator::summary`]); here
//! is the client that asks a running engine for them.

use std::path::Path;
use std::time::Duration;

pub use peregrine_orchestrator::summary::*;

/// Asks the engine at `socket` for its latest summary.
pub fn fetch(socket: &Path, timeout: Duration) -> Result<EngineSummary, SummaryError> {
    let reply = crate::control::request(socket, "summary", timeout)?;
    parse(&reply)
}
