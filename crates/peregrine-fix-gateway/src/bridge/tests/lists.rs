//! Order lists: E → the native NewOrderList, the legs' reports, ListStatus → N,
//! K → CancelList, and the lists in the store.

use super::*;
use peregrine_types::{ListKind, OrderType, TriggerKind};
use peregrine_wire::field::{ListState, OrderStage};
use peregrine_wire::v2::venue::{AcceptedExt, ListStatus, NewOrderList};

/// An E: ListID `list`, ContingencyType `contingency`, and `legs` as (ClOrdID,
/// Side, OrderQty, OrdType, Price, StopPx).
fn e(h: &mut Harness, list: &str, contingency: &str, legs: &[[&str; 6]]) -> Vec<u8> {
    let n = legs.len().to_string();
    let mut f: Vec<(u32, &str)> = vec![(66, list), (1385, contingency), (68, &n), (73, &n)];
    for [cl, side, qty, ord_type, price, stop] in legs {
        f.extend([
            (11, *cl),
            (55, "PGN-USD"),
            (54, *side),
            (38, *qty),
            (40, *ord_type),
        ]);
        if !price.is_empty() {
            f.push((44, price));
        }
        if !stop.is_empty() {
            f.push((99, stop));
        }
        f.push((59, "1"));
    }
    h.msg("E", &f)
}

/// An OCO sell: a take-profit limit at 110.00 and a stop (protection 80.00) at 90.00.
fn oco(h: &mut Harness, list: &str) -> NewOrderList {
    let raw = e(
        h,
        list,
        "1",
        &[
            ["TP", "2", "2", "2", "110", ""],
            ["SL", "2", "2", "3", "80", "90"],
        ],
    );
    h.feed(&raw);
    let native = h.native();
    let [Inbound::NewOrderList(m)] = native.as_slice() else {
        panic!("{native:?}")
    };
    *m
}

fn list_status(m: &NewOrderList, status: ListState, request: u64, seq: u64) -> Outbound {
    Outbound::ListStatus(ListStatus {
        session_seq: 0,
        engine_seq: seq,
        engine_time: Timestamp(T0),
        list_id: OrderId(if status == ListState::Rejected {
            0
        } else {
            500
        }),
        client_list_id: m.client_list_id,
        request_id: ClientOrderId(request),
        leg0: OrderId(500),
        leg1: OrderId(501),
        leg2: OrderId(0),
        report_seq: seq,
        instrument: m.instrument,
        account: AccountId(1),
        reason: ReasonCode(if status == ListState::Rejected { 35 } else { 0 }),
        kind: m.kind,
        status,
        leg: 0,
        reserved: Pad,
    })
}

fn leg_accepted(m: &NewOrderList, k: usize, seq: u64) -> Outbound {
    let l = m.legs()[k];
    Outbound::AcceptedExt(AcceptedExt {
        session_seq: 0,
        engine_seq: seq,
        engine_time: Timestamp(T0),
        order_id: OrderId(500 + k as u64),
        client_order_id: l.client_order_id,
        price: l.price,
        qty: l.qty,
        expire_at: l.expire_at,
        stop_price: l.stop_price,
        display_qty: l.display_qty,
        list_id: OrderId(500),
        report_seq: seq,
        instrument: m.instrument,
        account: AccountId(1),
        trail: l.trail,
        side: l.side,
        order_type: l.order_type,
        tif: l.tif,
        stp: l.stp,
        trigger: l.trigger,
        trail_unit: l.trail_unit,
        stage: OrderStage::Active,
        reserved: Pad,
    })
}

fn leg_cancelled(m: &NewOrderList, k: usize, request: u64, seq: u64) -> Outbound {
    let l = m.legs()[k];
    Outbound::Cancelled(Cancelled {
        session_seq: 0,
        engine_seq: seq,
        engine_time: Timestamp(T0),
        order_id: OrderId(500 + k as u64),
        client_order_id: l.client_order_id,
        request_id: ClientOrderId(request),
        cancelled_qty: l.qty,
        instrument: m.instrument,
        reason: ReasonCode(peregrine_book::CancelReason::ListCancelled as u16),
        side: l.side,
        reserved: Pad,
        report_seq: seq,
        account: AccountId(1),
    })
}

