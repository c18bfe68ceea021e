//! The mapping without sockets: FIX requests in, native requests out; native reports
//! in, FIX reports out.

use std::sync::Arc;

use peregrine_fix::codec::{frame, Encoder, Fields, Frame, FrameLimits, Message, Precision};
use peregrine_fix::session::{Received, Role, Session, SessionConfig};
use peregrine_fix::store::{Durability, FileStore};
use peregrine_types::{
    AccountId, ClientOrderId, InstrumentId, OrderId, Price, Qty, Side, Timestamp,
};
use peregrine_wire::field::Pad;
use peregrine_wire::v2::reports::{
    Accepted, CancelRejected, Cancelled, Fill, MassCancelDone, Rejected,
};
use peregrine_wire::v2::{Inbound, Outbound};
use peregrine_wire::{ReasonCode, RequestKind};

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
        Harness::open(tempfile::tempdir().unwrap(), 1)
    }

    /// The gateway stops (its store flushed, as every native write and FIX write
    /// does) and starts again on the same store; the client logs on again.
    fn restart(mut self) -> Harness {
        self.bridge.checkpoint();
        peregrine_fix::store::MessageStore::flush(self.bridge.session.store_mut()).unwrap();
        let Harness { _dir, seq, .. } = self;
        Harness::open(_dir, seq)
    }

    fn open(dir: tempfile::TempDir, seq: u64) -> Harness {
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
            bridge: Bridge::new(session, instruments, 1000).unwrap(),
            enc: Encoder::default(),
            seq,
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
                report_seq: 1,
                account: AccountId(1),
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
                reserved: Pad,
                report_seq: 2,
                account: AccountId(1),
                fee_asset: 0,
                fee: 0,
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
                reserved: Pad,
                report_seq: 1,
                account: AccountId(1),
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
                reserved: Pad,
                report_seq: 3,
                account: AccountId(1),
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
    accept_as(h, n, 43, 2);
}

fn accept_as(h: &mut Harness, n: &peregrine_wire::orders::NewOrder, id: u64, seq: u64) {
    h.bridge
        .on_native(
            &Outbound::Accepted(Accepted {
                session_seq: 2,
                engine_seq: 1,
                engine_time: Timestamp(T0),
                order_id: OrderId(id),
                client_order_id: n.client_order_id,
                price: n.price,
                qty: n.qty,
                expire_at: Timestamp(0),
                instrument: n.instrument,
                side: n.side,
                order_type: n.order_type,
                tif: n.tif,
                stp: n.stp,
                report_seq: seq,
                account: AccountId(1),
            }),
            T0,
        )
        .unwrap();
}

fn order(h: &mut Harness, cl: &str, qty: &str) -> peregrine_wire::orders::NewOrder {
    let d = h.msg(
        "D",
        &[
            (11, cl),
            (55, "PGN-USD"),
            (54, "1"),
            (38, qty),
            (40, "2"),
            (44, "100"),
            (60, "20231114-22:13:20"),
        ],
    );
    h.feed(&d);
    let queued = h.native();
    let [Inbound::NewOrder(n)] = queued.as_slice() else {
        panic!("{queued:?}")
    };
    *n
}

fn fill(h: &mut Harness, cl: ClientOrderId, qty: i64, leaves: i64, seq: u64) {
    h.bridge
        .on_native(
            &Outbound::Fill(Fill {
                session_seq: 0,
                engine_seq: seq,
                engine_time: Timestamp(T0),
                order_id: OrderId(50),
                client_order_id: cl,
                trade_id: seq,
                price: Price::from_raw(10000),
                qty: Qty::from_raw(qty),
                leaves_qty: Qty::from_raw(leaves),
                instrument: InstrumentId(7),
                side: Side::Buy,
                role: peregrine_wire::LiquidityRole::Maker,
                reserved: Pad,
                report_seq: seq,
                account: AccountId(1),
                fee_asset: 0,
                fee: 0,
            }),
            T0,
        )
        .unwrap();
}

