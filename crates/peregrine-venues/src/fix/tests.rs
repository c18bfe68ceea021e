//! The FIX venue against a scripted FIX acceptor (`peregrine-fix`'s session as the
//! venue) over a real socket: Logon, order → Ack, fill, replace (OrderQty is the
//! total), cancel, a refused cancel, and a disconnect that rejects what was not
//! acknowledged. QuickFIX as the venue, and Peregrine's gateway as the venue, are in
//! `crates/peregrine/tests/fix_venue.rs`.

use peregrine_types::wall_ns;
use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use peregrine_fix::app::{
    CxlRejReason, CxlRejResponseTo, ExecType, ExecutionReport, NewOrderSingle, OrdStatus,
    OrderCancelReject, OrderCancelReplaceRequest, OrderCancelRequest,
};
use peregrine_fix::codec::{Message, Precision};
use peregrine_fix::session::{Event, Received, Role, Session, SessionConfig};
use peregrine_fix::store::MemoryStore;
use peregrine_types::{InstrumentId, Price, Qty, Side};

use super::{FixInstrument, FixVenue, FixVenueConfig};
use crate::{Report, Venue, VenueOrder};

/// The scripted venue: one connection, one session.
struct ScriptedVenue {
    stream: TcpStream,
    session: Session<MemoryStore>,
    rx: Vec<u8>,
    /// Requests seen: (MsgType, ClOrdID, OrigClOrdID, OrderQty).
    seen: Vec<(String, String, String, String)>,
}

impl ScriptedVenue {
    fn pump(&mut self) {
        let mut buf = [0u8; 4096];
        match self.stream.read(&mut buf) {
            Ok(n) => self.rx.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == ErrorKind::WouldBlock => {}
            Err(e) => panic!("{e}"),
        }
        let rx = std::mem::take(&mut self.rx);
        let mut used = 0;
        while let Received::Consumed { len, event } =
            self.session.receive(&rx[used..], wall_ns()).unwrap()
        {
            used += len;
            if let Some(Event::App(m)) = event {
                self.record(&m);
            }
        }
        self.rx = rx[used..].to_vec();
        let out = self.session.outbound().unwrap().to_vec();
        self.stream.write_all(&out).unwrap();
        self.session.consume_outbound(out.len());
    }

    fn record(&mut self, m: &Message<'_>) {
        let s = |v: &[u8]| String::from_utf8_lossy(v).into_owned();
        let row = match m.msg_type() {
            b"D" => {
                let d = NewOrderSingle::decode(m).unwrap();
                (
                    "D".into(),
                    s(d.cl_ord_id),
                    String::new(),
                    s(d.terms.order_qty),
                )
            }
            b"F" => {
                let f = OrderCancelRequest::decode(m).unwrap();
                (
                    "F".into(),
                    s(f.cl_ord_id),
                    s(f.orig_cl_ord_id),
                    String::new(),
                )
            }
            b"G" => {
                let g = OrderCancelReplaceRequest::decode(m).unwrap();
                (
                    "G".into(),
                    s(g.cl_ord_id),
                    s(g.orig_cl_ord_id),
                    s(g.terms.order_qty),
                )
            }
            other => (s(other), String::new(), String::new(), String::new()),
        };
        self.seen.push(row);
    }

    #[allow(clippy::too_many_arguments)]
    fn report(
        &mut self,
        cl: &str,
        orig: Option<&str>,
        exec_type: ExecType,
        status: OrdStatus,
        last: Option<(i64, i64)>,
        leaves: i64,
        cum: i64,
        price: i64,
    ) {
        let exec_id = wall_ns().to_string();
        let er = ExecutionReport {
            order_id: 77,
            cl_ord_id: cl.as_bytes(),
            orig_cl_ord_id: orig.map(str::as_bytes),
            exec_id: exec_id.as_bytes(),
            exec_type,
            ord_status: status,
            symbol: b"PGN-USD",
            side: peregrine_fix::app::Side::Buy,
            ord_type: None,
            time_in_force: None,
            order_qty: None,
            price: Some(price),
            last,
            leaves_qty: leaves,
            cum_qty: cum,
            notional: 0,
            ord_rej_reason: None,
            text: None,
            ord_status_req_id: None,
            transact_time: wall_ns(),
            price_decimals: 2,
            qty_decimals: 0,
        };
        self.session
            .send_app(b"8", wall_ns(), |w| er.encode(w, Precision::Millis))
            .unwrap();
    }
}

