//! Round-trip property tests: for every message type, `decode(encode(m)) == m`, the
//! encoding has the declared size, every proper prefix asks for more bytes, and a
//! too-small buffer is refused. Plus a TCP-stream test that reassembles random message
//! sequences from random chunkings.

use peregrine_wire::md::recovery::{
    Recovery, ReplayRequest, ReplayResponse, SnapshotEnd, SnapshotHeader, SnapshotLevel,
    SnapshotRequest,
};
use peregrine_wire::md::{Commitment, L2Update, MdMessage, Trade};
use peregrine_wire::orders::{Cancel, MassCancel, NewOrder, Replace};
use peregrine_wire::reports::{Accepted, CancelRejected, Cancelled, Fill, Rejected, Replaced};
use peregrine_wire::session::{
    ClientHeartbeat, Login, LoginAccepted, LoginRejected, Logout, ServerHeartbeat,
};
use peregrine_wire::{
    DecodeError, EncodeError, Inbound, Message, Outbound, WireMessage, MAX_MESSAGE_SIZE,
};
use proptest::collection::vec;
use proptest::prelude::*;

type FamilyDecode<F> = fn(&[u8]) -> Result<(F, usize), DecodeError>;

fn check<M, F>(seeds: &[u64], tail: &[u8], family: FamilyDecode<F>) -> Result<(), TestCaseError>
where
    M: WireMessage + Into<F> + PartialEq + core::fmt::Debug,
    F: PartialEq + core::fmt::Debug,
{
    let m = M::sample(seeds);
    let mut buf = [0u8; MAX_MESSAGE_SIZE + 32];
    let n = m
        .encode(&mut buf)
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(n, M::SIZE);
    buf[n..n + tail.len()].copy_from_slice(tail);
    let stream = &buf[..n + tail.len()];
    prop_assert_eq!(M::decode(stream), Ok((m, n)));
    prop_assert_eq!(family(stream), Ok((m.into(), n)));
    for p in 0..n {
        prop_assert!(
            M::decode(&buf[..p]).unwrap_err().is_incomplete(),
            "prefix {}",
            p
        );
    }
    let too_small = EncodeError::BufferTooSmall {
        needed: n,
        available: n - 1,
    };
    prop_assert_eq!(m.encode(&mut buf[..n - 1]), Err(too_small));
    Ok(())
}

macro_rules! round_trip {
    ($($test:ident: $ty:ty => $fam:ty;)*) => {
        proptest! {
            $(
                #[test]
                fn $test(seeds in vec(any::<u64>(), 1..16), tail in vec(any::<u8>(), 0..24)) {
                    check::<$ty, $fam>(&seeds, &tail, <$fam>::decode)?;
                }
            )*
        }
    };
}

round_trip! {
    prop_round_trip_login: Login => Inbound;
    prop_round_trip_logout: Logout => Inbound;
    prop_round_trip_client_heartbeat: ClientHeartbeat => Inbound;
    prop_round_trip_new_order: NewOrder => Inbound;
    prop_round_trip_cancel: Cancel => Inbound;
    prop_round_trip_replace: Replace => Inbound;
    prop_round_trip_mass_cancel: MassCancel => Inbound;
    prop_round_trip_login_accepted: LoginAccepted => Outbound;
    prop_round_trip_login_rejected: LoginRejected => Outbound;
    prop_round_trip_server_heartbeat: ServerHeartbeat => Outbound;
    prop_round_trip_accepted: Accepted => Outbound;
    prop_round_trip_rejected: Rejected => Outbound;
    prop_round_trip_fill: Fill => Outbound;
    prop_round_trip_cancelled: Cancelled => Outbound;
    prop_round_trip_replaced: Replaced => Outbound;
    prop_round_trip_cancel_rejected: CancelRejected => Outbound;
    prop_round_trip_trade: Trade => MdMessage;
    prop_round_trip_l2_update: L2Update => MdMessage;
    prop_round_trip_commitment: Commitment => MdMessage;
    prop_round_trip_replay_request: ReplayRequest => Recovery;
    prop_round_trip_replay_response: ReplayResponse => Recovery;
    prop_round_trip_snapshot_request: SnapshotRequest => Recovery;
    prop_round_trip_snapshot_header: SnapshotHeader => Recovery;
    prop_round_trip_snapshot_level: SnapshotLevel => Recovery;
    prop_round_trip_snapshot_end: SnapshotEnd => Recovery;
}

/// Feeds `wire` to a stream decoder in chunks of the given sizes, through a fixed
/// receive buffer, the way a TCP reader would; returns the decoded messages.
fn reassemble(wire: &[u8], chunks: &[usize]) -> Result<Vec<Message>, DecodeError> {
    let mut rx = [0u8; 4 * MAX_MESSAGE_SIZE];
    let (mut filled, mut sent, mut out) = (0, 0, Vec::new());
    let mut sizes = chunks.iter().cycle();
    while sent < wire.len() {
        let n = (*sizes.next().unwrap_or(&1))
            .min(wire.len() - sent)
            .min(rx.len() - filled);
        rx[filled..filled + n].copy_from_slice(&wire[sent..sent + n]);
        (filled, sent) = (filled + n, sent + n);
        loop {
            match Message::decode(&rx[..filled]) {
                Ok((m, used)) => {
                    out.push(m);
                    rx.copy_within(used..filled, 0);
                    filled -= used;
                }
                Err(e) if e.is_incomplete() => break,
                Err(e) => return Err(e),
            }
        }
    }
    assert_eq!(filled, 0, "no bytes left over");
    Ok(out)
}

proptest! {
    #[test]
    fn prop_stream_reassembles_any_chunking(
        picks in vec((any::<usize>(), vec(any::<u64>(), 1..12)), 0..40),
        chunks in vec(1usize..200, 1..8),
    ) {
        let msgs: Vec<Message> = picks.iter().map(|(i, s)| Message::sample(*i, s)).collect();
        let mut wire = vec![0u8; msgs.len() * MAX_MESSAGE_SIZE];
        let mut len = 0;
        for m in &msgs {
            len += m.encode(&mut wire[len..]).unwrap();
        }
        prop_assert_eq!(reassemble(&wire[..len], &chunks), Ok(msgs));
    }
}