fn on(h: &mut Harness, m: Outbound) {
    h.bridge.on_native(&m, T0).unwrap();
}

/// The group of an N: (ClOrdID, OrdStatus, CumQty, LeavesQty, CxlQty) per order.
fn n_orders(f: &[(u32, String)]) -> Vec<[String; 5]> {
    let mut out: Vec<[String; 5]> = Vec::new();
    for (tag, v) in f {
        let at = match tag {
            11 => {
                out.push(Default::default());
                0
            }
            39 => 1,
            14 => 2,
            151 => 3,
            84 => 4,
            _ => continue,
        };
        out.last_mut().unwrap()[at] = v.clone();
    }
    out
}

fn s(v: [&str; 5]) -> [String; 5] {
    v.map(String::from)
}

/// An OCO (ContingencyType 1): one native NewOrderList of two legs with their own
/// ids; accepted → N executing (429=2, 431=3); each leg's AcceptedExt → its New
/// with its ClOrdID from the group; one leg fills, the other is cancelled by the
/// list → F and 4; the list resolves → N all done (429=5, 431=6) with each leg's
/// state.
#[test]
fn an_oco_maps_to_the_native_list_and_its_legs_report_as_orders() {
    let mut h = Harness::new();
    let m = oco(&mut h, "L1");
    assert_eq!((m.kind, m.instrument), (ListKind::Oco, InstrumentId(7)));
    let legs = m.legs();
    assert_eq!(
        (
            legs[0].price.units(),
            legs[0].qty.lots(),
            legs[0].order_type
        ),
        (11000, 20, OrderType::Limit)
    );
    assert_eq!(legs[0].trigger, TriggerKind::None);
    assert_eq!(
        (
            legs[1].stop_price.units(),
            legs[1].price.units(),
            legs[1].trigger
        ),
        (9000, 8000, TriggerKind::StopLoss)
    );
    assert_eq!(legs[1].order_type, OrderType::Market);
    assert_eq!((legs[0].side, legs[1].side), (Side::Sell, Side::Sell));
    let ids = [
        m.client_list_id.0,
        legs[0].client_order_id.0,
        legs[1].client_order_id.0,
    ];
    assert!(
        ids[0] != ids[1] && ids[1] != ids[2] && ids[0] != ids[2],
        "{ids:?}"
    );
    assert_eq!(legs[2].client_order_id, ClientOrderId(0));
    assert!(h.out().is_empty());

    on(
        &mut h,
        list_status(&m, ListState::Accepted, m.client_list_id.0, 1),
    );
    on(&mut h, leg_accepted(&m, 0, 2));
    on(&mut h, leg_accepted(&m, 1, 3));
    let out = h.out();
    let types: Vec<&str> = out.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(types, ["N", "8", "8"]);
    let n = &out[0].1;
    assert_eq!(
        (get(n, 66), get(n, 429), get(n, 431), get(n, 68), get(n, 73)),
        (Some("L1"), Some("2"), Some("3"), Some("2"), Some("2"))
    );
    assert_eq!(
        n_orders(n),
        [
            s(["TP", "0", "0.0", "2.0", "0.0"]),
            s(["SL", "0", "0.0", "2.0", "0.0"])
        ]
    );
    for ((_, f), cl) in out[1..].iter().zip(["TP", "SL"]) {
        assert_eq!(
            (get(f, 11), get(f, 150), get(f, 39)),
            (Some(cl), Some("0"), Some("0"))
        );
    }

    fill(&mut h, legs[0].client_order_id, 20, 0, 4);
    on(&mut h, leg_cancelled(&m, 1, 0, 5));
    on(&mut h, list_status(&m, ListState::Done, 0, 6));
    let out = h.out();
    let types: Vec<&str> = out.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(types, ["8", "8", "N"]);
    assert_eq!(
        (get(&out[0].1, 11), get(&out[0].1, 150), get(&out[0].1, 39)),
        (Some("TP"), Some("F"), Some("2"))
    );
    assert_eq!(
        (get(&out[1].1, 11), get(&out[1].1, 150), get(&out[1].1, 39)),
        (Some("SL"), Some("4"), Some("4"))
    );
    let n = &out[2].1;
    assert_eq!((get(n, 429), get(n, 431)), (Some("5"), Some("6")));
    assert_eq!(
        n_orders(n),
        [
            s(["TP", "2", "2.0", "0.0", "0.0"]),
            s(["SL", "4", "0.0", "0.0", "2.0"])
        ]
    );
    assert_eq!(get(n, 6), Some("100.00"));
}