fn drive(
    venue: &mut FixVenue,
    scripted: &mut ScriptedVenue,
    reports: &mut Vec<Report>,
    until: impl Fn(&[Report], &ScriptedVenue) -> bool,
) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !until(reports, scripted) {
        assert!(
            Instant::now() < deadline,
            "timed out; reports {reports:?}, seen {:?}",
            scripted.seen
        );
        venue.poll(wall_ns(), &mut |r| reports.push(r));
        scripted.pump();
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn config(addr: &str) -> FixVenueConfig {
    FixVenueConfig::new(
        addr,
        "ENGINE",
        "VENUE",
        vec![FixInstrument {
            id: 1,
            symbol: "PGN-USD".into(),
            price_decimals: 2,
            qty_decimals: 0,
        }],
    )
}

/// A venue adapter logged on to a scripted venue.
fn logged_on_pair() -> (FixVenue, ScriptedVenue, Vec<Report>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let mut venue = FixVenue::new("fix", config(&addr)).unwrap();
    venue.poll(wall_ns(), &mut |_| {});
    let (stream, _) = listener.accept().unwrap();
    stream.set_nonblocking(true).unwrap();
    let mut session = Session::new(
        SessionConfig::new(Role::Acceptor, "VENUE", "ENGINE"),
        MemoryStore::new(wall_ns()),
    );
    session.connect(wall_ns()).unwrap();
    let mut v = ScriptedVenue {
        stream,
        session,
        rx: Vec::new(),
        seen: Vec::new(),
    };
    let mut reports = Vec::new();
    drive(&mut venue, &mut v, &mut reports, |_, v| {
        v.session.is_logged_on()
    });
    let deadline = Instant::now() + Duration::from_secs(10);
    while !venue.logged_on() {
        assert!(Instant::now() < deadline, "no logon");
        venue.poll(wall_ns(), &mut |r| reports.push(r));
        v.pump();
        std::thread::sleep(Duration::from_millis(2));
    }
    (venue, v, reports)
}

/// Submits a buy of `qty` at `price` as engine order `id`, waits for the venue to
/// see it, and returns its ClOrdID.
fn submit_buy(
    venue: &mut FixVenue,
    v: &mut ScriptedVenue,
    reports: &mut Vec<Report>,
    id: u64,
    price: i64,
    qty: i64,
) -> String {
    let seen = v.seen.iter().filter(|s| s.0 == "D").count();
    let order = VenueOrder::limit(
        id,
        InstrumentId(1),
        Side::Buy,
        Price::from_raw(price),
        Qty::from_raw(qty),
    );
    venue.submit(order, wall_ns()).unwrap();
    drive(venue, v, reports, |_, v| {
        v.seen.iter().filter(|s| s.0 == "D").count() > seen
    });
    v.seen.iter().rfind(|s| s.0 == "D").unwrap().1.clone()
}

/// Polls both sides for a while (long enough for a message to cross many times).
fn settle(venue: &mut FixVenue, v: &mut ScriptedVenue, reports: &mut Vec<Report>) {
    for _ in 0..50 {
        venue.poll(wall_ns(), &mut |r| reports.push(r));
        v.pump();
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// A cancel asked for before the venue acknowledged the order, or while a replace
/// is in flight, waits: the venue renames the order when a replace takes effect, so
/// a cancel naming the old ClOrdID could arrive after the rename and be refused as
/// unknown, leaving the order live (seen: an engine's kill switch racing a maker's
/// requote). It goes out, naming the order's ClOrdID then, once the order can be
/// named.
#[test]
fn a_cancel_waits_for_the_ack_and_for_a_replace_in_flight() {
    let (mut venue, mut v, mut reports) = logged_on_pair();
    let count = |v: &ScriptedVenue, t: &str| v.seen.iter().filter(|s| s.0 == t).count();
    let cl = submit_buy(&mut venue, &mut v, &mut reports, 5, 10025, 10);

    // Not acknowledged yet: the cancel waits for the ack.
    venue.cancel(5, wall_ns()).unwrap();
    settle(&mut venue, &mut v, &mut reports);
    assert_eq!(count(&v, "F"), 0, "{:?}", v.seen);
    v.report(&cl, None, ExecType::New, OrdStatus::New, None, 10, 0, 10025);
    drive(&mut venue, &mut v, &mut reports, |_, v| count(v, "F") == 1);
    let f = v.seen.iter().find(|s| s.0 == "F").unwrap().clone();
    assert_eq!(f.2, cl, "the cancel names the acknowledged order");
    assert!(matches!(reports[0], Report::Ack { engine_id: 5, .. }));
    // The venue refuses that cancel (say, a rule of its own): the order is still live.
    let reject = OrderCancelReject {
        order_id: 77,
        cl_ord_id: f.1.as_bytes(),
        orig_cl_ord_id: cl.as_bytes(),
        ord_status: OrdStatus::New,
        response_to: CxlRejResponseTo::Cancel,
        reason: CxlRejReason::ExchangeOption,
        text: None,
    };
    v.session
        .send_app(b"9", wall_ns(), |w| reject.encode(w))
        .unwrap();
    drive(&mut venue, &mut v, &mut reports, |r, _| r.len() >= 2);

    // A replace in flight: a cancel waits for its answer, then names the new ClOrdID.
    venue
        .replace(5, Price::from_raw(10020), Qty::from_raw(10), wall_ns())
        .unwrap();
    drive(&mut venue, &mut v, &mut reports, |_, v| count(v, "G") == 1);
    venue.cancel(5, wall_ns()).unwrap();
    settle(&mut venue, &mut v, &mut reports);
    assert_eq!(count(&v, "F"), 1, "{:?}", v.seen);
    let g = v.seen.iter().find(|s| s.0 == "G").unwrap().clone();
    v.report(
        &g.1,
        Some(&cl),
        ExecType::Replaced,
        OrdStatus::New,
        None,
        10,
        0,
        10020,
    );
    drive(&mut venue, &mut v, &mut reports, |_, v| count(v, "F") == 2);
    let f2 = v.seen.iter().rfind(|s| s.0 == "F").unwrap().clone();
    assert_eq!(
        f2.2, g.1,
        "the cancel names the order as the replace renamed it"
    );

    // The venue cancels order 5.
    v.report(
        &f2.1,
        Some(&g.1),
        ExecType::Canceled,
        OrdStatus::Canceled,
        None,
        0,
        0,
        10020,
    );
    drive(&mut venue, &mut v, &mut reports, |r, _| {
        r.iter()
            .any(|r| matches!(r, Report::Cancelled { engine_id: 5, .. }))
    });
    // A replace the venue refuses: the waiting cancel then names the unchanged order.
    let cl6 = submit_buy(&mut venue, &mut v, &mut reports, 6, 10000, 1);
    v.report(&cl6, None, ExecType::New, OrdStatus::New, None, 1, 0, 10000);
    drive(&mut venue, &mut v, &mut reports, |r, _| {
        r.iter()
            .any(|r| matches!(r, Report::Ack { engine_id: 6, .. }))
    });
    venue
        .replace(6, Price::from_raw(10010), Qty::from_raw(1), wall_ns())
        .unwrap();
    drive(&mut venue, &mut v, &mut reports, |_, v| count(v, "G") == 2);
    venue.cancel(6, wall_ns()).unwrap();
    settle(&mut venue, &mut v, &mut reports);
    assert_eq!(count(&v, "F"), 2, "{:?}", v.seen);
    let g6 = v.seen.iter().rfind(|s| s.0 == "G").unwrap().clone();
    let refuse = OrderCancelReject {
        order_id: 78,
        cl_ord_id: g6.1.as_bytes(),
        orig_cl_ord_id: cl6.as_bytes(),
        ord_status: OrdStatus::New,
        response_to: CxlRejResponseTo::Replace,
        reason: CxlRejReason::ExchangeOption,
        text: None,
    };
    v.session
        .send_app(b"9", wall_ns(), |w| refuse.encode(w))
        .unwrap();
    drive(&mut venue, &mut v, &mut reports, |_, v| count(v, "F") == 3);
    let f3 = v.seen.iter().rfind(|s| s.0 == "F").unwrap().clone();
    assert_eq!(
        f3.2, cl6,
        "the refused replace left the order's ClOrdID as it was"
    );
    assert!(reports
        .iter()
        .any(|r| matches!(r, Report::ReplaceRejected { engine_id: 6, .. })));
}

#[test]
fn orders_fills_replaces_and_cancels_map_to_reports() {
    let (mut venue, mut v, mut reports) = logged_on_pair();

    let order = VenueOrder::limit(
        5,
        InstrumentId(1),
        Side::Buy,
        Price::from_raw(10025),
        Qty::from_raw(10),
    );
    venue.submit(order, wall_ns()).unwrap();
    drive(&mut venue, &mut v, &mut reports, |_, v| {
        v.seen.iter().any(|s| s.0 == "D")
    });
    let cl = v.seen[0].1.clone();
    assert_eq!(v.seen[0].3, "10");
    v.report(&cl, None, ExecType::New, OrdStatus::New, None, 10, 0, 10025);
    v.report(
        &cl,
        None,
        ExecType::Trade,
        OrdStatus::PartiallyFilled,
        Some((10025, 4)),
        6,
        4,
        10025,
    );
    drive(&mut venue, &mut v, &mut reports, |r, _| r.len() >= 2);
    assert_eq!(
        reports[0],
        Report::Ack {
            engine_id: 5,
            venue_id: 77
        }
    );
    assert_eq!(
        reports[1],
        Report::Fill {
            engine_id: 5,
            price: Price::from_raw(10025),
            qty: Qty::from_raw(4),
            leaves: Qty::from_raw(6)
        }
    );

    // Replace to 3 open at 100.20: OrderQty on the wire is 4 filled + 3 = 7.
    venue
        .replace(5, Price::from_raw(10020), Qty::from_raw(3), wall_ns())
        .unwrap();
    drive(&mut venue, &mut v, &mut reports, |_, v| {
        v.seen.iter().any(|s| s.0 == "G")
    });
    let g = v.seen.iter().find(|s| s.0 == "G").unwrap().clone();
    assert_eq!((g.2.as_str(), g.3.as_str()), (cl.as_str(), "7"));
    v.report(
        &g.1,
        Some(&cl),
        ExecType::Replaced,
        OrdStatus::PartiallyFilled,
        None,
        3,
        4,
        10020,
    );
    drive(&mut venue, &mut v, &mut reports, |r, _| r.len() >= 3);
    assert_eq!(
        reports[2],
        Report::Replaced {
            engine_id: 5,
            price: Price::from_raw(10020),
            qty: Qty::from_raw(3)
        }
    );

    // A refused cancel, then a cancel: OrigClOrdID is the replace's ClOrdID now.
    venue.cancel(5, wall_ns()).unwrap();
    drive(&mut venue, &mut v, &mut reports, |_, v| {
        v.seen.iter().filter(|s| s.0 == "F").count() == 1
    });
    let f = v.seen.iter().find(|s| s.0 == "F").unwrap().clone();
    assert_eq!(f.2, g.1);
    let reject = OrderCancelReject {
        order_id: 77,
        cl_ord_id: f.1.as_bytes(),
        orig_cl_ord_id: g.1.as_bytes(),
        ord_status: OrdStatus::PartiallyFilled,
        response_to: CxlRejResponseTo::Cancel,
        reason: CxlRejReason::ExchangeOption,
        text: None,
    };
    v.session
        .send_app(b"9", wall_ns(), |w| reject.encode(w))
        .unwrap();
    drive(&mut venue, &mut v, &mut reports, |r, _| r.len() >= 4);
    assert_eq!(
        reports[3],
        Report::CancelRejected {
            engine_id: 5,
            reason: 2
        }
    );
    venue.cancel(5, wall_ns()).unwrap();
    drive(&mut venue, &mut v, &mut reports, |_, v| {
        v.seen.iter().filter(|s| s.0 == "F").count() == 2
    });
    let f2 = v.seen.iter().rfind(|s| s.0 == "F").unwrap().clone();
    v.report(
        &f2.1,
        Some(&g.1),
        ExecType::Canceled,
        OrdStatus::Canceled,
        None,
        0,
        4,
        10020,
    );
    drive(&mut venue, &mut v, &mut reports, |r, _| r.len() >= 5);
    assert_eq!(
        reports[4],
        Report::Cancelled {
            engine_id: 5,
            qty: Qty::from_raw(3),
            leaves: Qty::ZERO,
        }
    );

    // An order not yet acknowledged when the venue goes away is in doubt: held, not
    // guessed rejected (after the next logon the venue is asked about it).
    venue
        .submit(
            VenueOrder {
                engine_id: 6,
                ..order
            },
            wall_ns(),
        )
        .unwrap();
    drive(&mut venue, &mut v, &mut reports, |_, v| {
        v.seen.iter().filter(|s| s.0 == "D").count() == 2
    });
    v.stream.shutdown(std::net::Shutdown::Both).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while venue.logged_on() {
        assert!(
            std::time::Instant::now() < deadline,
            "the drop goes unnoticed"
        );
        venue.poll(wall_ns(), &mut |r| reports.push(r));
    }
    assert_eq!(reports.len(), 5, "nothing settled at the drop: {reports:?}");
    assert_eq!(venue.in_doubt(), 1);
}

#[test]
fn bad_settings_are_reported() {
    let mut c = config("nowhere");
    c.instruments.clear();
    c.heartbeat_secs = 0;
    assert_eq!(c.problems("v").len(), 3);
    assert!(FixVenue::new("v", c).is_err());
}

#[test]
fn reject_reasons_are_named_in_each_venues_own_code_space() {
    use crate::sim::SimVenue;
    use crate::Venue;
    // The same number means different things: FIX OrdRejReason 1 is an unknown
    // symbol, the exchange's code 1 an invalid quantity.
    assert_eq!(FixVenue::reason_name(1), "unknown_symbol");
    assert_eq!(FixVenue::reason_name(4), "too_late_to_enter");
    assert_eq!(FixVenue::reason_name(42), "other");
    assert_eq!(SimVenue::reason_name(1), "invalid_qty");
    assert_eq!(SimVenue::reason_name(4), "price_out_of_band");
}
