//! The mapping without sockets: FIX requests in, native requests out; native reports
//! in, FIX reports out.

use std::sync::Arc;

use peregrine_fix::codec::{frame, Encoder, Fields, Frame, FrameLimits, Message, Precision};
use peregrine_fix::session::{Received, Role, Session, SessionConfig};
use peregrine_fix::store::{Durability, FileStore};
use peregrine_types::{InstrumentId, OrderId, Price, Qty, Side, Timestamp};
use peregrine_wire::reports::{Accepted, CancelRejected, Fill, Rejected};
use peregrine_wire::{Inbound, Outbound, ReasonCode, RequestKind};

use super::Bridge;
use crate::config::InstrumentConfig;

const T0: u64 = 1_700_000_000_000_000_000;

struct Harness {
    bridge: Bridge,
    enc: Encoder,
    seq: u64,
    _dir: tempfile::TempDir,
}

impl Harness {
    fn new() -> Harness {
        let dir = tempfile::tempdir().unwrap();
        let store = FileStore::open(&dir.path().join("s"), Durability::OsBuffer, T0).unwrap();
        let session = Session::new(SessionConfig::new(Role::Acceptor, "PEREGRINE", "C1"), store);
        let instruments: Arc<[InstrumentConfig]> = vec![InstrumentConfig {
            symbol: "PGN-USD".into(),
            id: 7,
            price_decimals: 2,
            qty_decimals: 1,
        }]
        .into();
        let mut h = Harness {
            bridge: Bridge::new(session, instruments, 1000),
            enc: Encoder::default(),
            seq: 1,
            _dir: dir,
        };
        h.bridge.session.connect(T0).unwrap();
        let logon = h.msg("A", &[(98, "0"), (108, "30")]);
        h.feed(&logon);
        h.out();
        h.bridge.native_ready = true;
        h
    }

    fn msg(&mut self, t: &str, fields: &[(u32, &str)]) -> Vec<u8> {
        let mut w = self.enc.start(t.as_bytes());
        w.bytes(49, b"C1")
            .bytes(56, b"PEREGRINE")
            .uint(34, self.seq)
            .timestamp(52, T0, Precision::Millis);
        self.seq += 1;
        for (tag, v) in fields {
            w.bytes(*tag, v.as_bytes());
        }
        w.seal().to_vec()
    }

    fn feed(&mut self, raw: &[u8]) {
        if let Received::Consumed {
            event: Some(peregrine_fix::session::Event::App(m)),
            ..
        } = self.bridge.session.receive(raw, T0).unwrap()
        {
            self.bridge.on_fix_app(&m, T0).unwrap();
        }
    }

    /// FIX messages the bridge sent, as (MsgType, fields).
    fn out(&mut self) -> Vec<(String, Vec<(u32, String)>)> {
        let bytes = self.bridge.session.outbound().unwrap().to_vec();
        self.bridge.session.consume_outbound(bytes.len());
        let mut out = Vec::new();
        let mut at = 0;
        while let Ok(Some(Frame::Message { len })) = frame(&bytes[at..], FrameLimits::default()) {
            let m = Message::parse(&bytes[at..at + len]).unwrap();
            let fields = Fields::new(m.body())
                .flatten()
                .map(|f| (f.tag, String::from_utf8_lossy(f.value).into_owned()))
                .collect();
            out.push((String::from_utf8_lossy(m.msg_type()).into_owned(), fields));
            at += len;
        }
        out
    }

    /// Native requests the bridge queued.
    fn native(&mut self) -> Vec<Inbound> {
        let bytes = std::mem::take(&mut self.bridge.native_out);
        let mut out = Vec::new();
        let mut at = 0;
        while at < bytes.len() {
            let (m, n) = Inbound::decode(&bytes[at..]).unwrap();
            out.push(m);
            at += n;
        }
        out
    }
}

fn get(fields: &[(u32, String)], tag: u32) -> Option<&str> {
    fields
        .iter()
        .find(|(t, _)| *t == tag)
        .map(|(_, v)| v.as_str())
}

