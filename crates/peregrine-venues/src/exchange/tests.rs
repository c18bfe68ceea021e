//! The adapter against a scripted exchange: an in-process TCP listener that speaks
//! the protocol (the test thread plays the exchange's side message by message). Every
//! blocking read has a timeout and every wait a deadline.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use peregrine_queue::clock::now_ns;
use peregrine_types::{
    AccountId, ClientOrderId, InstrumentId, OrderId, OrderType, Price, Qty, Side, StpMode,
    TimeInForce, Timestamp,
};
use peregrine_wire::auth::AccountKey;
use peregrine_wire::field::{Pad, SessionKind};
use peregrine_wire::stream::RecvBuffer;
use peregrine_wire::v2::reports::{Accepted, CancelRejected, Cancelled, Fill, Rejected, Replaced};
use peregrine_wire::v2::session::{
    Challenge, LoginAccepted, LoginRejected, ReplayEnd, ReplayStart,
};
use peregrine_wire::v2::{Inbound, Outbound};
use peregrine_wire::{LiquidityRole, ReasonCode, RequestKind};

use super::{ExchangeConfig, ExchangeError, ExchangeVenue};
use crate::{Report, Venue, VenueError, VenueOrder, REASON_DISCONNECTED};

const TIMEOUT: Duration = Duration::from_secs(10);

/// Account 3's key (the adapter's config holds it; the fake exchange its hash).
const KEY: AccountKey = AccountKey([0x33; 32]);

/// The exchange's end of one session.
struct Peer {
    stream: TcpStream,
    rx: Box<RecvBuffer<65536>>,
    seq: u64,
    /// Account 3's next report sequence number, and every report sent so far.
    report_next: u64,
    history: Vec<Outbound>,
}

impl Peer {
    /// The next client message (blocking, 10 s timeout).
    fn recv(&mut self) -> Inbound {
        loop {
            if let Some(m) = self.rx.next(Inbound::decode).unwrap() {
                return m;
            }
            let n = self.stream.read(self.rx.spare()).expect("read (timeout?)");
            assert!(n > 0, "the adapter closed the connection");
            self.rx.commit(n);
        }
    }

    /// The next client message that is not a heartbeat.
    fn request(&mut self) -> Inbound {
        loop {
            match self.recv() {
                Inbound::ClientHeartbeat(_) => continue,
                m => return m,
            }
        }
    }

    /// Sends `m`; a report is stamped into account 3's stream first.
    fn send(&mut self, mut m: Outbound) {
        if m.is_report_type() {
            m.set_report_seq(self.report_next);
            self.report_next += 1;
            self.history.push(m);
        }
        self.send_raw(m);
    }

    /// Sends `m` as it is (a replayed report keeps its report sequence number).
    fn send_raw(&mut self, mut m: Outbound) {
        self.seq += 1;
        m.set_session_seq(self.seq);
        let mut buf = [0u8; 512];
        let n = m.encode(&mut buf).unwrap();
        self.stream.write_all(&buf[..n]).unwrap();
    }

    /// Answers the login reconciliation: the mass cancel finds nothing, the barrier
    /// comes back.
    fn answer_reconcile(&mut self, resting: &[(u64, i64)]) {
        let Inbound::MassCancel(mass) = self.request() else {
            panic!("expected the mass cancel");
        };
        assert_eq!((mass.instrument, mass.side), (None, None));
        let Inbound::Cancel(barrier) = self.request() else {
            panic!("expected the barrier");
        };
        assert_eq!(barrier.order_id, OrderId(0));
        for &(order_id, qty) in resting {
            self.send(Outbound::Cancelled(cancelled(
                order_id,
                mass.client_order_id.0,
                qty,
            )));
        }
        self.send(Outbound::CancelRejected(cancel_rejected(
            barrier.client_order_id.0,
            0,
            RequestKind::Cancel,
        )));
    }
}

/// A listener; each call of [`accept`] serves one login on a thread.
fn listener() -> (TcpListener, SocketAddr) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    (l, addr)
}

