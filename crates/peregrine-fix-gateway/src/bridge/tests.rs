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

    /// A session trading for exchange account `account`.
    fn of_account(account: u32) -> Harness {
        Harness::open_as(tempfile::tempdir().unwrap(), 1, account)
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
        Harness::open_as(dir, seq, 1)
    }

    fn open_as(dir: tempfile::TempDir, seq: u64, account: u32) -> Harness {
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
            bridge: Bridge::new(session, account, instruments, 1000).unwrap(),
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
        self.msg_with(t, &[], fields)
    }

    /// A message with extra header fields (`header`, after SendingTime).
    fn msg_with(&mut self, t: &str, header: &[(u32, &str)], fields: &[(u32, &str)]) -> Vec<u8> {
        let mut w = self.enc.start(t.as_bytes());
        w.bytes(49, b"C1")
            .bytes(56, b"PEREGRINE")
            .uint(34, self.seq)
            .timestamp(52, T0, Precision::Millis);
        for (tag, v) in header {
            w.bytes(*tag, v.as_bytes());
        }
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
        while let Some(Frame::Message { len }) = frame(&bytes[at..], FrameLimits::default()) {
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
    fill_with_fee(h, cl, qty, leaves, seq, 0);
}

fn fill_with_fee(h: &mut Harness, cl: ClientOrderId, qty: i64, leaves: i64, seq: u64, fee: i64) {
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
                fee,
            }),
            T0,
        )
        .unwrap();
}

