//! The client side of the feed's TCP recovery service, blocking: a book snapshot, or
//! a replay of a range of feed messages. Both drive a [`Fetch`] (the non-blocking
//! state machine the subscriber polls) to completion. Both follow a cluster's
//! `RecoveryRedirect`s to the leader (at most [`MAX_REDIRECTS`] in a row).

use std::net::SocketAddr;

use peregrine_types::InstrumentId;
use peregrine_wire::md::MdMessage;

use crate::error::ClientError;
use crate::md::fetch::{Fetch, Fetched};
use crate::order_entry::resolve_leader;

pub use crate::md::fetch::Snapshot;

/// Fetches one instrument's book from the recovery service (at most
/// [`crate::md::fetch::FETCH_TIMEOUT`]).
pub fn snapshot(addr: SocketAddr, instrument: InstrumentId) -> Result<Snapshot, ClientError> {
    match following(addr, |a| Fetch::snapshot(a, instrument))? {
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
    match following(addr, |a| Fetch::replay(a, session_id, first, count))? {
        Fetched::Replay(r) => Ok(r),
        Fetched::Snapshot(_) => Err(ClientError::Unexpected("a snapshot".into())),
    }
}

/// Redirects followed in a row, at most (two nodes briefly naming each other during a
/// leader change cannot make a fetch spin): as for order entry.
pub const MAX_REDIRECTS: usize = crate::order_entry::MAX_HOPS_PER_ROUND;

/// The leader address a redirect names, if it resolves.
fn redirect_target(e: &ClientError) -> Option<SocketAddr> {
    match e {
        ClientError::Redirected {
            address: Some(a), ..
        } => resolve_leader(a),
        _ => None,
    }
}

/// Runs the fetch `start` makes at `addr`, following redirects.
fn following(
    mut addr: SocketAddr,
    start: impl Fn(SocketAddr) -> Result<Fetch, ClientError>,
) -> Result<Fetched, ClientError> {
    let mut hops = 0;
    loop {
        match start(addr).and_then(Fetch::wait) {
            Err(e) if hops < MAX_REDIRECTS => match redirect_target(&e) {
                Some(to) => {
                    hops += 1;
                    addr = to;
                }
                None => return Err(e),
            },
            r => return r,
        }
    }
}