/// Accepts one connection and answers its login (accepted with `hb_ms`, or
/// rejected). `history` is account 3's stream so far: the reports the login asks
/// for are replayed before live traffic.
fn accept(l: &TcpListener, hb_ms: u32, reject: bool, history: Vec<Outbound>) -> JoinHandle<Peer> {
    let l = l.try_clone().unwrap();
    std::thread::spawn(move || {
        let (stream, _) = l.accept().unwrap();
        stream.set_read_timeout(Some(TIMEOUT)).unwrap();
        let mut p = Peer {
            stream,
            rx: Box::new(RecvBuffer::new()),
            seq: 0,
            report_next: history.len() as u64 + 1,
            history,
        };
        let nonce = [0x5A; 32];
        p.send_raw(
            Challenge {
                session_seq: 0,
                engine_seq: 0,
                engine_time: Timestamp(0),
                nonce,
            }
            .into(),
        );
        let Inbound::Login(login) = p.recv() else {
            panic!("the first message is not a login");
        };
        assert_eq!(login.account, AccountId(3));
        assert_eq!(login.kind, SessionKind::Trading);
        assert!(login.verify(&KEY.stored(), &nonce), "the proof checks out");
        if reject {
            p.send_raw(
                LoginRejected {
                    session_seq: 0,
                    engine_seq: 0,
                    engine_time: Timestamp(0),
                    reason: ReasonCode(1),
                    reserved: Pad,
                    retry_after_ms: 0,
                }
                .into(),
            );
            return p;
        }
        p.send_raw(
            LoginAccepted {
                session_seq: 0,
                engine_seq: 0,
                engine_time: Timestamp(0),
                account: login.account,
                heartbeat_interval_ms: hb_ms,
                next_report_seq: p.report_next,
                oldest_report_seq: 1,
                target: Some(login.account),
                instrument_count: 0,
                kind: SessionKind::Trading,
            }
            .into(),
        );
        let from = match login.next_report_seq {
            0 => p.report_next,
            n => n,
        };
        let replay: Vec<Outbound> = p.history[(from - 1) as usize..].to_vec();
        p.send_raw(
            ReplayStart {
                session_seq: 0,
                engine_seq: 0,
                engine_time: Timestamp(0),
                from_seq: from,
                to_seq: p.report_next,
                count: replay.len() as u64,
                reason: ReasonCode(0),
            }
            .into(),
        );
        for m in &replay {
            p.send_raw(*m);
        }
        p.send_raw(
            ReplayEnd {
                session_seq: 0,
                engine_seq: 0,
                engine_time: Timestamp(0),
                next_report_seq: p.report_next,
                count: replay.len() as u64,
            }
            .into(),
        );
        p
    })
}

fn config(addr: SocketAddr) -> ExchangeConfig {
    let mut c = ExchangeConfig::new(&addr.to_string(), 3, "unused");
    c.key_file = None;
    c.key = Some(KEY.to_hex());
    c.reconnect_ms = 10;
    c
}

/// A connected adapter and its peer, reconciliation done.
fn session(hb_ms: u32) -> (ExchangeVenue, Peer, TcpListener) {
    let (l, addr) = listener();
    let peer = accept(&l, hb_ms, false, Vec::new());
    let mut v = ExchangeVenue::new("px", config(addr)).unwrap();
    v.connect(now_ns()).unwrap();
    assert!(recovered(&mut v).is_empty());
    let mut peer = peer.join().unwrap();
    peer.answer_reconcile(&[]);
    assert!(reports(&mut v, 0, Duration::from_millis(50)).is_empty());
    (v, peer, l)
}

/// Polls until the replay after the login is over (the reconciliation went out).
fn recovered(v: &mut ExchangeVenue) -> Vec<Report> {
    let deadline = Instant::now() + TIMEOUT;
    let mut out = Vec::new();
    while v.in_recovery() {
        assert!(Instant::now() < deadline, "the replay does not end");
        v.poll(now_ns(), &mut |r| out.push(r));
    }
    out
}

/// Polls until `n` reports came (or, for `n = 0`, for `wait`).
fn reports(v: &mut ExchangeVenue, n: usize, wait: Duration) -> Vec<Report> {
    let deadline = Instant::now() + if n == 0 { wait } else { TIMEOUT };
    let mut out = Vec::new();
    while Instant::now() < deadline && (n == 0 || out.len() < n) {
        if v.poll(now_ns(), &mut |r| out.push(r)) == 0 {
            std::thread::sleep(Duration::from_micros(200));
        }
    }
    assert!(out.len() >= n, "only {out:?} of {n} reports");
    out
}

fn order(engine_id: u64, qty: i64) -> VenueOrder {
    VenueOrder::limit(
        engine_id,
        InstrumentId(1),
        Side::Buy,
        Price::from_raw(10_000),
        Qty::from_raw(qty),
    )
}

fn accepted(cl: ClientOrderId, order_id: u64, qty: i64) -> Outbound {
    Outbound::Accepted(Accepted {
        session_seq: 0,
        engine_seq: 1,
        engine_time: Timestamp(1),
        order_id: OrderId(order_id),
        client_order_id: cl,
        price: Price::from_raw(10_000),
        qty: Qty::from_raw(qty),
        expire_at: Timestamp(0),
        instrument: InstrumentId(1),
        side: Side::Buy,
        order_type: OrderType::Limit,
        tif: TimeInForce::Gtc,
        stp: StpMode::None,
        report_seq: 0,
        account: AccountId(3),
    })
}

fn cancelled(order_id: u64, request_id: u64, qty: i64) -> Cancelled {
    Cancelled {
        session_seq: 0,
        engine_seq: 1,
        engine_time: Timestamp(1),
        order_id: OrderId(order_id),
        client_order_id: ClientOrderId(0),
        request_id: ClientOrderId(request_id),
        cancelled_qty: Qty::from_raw(qty),
        instrument: InstrumentId(1),
        reason: ReasonCode(1),
        side: Side::Buy,
        reserved: Pad,
        report_seq: 0,
        account: AccountId(3),
    }
}

