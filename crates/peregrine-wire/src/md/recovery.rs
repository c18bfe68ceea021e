//! The recovery channel: a TCP request/response service beside the feed.
//!
//! Framing is the order-entry framing (8-byte header, fixed sizes per type,
//! [`Recovery::decode`] over the byte stream). Two services:
//!
//! * **Replay**: [`ReplayRequest`] names a feed session, a first sequence number and a
//!   count. The server answers [`ReplayResponse`] with the count it will actually send
//!   (fewer if the range is not retained; 0 with a reason code if none), then exactly
//!   that many feed messages (`Trade`, `L2Update`, `Commitment`) in sequence
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

pub use crate::v2::reference::{InstrumentDefinition, InstrumentList, InstrumentListRequest};

include!(concat!(env!("OUT_DIR"), "/msg_md__recovery.rs"));
include!(concat!(env!("OUT_DIR"), "/family_md__recovery.rs"));

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replay_stream_decodes_in_order() {
        let mut buf = [0u8; 256];
        let at = |name: &str| {
            Recovery::MESSAGES
                .iter()
                .position(|d| d.name == name)
                .expect("a recovery message")
        };
        let msgs = [
            Recovery::sample(at("ReplayResponse"), &[9, 100, 2, 0]),
            Recovery::sample(at("Trade"), &[3]),
            Recovery::sample(at("L2Update"), &[4]),
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
