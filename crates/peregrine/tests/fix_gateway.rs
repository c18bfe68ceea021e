//! `peregrine gateway fix` end to end, with real processes: a QuickFIX initiator →
//! the gateway → the exchange, plus a native client of another account as the
//! counterparty. Every order type, fills, cancel/replace, status, mass cancel,
//! rejects with reasons, a disconnect with reports resent on return, a sequence
//! reset, and bad input on the FIX port. `acceptance`: the session rules over the
//! socket, by definitions (Peregrine's own in CI; QuickFIX's by hand).

#[path = "fix_gateway/acceptance.rs"]
mod acceptance;
mod support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use peregrine_fix_interop::qf::{wait_until, InitiatorKit, Recorder, Seen, WireLog, QUICKFIX};
use peregrine_types::{Side, TimeInForce};
use peregrine_wire::v2::Outbound;
use quickfix::{ConnectionHandler, FieldMap, Message};
use support::fix::{
    client_recorder, client_session, client_settings, log_has, start_exchange, start_gateway,
    start_gateway_at, Counterparty,
};

const WAIT: Duration = Duration::from_secs(30);

fn fix_order(cl: &str, fields: &[(i32, &str)]) -> Message {
    let mut m = Message::new();
    m.with_header_mut(|h| h.set_field(35, "D")).unwrap();
    m.set_field(11, cl).unwrap();
    m.set_field(55, "PGN-USD").unwrap();
    m.set_field(60, "20240101-00:00:00.000").unwrap();
    for &(tag, v) in fields {
        m.set_field(tag, v).unwrap();
    }
    m
}

fn fix_msg(t: &str, fields: &[(i32, &str)]) -> Message {
    let mut m = Message::new();
    m.with_header_mut(|h| h.set_field(35, t)).unwrap();
    for &(tag, v) in fields {
        m.set_field(tag, v).unwrap();
    }
    m
}

/// The reports QuickFIX received about ClOrdID `cl` (tag 11).
fn about(qf: &Recorder, cl: &str) -> Vec<Seen> {
    qf.app()
        .into_iter()
        .filter(|m| m.field(11) == Some(cl))
        .collect()
}

fn has(qf: &Recorder, cl: &str, pairs: &[(u32, &str)]) -> bool {
    about(qf, cl)
        .iter()
        .any(|m| pairs.iter().all(|&(t, v)| m.field(t) == Some(v)))
}