fn cancel_rejected(cl: u64, order_id: u64, kind: RequestKind) -> CancelRejected {
    CancelRejected {
        session_seq: 0,
        engine_seq: 1,
        engine_time: Timestamp(1),
        client_order_id: ClientOrderId(cl),
        order_id: OrderId(order_id),
        instrument: Some(InstrumentId(1)),
        reason: ReasonCode(10),
        request_kind: kind,
        reserved: Pad,
        report_seq: 0,
        account: AccountId(3),
    }
}

/// Submits `engine_id` and acknowledges it as `order_id`.
fn acked(v: &mut ExchangeVenue, p: &mut Peer, engine_id: u64, order_id: u64, qty: i64) {
    v.submit(order(engine_id, qty), now_ns()).unwrap();
    let Inbound::NewOrder(o) = p.request() else {
        panic!("expected a new order");
    };
    assert_eq!(
        (o.qty.lots(), o.tif, o.stp),
        (qty, TimeInForce::Gtc, StpMode::None)
    );
    p.send(accepted(o.client_order_id, order_id, qty));
    assert_eq!(
        reports(v, 1, TIMEOUT),
        vec![Report::Ack {
            engine_id,
            venue_id: order_id
        }]
    );
}

#[test]
fn ids_map_both_ways_through_fill_replace_cancel_and_rejects() {
    let (mut v, mut p, _l) = session(1_000);
    acked(&mut v, &mut p, 7, 500, 5);
    p.send(Outbound::Fill(Fill {
        session_seq: 0,
        engine_seq: 2,
        engine_time: Timestamp(2),
        order_id: OrderId(500),
        client_order_id: ClientOrderId(99),
        trade_id: 1,
        price: Price::from_raw(9_999),
        qty: Qty::from_raw(2),
        leaves_qty: Qty::from_raw(3),
        instrument: InstrumentId(1),
        side: Side::Buy,
        role: LiquidityRole::Maker,
        reserved: Pad,
        report_seq: 0,
        account: AccountId(3),
        fee_asset: 0,
        fee: 0,
    }));
    assert_eq!(
        reports(&mut v, 1, TIMEOUT),
        vec![Report::Fill {
            engine_id: 7,
            price: Price::from_raw(9_999),
            qty: Qty::from_raw(2),
            leaves: Qty::from_raw(3)
        }]
    );
    // Replace: the wire request names the exchange order id.
    v.replace(7, Price::from_raw(9_990), Qty::from_raw(4), now_ns())
        .unwrap();
    assert_eq!(
        v.replace(7, Price::from_raw(9_990), Qty::from_raw(4), now_ns()),
        Err(VenueError::Busy),
        "one replace at a time"
    );
    let Inbound::Replace(r) = p.request() else {
        panic!("expected a replace");
    };
    assert_eq!(
        (r.order_id, r.new_price.units(), r.new_qty.lots()),
        (OrderId(500), 9_990, 4)
    );
    p.send(Outbound::Replaced(Replaced {
        session_seq: 0,
        engine_seq: 3,
        engine_time: Timestamp(3),
        order_id: OrderId(500),
        client_order_id: r.client_order_id,
        orig_client_order_id: ClientOrderId(1),
        new_price: r.new_price,
        new_qty: r.new_qty,
        instrument: InstrumentId(1),
        priority_kept: false,
        reserved: Pad,
        report_seq: 0,
        account: AccountId(3),
    }));
    assert_eq!(
        reports(&mut v, 1, TIMEOUT),
        vec![Report::Replaced {
            engine_id: 7,
            price: Price::from_raw(9_990),
            qty: Qty::from_raw(4)
        }]
    );
    // A refused replace.
    v.replace(7, Price::from_raw(1), Qty::from_raw(4), now_ns())
        .unwrap();
    let Inbound::Replace(r) = p.request() else {
        panic!("expected a replace");
    };
    p.send(Outbound::CancelRejected(cancel_rejected(
        r.client_order_id.0,
        500,
        RequestKind::Replace,
    )));
    assert_eq!(
        reports(&mut v, 1, TIMEOUT),
        vec![Report::ReplaceRejected {
            engine_id: 7,
            reason: 10
        }]
    );
    // A refused cancel, then one that works.
    v.cancel(7, now_ns()).unwrap();
    let Inbound::Cancel(c) = p.request() else {
        panic!("expected a cancel");
    };
    assert_eq!(c.order_id, OrderId(500));
    p.send(Outbound::CancelRejected(cancel_rejected(
        c.client_order_id.0,
        500,
        RequestKind::Cancel,
    )));
    assert_eq!(
        reports(&mut v, 1, TIMEOUT),
        vec![Report::CancelRejected {
            engine_id: 7,
            reason: 10
        }]
    );
    v.cancel(7, now_ns()).unwrap();
    let Inbound::Cancel(c) = p.request() else {
        panic!("expected a cancel");
    };
    p.send(Outbound::Cancelled(cancelled(500, c.client_order_id.0, 4)));
    assert_eq!(
        reports(&mut v, 1, TIMEOUT),
        vec![Report::Cancelled {
            engine_id: 7,
            qty: Qty::from_raw(4),
            leaves: Qty::ZERO,
        }]
    );
    assert_eq!(v.open_orders(), 0);
    assert_eq!(v.cancel(7, now_ns()), Err(VenueError::UnknownOrder(7)));
    // A rejected order.
    v.submit(order(8, 1), now_ns()).unwrap();
    let Inbound::NewOrder(o) = p.request() else {
        panic!("expected a new order");
    };
    p.send(Outbound::Rejected(Rejected {
        session_seq: 0,
        engine_seq: 4,
        engine_time: Timestamp(4),
        client_order_id: o.client_order_id,
        instrument: InstrumentId(1),
        reason: ReasonCode(5),
        reserved: Pad,
        report_seq: 0,
        account: AccountId(3),
    }));
    assert_eq!(
        reports(&mut v, 1, TIMEOUT),
        vec![Report::Rejected {
            engine_id: 8,
            reason: 5
        }]
    );
    // A report about nothing we know is counted, not fatal.
    p.send(Outbound::Cancelled(cancelled(12_345, 0, 1)));
    let deadline = Instant::now() + TIMEOUT;
    while v.stats().unknown_reports == 0 {
        assert!(Instant::now() < deadline, "the report never arrived");
        assert_eq!(v.poll(now_ns(), &mut |r| panic!("unexpected {r:?}")), 0);
        std::thread::sleep(Duration::from_micros(200));
    }
    assert_eq!(v.stats().unknown_reports, 1);
    assert!(v.connected());
}

