//! The feed's recovery service: book snapshots and replays of missed feed messages,
//! blocking (called from the feed thread and from the history writer's resume, off
//! the async runtime), through `peregrine_client::md::recovery`, which also follows
//! a cluster's redirects to the leader's service and walks several addresses (a
//! cluster's nodes) until one answers.

use std::net::SocketAddr;

use peregrine_client::md::recovery as client;
use peregrine_client::ClientError;
use peregrine_types::{InstrumentId, Side};
use peregrine_wire::md::MdMessage;

use super::{FeedEvent, FeedPos};

/// A book from the recovery service.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// Feed session the sequence number belongs to.
    pub session: u64,
    /// Includes every feed message up to this one.
    pub as_of: u64,
    /// Bids, best first.
    pub bids: Vec<(i64, i64)>,
    /// Asks, best first.
    pub asks: Vec<(i64, i64)>,
}

/// Why recovery failed.
#[derive(Debug, thiserror::Error)]
pub enum RecoveryError {
    /// Socket trouble, a refusal or a bad answer.
    #[error("recovery service: {0}")]
    Client(#[from] ClientError),
}

/// Fetches one instrument's book.
pub fn snapshot(addrs: &[SocketAddr], instrument: InstrumentId) -> Result<Snapshot, RecoveryError> {
    let s = client::snapshot(addrs, instrument)?;
    Ok(Snapshot {
        session: s.session_id,
        as_of: s.as_of_seq,
        bids: s.book.levels(Side::Buy),
        asks: s.book.levels(Side::Sell),
    })
}

/// Converts a feed message; `None` for messages the gateway does not use.
pub fn to_event(m: &MdMessage) -> Option<FeedEvent> {
    match *m {
        MdMessage::Trade(t) => Some(FeedEvent::Trade {
            instrument: t.instrument,
            trade_id: t.trade_id,
            price: t.price.units(),
            qty: t.qty.lots(),
            aggressor: t.aggressor_side,
            time_ns: t.engine_time.0,
        }),
        MdMessage::L2Update(u) => Some(FeedEvent::Level {
            instrument: u.instrument,
            side: u.side,
            price: u.price.units(),
            qty: u.qty.lots(),
            time_ns: u.engine_time.0,
        }),
        // The venue's phases and indicative uncross (protocol version 3) are not
        // shown by the gateway yet.
        MdMessage::Commitment(_) | MdMessage::MarketStatus(_) | MdMessage::AuctionIndicative(_) => {
            None
        }
    }
}

/// Fetches feed messages `first..end` of `session`, in order. `Ok(None)` when the
/// service no longer holds (part of) the range (or serves another session).
pub fn replay(
    addrs: &[SocketAddr],
    session: u64,
    first: u64,
    end: u64,
) -> Result<Option<Vec<(FeedPos, FeedEvent)>>, RecoveryError> {
    if end <= first {
        return Ok(Some(Vec::new()));
    }
    let count = end.saturating_sub(first);
    let Some(msgs) = client::replay(addrs, session, first, count)? else {
        return Ok(None);
    };
    Ok(Some(
        msgs.iter()
            .filter_map(|(seq, m)| Some((FeedPos { session, seq: *seq }, to_event(m)?)))
            .collect(),
    ))
}