#[test]
fn a_restarted_bridge_resumes_the_report_stream_where_its_store_says() {
    let mut h = Harness::new();
    assert_eq!(h.bridge.resume_point(), 0, "a new gateway starts live");
    let o1 = order(&mut h, "o1", "5");
    accept_as(&mut h, &o1, 50, 1);
    fill(&mut h, o1.client_order_id, 20, 30, 2);
    // o2 reached the exchange; its answer had not come back when the gateway stopped.
    let o2 = order(&mut h, "o2", "1");
    assert_eq!(h.out().len(), 2);
    let mut h = h.restart();
    assert_eq!(h.bridge.resume_point(), 3);
    // The exchange replays from report 3. A report the store already covers (the
    // client session would refuse a repeat; the bridge skips it too) makes nothing.
    fill(&mut h, o1.client_order_id, 20, 30, 2);
    accept_as(&mut h, &o2, 51, 3);
    fill(&mut h, o1.client_order_id, 20, 10, 4);
    h.bridge.native_recovered(T0);
    let out = h.out();
    let ers: Vec<_> = out
        .iter()
        .filter(|(t, _)| t == "8")
        .map(|(_, f)| {
            (
                get(f, 11).unwrap().to_string(),
                get(f, 150).unwrap().to_string(),
                get(f, 14).unwrap().to_string(),
                get(f, 151).unwrap().to_string(),
                get(f, 17).unwrap().to_string(),
            )
        })
        .collect();
    let s = |a: &str, b: &str, c: &str, d: &str, e: &str| {
        (a.into(), b.into(), c.into(), d.into(), e.into())
    };
    assert_eq!(
        ers,
        vec![
            // o2 acknowledged; ExecID is the exchange's report sequence number.
            s("o2", "0", "0.0", "1.0", "3"),
            // o1's cumulative quantity carried over the restart: 2.0 + 2.0 of 5.0.
            s("o1", "F", "4.0", "1.0", "4"),
        ]
    );
    assert_eq!(h.bridge.resume_point(), 5);
    // A restart now resumes after report 4, with o1 still known by its ClOrdID.
    let mut h = h.restart();
    assert_eq!(h.bridge.resume_point(), 5);
    let f = h.msg(
        "F",
        &[
            (41, "o1"),
            (11, "c1"),
            (55, "PGN-USD"),
            (54, "1"),
            (60, "20231114-22:13:20"),
        ],
    );
    h.feed(&f);
    let queued = h.native();
    assert!(
        matches!(queued.as_slice(), [Inbound::Cancel(c)] if c.order_id == OrderId(50)),
        "{queued:?}"
    );
}

#[test]
fn requests_in_flight_are_answered_by_the_replay_and_the_rest_failed() {
    let mut h = Harness::new();
    let o1 = order(&mut h, "o1", "1");
    let _o2 = order(&mut h, "o2", "1");
    h.bridge.native_lost(T0);
    // The new session's replay carries o1's answer: the exchange took it; o2 never
    // reached the exchange.
    accept_as(&mut h, &o1, 60, 1);
    h.bridge.native_recovered(T0);
    let out = h.out();
    let ers: Vec<_> = out
        .iter()
        .map(|(_, f)| (get(f, 11).unwrap(), get(f, 150).unwrap()))
        .collect();
    assert_eq!(ers, vec![("o1", "0"), ("o2", "8")]);
    assert!(h.bridge.native_ready);
}

#[test]
fn a_mass_cancel_is_reported_with_the_exchange_count() {
    let mut h = Harness::new();
    let o1 = order(&mut h, "o1", "1");
    accept_as(&mut h, &o1, 70, 1);
    let q = h.msg("q", &[(11, "m1"), (530, "7"), (60, "20231114-22:13:20")]);
    h.feed(&q);
    let queued = h.native();
    let [Inbound::MassCancel(m)] = queued.as_slice() else {
        panic!("{queued:?}")
    };
    assert!(
        h.out().iter().all(|(t, _)| t != "r"),
        "no report before the exchange's"
    );
    let report = |o: Outbound, h: &mut Harness| h.bridge.on_native(&o, T0).unwrap();
    report(
        Outbound::Cancelled(Cancelled {
            session_seq: 0,
            engine_seq: 2,
            engine_time: Timestamp(T0),
            order_id: OrderId(70),
            client_order_id: o1.client_order_id,
            request_id: m.client_order_id,
            cancelled_qty: o1.qty,
            instrument: InstrumentId(7),
            reason: ReasonCode(peregrine_book::CancelReason::MassCancel as u16),
            side: Side::Buy,
            reserved: Pad,
            report_seq: 2,
            account: AccountId(1),
        }),
        &mut h,
    );
    report(
        Outbound::MassCancelDone(MassCancelDone {
            session_seq: 0,
            engine_seq: 2,
            engine_time: Timestamp(T0),
            request_id: m.client_order_id,
            report_seq: 3,
            cancelled: 1,
            instrument: None,
            account: AccountId(1),
            side: None,
        }),
        &mut h,
    );
    let out = h.out();
    let kinds: Vec<_> = out
        .iter()
        .map(|(t, f)| (t.as_str(), get(f, 150).or(get(f, 533))))
        .collect();
    assert_eq!(kinds, vec![("8", Some("4")), ("r", Some("1"))]);
}