#[test]
fn cancel_and_replace_before_the_ack_go_out_on_the_ack() {
    let (mut v, mut p, _l) = session(1_000);
    v.submit(order(1, 2), now_ns()).unwrap();
    v.submit(order(2, 2), now_ns()).unwrap();
    v.cancel(1, now_ns()).unwrap();
    v.replace(2, Price::from_raw(9_000), Qty::from_raw(1), now_ns())
        .unwrap();
    let (Inbound::NewOrder(o1), Inbound::NewOrder(o2)) = (p.request(), p.request()) else {
        panic!("expected two new orders");
    };
    p.send(accepted(o1.client_order_id, 11, 2));
    p.send(accepted(o2.client_order_id, 12, 2));
    let r = reports(&mut v, 2, TIMEOUT);
    assert!(matches!(
        r[0],
        Report::Ack {
            engine_id: 1,
            venue_id: 11
        }
    ));
    assert!(matches!(
        r[1],
        Report::Ack {
            engine_id: 2,
            venue_id: 12
        }
    ));
    let Inbound::Cancel(c) = p.request() else {
        panic!("the deferred cancel");
    };
    assert_eq!(c.order_id, OrderId(11));
    let Inbound::Replace(x) = p.request() else {
        panic!("the deferred replace");
    };
    assert_eq!((x.order_id, x.new_qty.lots()), (OrderId(12), 1));
}

#[test]
fn garbage_from_the_exchange_disconnects_without_a_panic() {
    let (mut v, mut p, _l) = session(1_000);
    acked(&mut v, &mut p, 1, 100, 3);
    v.submit(order(2, 1), now_ns()).unwrap(); // never acknowledged
    let _ = p.request();
    p.stream.write_all(&[0xFF; 40]).unwrap();
    let deadline = Instant::now() + TIMEOUT;
    while v.connected() {
        assert!(Instant::now() < deadline, "the garbage goes unnoticed");
        v.poll(now_ns(), &mut |r| {
            panic!("nothing is settled at a drop: {r:?}")
        });
    }
    assert_eq!(
        v.submit(order(3, 1), now_ns()),
        Err(VenueError::Disconnected)
    );
    assert_eq!(
        v.replace(1, Price::from_raw(1), Qty::from_raw(1), now_ns()),
        Err(VenueError::Disconnected)
    );
    assert_eq!(v.open_orders(), 2, "both orders are held");
    assert_eq!(
        v.in_doubt(),
        2,
        "the acknowledged one and the one on its way"
    );
    assert_eq!(v.stats().disconnects, 1);
}

#[test]
fn a_sequence_gap_or_a_second_login_answer_disconnects() {
    for gap in [true, false] {
        let (mut v, mut p, _l) = session(1_000);
        if gap {
            p.seq += 5;
            p.send(Outbound::Cancelled(cancelled(1, 0, 1)));
        } else {
            p.send(Outbound::LoginAccepted(LoginAccepted {
                session_seq: 0,
                engine_seq: 0,
                engine_time: Timestamp(0),
                account: AccountId(3),
                heartbeat_interval_ms: 1_000,
                next_report_seq: p.report_next,
                oldest_report_seq: 1,
                target: Some(AccountId(3)),
                instrument_count: 0,
                kind: SessionKind::Trading,
            }));
        }
        let deadline = Instant::now() + TIMEOUT;
        while v.connected() {
            assert!(Instant::now() < deadline, "still connected");
            v.poll(now_ns(), &mut |_| {});
            std::thread::sleep(Duration::from_micros(200));
        }
    }
}