#[test]
fn a_limit_order_maps_both_ways_with_exact_decimals() {
    let mut h = Harness::new();
    let d = h.msg(
        "D",
        &[
            (11, "o1"),
            (55, "PGN-USD"),
            (54, "2"),
            (38, "2.5"),
            (40, "2"),
            (44, "100.25"),
            (60, "20231114-22:13:20"),
        ],
    );
    h.feed(&d);
    let native = h.native();
    let [Inbound::NewOrder(n)] = native.as_slice() else {
        panic!("{native:?}")
    };
    assert_eq!(
        (n.qty.lots(), n.price.units(), n.instrument, n.side),
        (25, 10025, InstrumentId(7), Side::Sell)
    );
    let cl = n.client_order_id;
    h.bridge
        .on_native(
            &Outbound::Accepted(Accepted {
                session_seq: 2,
                engine_seq: 1,
                engine_time: Timestamp(T0),
                order_id: OrderId(42),
                client_order_id: cl,
                price: n.price,
                qty: n.qty,
                expire_at: Timestamp(0),
                instrument: InstrumentId(7),
                side: Side::Sell,
                order_type: n.order_type,
                tif: n.tif,
                stp: n.stp,
            }),
            T0,
        )
        .unwrap();
    h.bridge
        .on_native(
            &Outbound::Fill(Fill {
                session_seq: 3,
                engine_seq: 2,
                engine_time: Timestamp(T0),
                order_id: OrderId(42),
                client_order_id: cl,
                trade_id: 9,
                price: Price::from_raw(10030),
                qty: Qty::from_raw(10),
                leaves_qty: Qty::from_raw(15),
                instrument: InstrumentId(7),
                side: Side::Sell,
                role: peregrine_wire::LiquidityRole::Maker,
            }),
            T0,
        )
        .unwrap();
    let out = h.out();
    assert_eq!(out.len(), 2);
    let (new, fill) = (&out[0].1, &out[1].1);
    assert_eq!(
        (
            get(new, 150),
            get(new, 39),
            get(new, 37),
            get(new, 38),
            get(new, 44)
        ),
        (
            Some("0"),
            Some("0"),
            Some("42"),
            Some("2.5"),
            Some("100.25")
        )
    );
    assert_eq!(
        (
            get(fill, 150),
            get(fill, 39),
            get(fill, 31),
            get(fill, 32),
            get(fill, 14),
            get(fill, 151),
            get(fill, 6)
        ),
        (
            Some("F"),
            Some("1"),
            Some("100.30"),
            Some("1.0"),
            Some("1.0"),
            Some("1.5"),
            Some("100.30")
        )
    );
}

