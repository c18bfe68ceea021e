//! The fuzz targets' contract on stable (fuzz/fuzz_targets/fix_decode.rs,
//! fix_framer_stream.rs and fix_store_scan.rs run it under libFuzzer): no input
//! makes the codec, the application decoders, the session or the store scanner
//! panic, and what they report stays inside the input; and in a stream of good
//! and garbled messages read in chunks of any size, every good message is
//! delivered, in order (`support/stream.rs`).

#[path = "support/stream.rs"]
mod stream;

use peregrine_fix::app::{
    ExecutionReportView, ListCancelRequest, NewOrderList, NewOrderSingle,
    OrderCancelReplaceRequest, OrderCancelRequest, OrderMassCancelRequest, OrderStatusRequest,
};
use peregrine_fix::codec::{frame, Encoder, Frame, FrameLimits, Message, Precision};
use peregrine_fix::session::{Received, Role, Session, SessionConfig};
use peregrine_fix::store::{scan, MemoryStore};
use proptest::prelude::*;

const T0: u64 = 1_700_000_000_000_000_000;

fn run_all(data: &[u8]) {
    let limits = FrameLimits { max_body: 1024 };
    let mut at = 0;
    while at < data.len() {
        match frame(&data[at..], limits) {
            Some(Frame::Message { len }) => {
                assert!(len <= limits.max_message());
                if let Ok(m) = Message::parse(&data[at..at + len]) {
                    let _ = NewOrderSingle::decode(&m);
                    let _ = OrderCancelRequest::decode(&m);
                    let _ = OrderCancelReplaceRequest::decode(&m);
                    let _ = OrderMassCancelRequest::decode(&m);
                    let _ = OrderStatusRequest::decode(&m);
                    let _ = ExecutionReportView::decode(&m);
                    let _ = NewOrderList::decode(&m);
                    let _ = ListCancelRequest::decode(&m);
                }
                at += len;
            }
            Some(Frame::Garbled { len, .. }) => at += len,
            None => break,
        }
    }
    let mut config = SessionConfig::new(Role::Acceptor, "PGN", "CLIENT");
    config.limits = limits;
    config.max_clock_skew_ns = u64::MAX;
    let mut s = Session::new(config, MemoryStore::new(T0));
    s.connect(T0).unwrap();
    let mut at = 0;
    let mut now = T0;
    while at < data.len() {
        match s.receive(&data[at..], now).unwrap() {
            Received::NeedMore => break,
            Received::Consumed { len, .. } => {
                assert!(len > 0 && at + len <= data.len());
                at += len;
            }
        }
        now += 1_000_000_000;
        s.poll(now).unwrap();
        let n = s.outbound().unwrap().len();
        s.consume_outbound(n);
    }
    if let Ok(sc) = scan(data) {
        assert_eq!(sc.valid_len + sc.torn_bytes, data.len() as u64);
    }
}

/// A valid logon then an order, for mutation.
fn valid_stream() -> Vec<u8> {
    let mut out = Vec::new();
    let mut enc = Encoder::default();
    let mut w = enc.start(b"A");
    w.bytes(49, b"CLIENT")
        .bytes(56, b"PGN")
        .uint(34, 1)
        .timestamp(52, T0, Precision::Millis);
    w.uint(98, 0).uint(108, 30);
    out.extend_from_slice(w.seal());
    let mut w = enc.start(b"D");
    w.bytes(49, b"CLIENT")
        .bytes(56, b"PGN")
        .uint(34, 2)
        .timestamp(52, T0, Precision::Millis);
    w.bytes(11, b"o1")
        .bytes(55, b"PGN-USD")
        .char(54, b'1')
        .decimal(38, 5, 0)
        .char(40, b'2')
        .decimal(44, 10025, 2);
    w.timestamp(60, T0, Precision::Millis);
    out.extend_from_slice(w.seal());
    out
}

#[test]
fn the_seed_corpus_runs_clean() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds");
    let mut n = 0;
    for target in ["fix_decode", "fix_store_scan"] {
        for entry in std::fs::read_dir(dir.join(target)).unwrap() {
            run_all(&std::fs::read(entry.unwrap().path()).unwrap());
            n += 1;
        }
    }
    assert!(n >= 8);
}

/// Each kind of garble, on its own between two good messages, read whole and one
/// byte at a time.
#[test]
fn every_kind_of_garble_lets_the_next_message_through() {
    for pick in 5..16u8 {
        for k in 0..8u8 {
            let (s, expected) = stream::build(&[0, 3, pick, 20, k, 0, 0]);
            for chunks in [&[usize::MAX][..], &[1], &[3, 11, 64]] {
                let (delivered, _) = stream::deliver(&s, chunks);
                assert_eq!(delivered, expected, "pick {pick} k {k} chunks {chunks:?}");
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    /// The demand: a stream of good and garbled messages, every good
    /// message after a garbled one delivered (but the one a too-long BodyLength
    /// claims), whatever sizes the reads come in.
    #[test]
    fn prop_every_good_message_after_a_garbled_one_is_delivered(
        choices in proptest::collection::vec(any::<u8>(), 0..120),
        chunks in proptest::collection::vec(1usize..300, 1..8),
    ) {
        let (s, expected) = stream::build(&choices);
        let (delivered, _) = stream::deliver(&s, &chunks);
        prop_assert_eq!(delivered, expected);
    }

    #[test]
    fn prop_random_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..600)) {
        run_all(&data);
    }

    #[test]
    fn prop_mutated_messages_never_panic(
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
        cut in any::<prop::sample::Index>(),
    ) {
        let mut data = valid_stream();
        for (at, byte) in edits {
            let i = at.index(data.len());
            data[i] = byte;
        }
        let keep = cut.index(data.len() + 1);
        data.truncate(keep.max(data.len() / 2));
        run_all(&data);
    }
}