#[test]
fn truncated_frames_wait_for_the_rest() {
    let (mut v, mut p, _l) = session(1_000);
    v.submit(order(1, 1), now_ns()).unwrap();
    let Inbound::NewOrder(o) = p.request() else {
        panic!("expected a new order");
    };
    p.seq += 1;
    let mut m = accepted(o.client_order_id, 9, 1);
    m.set_session_seq(p.seq);
    let mut buf = [0u8; 512];
    let n = m.encode(&mut buf).unwrap();
    p.stream.write_all(&buf[..5]).unwrap();
    assert!(reports(&mut v, 0, Duration::from_millis(30)).is_empty());
    p.stream.write_all(&buf[5..n]).unwrap();
    assert_eq!(
        reports(&mut v, 1, TIMEOUT),
        vec![Report::Ack {
            engine_id: 1,
            venue_id: 9
        }]
    );
    assert!(v.connected());
}

/// Polls until the adapter has reconnected (by itself: reconnect_ms = 10); the
/// reports that came meanwhile.
fn reconnect(v: &mut ExchangeVenue) -> Vec<Report> {
    let deadline = Instant::now() + TIMEOUT;
    let mut out = Vec::new();
    while !v.connected() || v.in_recovery() {
        assert!(Instant::now() < deadline, "no reconnect");
        v.poll(now_ns(), &mut |r| out.push(r));
        std::thread::sleep(Duration::from_millis(1));
    }
    out
}

/// A fill of order `order_id` (its last `qty` lots) made while the adapter was away.
fn fill_while_away(order_id: u64, qty: i64) -> Outbound {
    Outbound::Fill(Fill {
        session_seq: 0,
        engine_seq: 9,
        engine_time: Timestamp(9),
        order_id: OrderId(order_id),
        client_order_id: ClientOrderId(0),
        trade_id: 9,
        price: Price::from_raw(10_000),
        qty: Qty::from_raw(qty),
        leaves_qty: Qty::ZERO,
        instrument: InstrumentId(1),
        side: Side::Buy,
        role: LiquidityRole::Maker,
        reserved: Pad,
        report_seq: 0,
        account: AccountId(3),
        fee_asset: 0,
        fee: 0,
    })
}

#[test]
fn reconnect_replays_missed_reports_then_reconciles() {
    let (mut v, mut p, l) = session(1_000);
    acked(&mut v, &mut p, 1, 100, 3);
    acked(&mut v, &mut p, 2, 200, 4);
    v.replace(2, Price::from_raw(9_000), Qty::from_raw(4), now_ns())
        .unwrap();
    let _ = p.request();
    // While the adapter is away, order 200 fills: the report joins account 3's
    // stream, and the next login replays it.
    let mut fill = fill_while_away(200, 4);
    fill.set_report_seq(p.report_next);
    let mut history = p.history.clone();
    history.push(fill);
    let next = accept(&l, 1_000, false, history);
    drop(p); // the exchange side goes away
    let deadline = Instant::now() + TIMEOUT;
    while v.connected() {
        assert!(Instant::now() < deadline, "the drop goes unnoticed");
        v.poll(now_ns(), &mut |r| {
            panic!("nothing is settled at a drop: {r:?}")
        });
    }
    assert_eq!(v.in_doubt(), 2);
    let resume = v.resume_point();
    assert_eq!(
        resume, 4,
        "the barrier's answer and two acks processed: the stream resumes at 4"
    );
    // A cancel while down is accepted: the reconciliation will cancel the order.
    v.cancel(1, now_ns()).unwrap();
    // The replayed fill arrives first (it ends order 200, whose replace no longer
    // matters), then the reconciliation cancels order 100.
    let mut fill = reconnect(&mut v);
    if fill.is_empty() {
        fill = reports(&mut v, 1, TIMEOUT);
    }
    assert_eq!(
        fill,
        vec![Report::Fill {
            engine_id: 2,
            price: Price::from_raw(10_000),
            qty: Qty::from_raw(4),
            leaves: Qty::ZERO,
        }]
    );
    let mut p = next.join().unwrap();
    p.answer_reconcile(&[(100, 3)]);
    let r = reports(&mut v, 1, TIMEOUT);
    assert_eq!(
        r,
        vec![Report::Cancelled {
            engine_id: 1,
            qty: Qty::from_raw(3),
            leaves: Qty::ZERO,
        }]
    );
    assert_eq!(v.open_orders(), 0);
    assert_eq!(v.in_doubt(), 0);
    assert_eq!(v.stats().unresolved, 0, "nothing was missed");
    assert_eq!(v.stats().replayed, 1);
    assert_eq!(v.stats().logins, 2);
    // Trading goes on.
    acked(&mut v, &mut p, 3, 300, 1);
}

