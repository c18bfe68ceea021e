//! The client side of the feed's TCP recovery service, blocking: a book snapshot, or
//! a replay of a range of feed messages. Both drive a [`Fetch`] (the non-blocking
//! state machine the subscriber polls) to completion. Both take the service's
//! address, or every node's of a cluster: the nodes are tried in turn and a
//! `RecoveryRedirect` to the leader is followed.

use std::net::SocketAddr;

use peregrine_types::InstrumentId;
use peregrine_wire::md::MdMessage;

use crate::error::ClientError;
use crate::md::fetch::{Fetch, Fetched};
use crate::order_entry::{LeaderWalk, Next};

pub use crate::md::fetch::Snapshot;

/// Fetches one instrument's book from the recovery service (at most
/// [`crate::md::fetch::FETCH_TIMEOUT`]).
pub fn snapshot(addrs: &[SocketAddr], instrument: InstrumentId) -> Result<Snapshot, ClientError> {
    match on_any(addrs, |a| Fetch::snapshot(a, instrument))? {
        Fetched::Snapshot(s) => Ok(s),
        Fetched::Replay(_) => Err(ClientError::Unexpected("a replay".into())),
    }
}

/// Fetches feed messages `first..first + count` from the recovery service, in
/// order, asking again while each answer is partial. `Ok(None)` when the service no
/// longer retains (part of) the range.
pub fn replay(
    addrs: &[SocketAddr],
    session_id: u64,
    first: u64,
    count: u64,
) -> Result<Option<Vec<(u64, MdMessage)>>, ClientError> {
    match on_any(addrs, |a| Fetch::replay(a, session_id, first, count))? {
        Fetched::Replay(r) => Ok(r),
        Fetched::Snapshot(_) => Err(ClientError::Unexpected("a snapshot".into())),
    }
}

/// Runs the fetch `start` makes at each of `addrs` in turn (one round of a
/// [`LeaderWalk`]: a redirect to the leader is followed at once, at most
/// [`crate::order_entry::MAX_HOPS_PER_ROUND`] of them) until one answers; the last
/// error otherwise.
fn on_any(
    addrs: &[SocketAddr],
    start: impl Fn(SocketAddr) -> Result<Fetch, ClientError>,
) -> Result<Fetched, ClientError> {
    let mut walk = LeaderWalk::new(addrs.to_vec());
    let mut last = ClientError::Invalid("no recovery address".into());
    while let Next::Try(a) = walk.next() {
        match start(a).and_then(Fetch::wait) {
            Ok(done) => return Ok(done),
            Err(e) => {
                walk.failed(&e);
                last = e;
            }
        }
    }
    Err(last)
}