/// OTO (2 with two orders) and OTOCO (2 with three) map to their native kinds.
#[test]
fn oto_and_otoco_map_to_their_native_kinds() {
    let mut h = Harness::new();
    let buy = ["W", "1", "1", "2", "100", ""];
    for (legs, kind) in [
        (&[buy, ["P1", "2", "1", "2", "120", ""]][..], ListKind::Oto),
        (
            &[
                ["W2", "1", "1", "2", "100", ""],
                ["P2", "2", "1", "2", "120", ""],
                ["P3", "2", "1", "3", "80", "90"],
            ][..],
            ListKind::Otoco,
        ),
    ] {
        let raw = e(&mut h, &format!("{kind:?}"), "2", legs);
        h.feed(&raw);
        let native = h.native();
        let [Inbound::NewOrderList(m)] = native.as_slice() else {
            panic!("{native:?}")
        };
        assert_eq!(m.kind, kind);
        let n = legs.len();
        assert!(m.legs()[..n].iter().all(|l| l.client_order_id.0 != 0));
        assert!(m.legs()[n..].iter().all(|l| l.client_order_id.0 == 0));
    }
}

/// K → the native CancelList of the list's exchange id; its legs' Cancelled reports
/// and the list's done status → 4s and N all done. An unknown ListID, or a list not
/// acknowledged yet, gets a BusinessMessageReject (no native request).
#[test]
fn a_list_cancel_request_cancels_the_list() {
    let mut h = Harness::new();
    let k = h.msg("K", &[(66, "nope"), (60, "20231114-22:13:20")]);
    h.feed(&k);
    let out = h.out();
    assert_eq!(out.len(), 1);
    assert_eq!(
        (
            out[0].0.as_str(),
            get(&out[0].1, 372),
            get(&out[0].1, 380),
            get(&out[0].1, 379)
        ),
        ("j", Some("K"), Some("1"), Some("nope"))
    );
    let m = oco(&mut h, "L1");
    let k = h.msg("K", &[(66, "L1"), (60, "20231114-22:13:20")]);
    h.feed(&k);
    assert!(h.native().is_empty());
    assert_eq!(
        get(&h.out()[0].1, 58),
        Some("list not yet acknowledged by the exchange")
    );

    on(
        &mut h,
        list_status(&m, ListState::Accepted, m.client_list_id.0, 1),
    );
    on(&mut h, leg_accepted(&m, 0, 2));
    on(&mut h, leg_accepted(&m, 1, 3));
    h.out();
    let k = h.msg("K", &[(66, "L1"), (60, "20231114-22:13:20")]);
    h.feed(&k);
    let native = h.native();
    let [Inbound::CancelList(c)] = native.as_slice() else {
        panic!("{native:?}")
    };
    assert_eq!((c.list_id, c.instrument), (OrderId(500), InstrumentId(7)));
    let req = c.client_order_id.0;
    on(&mut h, leg_cancelled(&m, 0, req, 4));
    on(&mut h, leg_cancelled(&m, 1, req, 5));
    on(&mut h, list_status(&m, ListState::Done, req, 6));
    let out = h.out();
    let types: Vec<&str> = out.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(types, ["8", "8", "N"]);
    assert_eq!(get(&out[2].1, 431), Some("6"));
    assert_eq!(
        n_orders(&out[2].1),
        [
            s(["TP", "4", "0.0", "0.0", "2.0"]),
            s(["SL", "4", "0.0", "0.0", "2.0"])
        ]
    );
    // Done: a second K is refused by the gateway.
    let k = h.msg("K", &[(66, "L1"), (60, "20231114-22:13:20")]);
    h.feed(&k);
    assert!(h.native().is_empty());
    assert_eq!(get(&h.out()[0].1, 58), Some("list is done"));
}