#[test]
fn an_order_gone_without_its_reports_is_closed_with_a_warning() {
    let (mut v, mut p, l) = session(1_000);
    acked(&mut v, &mut p, 1, 100, 3);
    // The order is not resting at the reconciliation and the replay has no report of
    // it (a complete replay cannot do that; an exchange that lost its state can): it
    // is closed, counted and warned about, since its fills cannot be known.
    let next = accept(&l, 1_000, false, p.history.clone());
    drop(p);
    let deadline = Instant::now() + TIMEOUT;
    while v.connected() {
        assert!(Instant::now() < deadline, "the disconnect goes unnoticed");
        v.poll(now_ns(), &mut |r| panic!("unexpected {r:?}"));
    }
    assert!(reconnect(&mut v).is_empty(), "nothing to replay");
    let mut p = next.join().unwrap();
    p.answer_reconcile(&[]);
    let r = reports(&mut v, 1, TIMEOUT);
    assert_eq!(
        r,
        vec![Report::Cancelled {
            engine_id: 1,
            qty: Qty::from_raw(3),
            leaves: Qty::ZERO,
        }]
    );
    assert_eq!(v.stats().unresolved, 1);
    assert_eq!((v.open_orders(), v.in_doubt()), (0, 0));
    let mut log = Vec::new();
    v.drain_log(&mut |l| log.push(l));
    assert!(log.iter().any(|l| l.contains("may be missing")), "{log:?}");
}

/// An order on its way when the session drops is in doubt, not rejected: the replay
/// after the next login says what the exchange did with it (accepted and filled it),
/// and an order the exchange never received is rejected only then, as a fact.
#[test]
fn orders_on_their_way_at_a_drop_are_settled_by_the_replay() {
    let (mut v, mut p, l) = session(1_000);
    v.submit(order(2, 3), now_ns()).unwrap();
    let Inbound::NewOrder(o) = p.request() else {
        panic!("expected the order");
    };
    assert_eq!(
        o.client_order_id,
        ClientOrderId(2),
        "a new order's id is its engine id"
    );
    // The exchange accepted and filled it, but the reports were lost with the
    // connection: they join the stream without reaching the adapter.
    let mut history = p.history.clone();
    for m in [accepted(o.client_order_id, 200, 3), fill_while_away(200, 3)] {
        let mut m = m;
        m.set_report_seq(history.len() as u64 + 1);
        history.push(m);
    }
    let next = accept(&l, 1_000, false, history);
    // A second order is written as the link dies: the exchange never reads it.
    v.submit(order(3, 1), now_ns()).unwrap();
    drop(p);
    let deadline = Instant::now() + TIMEOUT;
    while v.connected() {
        assert!(Instant::now() < deadline, "the drop goes unnoticed");
        v.poll(now_ns(), &mut |r| {
            panic!("nothing is settled at a drop: {r:?}")
        });
    }
    assert_eq!(v.in_doubt(), 2);
    let mut r = reconnect(&mut v);
    let mut p = next.join().unwrap();
    p.answer_reconcile(&[]);
    r.extend(reports(&mut v, 0, Duration::from_millis(100)));
    assert_eq!(
        r,
        vec![
            Report::Ack {
                engine_id: 2,
                venue_id: 200
            },
            Report::Fill {
                engine_id: 2,
                price: Price::from_raw(10_000),
                qty: Qty::from_raw(3),
                leaves: Qty::ZERO,
            },
            Report::Rejected {
                engine_id: 3,
                reason: REASON_DISCONNECTED
            },
        ]
    );
    assert_eq!((v.open_orders(), v.in_doubt()), (0, 0));
}

#[test]
fn a_restarted_adapter_resumes_from_its_cursor_and_skips_counted_fills() {
    let (mut v, mut p, l) = session(1_000);
    acked(&mut v, &mut p, 1, 100, 5);
    // Reports 1 (the login barrier's answer) and 2 (the ack) processed.
    assert_eq!(v.report_cursor(), Some(3));
    // A partial fill (leaves 3) is processed, then the engine dies before the new
    // position is journaled: the journal still says 3.
    let mut partial = fill_while_away(100, 2);
    if let Outbound::Fill(f) = &mut partial {
        f.leaves_qty = Qty::from_raw(3);
    }
    p.send(partial);
    let _ = reports(&mut v, 1, TIMEOUT);
    assert_eq!(v.report_cursor(), Some(4));
    drop(v);
    // While down, the rest fills.
    let mut rest = fill_while_away(100, 3);
    rest.set_report_seq(p.report_next);
    let mut history = p.history.clone();
    history.push(rest);
    let next = accept(&l, 1_000, false, history);
    drop(p);
    // The restarted engine restores the order with the open quantity its journal
    // knew (3, after the partial fill) and resumes at report 3.
    let mut v2 = ExchangeVenue::new("px", config(l.local_addr().unwrap()))
        .unwrap()
        .with_resume(3);
    assert_eq!(v2.resume_point(), 3);
    let restored = crate::RestoredOrder {
        engine_id: 1,
        strategy: 0,
        client_key: 1,
        venue: 0,
        instrument: InstrumentId(1),
        side: Side::Buy,
        price: Price::from_raw(10_000),
        qty: Qty::from_raw(5),
        leaves: Qty::from_raw(3),
        venue_id: 100,
    };
    assert_eq!(v2.restore(&restored), None);
    v2.connect(now_ns()).unwrap();
    let mut r = recovered(&mut v2);
    if r.is_empty() {
        r = reports(&mut v2, 1, TIMEOUT);
    }
    assert_eq!(
        r,
        vec![Report::Fill {
            engine_id: 1,
            price: Price::from_raw(10_000),
            qty: Qty::from_raw(3),
            leaves: Qty::ZERO,
        }],
        "the partial fill is skipped (counted before), the missed one reported"
    );
    assert_eq!(v2.stats().replayed, 2);
    assert_eq!(v2.stats().replayed_duplicates, 1);
    let mut p = next.join().unwrap();
    p.answer_reconcile(&[]);
    assert!(reports(&mut v2, 0, Duration::from_millis(50)).is_empty());
    assert_eq!(v2.open_orders(), 0);
    // Reports 3, 4 replayed, 5 the new barrier's answer.
    assert_eq!(v2.report_cursor(), Some(6));
}