#[test]
fn quickfix_trades_through_the_gateway() {
    let _one = QUICKFIX.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let exchange = start_exchange(dir.path());
    let gateway = start_gateway(dir.path(), exchange.addr);
    wait_until("the gateway's exchange session", WAIT, || {
        log_has(dir.path(), "gateway.log", "account 1 logged in")
    });

    let qf = client_recorder();
    let wire = WireLog::default();
    let kit = InitiatorKit::new(
        &qf,
        &wire,
        &client_settings(dir.path(), gateway.addr.port()),
    );
    let sid = client_session();
    let send = |m: Message| quickfix::send_to_target(m, &sid).unwrap();
    let mut initiator = kit.start();
    wait_until("logon through the gateway", WAIT, || qf.logons() == 1);

    // Limit order, then a partial fill against account 2.
    send(fix_order(
        "L1",
        &[(54, "1"), (38, "5"), (40, "2"), (44, "100.25"), (59, "1")],
    ));
    wait_until("New", WAIT, || {
        has(&qf, "L1", &[(150, "0"), (39, "0"), (151, "5")])
    });
    let mut other = Counterparty::login(dir.path(), exchange.addr);
    let answer = other.order(1, Side::Sell, 10025, 2, TimeInForce::Ioc);
    assert!(matches!(answer, Outbound::Accepted(_)), "{answer:?}");
    wait_until("partial fill", WAIT, || {
        has(
            &qf,
            "L1",
            &[
                (150, "F"),
                (39, "1"),
                (14, "2"),
                (151, "3"),
                (31, "100.25"),
                (32, "2"),
                (6, "100.25"),
            ],
        )
    });

    // Replace: new total 6 (4 open), new price; then status; then cancel.
    send(fix_msg(
        "G",
        &[
            (41, "L1"),
            (11, "L1b"),
            (55, "PGN-USD"),
            (54, "1"),
            (38, "6"),
            (40, "2"),
            (44, "100.10"),
            (60, "20240101-00:00:00"),
        ],
    ));
    wait_until("Replaced", WAIT, || {
        has(
            &qf,
            "L1b",
            &[
                (150, "5"),
                (39, "1"),
                (41, "L1"),
                (38, "6"),
                (151, "4"),
                (44, "100.10"),
            ],
        )
    });
    send(fix_msg(
        "H",
        &[(11, "L1b"), (55, "PGN-USD"), (54, "1"), (790, "st-1")],
    ));
    wait_until("status", WAIT, || {
        has(
            &qf,
            "L1b",
            &[(150, "I"), (39, "1"), (14, "2"), (151, "4"), (790, "st-1")],
        )
    });
    send(fix_msg(
        "F",
        &[
            (41, "L1b"),
            (11, "C1"),
            (55, "PGN-USD"),
            (54, "1"),
            (60, "20240101-00:00:00"),
        ],
    ));
    wait_until("Canceled", WAIT, || {
        has(
            &qf,
            "C1",
            &[(150, "4"), (39, "4"), (41, "L1b"), (14, "2"), (151, "0")],
        )
    });
    send(fix_msg(
        "F",
        &[
            (41, "L1b"),
            (11, "C2"),
            (55, "PGN-USD"),
            (54, "1"),
            (60, "20240101-00:00:00"),
        ],
    ));
    wait_until("too late to cancel", WAIT, || {
        qf.app()
            .iter()
            .any(|m| m.msg_type == "9" && m.field(11) == Some("C2") && m.field(102) == Some("0"))
    });

    // Market IOC with a protection price fills completely.
    let mut other = Counterparty::login(dir.path(), exchange.addr);
    let answer = other.order(2, Side::Sell, 10000, 1, TimeInForce::Gtc);
    assert!(matches!(answer, Outbound::Accepted(_)), "{answer:?}");
    send(fix_order(
        "M1",
        &[(54, "1"), (38, "1"), (40, "1"), (44, "101"), (59, "3")],
    ));
    wait_until("market fill", WAIT, || {
        has(
            &qf,
            "M1",
            &[(150, "F"), (39, "2"), (31, "100.00"), (14, "1")],
        )
    });

    // Post-only that would take is rejected with its reason; unknown symbol too;
    // FOK that cannot fill is cancelled.
    let mut other = Counterparty::login(dir.path(), exchange.addr);
    let answer = other.order(3, Side::Sell, 10050, 1, TimeInForce::Gtc);
    assert!(matches!(answer, Outbound::Accepted(_)), "{answer:?}");
    send(fix_order(
        "P1",
        &[(54, "1"), (38, "1"), (40, "2"), (44, "100.50"), (18, "6")],
    ));
    wait_until("post-only reject", WAIT, || {
        has(&qf, "P1", &[(150, "8"), (39, "8"), (103, "11")])
    });
    let mut unknown = fix_order("U1", &[(54, "1"), (38, "1"), (40, "2"), (44, "1")]);
    unknown.set_field(55, "NOPE").unwrap();
    send(unknown);
    wait_until("unknown symbol", WAIT, || {
        has(&qf, "U1", &[(150, "8"), (103, "1")])
    });
    send(fix_order(
        "K1",
        &[(54, "1"), (38, "5"), (40, "2"), (44, "100.50"), (59, "4")],
    ));
    wait_until("FOK cancelled", WAIT, || {
        has(&qf, "K1", &[(150, "4"), (39, "4"), (14, "0")])
    });

    // Mass cancel of two resting orders: the report counts them, each is cancelled.
    send(fix_order(
        "R1",
        &[(54, "1"), (38, "1"), (40, "2"), (44, "90")],
    ));
    send(fix_order(
        "R2",
        &[(54, "1"), (38, "1"), (40, "2"), (44, "91")],
    ));
    wait_until("two resting", WAIT, || {
        has(&qf, "R1", &[(150, "0")]) && has(&qf, "R2", &[(150, "0")])
    });
    send(fix_msg(
        "q",
        &[(11, "MC1"), (530, "7"), (60, "20240101-00:00:00")],
    ));
    wait_until("mass cancel", WAIT, || {
        qf.app()
            .iter()
            .any(|m| m.msg_type == "r" && m.field(11) == Some("MC1") && m.field(533) == Some("2"))
            && has(&qf, "R1", &[(150, "4")])
            && has(&qf, "R2", &[(150, "4")])
    });

    // Away and back: a resting order fills while QuickFIX is disconnected; the
    // report waits in the gateway's store and comes back as a PossDup resend.
    send(fix_order(
        "A1",
        &[(54, "1"), (38, "1"), (40, "2"), (44, "100.20")],
    ));
    wait_until("A1 rests", WAIT, || has(&qf, "A1", &[(150, "0")]));
    initiator.stop().unwrap();
    wait_until("logged out", WAIT, || qf.logouts() >= 1);
    drop(initiator);
    let mut other = Counterparty::login(dir.path(), exchange.addr);
    let answer = other.order(4, Side::Sell, 10020, 1, TimeInForce::Ioc);
    assert!(matches!(answer, Outbound::Accepted(_)), "{answer:?}");
    let mut initiator = kit.start();
    wait_until("the fill made while away, resent", WAIT, || {
        about(&qf, "A1")
            .iter()
            .any(|m| m.field(150) == Some("F") && m.poss_dup)
    });

    // Bad input on the FIX port never disturbs the logged-on session.
    for junk in [
        &b"GET / HTTP/1.1\r\n\r\n"[..],
        b"8=FIX.4.4\x019=99999999\x01",
    ] {
        let mut s = TcpStream::connect(gateway.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s.write_all(junk).unwrap();
        let mut buf = [0u8; 64];
        assert!(
            matches!(s.read(&mut buf), Ok(0) | Err(_)),
            "garbage closes the connection"
        );
    }
    // A second Logon for the logged-on session is refused; the first one stays.
    let mut dup = TcpStream::connect(gateway.addr).unwrap();
    dup.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    dup.write_all(&logon_bytes("fix-pw")).unwrap();
    let mut buf = [0u8; 256];
    assert!(
        matches!(dup.read(&mut buf), Ok(0) | Err(_)),
        "duplicate logon refused"
    );
    send(fix_order(
        "D1",
        &[(54, "1"), (38, "1"), (40, "2"), (44, "80")],
    ));
    wait_until("still trading", WAIT, || has(&qf, "D1", &[(150, "0")]));

    initiator.stop().unwrap();
    wait_until("logged out", WAIT, || qf.logouts() >= 2);
    assert_eq!(
        wire.incoming_with(&["|35=3|"]),
        0,
        "the gateway sent no session Reject"
    );
    assert!(qf.admin_in().iter().all(|m| m.msg_type != "3"));
    drop(initiator);
    drop(gateway);
}

/// Issue 31's order types over FIX, through the real gateway and exchange, with
/// QuickFIX as the client: a stop-limit buy (OrdType 4, StopPx 99) and a stop sell
/// (OrdType 3) stay New until a trade reaches their trigger, are then restated
/// (ExecType D, ExecRestatementReason 8) and fill; an iceberg (MaxFloor 111 of 1)
/// fills 3 lots in three fills of 1, so it refilled twice; fills carry Commission
/// with CommType 3. A trailing stop (ExecInst a, PegOffsetValue in basis points)
/// triggers when the price falls its offset below the last trade, a trailing stop in
/// an unsupported unit is refused, and a take-profit (OrdType J) triggers on a fall
/// to its StopPx.
#[test]
fn stops_stop_limits_and_icebergs_trigger_and_refill_through_the_gateway() {
    let _one = QUICKFIX.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let exchange = start_exchange(dir.path());
    let gateway = start_gateway(dir.path(), exchange.addr);
    wait_until("the gateway's exchange session", WAIT, || {
        log_has(dir.path(), "gateway.log", "account 1 logged in")
    });
    let qf = client_recorder();
    let wire = WireLog::default();
    let kit = InitiatorKit::new(
        &qf,
        &wire,
        &client_settings(dir.path(), gateway.addr.port()),
    );
    let sid = client_session();
    let send = |m: Message| quickfix::send_to_target(m, &sid).unwrap();
    let mut initiator = kit.start();
    wait_until("logon through the gateway", WAIT, || qf.logons() == 1);
    let mut other = Counterparty::login(dir.path(), exchange.addr);

    // A stop-limit buy: parked until a trade at 119.00 or above.
    let answer = other.order(1, Side::Sell, 12000, 3, TimeInForce::Gtc);
    assert!(matches!(answer, Outbound::Accepted(_)), "{answer:?}");
    send(fix_order(
        "S1",
        &[
            (54, "1"),
            (38, "2"),
            (40, "4"),
            (99, "119"),
            (44, "121"),
            (59, "1"),
        ],
    ));
    wait_until("the stop-limit New", WAIT, || {
        has(&qf, "S1", &[(150, "0"), (39, "0"), (40, "4")])
    });
    send(fix_order(
        "T1",
        &[(54, "1"), (38, "1"), (40, "2"), (44, "120"), (59, "3")],
    ));
    wait_until("the stop-limit triggered and filled", WAIT, || {
        has(&qf, "S1", &[(150, "D"), (39, "0"), (378, "8")])
            && has(
                &qf,
                "S1",
                &[(150, "F"), (39, "2"), (31, "120.00"), (13, "3")],
            )
    });
    assert!(has(&qf, "T1", &[(150, "F"), (13, "3")]));

    // A stop sell (market once triggered, protection 100): parked until a trade at
    // 111.00 or below.
    let answer = other.order(2, Side::Buy, 11000, 2, TimeInForce::Gtc);
    assert!(matches!(answer, Outbound::Accepted(_)), "{answer:?}");
    send(fix_order(
        "S2",
        &[(54, "2"), (38, "1"), (40, "3"), (99, "111"), (44, "100")],
    ));
    wait_until("the stop New", WAIT, || {
        has(&qf, "S2", &[(150, "0"), (40, "3")])
    });
    send(fix_order(
        "T2",
        &[(54, "2"), (38, "1"), (40, "2"), (44, "110"), (59, "3")],
    ));
    wait_until("the stop triggered and filled", WAIT, || {
        has(&qf, "S2", &[(150, "D"), (378, "8")])
            && has(&qf, "S2", &[(150, "F"), (39, "2"), (31, "110.00")])
    });

    // An iceberg sell of 5 showing 1 at a time: a buy of 3 takes three parts.
    send(fix_order(
        "ICE",
        &[
            (54, "2"),
            (38, "5"),
            (40, "2"),
            (44, "130"),
            (111, "1"),
            (59, "1"),
        ],
    ));
    wait_until("the iceberg New", WAIT, || {
        has(&qf, "ICE", &[(150, "0"), (151, "5")])
    });
    let answer = other.order(3, Side::Buy, 13000, 3, TimeInForce::Ioc);
    assert!(matches!(answer, Outbound::Accepted(_)), "{answer:?}");
    wait_until("the iceberg refilled and filled 3", WAIT, || {
        has(&qf, "ICE", &[(150, "F"), (39, "1"), (14, "3"), (151, "2")])
    });
    // Three fills of the one part shown at a time (an order showing all 5 would
    // have filled 3 at once).
    let parts: Vec<_> = about(&qf, "ICE")
        .iter()
        .filter(|m| m.field(150) == Some("F"))
        .map(|m| m.field(32).map(str::to_string))
        .collect();
    assert_eq!(
        parts,
        [Some("1".to_string()), Some("1".into()), Some("1".into())]
    );

    // A trailing stop sell (OrdType 3, ExecInst a, PegOffsetValue 100, PegOffsetType
    // 1: 100 basis points) entered after the last trade at 130.00: its trigger is
    // 128.70. A trade at 128.00 triggers it; it sells at once into the bid at 128.
    let answer = other.order(4, Side::Buy, 12800, 2, TimeInForce::Gtc);
    assert!(matches!(answer, Outbound::Accepted(_)), "{answer:?}");
    send(fix_order(
        "TS",
        &[
            (54, "2"),
            (38, "1"),
            (40, "3"),
            (44, "100"),
            (18, "a"),
            (211, "100"),
            (835, "0"),
            (836, "1"),
        ],
    ));
    wait_until("the trailing stop New", WAIT, || {
        has(&qf, "TS", &[(150, "0"), (39, "0"), (40, "3")])
    });
    send(fix_order(
        "T3",
        &[(54, "2"), (38, "1"), (40, "2"), (44, "128"), (59, "3")],
    ));
    wait_until("the trailing stop triggered and filled", WAIT, || {
        has(&qf, "TS", &[(150, "D"), (378, "8")])
            && has(&qf, "TS", &[(150, "F"), (39, "2"), (31, "128.00")])
    });
    // A trailing stop in an unsupported unit (PegOffsetType 0, price) is refused
    // with its reason, never entered.
    send(fix_order(
        "TSX",
        &[
            (54, "2"),
            (38, "1"),
            (40, "3"),
            (44, "100"),
            (18, "a"),
            (211, "1"),
            (836, "0"),
        ],
    ));
    wait_until("the unsupported trailing stop refused", WAIT, || {
        has(&qf, "TSX", &[(150, "8"), (39, "8")])
    });

    // A take-profit buy (OrdType J, Market If Touched, StopPx 127): parked while the
    // last trade is 128.00, triggered by a trade at 127.00, then buys the ask at
    // 129.50 (within its protection price 135).
    let answer = other.order(5, Side::Buy, 12700, 1, TimeInForce::Gtc);
    assert!(matches!(answer, Outbound::Accepted(_)), "{answer:?}");
    let answer = other.order(6, Side::Sell, 12950, 1, TimeInForce::Gtc);
    assert!(matches!(answer, Outbound::Accepted(_)), "{answer:?}");
    send(fix_order(
        "TP",
        &[(54, "1"), (38, "1"), (40, "J"), (99, "127"), (44, "135")],
    ));
    wait_until("the take-profit New", WAIT, || {
        has(&qf, "TP", &[(150, "0"), (39, "0"), (40, "J")])
    });
    send(fix_order(
        "T4",
        &[(54, "2"), (38, "1"), (40, "2"), (44, "127"), (59, "3")],
    ));
    wait_until("the take-profit triggered and filled", WAIT, || {
        has(&qf, "TP", &[(150, "D"), (378, "8")])
            && has(&qf, "TP", &[(150, "F"), (39, "2"), (31, "129.50")])
    });

    initiator.stop().unwrap();
    wait_until("logged out", WAIT, || qf.logouts() >= 1);
    assert_eq!(
        wire.incoming_with(&["|35=3|"]),
        0,
        "the gateway sent no session Reject"
    );
    drop(initiator);
    drop(gateway);
}

/// An E of `list` (ContingencyType 1385 = 1, OCO; BidType 394 = 3 as FIX 4.4
/// requires): `legs` as (ClOrdID, OrdType, Price, StopPx), each a GTC sell of 2.
fn fix_oco(list: &str, legs: &[(&str, &str, &str, &str)]) -> Message {
    let legs: Vec<_> = legs.iter().map(|&(c, o, p, x)| (c, "2", o, p, x)).collect();
    fix_list(list, "1", &legs)
}

/// An E of `list` with ContingencyType `contingency`: `legs` as (ClOrdID, Side,
/// OrdType, Price, StopPx), each a GTC order of 2.
fn fix_list(list: &str, contingency: &str, legs: &[(&str, &str, &str, &str, &str)]) -> Message {
    let n = legs.len().to_string();
    let mut m = fix_msg(
        "E",
        &[(66, list), (394, "3"), (1385, contingency), (68, &n)],
    );
    for &(cl, side, ord_type, price, stop) in legs {
        let mut g = quickfix::Group::try_with_orders(73, 11, &[11, 67, 55, 54, 38, 40, 44, 99, 59])
            .unwrap();
        g.set_field(11, cl).unwrap();
        g.set_field(55, "PGN-USD").unwrap();
        g.set_field(54, side).unwrap();
        g.set_field(38, "2").unwrap();
        g.set_field(40, ord_type).unwrap();
        g.set_field(44, price).unwrap();
        if !stop.is_empty() {
            g.set_field(99, stop).unwrap();
        }
        g.set_field(59, "1").unwrap();
        m.add_group(&g).unwrap();
    }
    m
}

/// Order lists over FIX: an OCO sell (a limit at 120.00, a stop at 110.00) placed
/// with E: QuickFIX gets ListStatus N executing and each leg's New under its own
/// ClOrdID; a buy takes the limit, so the stop is cancelled by its list and N
/// says all done; a ListStatusRequest (M) gets that state again. A second OCO is
/// cancelled with K: both legs cancelled, N all done. An OTO's pending leg is released when its working leg fills. QuickFIX
/// with its FIX 4.4 dictionary takes every N: no session Reject
/// either way. Without its dictionary QuickFIX reads no repeating group (it rejects
/// an N with "Tag appears more than once"), so the test fails without it: the
/// README's test command fetches it (`scripts/quickfix-spec.sh`).
#[test]
fn an_oco_places_fills_one_leg_cancels_the_other_and_a_list_cancel_request_cancels_a_list() {
    assert!(
        peregrine_fix_interop::qf::fix44_dictionary().is_some(),
        "QuickFIX reads an N's NoOrders group only with its FIX 4.4 dictionary: \
         run scripts/quickfix-spec.sh (scripts/test-all.sh does)"
    );
    let _one = QUICKFIX.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let exchange = start_exchange(dir.path());
    let gateway = start_gateway(dir.path(), exchange.addr);
    wait_until("the gateway's exchange session", WAIT, || {
        log_has(dir.path(), "gateway.log", "account 1 logged in")
    });
    let qf = client_recorder();
    let wire = WireLog::default();
    let kit = InitiatorKit::new(
        &qf,
        &wire,
        &client_settings(dir.path(), gateway.addr.port()),
    );
    let sid = client_session();
    let send = |m: Message| quickfix::send_to_target(m, &sid).unwrap();
    let initiator = kit.start();
    wait_until("logon through the gateway", WAIT, || qf.logons() == 1);
    let mut other = Counterparty::login(dir.path(), exchange.addr);
    let lists = |list: &str, status: &str| {
        qf.app()
            .into_iter()
            .any(|m| m.msg_type == "N" && m.field(66) == Some(list) && m.field(431) == Some(status))
    };

    // A last trade price (115.00) first: a stop can be placed only where it would
    // not trigger at once.
    let answer = other.order(9, Side::Sell, 11500, 1, TimeInForce::Gtc);
    assert!(matches!(answer, Outbound::Accepted(_)), "{answer:?}");
    send(fix_order(
        "P0",
        &[(54, "1"), (38, "1"), (40, "2"), (44, "115"), (59, "3")],
    ));
    wait_until("the trade at 115.00", WAIT, || {
        has(&qf, "P0", &[(150, "F"), (39, "2")])
    });
    send(fix_oco(
        "OCO1",
        &[("TP1", "2", "120", ""), ("SL1", "3", "100", "110")],
    ));
    wait_until("N executing and both legs New", WAIT, || {
        lists("OCO1", "3")
            && has(&qf, "TP1", &[(150, "0"), (40, "2")])
            && has(&qf, "SL1", &[(150, "0"), (40, "3")])
    });
    let answer = other.order(1, Side::Buy, 12000, 2, TimeInForce::Ioc);
    assert!(matches!(answer, Outbound::Accepted(_)), "{answer:?}");
    wait_until(
        "the limit filled, the stop cancelled, N all done",
        WAIT,
        || {
            has(&qf, "TP1", &[(150, "F"), (39, "2"), (31, "120.00")])
                && has(&qf, "SL1", &[(150, "4"), (39, "4")])
                && lists("OCO1", "6")
        },
    );
    let done = qf
        .app()
        .into_iter()
        .find(|m| m.msg_type == "N" && m.field(431) == Some("6"))
        .unwrap();
    assert_eq!(done.field(429), Some("5"), "{}", done.text);
    assert!(
        done.text.contains("|11=TP1|14=2|39=2|151=0|84=0|6=120"),
        "{}",
        done.text
    );
    assert!(
        done.text.contains("|11=SL1|14=0|39=4|151=0|84=2|6=0"),
        "{}",
        done.text
    );
    // ListStatusRequest M: the done list's state again, as a response (429=2); an
    // unknown ListID is a BusinessMessageReject naming M.
    send(fix_msg("M", &[(66, "OCO1")]));
    send(fix_msg("M", &[(66, "NOPE")]));
    wait_until("the answers to both M", WAIT, || {
        let app = qf.app();
        app.iter().any(|m| {
            m.msg_type == "N"
                && m.field(66) == Some("OCO1")
                && m.field(429) == Some("2")
                && m.field(431) == Some("6")
                && m.text.contains("|11=TP1|14=2|39=2|")
        }) && app
            .iter()
            .any(|m| m.msg_type == "j" && m.field(372) == Some("M") && m.field(379) == Some("NOPE"))
    });

    send(fix_oco(
        "OCO2",
        &[("TP2", "2", "125", ""), ("SL2", "3", "100", "105")],
    ));
    wait_until("the second list executing", WAIT, || {
        lists("OCO2", "3") && has(&qf, "SL2", &[(150, "0")]) && has(&qf, "TP2", &[(150, "0")])
    });
    send(fix_msg("K", &[(66, "OCO2"), (60, "20240101-00:00:00.000")]));
    wait_until("K: both legs cancelled, N all done", WAIT, || {
        has(&qf, "TP2", &[(150, "4"), (39, "4")])
            && has(&qf, "SL2", &[(150, "4"), (39, "4")])
            && lists("OCO2", "6")
    });

    // An OTO: a working buy at 118.00 and a pending sell at 130.00, entered only
    // once the buy is filled (its release a 150=D); the list is then done.
    send(fix_list(
        "OTO1",
        "2",
        &[("W3", "1", "2", "118", ""), ("P3", "2", "2", "130", "")],
    ));
    wait_until("the OTO executing", WAIT, || {
        lists("OTO1", "3") && has(&qf, "W3", &[(150, "0")]) && has(&qf, "P3", &[(150, "0")])
    });
    let answer = other.order(2, Side::Sell, 11800, 2, TimeInForce::Ioc);
    assert!(matches!(answer, Outbound::Accepted(_)), "{answer:?}");
    wait_until(
        "the working leg filled, the pending leg released, N all done",
        WAIT,
        || {
            has(&qf, "W3", &[(150, "F"), (39, "2")])
                && has(&qf, "P3", &[(150, "D"), (39, "0")])
                && lists("OTO1", "6")
        },
    );

    assert_eq!(
        wire.incoming_with(&["|35=3|"]),
        0,
        "the gateway sent no session Reject"
    );
    assert!(
        !qf.admin_out().iter().any(|m| m.msg_type == "3"),
        "QuickFIX rejected none of our messages: {:?}",
        qf.admin_out()
    );
    drop(initiator);
    drop(gateway);
}

/// The issue's demand: the gateway is killed (no goodbye) while its FIX client is
/// away, the client's resting order fills twice while no gateway runs, and the
/// gateway comes back on its store. It resumes the exchange's report stream from the
/// position it stored, so both fills reach its store, and QuickFIX gets them on its
/// return by resend: nothing lost, nothing twice.
#[test]
fn a_restarted_gateway_resumes_the_report_stream_and_loses_nothing() {
    let _one = QUICKFIX.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let exchange = start_exchange(dir.path());
    let gateway = start_gateway(dir.path(), exchange.addr);
    wait_until("the gateway's exchange session", WAIT, || {
        log_has(dir.path(), "gateway.log", "account 1 logged in")
    });
    let qf = client_recorder();
    let wire = WireLog::default();
    let kit = InitiatorKit::new(
        &qf,
        &wire,
        &client_settings(dir.path(), gateway.addr.port()),
    );
    let sid = client_session();
    let mut fix = kit.start();
    wait_until("logon through the gateway", WAIT, || qf.logons() == 1);
    quickfix::send_to_target(
        fix_order(
            "L1",
            &[(54, "1"), (38, "5"), (40, "2"), (44, "100.25"), (59, "1")],
        ),
        &sid,
    )
    .unwrap();
    wait_until("New", WAIT, || has(&qf, "L1", &[(150, "0"), (39, "0")]));
    fix.stop().unwrap();
    wait_until("logged out", WAIT, || qf.logouts() >= 1);
    drop(fix);
    let port = gateway.addr.port();
    drop(gateway); // SIGKILL

    let mut other = Counterparty::login(dir.path(), exchange.addr);
    for id in [1, 2] {
        let answer = other.order(id, Side::Sell, 10025, 1, TimeInForce::Ioc);
        assert!(matches!(answer, Outbound::Accepted(_)), "{answer:?}");
    }

    // The gateway comes back on the same store (and, for QuickFIX, the same port).
    let listen = format!("127.0.0.1:{port}");
    let _gateway = start_gateway_at(dir.path(), exchange.addr, &listen, "gateway-2.log");
    wait_until("the fills replayed to the restarted gateway", WAIT, || {
        log_has(dir.path(), "gateway-2.log", "2 missed report(s) replayed")
    });
    let mut fix = kit.start();
    wait_until("both fills made while no gateway ran, resent", WAIT, || {
        has(&qf, "L1", &[(150, "F"), (14, "1"), (151, "4")])
            && has(&qf, "L1", &[(150, "F"), (14, "2"), (151, "3")])
    });
    let fills: Vec<Seen> = about(&qf, "L1")
        .into_iter()
        .filter(|m| m.field(150) == Some("F"))
        .collect();
    assert_eq!(fills.len(), 2, "each fill once: {fills:?}");
    assert!(fills.iter().all(|m| m.poss_dup), "both came by resend");
    assert_ne!(fills[0].field(17), fills[1].field(17), "distinct ExecIDs");
    fix.stop().unwrap();
}

/// A Logon from CLIENT1 as raw bytes.
fn logon_bytes(password: &str) -> Vec<u8> {
    let mut enc = peregrine_fix::codec::Encoder::default();
    let mut w = enc.start(b"A");
    w.bytes(49, b"CLIENT1")
        .bytes(56, b"PEREGRINE")
        .uint(34, 1)
        .timestamp(
            52,
            peregrine_types::wall_ns(),
            peregrine_fix::codec::Precision::Millis,
        )
        .uint(98, 0)
        .uint(108, 30)
        .text(554, password);
    w.seal().to_vec()
}