/// A list the exchange refuses → N reject (431=7) with the reason, its legs
/// Rejected and their ClOrdIDs free again; lists the gateway refuses itself (no
/// ContingencyType, an OCO of three, an unknown symbol, a ClOrdID of a live order)
/// → N reject without a native request.
#[test]
fn refused_lists_get_a_list_status_reject() {
    let mut h = Harness::new();
    let m = oco(&mut h, "L1");
    on(
        &mut h,
        list_status(&m, ListState::Rejected, m.client_list_id.0, 1),
    );
    let out = h.out();
    assert_eq!(out.len(), 1);
    let n = &out[0].1;
    assert_eq!((out[0].0.as_str(), get(n, 431)), ("N", Some("7")));
    assert!(get(n, 444).is_some_and(|t| !t.is_empty()));
    assert_eq!(
        n_orders(n),
        [
            s(["TP", "8", "0.0", "0.0", "0.0"]),
            s(["SL", "8", "0.0", "0.0", "0.0"])
        ]
    );
    // The legs are not live: the same ClOrdIDs (and ListID) may be used again.
    oco(&mut h, "L1");
    assert!(h.out().is_empty());

    let mut h = Harness::new();
    let two = [
        ["A", "1", "1", "2", "100", ""],
        ["B", "1", "1", "2", "99", ""],
    ];
    let three = [two[0], two[1], ["C", "1", "1", "2", "98", ""]];
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (e(&mut h, "X1", "4", &two), "1385"),
        (e(&mut h, "X2", "1", &three), "an OCO has 2 orders"),
        (
            e(&mut h, "X3", "1", &[two[0], ["A", "1", "1", "2", "99", ""]]),
            "ClOrdID",
        ),
    ];
    for (raw, text) in cases {
        h.feed(&raw);
        assert!(h.native().is_empty(), "{text}");
        let out = h.out();
        assert_eq!(out.len(), 1, "{text}");
        assert_eq!(
            (out[0].0.as_str(), get(&out[0].1, 431)),
            ("N", Some("7")),
            "{text}"
        );
        assert!(
            get(&out[0].1, 444).is_some_and(|t| t.contains(text)),
            "{out:?}"
        );
    }
    h.bridge.native_ready = false;
    let raw = e(&mut h, "X4", "1", &two);
    h.feed(&raw);
    assert!(h.native().is_empty());
    assert_eq!(
        get(&h.out()[0].1, 444),
        Some("exchange session not available")
    );
}

/// The lists live in the store: a restarted gateway maps the list's reports and a
/// K as before the restart.
#[test]
fn lists_survive_a_restart() {
    let mut h = Harness::new();
    let m = oco(&mut h, "L1");
    on(
        &mut h,
        list_status(&m, ListState::Accepted, m.client_list_id.0, 1),
    );
    on(&mut h, leg_accepted(&m, 0, 2));
    h.out();
    let mut h = h.restart();
    on(&mut h, leg_accepted(&m, 1, 3));
    let out = h.out();
    assert_eq!(
        (out.len(), get(&out[0].1, 11), get(&out[0].1, 150)),
        (1, Some("SL"), Some("0"))
    );
    let k = h.msg("K", &[(66, "L1"), (60, "20231114-22:13:20")]);
    h.feed(&k);
    let native = h.native();
    let [Inbound::CancelList(c)] = native.as_slice() else {
        panic!("{native:?}")
    };
    assert_eq!(c.list_id, OrderId(500));
    let mut h = h.restart();
    let req = c.client_order_id.0;
    on(&mut h, leg_cancelled(&m, 0, req, 4));
    on(&mut h, leg_cancelled(&m, 1, req, 5));
    on(&mut h, list_status(&m, ListState::Done, req, 6));
    let out = h.out();
    let types: Vec<&str> = out.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(types, ["8", "8", "N"], "{out:?}");
    assert_eq!(get(&out[2].1, 66), Some("L1"));
    assert_eq!(
        n_orders(&out[2].1),
        [
            s(["TP", "4", "0.0", "0.0", "2.0"]),
            s(["SL", "4", "0.0", "0.0", "2.0"])
        ]
    );
}