#[test]
fn login_refused_is_a_typed_error() {
    let (l, addr) = listener();
    let peer = accept(&l, 1_000, true, Vec::new());
    let mut v = ExchangeVenue::new("px", config(addr)).unwrap();
    let e = v.connect(now_ns()).unwrap_err();
    assert!(
        matches!(e, ExchangeError::LoginRejected { reason: 1, .. }),
        "{e}"
    );
    drop(peer.join().unwrap());
    assert!(!v.connected());
    assert_eq!(
        v.submit(order(1, 1), now_ns()),
        Err(VenueError::Disconnected)
    );
}

#[test]
fn nobody_listening_is_a_typed_error_and_polls_retry() {
    let addr = listener().1; // bound, then dropped: connections are refused
    let mut v = ExchangeVenue::new("px", config(addr)).unwrap();
    assert!(matches!(
        v.connect(now_ns()),
        Err(ExchangeError::Connect(..))
    ));
    assert_eq!(v.poll(now_ns() + 20_000_000, &mut |_| {}), 0);
    assert_eq!(v.stats().disconnects, 2, "the poll tried again");
}

#[test]
fn full_table_is_busy_and_heartbeats_flow_and_silence_disconnects() {
    let (l, addr) = listener();
    let peer = accept(&l, 20, false, Vec::new());
    let mut cfg = config(addr);
    cfg.max_orders = 1;
    let mut v = ExchangeVenue::new("px", cfg).unwrap();
    v.connect(now_ns()).unwrap();
    assert!(recovered(&mut v).is_empty());
    let mut p = peer.join().unwrap();
    p.answer_reconcile(&[]);
    v.submit(order(1, 1), now_ns()).unwrap();
    assert_eq!(v.submit(order(2, 1), now_ns()), Err(VenueError::Busy));
    let _ = p.request();
    // Idle: the adapter heartbeats every 20 ms (the interval the exchange granted).
    let deadline = Instant::now() + TIMEOUT;
    let mut p_stream = p.stream.try_clone().unwrap();
    p_stream
        .set_read_timeout(Some(Duration::from_millis(5)))
        .unwrap();
    let mut heartbeats = 0;
    while heartbeats == 0 {
        assert!(Instant::now() < deadline, "no heartbeat");
        v.poll(now_ns(), &mut |_| {});
        let mut b = [0u8; 64];
        if let Ok(n) = p_stream.read(&mut b) {
            p.rx.spare()[..n].copy_from_slice(&b[..n]);
            p.rx.commit(n);
            while let Some(m) = p.rx.next(Inbound::decode).unwrap() {
                heartbeats += matches!(m, Inbound::ClientHeartbeat(_)) as u32;
            }
        }
    }
    // The exchange says nothing for 3 intervals: the session is dropped, and the
    // unacknowledged order is in doubt (the next login's replay settles it).
    let deadline = Instant::now() + TIMEOUT;
    while v.connected() {
        assert!(Instant::now() < deadline, "silence goes unnoticed");
        v.poll(now_ns(), &mut |r| {
            panic!("nothing is settled at a drop: {r:?}")
        });
    }
    assert_eq!(v.in_doubt(), 1);
}

/// A cluster: the first address is down, the second a follower that redirects to
/// the leader (the fake peer); the adapter walks the list and follows the redirect.
#[test]
fn a_cluster_address_list_and_a_redirect_lead_to_the_leader() {
    use peregrine_wire::field::{LeaderAddress, Pad};
    use peregrine_wire::v2::session::LeaderRedirect;
    use peregrine_wire::WireMessage;
    let dead = {
        let (l, a) = listener();
        drop(l);
        a
    };
    let (follower, follower_addr) = listener();
    let (leader, leader_addr) = listener();
    let redirect = std::thread::spawn(move || {
        let (mut s, _) = follower.accept().unwrap();
        let m = LeaderRedirect {
            session_seq: 1,
            engine_seq: 0,
            engine_time: Timestamp(0),
            leader_id: 2,
            retry_after_ms: 0,
            reserved: Pad,
            address: LeaderAddress::from_text(&leader_addr.to_string()).unwrap(),
        };
        let mut buf = [0u8; peregrine_wire::MAX_MESSAGE_SIZE];
        let n = m.encode(&mut buf).unwrap();
        s.write_all(&buf[..n]).unwrap();
    });
    let peer = accept(&leader, 1000, false, Vec::new());
    let mut c = config(dead);
    c.addr = format!("{dead},{follower_addr}");
    let mut v = ExchangeVenue::new("px", c).unwrap();
    let mut errors = Vec::new();
    for _ in 0..3 {
        match v.connect(now_ns()) {
            Ok(()) => break,
            Err(e) => errors.push(e.to_string()),
        }
    }
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(errors[0].contains("connecting to"), "{errors:?}");
    assert!(errors[1].contains("redirected: leader 2"), "{errors:?}");
    assert_eq!(v.addr, leader_addr);
    redirect.join().unwrap();
    assert!(recovered(&mut v).is_empty());
    let mut peer = peer.join().unwrap();
    peer.answer_reconcile(&[]);
}