#[test]
fn refusals_are_answered_with_their_reasons() {
    let mut h = Harness::new();
    let unknown = h.msg(
        "D",
        &[
            (11, "u"),
            (55, "NOPE"),
            (54, "1"),
            (38, "1"),
            (40, "2"),
            (44, "1"),
            (60, "20231114-22:13:20"),
        ],
    );
    h.feed(&unknown);
    let too_precise = h.msg(
        "D",
        &[
            (11, "p"),
            (55, "PGN-USD"),
            (54, "1"),
            (38, "1"),
            (40, "2"),
            (44, "1.001"),
            (60, "20231114-22:13:20"),
        ],
    );
    h.feed(&too_precise);
    let stop = h.msg(
        "D",
        &[
            (11, "s"),
            (55, "PGN-USD"),
            (54, "1"),
            (38, "1"),
            (40, "3"),
            (44, "1"),
            (60, "20231114-22:13:20"),
        ],
    );
    h.feed(&stop);
    let missing = h.msg(
        "D",
        &[
            (55, "PGN-USD"),
            (54, "1"),
            (38, "1"),
            (40, "2"),
            (44, "1"),
            (60, "20231114-22:13:20"),
        ],
    );
    h.feed(&missing);
    let cancel = h.msg(
        "F",
        &[
            (41, "nope"),
            (11, "c"),
            (55, "PGN-USD"),
            (54, "1"),
            (60, "20231114-22:13:20"),
        ],
    );
    h.feed(&cancel);
    let news = h.msg("B", &[(148, "hello")]);
    h.feed(&news);
    assert!(h.native().is_empty(), "nothing reached the exchange");
    let out = h.out();
    let summary: Vec<(&str, Option<&str>)> = out
        .iter()
        .map(|(t, f)| {
            (
                t.as_str(),
                get(f, 103).or(get(f, 373)).or(get(f, 102)).or(get(f, 380)),
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            ("8", Some("1")),  // unknown symbol
            ("8", Some("0")),  // price not in the instrument's precision
            ("8", Some("11")), // OrdType 3 not supported
            ("3", Some("1")),  // ClOrdID missing: session Reject, required tag missing
            ("9", Some("1")),  // cancel of an unknown order
            ("j", Some("3")),  // unsupported message type
        ]
    );
}

#[test]
fn exchange_rejects_and_cancel_rejects_carry_mapped_reasons() {
    let mut h = Harness::new();
    let d = h.msg(
        "D",
        &[
            (11, "o1"),
            (55, "PGN-USD"),
            (54, "1"),
            (38, "1"),
            (40, "2"),
            (44, "200"),
            (60, "20231114-22:13:20"),
        ],
    );
    h.feed(&d);
    let queued = h.native();
    let [Inbound::NewOrder(n)] = queued.as_slice() else {
        panic!()
    };
    h.bridge
        .on_native(
            &Outbound::Rejected(Rejected {
                session_seq: 2,
                engine_seq: 1,
                engine_time: Timestamp(T0),
                client_order_id: n.client_order_id,
                instrument: InstrumentId(7),
                reason: ReasonCode(4),
            }),
            T0,
        )
        .unwrap();
    let out = h.out();
    assert_eq!(
        (get(&out[0].1, 150), get(&out[0].1, 103), get(&out[0].1, 58)),
        (
            Some("8"),
            Some("0"),
            Some("price outside the instrument's band")
        )
    );
    // A cancel refused by the exchange (the order left the book meanwhile).
    let d = h.msg(
        "D",
        &[
            (11, "o2"),
            (55, "PGN-USD"),
            (54, "1"),
            (38, "1"),
            (40, "2"),
            (44, "100"),
            (60, "20231114-22:13:20"),
        ],
    );
    h.feed(&d);
    let queued = h.native();
    let [Inbound::NewOrder(n)] = queued.as_slice() else {
        panic!()
    };
    accept(&mut h, n);
    let f = h.msg(
        "F",
        &[
            (41, "o2"),
            (11, "c2"),
            (55, "PGN-USD"),
            (54, "1"),
            (60, "20231114-22:13:20"),
        ],
    );
    h.feed(&f);
    let queued = h.native();
    let [Inbound::Cancel(c)] = queued.as_slice() else {
        panic!()
    };
    assert_eq!(c.order_id, OrderId(43));
    h.bridge
        .on_native(
            &Outbound::CancelRejected(CancelRejected {
                session_seq: 4,
                engine_seq: 3,
                engine_time: Timestamp(T0),
                client_order_id: c.client_order_id,
                order_id: OrderId(43),
                instrument: Some(InstrumentId(7)),
                reason: ReasonCode(10),
                request_kind: RequestKind::Cancel,
            }),
            T0,
        )
        .unwrap();
    let out = h.out();
    let reject = out
        .iter()
        .find(|(t, _)| t == "9")
        .expect("an OrderCancelReject");
    assert_eq!(
        (
            get(&reject.1, 11),
            get(&reject.1, 41),
            get(&reject.1, 102),
            get(&reject.1, 434)
        ),
        (Some("c2"), Some("o2"), Some("1"), Some("1"))
    );
}

fn accept(h: &mut Harness, n: &peregrine_wire::orders::NewOrder) {
    h.bridge
        .on_native(
            &Outbound::Accepted(Accepted {
                session_seq: 2,
                engine_seq: 1,
                engine_time: Timestamp(T0),
                order_id: OrderId(43),
                client_order_id: n.client_order_id,
                price: n.price,
                qty: n.qty,
                expire_at: Timestamp(0),
                instrument: n.instrument,
                side: n.side,
                order_type: n.order_type,
                tif: n.tif,
                stp: n.stp,
            }),
            T0,
        )
        .unwrap();
}