/// The store format: a record of a build before order lists (no lists section) is
/// read as before; one with the section round-trips; an unknown section marker, an
/// empty section or a list naming an order that does not exist is refused.
#[test]
fn the_lists_section_is_optional_and_checked() {
    let mut old = Vec::new();
    old.extend_from_slice(&5u64.to_le_bytes());
    old.extend_from_slice(&6u64.to_le_bytes());
    old.extend_from_slice(&0u32.to_le_bytes());
    old.extend_from_slice(&0u32.to_le_bytes());
    assert_eq!(super::super::replay_state_record(&old, 1).unwrap(), old);

    let mut h = Harness::new();
    oco(&mut h, "L1");
    h.bridge.table.settle_dirty();
    let mut rec = Vec::new();
    super::super::persist::encode_changes(&mut h.bridge.table, &mut rec);
    assert_eq!(super::super::replay_state_record(&rec, 1).unwrap(), rec);
    let at = rec.len() - (4 + 2 + 2 + 8 + 1 + 8 + 1 + 1 + 8) - 4 - 1;
    assert_eq!(rec[at], 1, "the section marker");
    let mut bad = rec.clone();
    bad[at] = 2;
    assert!(super::super::replay_state_record(&bad, 1).is_err());
    let mut empty = rec[..at].to_vec();
    empty.push(1);
    empty.extend_from_slice(&0u32.to_le_bytes());
    assert!(super::super::replay_state_record(&empty, 1).is_err());
    let mut dangling = rec.clone();
    let last = dangling.len() - 4;
    dangling[last..].copy_from_slice(&9u32.to_le_bytes());
    assert_eq!(
        super::super::replay_state_record(&dangling, 1),
        Err(super::super::StateRecordError::UnknownOrder(9))
    );
}

/// A ListStatusRequest (M): an unknown ListID is a BusinessMessageReject (380=1,
/// 372=M); a known list's N answers with ListStatusType 2 and its state in each
/// phase: received (sent, not yet accepted: 431=2), executing (3) with the legs'
/// fills, all done (6); nothing goes to the exchange.
#[test]
fn a_list_status_request_answers_with_the_list_state() {
    let mut h = Harness::new();
    let ask = |h: &mut Harness, list: &str| {
        let m = h.msg("M", &[(66, list)]);
        h.feed(&m);
        assert!(h.native().is_empty());
        let out = h.out();
        assert_eq!(out.len(), 1, "{out:?}");
        out.into_iter().next().unwrap()
    };
    let (t, f) = ask(&mut h, "nope");
    assert_eq!(
        (t.as_str(), get(&f, 372), get(&f, 380), get(&f, 379)),
        ("j", Some("M"), Some("1"), Some("nope"))
    );

    let m = oco(&mut h, "L1");
    let (t, n) = ask(&mut h, "L1");
    assert_eq!(
        (t.as_str(), get(&n, 66), get(&n, 429), get(&n, 431)),
        ("N", Some("L1"), Some("2"), Some("2"))
    );
    on(
        &mut h,
        list_status(&m, ListState::Accepted, m.client_list_id.0, 1),
    );
    on(&mut h, leg_accepted(&m, 0, 2));
    on(&mut h, leg_accepted(&m, 1, 3));
    fill(&mut h, m.legs()[0].client_order_id, 5, 15, 4);
    h.out();
    let (_, n) = ask(&mut h, "L1");
    assert_eq!((get(&n, 429), get(&n, 431)), (Some("2"), Some("3")));
    assert_eq!(
        n_orders(&n),
        [
            s(["TP", "1", "0.5", "1.5", "0.0"]),
            s(["SL", "0", "0.0", "2.0", "0.0"])
        ]
    );
    fill(&mut h, m.legs()[0].client_order_id, 15, 0, 5);
    on(&mut h, leg_cancelled(&m, 1, 0, 6));
    on(&mut h, list_status(&m, ListState::Done, 0, 7));
    h.out();
    let (_, n) = ask(&mut h, "L1");
    assert_eq!((get(&n, 429), get(&n, 431)), (Some("2"), Some("6")));
    assert_eq!(
        n_orders(&n),
        [
            s(["TP", "2", "2.0", "0.0", "0.0"]),
            s(["SL", "4", "0.0", "0.0", "2.0"])
        ]
    );
}