/// After a session is lost the adapter goes back to the node that served first,
/// and only when that one is down to the other configured addresses.
#[test]
fn a_lost_session_returns_to_the_node_that_served_first() {
    let dead = {
        let (l, a) = listener();
        drop(l);
        a
    };
    let (leader, leader_addr) = listener();
    let peer = accept(&leader, 1000, false, Vec::new());
    let mut c = config(dead);
    c.addr = format!("{dead},{leader_addr}");
    let mut v = ExchangeVenue::new("px", c).unwrap();
    assert!(matches!(
        v.connect(now_ns()),
        Err(ExchangeError::Connect(..))
    ));
    v.connect(now_ns()).unwrap();
    assert!(recovered(&mut v).is_empty());
    peer.join().unwrap().answer_reconcile(&[]);
    v.disconnect(ExchangeError::Closed, now_ns());
    assert_eq!(v.addr, leader_addr, "the node that served first");
    drop(leader);
    assert!(matches!(
        v.connect(now_ns()),
        Err(ExchangeError::Connect(..))
    ));
    assert_eq!(v.addr, dead, "then the others");
}

#[test]
fn addresses_parse_one_or_several() {
    use super::config::parse_addrs;
    assert_eq!(parse_addrs("127.0.0.1:1").unwrap().len(), 1);
    assert_eq!(
        parse_addrs("127.0.0.1:1, 127.0.0.1:2,127.0.0.1:3")
            .unwrap()
            .len(),
        3
    );
    assert!(parse_addrs("127.0.0.1:1,").is_none());
    assert!(parse_addrs("").is_none());
    assert!(parse_addrs("host:1").is_none());
}

/// An order list goes out as one `NewOrderList` (client list id and leg ids = the legs'
/// engine ids); a rejected list entered nothing, so each leg is reported `Rejected`
/// with the list's reason, then the list's status. Legs that are not consecutive
/// engine ids are refused before anything is sent.
#[test]
fn a_list_goes_as_one_message_and_a_rejected_list_rejects_every_leg() {
    use crate::ListState;
    use peregrine_types::{ListKind, TriggerKind};
    use peregrine_wire::v2::venue::ListStatus;
    let (mut v, mut p, _l) = session(1_000);
    let mut stop = order(8, 1);
    stop.ext.trigger = TriggerKind::StopLoss;
    stop.ext.stop_price = Price::from_raw(9_000);
    assert_eq!(
        v.submit_list(ListKind::Oco, &[order(7, 1), order(9, 1)], now_ns()),
        Err(VenueError::Unsupported)
    );
    v.submit_list(ListKind::Oco, &[order(7, 1), stop], now_ns())
        .unwrap();
    let Inbound::NewOrderList(m) = p.request() else {
        panic!("expected an order list");
    };
    assert_eq!(
        (m.client_list_id, m.kind),
        (ClientOrderId(7), ListKind::Oco)
    );
    let legs = m.legs();
    assert_eq!(legs.map(|l| l.client_order_id.0), [7, 8, 0], "leg 2 unused");
    assert_eq!(
        (legs[1].trigger, legs[1].stop_price),
        (TriggerKind::StopLoss, Price::from_raw(9_000))
    );
    p.send(Outbound::ListStatus(ListStatus {
        session_seq: 0,
        engine_seq: 1,
        engine_time: Timestamp(1),
        list_id: OrderId(0),
        client_list_id: ClientOrderId(7),
        request_id: ClientOrderId(7),
        leg0: OrderId(0),
        leg1: OrderId(0),
        leg2: OrderId(0),
        report_seq: 0,
        instrument: InstrumentId(1),
        account: AccountId(3),
        reason: ReasonCode(20),
        kind: ListKind::Oco,
        status: peregrine_wire::field::ListState::Rejected,
        leg: 1,
        reserved: Pad,
    }));
    assert_eq!(
        reports(&mut v, 3, TIMEOUT),
        vec![
            Report::Rejected {
                engine_id: 7,
                reason: 20
            },
            Report::Rejected {
                engine_id: 8,
                reason: 20
            },
            Report::ListStatus {
                engine_id: 7,
                status: ListState::Rejected,
                reason: 20
            },
        ]
    );
}
