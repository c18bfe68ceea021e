use bytes::Bytes;
use proptest::prelude::*;
use raft::eraftpb::{ConfState, Entry, Message, Snapshot, SnapshotMetadata};

use super::*;
use crate::error::FrameError;
use crate::wire::frame::{decode_stream, encode_frame, FrameReader, Hello, HELLO_LEN};

fn arb_entry() -> impl Strategy<Value = Entry> {
    (
        0u8..3,
        any::<u64>(),
        any::<u64>(),
        proptest::collection::vec(any::<u8>(), 0..64),
        proptest::collection::vec(any::<u8>(), 0..16),
        any::<bool>(),
    )
        .prop_map(|(t, term, index, data, ctx, sync_log)| Entry {
            entry_type: entry_type_from(t).unwrap(),
            term,
            index,
            data: data.into(),
            context: ctx.into(),
            sync_log,
            ..Default::default()
        })
}

fn arb_snapshot() -> impl Strategy<Value = Snapshot> {
    (
        any::<u64>(),
        any::<u64>(),
        proptest::collection::vec(any::<u64>(), 0..5),
        proptest::collection::vec(any::<u64>(), 0..3),
        proptest::collection::vec(any::<u64>(), 0..3),
        proptest::collection::vec(any::<u64>(), 0..3),
        any::<bool>(),
        proptest::collection::vec(any::<u8>(), 0..200),
    )
        .prop_map(|(index, term, v, l, vo, ln, auto_leave, data)| {
            let mut meta = SnapshotMetadata {
                index,
                term,
                ..Default::default()
            };
            meta.set_conf_state(ConfState {
                voters: v,
                learners: l,
                voters_outgoing: vo,
                learners_next: ln,
                auto_leave,
                ..Default::default()
            });
            let mut s = Snapshot {
                data: data.into(),
                ..Default::default()
            };
            s.set_metadata(meta);
            s
        })
}

prop_compose! {
    fn arb_message()(
        t in 0u8..19,
        ids in proptest::array::uniform11(any::<u64>()),
        priority in any::<i64>(),
        reject in any::<bool>(),
        context in proptest::collection::vec(any::<u8>(), 0..16),
        entries in proptest::collection::vec(arb_entry(), 0..4),
        snapshot in proptest::option::of(arb_snapshot()),
    ) -> Message {
        let mut m = Message {
            msg_type: msg_type_from(t).unwrap(),
            to: ids[0],
            from: ids[1],
            term: ids[2],
            log_term: ids[3],
            index: ids[4],
            commit: ids[5],
            commit_term: ids[6],
            request_snapshot: ids[7],
            reject_hint: ids[8],
            deprecated_priority: ids[9],
            priority,
            reject,
            context: context.into(),
            ..Default::default()
        };
        m.entries = entries.into();
        if let Some(s) = snapshot {
            m.set_snapshot(s);
        }
        m
    }
}

proptest! {
    #[test]
    fn prop_messages_round_trip(m in arb_message()) {
        let mut out = Vec::new();
        encode(&m, &mut out);
        prop_assert_eq!(out.len(), encoded_len(&m));
        let back = decode(&Bytes::from(out)).unwrap();
        prop_assert_eq!(back, m);
    }

    #[test]
    fn prop_decode_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let _ = decode(&Bytes::from(bytes.clone()));
        let _ = decode_stream(&bytes, 1 << 16);
    }

    #[test]
    fn prop_mutated_messages_never_panic(m in arb_message(), flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..6), cut in any::<usize>()) {
        let mut out = Vec::new();
        encode(&m, &mut out);
        for (at, x) in flips {
            let i = at % out.len();
            out[i] ^= x | 1;
        }
        // Whatever decodes is canonical: it re-encodes to exactly its bytes.
        if let Ok(back) = decode(&Bytes::from(out.clone())) {
            let mut again = Vec::new();
            encode(&back, &mut again);
            prop_assert_eq!(&again, &out);
        }
        out.truncate(cut % (out.len() + 1));
        let _ = decode(&Bytes::from(out));
    }

    #[test]
    fn prop_frames_survive_any_split(ms in proptest::collection::vec(arb_message(), 1..5), cuts in proptest::collection::vec(1usize..97, 1..40)) {
        let hello = Hello { cluster_id: 7, from: 1, to: 2 };
        let mut stream = hello.encode().to_vec();
        for m in &ms {
            encode_frame(m, &mut stream);
        }
        let mut r = FrameReader::new(1 << 20);
        let mut got = Vec::new();
        let mut at = 0;
        let mut hello_seen = None;
        for c in cuts.iter().cycle() {
            if at >= stream.len() { break; }
            let end = (at + c).min(stream.len());
            r.extend(&stream[at..end]);
            at = end;
            if hello_seen.is_none() {
                if let Some(raw) = r.take_raw::<HELLO_LEN>() {
                    hello_seen = Some(Hello::decode(&raw).unwrap());
                }
            }
            if hello_seen.is_some() {
                while let Some(m) = r.next_message().unwrap() {
                    got.push(m);
                }
            }
        }
        prop_assert_eq!(hello_seen, Some(hello));
        prop_assert_eq!(got, ms);
        prop_assert_eq!(r.pending(), 0);
    }
}

#[test]
fn bad_frames_and_hellos_are_typed_errors() {
    let hello = Hello {
        cluster_id: 1,
        from: 3,
        to: 1,
    };
    let m = Message {
        to: 1,
        from: 3,
        ..Default::default()
    };
    let mut stream = hello.encode().to_vec();
    encode_frame(&m, &mut stream);
    assert_eq!(decode_stream(&stream, 1 << 20).unwrap().1, vec![m.clone()]);
    let mut bad = stream.clone();
    let last = bad.len() - 1;
    bad[last] ^= 1;
    assert_eq!(decode_stream(&bad, 1 << 20), Err(FrameError::Checksum));
    assert!(matches!(
        decode_stream(&stream, 10),
        Err(FrameError::TooLarge { .. })
    ));
    let mut bad = stream.clone();
    bad[0] = b'X';
    assert_eq!(
        decode_stream(&bad, 1 << 20),
        Err(FrameError::Hello("magic"))
    );
    let zero_from = Hello { from: 0, ..hello };
    assert_eq!(
        Hello::decode(&zero_from.encode()),
        Err(FrameError::Hello("node id 0"))
    );
}

#[test]
fn a_huge_count_is_refused_before_allocating() {
    let mut out = Vec::new();
    encode(&Message::default(), &mut out);
    out[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
    assert!(matches!(
        decode(&Bytes::from(out)),
        Err(DecodeError::Count {
            what: "entries",
            ..
        })
    ));
}

#[test]
fn the_header_layout_is_pinned() {
    let m = Message {
        to: 0x0102,
        from: 0x0304,
        term: 5,
        ..Default::default()
    };
    let mut out = Vec::new();
    encode(&m, &mut out);
    assert_eq!(out.len(), MESSAGE_HEADER_LEN);
    assert_eq!(out[0], VERSION);
    assert_eq!(&out[8..16], &0x0102u64.to_le_bytes());
    assert_eq!(&out[16..24], &0x0304u64.to_le_bytes());
    assert_eq!(&out[24..32], &5u64.to_le_bytes());
}