/// Each fill carries the venue's fee for it as Commission (12), an absolute amount
/// (CommType 13 = 3) of the quote asset: the exchange's fee is in a price unit times
/// a quantity unit (PGN-USD: 2 + 1 decimals), a rebate is negative, and a fill
/// without a fee says 0. Reports that are not fills carry none.
#[test]
fn fills_carry_the_venues_fee_as_commission() {
    let mut h = Harness::new();
    let o1 = order(&mut h, "o1", "5");
    accept_as(&mut h, &o1, 50, 1);
    fill_with_fee(&mut h, o1.client_order_id, 10, 40, 2, 12_345);
    fill_with_fee(&mut h, o1.client_order_id, 10, 30, 3, -250);
    fill_with_fee(&mut h, o1.client_order_id, 10, 20, 4, 0);
    let out = h.out();
    assert_eq!(out.len(), 4);
    assert_eq!(
        (get(&out[0].1, 12), get(&out[0].1, 13)),
        (None, None),
        "the New"
    );
    let commissions: Vec<_> = out[1..]
        .iter()
        .map(|(_, m)| (get(m, 150), get(m, 12), get(m, 13)))
        .collect();
    assert_eq!(
        commissions,
        [
            (Some("F"), Some("12.345"), Some("3")),
            (Some("F"), Some("-0.250"), Some("3")),
            (Some("F"), Some("0.000"), Some("3")),
        ]
    );
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
            // o2 acknowledged; ExecID is the account and the exchange's report
            // sequence number.
            s("o2", "0", "0.0", "1.0", "1-3"),
            // o1's cumulative quantity carried over the restart: 2.0 + 2.0 of 5.0.
            s("o1", "F", "4.0", "1.0", "1-4"),
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

/// What the dictionary accepts but Peregrine's dialect does not take (a field FIX
/// leaves optional, such as OrderQty): each request's own business reject, never a
/// session Reject (the issue: `38=abc` got a business reject, a missing field a
/// session one; the dictionary now answers the first with Reject 6).
#[test]
fn requests_the_dialect_does_not_take_get_business_rejects() {
    let mut h = Harness::new();
    let no_qty = h.msg(
        "D",
        &[
            (11, "q1"),
            (55, "PGN-USD"),
            (54, "1"),
            (40, "2"),
            (44, "1"),
            (60, "20231114-22:13:20"),
        ],
    );
    h.feed(&no_qty);
    let not_a_qty = h.msg(
        "D",
        &[
            (11, "q2"),
            (55, "PGN-USD"),
            (54, "1"),
            (38, "abc"),
            (40, "2"),
            (44, "1"),
            (60, "20231114-22:13:20"),
        ],
    );
    h.feed(&not_a_qty);
    let status_no_symbol = h.msg("H", &[(11, "q1"), (54, "1")]);
    h.feed(&status_no_symbol);
    let out = h.out();
    assert!(h.native().is_empty());
    let summary: Vec<_> = out
        .iter()
        .map(|(t, f)| {
            (
                t.as_str(),
                get(f, 150),
                get(f, 103).or(get(f, 373)).or(get(f, 380)),
                get(f, 58),
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            ("8", Some("8"), Some("13"), Some("tag 38 required")),
            (
                "3",
                None,
                Some("6"),
                Some("Incorrect data format for value")
            ),
            ("j", None, Some("5"), Some("tag 55 required")),
        ]
    );
}

/// A message type FIX 4.4 has and the gateway does not take: BusinessMessageReject
/// 380=3 "Unsupported Message Type" (QuickFIX 2r).
#[test]
fn an_unsupported_message_type_gets_a_business_message_reject() {
    let mut h = Harness::new();
    let er = h.msg(
        "8",
        &[
            (37, "id"),
            (17, "id"),
            (150, "0"),
            (39, "0"),
            (55, "X"),
            (54, "1"),
            (151, "100"),
            (14, "0"),
            (6, "0.0"),
        ],
    );
    h.feed(&er);
    let out = h.out();
    assert_eq!(out.len(), 1);
    let (t, f) = &out[0];
    assert_eq!(
        (t.as_str(), get(f, 45), get(f, 372), get(f, 380), get(f, 58)),
        (
            "j",
            Some("2"),
            Some("8"),
            Some("3"),
            Some("Unsupported Message Type")
        )
    );
}

/// PossResend=Y of an order already seen on the session (taken, or refused by the
/// gateway) is ignored; of one never seen, processed (FIX 4.4 test cases 19a, 19b).
#[test]
fn poss_resend_of_a_seen_order_is_ignored() {
    let mut h = Harness::new();
    let fields = |cl: &'static str, symbol: &'static str| {
        [
            (11, cl),
            (55, symbol),
            (54, "1"),
            (38, "1"),
            (40, "2"),
            (44, "1"),
            (60, "20231114-22:13:20"),
        ]
    };
    let refused = h.msg("D", &fields("r1", "NOPE"));
    h.feed(&refused);
    let taken = h.msg("D", &fields("t1", "PGN-USD"));
    h.feed(&taken);
    assert_eq!(h.out().len(), 1, "the refusal");
    assert_eq!(h.native().len(), 1, "the order taken");
    for cl in ["r1", "t1"] {
        let again = h.msg_with("D", &[(97, "Y")], &fields(cl, "PGN-USD"));
        h.feed(&again);
    }
    assert!(h.out().is_empty() && h.native().is_empty(), "seen: ignored");
    let new = h.msg_with("D", &[(97, "Y")], &fields("n1", "PGN-USD"));
    h.feed(&new);
    assert_eq!(h.native().len(), 1, "never seen: processed");
    // A sequence reset starts a new FIX session: what the gateway refused in the
    // last one is forgotten (orders the exchange took are not).
    h.bridge.logged_on(true);
    let again = h.msg_with("D", &[(97, "Y")], &fields("r1", "NOPE"));
    h.feed(&again);
    assert_eq!(h.out().len(), 1, "refused again, not ignored");
    let again = h.msg_with("D", &[(97, "Y")], &fields("t1", "PGN-USD"));
    h.feed(&again);
    assert!(h.native().is_empty() && h.out().is_empty());
}

/// ExecIDs are unique across the venue: two accounts' reports with the same number
/// in their own streams get different ExecIDs (the issue: both got `3`).
#[test]
fn exec_ids_name_the_account() {
    let mut ids = Vec::new();
    for account in [1, 2] {
        let mut h = Harness::of_account(account);
        let n = order(&mut h, "e1", "1");
        accept_as(&mut h, &n, 43, 3);
        let out = h.out();
        ids.push(get(&out[0].1, 17).unwrap().to_string());
        // A report the gateway makes itself: its own series, the account's too.
        let status = h.msg("H", &[(11, "e1"), (55, "PGN-USD"), (54, "1")]);
        h.feed(&status);
        let out = h.out();
        let gateway_id = get(&out[0].1, 17).unwrap().to_string();
        assert!(
            gateway_id.starts_with(&format!("{account}-G")),
            "{gateway_id}"
        );
        ids.push(gateway_id);
    }
    assert_eq!((ids[0].as_str(), ids[2].as_str()), ("1-3", "2-3"));
    assert_ne!(ids[1], ids[3]);
}

mod stops_and_icebergs {
    use super::*;
    use peregrine_types::{OrderType, TrailUnit, TriggerKind};
    use peregrine_wire::field::{OrderStage, TriggerCause};
    use peregrine_wire::v2::venue::{AcceptedExt, NewOrderExt, Triggered};

    /// A D with `extra` fields after the usual ones.
    fn order_ext(h: &mut Harness, cl: &str, extra: &[(u32, &str)]) -> Vec<Inbound> {
        let mut fields = vec![
            (11, cl),
            (55, "PGN-USD"),
            (54, "1"),
            (38, "5"),
            (60, "20231114-22:13:20"),
        ];
        fields.extend_from_slice(extra);
        let d = h.msg("D", &fields);
        h.feed(&d);
        h.native()
    }

    fn accepted_ext(n: &NewOrderExt, order_id: u64, seq: u64) -> Outbound {
        Outbound::AcceptedExt(AcceptedExt {
            session_seq: 0,
            engine_seq: seq,
            engine_time: Timestamp(T0),
            order_id: OrderId(order_id),
            client_order_id: n.client_order_id,
            price: n.price,
            qty: n.qty,
            expire_at: n.expire_at,
            stop_price: n.stop_price,
            display_qty: n.display_qty,
            list_id: OrderId(0),
            report_seq: seq,
            instrument: n.instrument,
            account: AccountId(1),
            trail: n.trail,
            side: n.side,
            order_type: n.order_type,
            tif: n.tif,
            stp: n.stp,
            trigger: n.trigger,
            trail_unit: n.trail_unit,
            stage: if n.trigger == TriggerKind::None {
                OrderStage::Active
            } else {
                OrderStage::WaitingTrigger
            },
            reserved: Pad,
        })
    }

    /// OrdType 3 (stop) with StopPx: a stop-loss market order (its Price the
    /// protection price, IOC once triggered though sent GTC), New while parked, then
    /// ExecType D (Restated, 378=8) when it triggers, then its fill.
    #[test]
    fn a_stop_order_is_a_stop_loss_market_order_restated_when_it_triggers() {
        let mut h = Harness::new();
        let native = order_ext(
            &mut h,
            "s1",
            &[(40, "3"), (99, "101.50"), (44, "103"), (59, "1")],
        );
        let [Inbound::NewOrderExt(n)] = native.as_slice() else {
            panic!("{native:?}")
        };
        assert_eq!(
            (
                n.trigger,
                n.stop_price.units(),
                n.price.units(),
                n.order_type,
                n.tif,
                n.display_qty.lots(),
                n.trail_unit
            ),
            (
                TriggerKind::StopLoss,
                10150,
                10300,
                OrderType::Market,
                peregrine_types::TimeInForce::Ioc,
                0,
                TrailUnit::None
            )
        );
        let n = *n;
        h.bridge.on_native(&accepted_ext(&n, 60, 1), T0).unwrap();
        h.bridge
            .on_native(
                &Outbound::Triggered(Triggered {
                    session_seq: 0,
                    engine_seq: 2,
                    engine_time: Timestamp(T0),
                    order_id: OrderId(60),
                    client_order_id: n.client_order_id,
                    trigger_price: n.stop_price,
                    last_price: Price::from_raw(10160),
                    report_seq: 2,
                    instrument: n.instrument,
                    account: AccountId(1),
                    side: n.side,
                    cause: TriggerCause::Price,
                    reserved: Pad,
                }),
                T0,
            )
            .unwrap();
        fill(&mut h, n.client_order_id, 50, 0, 3);
        let out = h.out();
        let seen: Vec<_> = out
            .iter()
            .map(|(_, m)| (get(m, 150), get(m, 39), get(m, 40), get(m, 378), get(m, 37)))
            .collect();
        assert_eq!(
            seen,
            [
                (Some("0"), Some("0"), Some("3"), None, Some("60")),
                (Some("D"), Some("0"), Some("3"), Some("8"), Some("60")),
                (Some("F"), Some("2"), Some("3"), None, Some("60")),
            ]
        );
    }

    /// OrdType 4 (stop-limit) keeps its limit; MaxFloor (111) makes an iceberg
    /// (no trigger), accepted as New.
    #[test]
    fn a_stop_limit_and_an_iceberg_map_to_the_extended_order() {
        let mut h = Harness::new();
        let native = order_ext(&mut h, "sl", &[(40, "4"), (99, "99.5"), (44, "99")]);
        let [Inbound::NewOrderExt(sl)] = native.as_slice() else {
            panic!("{native:?}")
        };
        assert_eq!(
            (
                sl.trigger,
                sl.stop_price.units(),
                sl.price.units(),
                sl.order_type,
                sl.tif
            ),
            (
                TriggerKind::StopLoss,
                9950,
                9900,
                OrderType::Limit,
                peregrine_types::TimeInForce::Gtc
            )
        );
        let native = order_ext(&mut h, "ice", &[(40, "2"), (44, "100"), (111, "1.5")]);
        let [Inbound::NewOrderExt(ice)] = native.as_slice() else {
            panic!("{native:?}")
        };
        assert_eq!(
            (
                ice.trigger,
                ice.stop_price.units(),
                ice.display_qty.lots(),
                ice.qty.lots(),
                ice.order_type
            ),
            (TriggerKind::None, 0, 15, 50, OrderType::Limit)
        );
        let ice = *ice;
        h.bridge.on_native(&accepted_ext(&ice, 61, 1), T0).unwrap();
        let out = h.out();
        assert_eq!(
            out.iter()
                .map(|(_, m)| (get(m, 150), get(m, 40)))
                .collect::<Vec<_>>(),
            [(Some("0"), Some("2"))]
        );
        // A plain limit order still goes as a version-2 NewOrder.
        let plain = order_ext(&mut h, "p", &[(40, "2"), (44, "100")]);
        assert!(
            matches!(plain.as_slice(), [Inbound::NewOrder(_)]),
            "{plain:?}"
        );
    }

    /// A stop without StopPx, StopPx on a limit order, a post-only stop, a zero
    /// MaxFloor, and a peg offset without the trailing-stop ExecInst are refused
    /// before the exchange, each with its reason.
    #[test]
    fn stop_and_iceberg_refusals_name_the_field() {
        let mut h = Harness::new();
        for (extra, text) in [
            (vec![(40, "3"), (44, "103")], "StopPx (99) required"),
            (
                vec![(40, "2"), (44, "100"), (99, "101")],
                "StopPx (99) only with",
            ),
            (
                vec![(40, "4"), (44, "100"), (99, "101"), (18, "6")],
                "a stop order cannot be post-only",
            ),
            (
                vec![(40, "2"), (44, "100"), (111, "0")],
                "MaxFloor must be positive",
            ),
            (
                vec![(40, "3"), (44, "90"), (99, "95"), (211, "-1")],
                "only with ExecInst (18) a (trailing stop): no pegged orders",
            ),
        ] {
            assert!(order_ext(&mut h, "x", &extra).is_empty(), "{extra:?}");
            let out = h.out();
            let [(_, er)] = out.as_slice() else {
                panic!("{out:?}")
            };
            assert_eq!((get(er, 150), get(er, 39)), (Some("8"), Some("8")));
            assert!(
                get(er, 58).unwrap().contains(text),
                "{:?} for {extra:?}",
                get(er, 58)
            );
        }
    }

    /// ExecInst `a` (Trailing Stop Peg) with PegOffsetValue (211) and PegOffsetType
    /// (836) 2 (ticks) or 1 (basis points) is the core's trailing stop-loss: no stop
    /// price, the offset and its unit, on a stop-market (3) or a stop-limit (4); it
    /// is reported like any stop (New, then Restated when it triggers).
    #[test]
    fn a_trailing_stop_maps_to_the_cores_trail_in_ticks_or_basis_points() {
        let mut h = Harness::new();
        let native = order_ext(
            &mut h,
            "t1",
            &[(40, "3"), (44, "90"), (18, "a"), (211, "25"), (836, "2")],
        );
        let [Inbound::NewOrderExt(n)] = native.as_slice() else {
            panic!("{native:?}")
        };
        assert_eq!(
            (
                n.trigger,
                n.stop_price.units(),
                n.trail,
                n.trail_unit,
                n.order_type,
                n.tif
            ),
            (
                TriggerKind::StopLoss,
                0,
                25,
                TrailUnit::Ticks,
                OrderType::Market,
                peregrine_types::TimeInForce::Ioc
            )
        );
        let n = *n;
        h.bridge.on_native(&accepted_ext(&n, 70, 1), T0).unwrap();
        let out = h.out();
        assert_eq!(
            out.iter()
                .map(|(_, m)| (get(m, 150), get(m, 39), get(m, 40), get(m, 37)))
                .collect::<Vec<_>>(),
            [(Some("0"), Some("0"), Some("3"), Some("70"))]
        );
        // A stop-limit trailing by 150 basis points, PegMoveType 0 (floating)
        // given explicitly; ExecInst may hold other instructions beside `a`.
        let native = order_ext(
            &mut h,
            "t2",
            &[
                (40, "4"),
                (44, "95"),
                (18, "a E"),
                (211, "150"),
                (835, "0"),
                (836, "1"),
            ],
        );
        let [Inbound::NewOrderExt(n)] = native.as_slice() else {
            panic!("{native:?}")
        };
        assert_eq!(
            (
                n.trigger,
                n.trail,
                n.trail_unit,
                n.order_type,
                n.price.units()
            ),
            (
                TriggerKind::StopLoss,
                150,
                TrailUnit::Bps,
                OrderType::Limit,
                9500
            )
        );
    }

    /// Every trailing-stop combination the core cannot honour is refused with an
    /// ExecutionReport (150=8) naming the field, never sent as a plain order.
    #[test]
    fn unsupported_trailing_stops_are_refused_with_the_reason() {
        let mut h = Harness::new();
        for (extra, text) in [
            (
                vec![(40, "2"), (44, "100"), (18, "a"), (211, "5"), (836, "2")],
                "ExecInst (18) a (trailing stop) only with OrdType 3",
            ),
            (
                vec![(40, "3"), (44, "90"), (18, "a"), (836, "2")],
                "PegOffsetValue (211) required",
            ),
            (
                vec![
                    (40, "3"),
                    (44, "90"),
                    (99, "95"),
                    (18, "a"),
                    (211, "5"),
                    (836, "2"),
                ],
                "StopPx (99) not with a trailing stop",
            ),
            (
                vec![
                    (40, "3"),
                    (44, "90"),
                    (18, "a"),
                    (211, "5"),
                    (835, "1"),
                    (836, "2"),
                ],
                "PegMoveType (835) must be 0",
            ),
            (
                vec![(40, "3"), (44, "90"), (18, "a"), (211, "5")],
                "PegOffsetType (836) must be 1 (basis points) or 2 (ticks)",
            ),
            (
                vec![(40, "3"), (44, "90"), (18, "a"), (211, "0.5"), (836, "0")],
                "PegOffsetType (836) must be 1",
            ),
            (
                vec![(40, "3"), (44, "90"), (18, "a"), (211, "5"), (836, "3")],
                "PegOffsetType (836) must be 1",
            ),
            (
                vec![(40, "3"), (44, "90"), (18, "a"), (211, "-5"), (836, "2")],
                "must be a positive whole number",
            ),
            (
                vec![(40, "3"), (44, "90"), (18, "a"), (211, "2.5"), (836, "1")],
                "must be a positive whole number",
            ),
            (
                vec![(40, "3"), (44, "90"), (18, "a"), (211, "0"), (836, "2")],
                "must be a positive whole number",
            ),
            (
                vec![(40, "2"), (44, "100"), (836, "2")],
                "only with ExecInst (18) a",
            ),
        ] {
            assert!(order_ext(&mut h, "x", &extra).is_empty(), "{extra:?}");
            let out = h.out();
            let [(_, er)] = out.as_slice() else {
                panic!("{out:?} for {extra:?}")
            };
            assert_eq!((get(er, 150), get(er, 39)), (Some("8"), Some("8")));
            assert!(
                get(er, 58).unwrap().contains(text),
                "{:?} for {extra:?}",
                get(er, 58)
            );
        }
    }

    /// OrdType J (Market If Touched) with StopPx is the core's take-profit market
    /// order (IOC once triggered); a trailing J, a J without StopPx and a post-only J
    /// are refused (the core has no trailing take-profit).
    #[test]
    fn market_if_touched_is_the_cores_take_profit() {
        let mut h = Harness::new();
        let native = order_ext(&mut h, "tp", &[(40, "J"), (99, "97"), (44, "99")]);
        let [Inbound::NewOrderExt(n)] = native.as_slice() else {
            panic!("{native:?}")
        };
        assert_eq!(
            (n.trigger, n.stop_price.units(), n.order_type, n.tif),
            (
                TriggerKind::TakeProfit,
                9700,
                OrderType::Market,
                peregrine_types::TimeInForce::Ioc
            )
        );
        let n = *n;
        h.bridge.on_native(&accepted_ext(&n, 80, 1), T0).unwrap();
        let out = h.out();
        assert_eq!(
            out.iter()
                .map(|(_, m)| (get(m, 150), get(m, 40)))
                .collect::<Vec<_>>(),
            [(Some("0"), Some("J"))]
        );
        for (extra, text) in [
            (
                vec![(40, "J"), (44, "99"), (18, "a"), (211, "5"), (836, "2")],
                "only with OrdType 3 (stop) or 4 (stop-limit)",
            ),
            (vec![(40, "J"), (44, "99")], "StopPx (99) required"),
            (
                vec![(40, "J"), (44, "99"), (99, "97"), (18, "6")],
                "cannot be post-only",
            ),
        ] {
            assert!(order_ext(&mut h, "x", &extra).is_empty(), "{extra:?}");
            let out = h.out();
            let [(_, er)] = out.as_slice() else {
                panic!("{out:?} for {extra:?}")
            };
            assert_eq!(get(er, 150), Some("8"));
            assert!(get(er, 58).unwrap().contains(text), "{:?}", get(er, 58));
        }
    }
}

mod lists;
