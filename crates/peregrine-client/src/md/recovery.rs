//! The client side of the feed's TCP recovery service, blocking: a book snapshot, or
//! a replay of a range of feed messages. Both drive a [`Fetch`] (the non-blocking
//! state machine the subscriber polls) to completion.

use std::net::SocketAddr;

use peregrine_types::InstrumentId;
use peregrine_wire::md::MdMessage;

use crate::error::ClientError;
use crate::md::fetch::{Fetch, Fetched};

pub use crate::md::fetch::Snapshot;

/// Fetches one instrument's book from the recovery service (at most
/// [`crate::md::fetch::FETCH_TIMEOUT`]).
pub fn snapshot(addr: SocketAddr, instrument: InstrumentId) -> Result<Snapshot, ClientError> {
    match Fetch::snapshot(addr, instrument)?.wait()? {
        Fetched::Snapshot(s) => Ok(s),
        Fetched::Replay(_) => Err(ClientError::Unexpected("a replay".into())),
    }
}

/// Fetches feed messages `first..first + count` from the recovery service, in
/// order, asking again while each answer is partial. `Ok(None)` when the service no
/// longer retains (part of) the range.
pub fn replay(
    addr: SocketAddr,
    session_id: u64,
    first: u64,
    count: u64,
) -> Result<Option<Vec<(u64, MdMessage)>>, ClientError> {
    match Fetch::replay(addr, session_id, first, count)?.wait()? {
        Fetched::Replay(r) => Ok(r),
        Fetched::Snapshot(_) => Err(ClientError::Unexpected("a snapshot".into())),
    }
}
