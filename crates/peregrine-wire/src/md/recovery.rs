//! The recovery channel: a TCP request/response service beside the feed.
//!
//! Framing is the order-entry framing (8-byte header, fixed sizes per type,
//! [`Recovery::decode`] over the byte stream). Two services:
//!
//! * **Replay**: [`ReplayRequest`] names a feed session, a first sequence number and a
//!   count. The server answers [`ReplayResponse`] with the count it will actually send
//!   (fewer if the range is not retained; 0 with a reason code if none), then exactly
//!   that many feed messages ([`Trade`], [`L2Update`], [`Commitment`]) in sequence
//!   order, unchanged.
//! * **Snapshot**: [`SnapshotRequest`] names an instrument. The server answers
//!   [`SnapshotHeader`], `level_count` [`SnapshotLevel`]s (bids best first, then asks
//!   best first), and [`SnapshotEnd`]. The snapshot reflects every feed message up to and
//!   including `as_of_seq`: apply buffered feed messages with a higher sequence number.
//! * **Reference data** (version 2): [`InstrumentListRequest`] is answered by
//!   [`InstrumentList`] (the count) and that many [`InstrumentDefinition`]s.
//!
//! A cluster node that does not lead answers any request with one
//! [`RecoveryRedirect`] (version 2) naming the leader's recovery address, then closes.

use peregrine_types::{InstrumentId, Price, Qty, Side, Timestamp};

use crate::field::{LeaderAddress, Pad, ReasonCode};
use crate::md::{Commitment, L2Update, Trade};
use crate::message::{wire_family, wire_message};
pub use crate::v2::reference::{InstrumentDefinition, InstrumentList, InstrumentListRequest};

wire_message! {
    /// Subscriber → recovery server. Resend a range of feed messages.
    ReplayRequest = 0x50;
    /// Feed session id, from the packet header.
    session_id: u64,
    /// Sequence number of the first message wanted.
    first_seq: u64,
    /// Number of messages wanted.
    count: u16,
}

wire_message! {
    /// Recovery server → subscriber. Answers a replay request; `count` feed messages
    /// follow it.
    ReplayResponse = 0x51;
    /// Feed session id, as requested.
    session_id: u64,
    /// Sequence number of the first message that follows.
    first_seq: u64,
    /// Number of feed messages that follow (may be less than requested; 0 if none).
    count: u16,
    /// 0 if the whole range follows, else an exchange-defined reason code.
    reason: ReasonCode,
}

wire_message! {
    /// Subscriber → recovery server. Send the current book of one instrument.
    SnapshotRequest = 0x52;
    /// Subscriber's id for the request, echoed in the answer.
    request_id: u64,
    /// Instrument wanted.
    instrument: InstrumentId,
}

wire_message! {
    /// Recovery server → subscriber. Starts a snapshot; `level_count` levels follow.
    SnapshotHeader = 0x53;
    /// The request's id.
    request_id: u64,
    /// Feed session id the sequence numbers refer to.
    session_id: u64,
    /// The snapshot includes every feed message up to and including this sequence
    /// number.
    as_of_seq: u64,
    /// Engine time of the snapshot, nanoseconds since the Unix epoch.
    engine_time: Timestamp,
    /// Instrument.
    instrument: InstrumentId,
    /// Number of `SnapshotLevel` messages that follow.
    level_count: u32,
    /// 0 on success, else an exchange-defined reason code (and `level_count` is 0).
    reason: ReasonCode,
}

wire_message! {
    /// Recovery server → subscriber. One price level of a snapshot.
    SnapshotLevel = 0x54;
    /// Level price in price units.
    price: Price,
    /// Total quantity resting at the level.
    qty: Qty,
    /// Number of orders resting at the level.
    order_count: u32,
    /// Book side: 0 Buy (bid), 1 Sell (ask).
    side: Side,
}

wire_message! {
    /// Recovery server → subscriber. Ends a snapshot; repeats the header's key fields
    /// so a subscriber can check it saw the whole snapshot.
    SnapshotEnd = 0x55;
    /// The request's id.
    request_id: u64,
    /// As in the `SnapshotHeader`.
    as_of_seq: u64,
    /// Instrument.
    instrument: InstrumentId,
    /// Number of levels sent.
    level_count: u32,
}

wire_message! {
    /// Recovery server → subscriber, from a cluster node that does not lead (only
    /// the leader serves recovery): where the leader's recovery service is. The node
    /// closes the connection after it; the subscriber asks again there (or, with no
    /// leader known, at another node after `retry_after_ms`).
    RecoveryRedirect = 0x58, version 2;
    /// The leader's node id; 0: no leader known yet.
    leader_id: u64,
    /// Milliseconds to wait before trying again when no leader is known; 0 otherwise.
    retry_after_ms: u32,
    /// Must be zero.
    reserved: Pad<4>,
    /// The leader's recovery address, ASCII `host:port` padded with zero bytes (all
    /// zeros when no leader, or no address for it, is known).
    address: LeaderAddress,
}

wire_family! {
    /// A message on the recovery channel, either direction, including replayed feed
    /// messages.
    Recovery {
        ReplayRequest, ReplayResponse, SnapshotRequest, SnapshotHeader, SnapshotLevel,
        SnapshotEnd, Trade, L2Update, Commitment,
        InstrumentListRequest, InstrumentList, InstrumentDefinition, RecoveryRedirect,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replay_stream_decodes_in_order() {
        let mut buf = [0u8; 256];
        let msgs = [
            Recovery::sample(1, &[9, 100, 2, 0]),
            Recovery::sample(6, &[3]),
            Recovery::sample(7, &[4]),
        ];
        let mut len = 0;
        for m in &msgs {
            len += m.encode(&mut buf[len..]).unwrap();
        }
        let mut at = 0;
        for m in &msgs {
            let (got, n) = Recovery::decode(&buf[at..len]).unwrap();
            assert_eq!(&got, m);
            at += n;
        }
        assert_eq!(at, len);
        assert!(Recovery::decode(&buf[at..len]).unwrap_err().is_incomplete());
    }
}
