//! Protocol v2 sessions of a real `peregrine exchange` process, over the raw protocol
//! (issue 12, docs/protocol.md sections 4.2-4.7): the per-account report stream
//! replayed after a disconnect and after a restart (SIGTERM and `kill -9`, journal
//! on), drop copies (one account, and an operator's of every account), order status
//! and open orders (no enumeration of other accounts' orders), one terminal answer per
//! request, several sessions of one account, and a resume older than retention.
//!
//! Clients are `peregrine_client::order_entry::Connection`, which checks session and
//! report-stream continuity itself; the tests assert the contents on top.
//! Accounts 1 (A) and 2 (B) trade; account 5 is an operator (`operator = true`).

mod support;

use std::collections::BTreeMap;
use std::net::SocketAddr;

use peregrine_client::order_entry::{Connection, LoginInfo, Recovered};
use peregrine_client::ClientError;
use peregrine_types::{AccountId, ClientOrderId, InstrumentId, OrderId, Side, TimeInForce};
use peregrine_wire::field::{OrderState, SessionKind};
use peregrine_wire::v2::client::LoginParams;
use peregrine_wire::v2::queries::{OpenOrder, OpenOrdersRequest, OrderStatus, OrderStatusRequest};
use peregrine_wire::v2::reports::Fill;
use peregrine_wire::v2::{MassCancel, Outbound, RequestRef};
use peregrine_wire::{LiquidityRole, RequestKind, WireMessage};
use support::{cancel, key, order, start, with_timeout, IO_TIMEOUT};

const A: u32 = 1;
const B: u32 = 2;
const OPERATOR: u32 = 5;

/// `RejectCode::unknown_order` and `read_only_session`; `LoginCode::not_permitted`;
/// `RecoveryCode::not_retained` and `ahead_of_stream` (docs/protocol.md 1.2).
const UNKNOWN_ORDER: u16 = 10;
const READ_ONLY_SESSION: u16 = 18;
const NOT_PERMITTED: u16 = 6;
const NOT_RETAINED: u16 = 1;
const AHEAD_OF_STREAM: u16 = 4;

/// The operator's `[[accounts]]` entry.
fn operator_toml() -> String {
    format!(
        "[[accounts]]\nid = {OPERATOR}\nstored_key = \"{}\"\noperator = true\n",
        key(OPERATOR).stored().to_hex()
    )
}

/// A logged-in session with what its login and recovery phase brought.
struct Sess {
    c: Connection,
    login: LoginInfo,
    recovered: Recovered,
    /// Replayed reports or snapshot lines, `session_seq` zeroed.
    recovery: Vec<Outbound>,
    next_query: u64,
}

fn try_open(addr: SocketAddr, params: LoginParams) -> Result<Sess, ClientError> {
    let (mut c, login) = Connection::connect(addr, params, key(params.account.0), IO_TIMEOUT)?;
    let mut recovery = Vec::new();
    let recovered = c.recover(|m| recovery.push(strip(m)))?;
    Ok(Sess {
        c,
        login,
        recovered,
        recovery,
        next_query: 1_000_000,
    })
}

fn trading(addr: SocketAddr, account: u32, resume: u64) -> Sess {
    try_open(addr, LoginParams::trading(AccountId(account), resume)).unwrap()
}

fn drop_copy_params(account: u32, target: Option<u32>, resume: u64) -> LoginParams {
    LoginParams {
        account: AccountId(account),
        kind: SessionKind::DropCopy,
        target: target.map(AccountId),
        heartbeat_ms: 1000,
        resume_from: resume,
    }
}

fn drop_copy(addr: SocketAddr, account: u32, target: Option<u32>, resume: u64) -> Sess {
    try_open(addr, drop_copy_params(account, target, resume)).unwrap()
}

/// A message as a replay would repeat it: everything but `session_seq`.
fn strip(m: &Outbound) -> Outbound {
    let mut m = *m;
    m.set_session_seq(0);
    m
}

fn report_seqs(ms: &[Outbound]) -> Vec<(u32, u64)> {
    ms.iter()
        .filter_map(Outbound::report)
        .map(|(a, s)| (a.0, s))
        .collect()
}

impl Sess {
    /// Sends `req` and returns its terminal answer and everything read before it
    /// (heartbeats left out, `session_seq` zeroed).
    fn ask<M: WireMessage>(&mut self, req: &M, want: RequestRef) -> (Outbound, Vec<Outbound>) {
        let mut others = Vec::new();
        let answer = self
            .c
            .request(req, want, |m| {
                if !matches!(m, Outbound::ServerHeartbeat(_)) {
                    others.push(strip(m));
                }
            })
            .unwrap();
        (strip(&answer), others)
    }

    /// A `NewOrder` on instrument 1; its `Accepted` (or `Rejected`) and what came
    /// before it.
    fn place(&mut self, id: u64, side: Side, price: i64, qty: i64, tif: TimeInForce) -> Outbound {
        let (answer, _) = self.ask(
            &order(id, side, price, qty, tif),
            RequestRef::NewOrder(ClientOrderId(id)),
        );
        answer
    }

    fn status_request(&mut self, order_id: u64, client_order_id: u64) -> OrderStatus {
        self.next_query += 1;
        let req = OrderStatusRequest {
            request_id: self.next_query,
            order_id: OrderId(order_id),
            client_order_id: ClientOrderId(client_order_id),
            instrument: InstrumentId(1),
        };
        match self.ask(&req, RequestRef::Query(self.next_query)).0 {
            Outbound::OrderStatus(s) => s,
            other => panic!("not an OrderStatus: {other:?}"),
        }
    }

    /// A barrier: an order-status query (answered after every earlier request's
    /// reports); returns the messages that arrived before its answer.
    fn sync(&mut self) -> Vec<Outbound> {
        self.next_query += 1;
        let req = OrderStatusRequest {
            request_id: self.next_query,
            order_id: OrderId(0),
            client_order_id: ClientOrderId(0),
            instrument: InstrumentId(1),
        };
        self.ask(&req, RequestRef::Query(self.next_query)).1
    }

    /// Every open order of `account` (or every account of the scope), by order id,
    /// and the answer's `report_seq`.
    fn open_orders(&mut self, account: Option<u32>) -> (BTreeMap<u64, OpenOrder>, u64) {
        self.next_query += 1;
        let id = self.next_query;
        let req = OpenOrdersRequest {
            request_id: id,
            account: account.map(AccountId),
            instrument: None,
        };
        let (end, others) = self.ask(&req, RequestRef::Query(id));
        let Outbound::OpenOrdersEnd(end) = end else {
            panic!("not an OpenOrdersEnd: {end:?}")
        };
        let list: BTreeMap<u64, OpenOrder> = others
            .iter()
            .filter_map(|m| match m {
                Outbound::OpenOrder(o) if o.request_id == id => Some((o.order_id.0, *o)),
                _ => None,
            })
            .collect();
        assert_eq!(list.len() as u32, end.count, "OpenOrdersEnd.count");
        (list, end.report_seq)
    }

    /// Reads until `n` report-stream messages have arrived (heartbeats skipped,
    /// anything else kept in `other`); `session_seq` zeroed.
    fn reports(&mut self, n: usize) -> Vec<Outbound> {
        let mut got = Vec::new();
        while got.len() < n {
            let (_, m) = self.c.read_next().unwrap();
            if m.report().is_some() {
                got.push(strip(&m));
            }
        }
        got
    }
}

fn order_id(accepted: &Outbound) -> u64 {
    match accepted {
        Outbound::Accepted(a) => a.order_id.0,
        other => panic!("not accepted: {other:?}"),
    }
}

fn fills(ms: &[Outbound], account: u32) -> Vec<Fill> {
    ms.iter()
        .filter_map(|m| match m {
            Outbound::Fill(f) if f.account.0 == account => Some(*f),
            _ => None,
        })
        .collect()
}

/// What happened while A was away.
struct Away {
    /// A's resume point when it left.
    resume: u64,
    /// Every report A saw live before leaving (its three `Accepted`).
    a_live: Vec<Outbound>,
    /// B's fills (taker side of what A missed).
    b_fills: Vec<Fill>,
    /// A's resting orders (exchange ids), best price first.
    a_orders: Vec<u64>,
}

/// A rests sells of 5 at 10005, 10006 and 10007 and disconnects; then B buys 7
/// with an IOC at 10010: A's first order fills (5), its second partly (2).
fn trade_while_a_is_away(addr: SocketAddr) -> Away {
    let mut a = trading(addr, A, 0);
    let mut a_live = Vec::new();
    let mut a_orders = Vec::new();
    for (i, px) in [10_005, 10_006, 10_007].into_iter().enumerate() {
        let acc = a.place(1 + i as u64, Side::Sell, px, 5, TimeInForce::Gtc);
        a_orders.push(order_id(&acc));
        a_live.push(acc);
    }
    let resume = a.c.resume_point();
    assert_eq!(
        report_seqs(&a_live).last().map(|r| r.1 + 1),
        Some(resume),
        "the resume point follows the last report seen"
    );
    drop(a);

    let mut b = trading(addr, B, 0);
    b.place(100, Side::Buy, 10_010, 7, TimeInForce::Ioc);
    let b_fills = fills(&b.sync(), B);
    assert_eq!(
        b_fills.iter().map(|f| f.qty.lots()).collect::<Vec<_>>(),
        [5, 2]
    );
    Away {
        resume,
        a_live,
        b_fills,
        a_orders,
    }
}

/// `got` (A's recovery phase at `away.resume`) is exactly the reports A missed: one
/// maker fill per fill of B's, in order, numbered on from the resume point.
///
/// Catches: reports dropped while A had no session (the original bug: 0 replayed),
/// a replay starting at the wrong sequence number, or one with other contents.
fn assert_missed(got: &[Outbound], away: &Away) {
    let seqs: Vec<u64> = got.iter().filter_map(|m| m.report()).map(|r| r.1).collect();
    let want: Vec<u64> = (away.resume..away.resume + away.b_fills.len() as u64).collect();
    assert_eq!(seqs, want, "report_seq contiguous from the resume point");
    let a_fills = fills(got, A);
    assert_eq!(a_fills.len(), got.len(), "nothing but A's fills: {got:?}");
    for (i, (a, b)) in a_fills.iter().zip(&away.b_fills).enumerate() {
        assert_eq!(a.trade_id, b.trade_id, "fill {i}");
        assert_eq!((a.price, a.qty), (b.price, b.qty), "fill {i}");
        assert_eq!(a.role, LiquidityRole::Maker, "fill {i}");
        assert_eq!(a.order_id.0, away.a_orders[i], "fill {i}");
    }
    assert_eq!(a_fills[0].leaves_qty.lots(), 0);
    assert_eq!(a_fills[1].leaves_qty.lots(), 3);
}

/// B takes one more lot from A's second order: A, logged in, must get it live,
/// numbered right after `next`.
fn assert_live_after(addr: SocketAddr, a: &mut Sess, next: u64, id: u64) {
    let mut b = trading(addr, B, 0);
    b.place(id, Side::Buy, 10_006, 1, TimeInForce::Ioc);
    let taker = fills(&b.sync(), B);
    let live = a.reports(1);
    let f = fills(&live, A);
    assert_eq!(f.len(), 1, "{live:?}");
    assert_eq!(f[0].report_seq, next);
    assert_eq!(f[0].trade_id, taker[0].trade_id);
}

#[test]
fn replay_after_disconnect_is_exactly_what_was_missed_then_live() {
    with_timeout(120, || {
        let ex = start("");
        let away = trade_while_a_is_away(ex.addr);
        let mut a = trading(ex.addr, A, away.resume);
        assert_eq!(a.recovered.reason, 0);
        assert_eq!(a.recovered.replayed, 2);
        assert_eq!(a.login.accepted.next_report_seq, away.resume + 2);
        assert_missed(&a.recovery, &away);
        assert_live_after(ex.addr, &mut a, away.resume + 2, 101);
    });
}

/// Stops the exchange: SIGTERM (graceful) or SIGKILL (`kill -9`).
fn stop(ex: support::Exchange, graceful: bool) {
    if graceful {
        let (status, _) = ex.terminate();
        assert!(status.success(), "{status:?}");
    } else {
        drop(ex); // SIGKILL
    }
}

/// The journal (default fsync, `batch`) rebuilds A's stream after a restart: the
/// replay at A's resume point equals the one before the restart, and a replay from
/// report 1 equals everything A ever got, numbered identically.
///
/// Catches: a stream kept only in memory (nothing to replay after the restart, or
/// numbering restarting at 1), a rebuilt stream whose contents or numbers differ.
fn replay_after_restart(graceful: bool) {
    with_timeout(180, move || {
        let dir = tempfile::tempdir().unwrap();
        let extra = format!(
            "[journal]\ndir = {:?}\n",
            dir.path().join("journal").display().to_string()
        );
        let ex = start(&extra);
        let away = trade_while_a_is_away(ex.addr);
        let before = trading(ex.addr, A, away.resume).recovery;
        assert_missed(&before, &away);
        stop(ex, graceful);

        let ex = start(&extra);
        let mut a = trading(ex.addr, A, away.resume);
        assert_eq!(a.recovered.reason, 0);
        assert_missed(&a.recovery, &away);
        assert_eq!(a.recovery, before, "the same reports, byte for byte");
        let all = trading(ex.addr, A, 1).recovery;
        let mut want = away.a_live.clone();
        want.extend(before.iter().copied());
        assert_eq!(all, want, "the whole stream, rebuilt from the journal");
        assert_live_after(ex.addr, &mut a, away.resume + 2, 101);
    });
}

#[test]
fn replay_after_sigterm_restart_equals_what_was_missed() {
    replay_after_restart(true);
}

#[test]
fn replay_after_kill_9_restart_equals_what_was_missed() {
    replay_after_restart(false);
}

/// Sends `req` on a drop copy and returns its refusal's reason (and checks it is
/// unsequenced: `report_seq` 0).
fn refused<M: WireMessage>(dc: &mut Sess, req: &M, want: RequestRef) -> u16 {
    let (answer, _) = dc.ask(req, want);
    assert_eq!(answer.report(), None, "a refusal is not in the stream");
    match answer {
        Outbound::Rejected(r) => r.reason.0,
        Outbound::CancelRejected(r) => r.reason.0,
        other => panic!("not refused: {other:?}"),
    }
}

/// A drop copy of A sees A's reports (caused by A's trading session and by B) in the
/// same order, with the same `report_seq` and contents, and none of B's; it refuses
/// orders, cancels and mass cancels with `read_only_session`, without journaling.
/// An operator's drop copy of every account sees both streams, each in order, and
/// can resume from an engine sequence number. A non-operator may not open either.
///
/// Catches: a drop copy missing reports caused by another account, or seeing other
/// accounts' reports; a drop copy that can trade; refusals broadcast to the account's
/// trading sessions or numbered in its stream; drop copies open to any account.
#[test]
fn drop_copies_see_the_account_streams_and_cannot_trade() {
    with_timeout(120, || {
        let ex = start(&operator_toml());
        for target in [Some(A), None] {
            let denied = try_open(ex.addr, drop_copy_params(B, target, 0));
            assert!(
                matches!(denied, Err(ClientError::LoginRejected { reason, .. }) if reason == NOT_PERMITTED),
                "account {B} opened a drop copy of {target:?}: {:?}",
                denied.map(|s| s.login.accepted)
            );
        }
        let mut dc = drop_copy(ex.addr, A, Some(A), 0);
        let mut all = drop_copy(ex.addr, OPERATOR, None, 0);
        let mut a = trading(ex.addr, A, 0);
        let mut b = trading(ex.addr, B, 0);

        let mut a_seen = Vec::new();
        let mut b_seen = Vec::new();
        let o1 = a.place(1, Side::Sell, 10_005, 5, TimeInForce::Gtc);
        let o2 = a.place(2, Side::Sell, 10_007, 5, TimeInForce::Gtc);
        a_seen.extend([o1, o2]);
        b_seen.push(b.place(100, Side::Buy, 10_009, 3, TimeInForce::Ioc));
        b_seen.extend(b.sync().into_iter().filter(|m| m.report().is_some()));
        b_seen.push(b.place(101, Side::Buy, 9_990, 2, TimeInForce::Gtc));
        let (cancelled, fill) = a.ask(
            &cancel(3, OrderId(order_id(&o2))),
            RequestRef::Cancel(ClientOrderId(3)),
        );
        // The cancel was sent after B's trade, so A's stream is: two Accepted, the
        // maker fill (read before the cancel's answer), the Cancelled.
        a_seen.extend(fill.into_iter().filter(|m| m.report().is_some()));
        a_seen.push(cancelled);
        assert_eq!(
            report_seqs(&a_seen).iter().map(|r| r.1).collect::<Vec<_>>(),
            (1..=4).collect::<Vec<_>>(),
            "{a_seen:?}"
        );

        let copy = dc.reports(a_seen.len());
        assert_eq!(copy, a_seen, "the drop copy sees A's stream as A does");
        assert!(
            dc.sync().iter().all(|m| m.report().is_none()),
            "nothing more (B's reports are not A's)"
        );

        // Read-only, refused before sequencing: A's stream does not move.
        let before = a.c.resume_point();
        let reason = refused(
            &mut dc,
            &order(50, Side::Buy, 9_000, 1, TimeInForce::Gtc),
            RequestRef::NewOrder(ClientOrderId(50)),
        );
        assert_eq!(reason, READ_ONLY_SESSION);
        let reason = refused(
            &mut dc,
            &cancel(51, OrderId(order_id(&o1))),
            RequestRef::Cancel(ClientOrderId(51)),
        );
        assert_eq!(reason, READ_ONLY_SESSION);
        let mass = MassCancel {
            client_order_id: ClientOrderId(52),
            instrument: None,
            side: None,
        };
        let (answer, _) = dc.ask(&mass, RequestRef::MassCancel(ClientOrderId(52)));
        match answer {
            Outbound::CancelRejected(r) => {
                assert_eq!(r.reason.0, READ_ONLY_SESSION);
                assert_eq!(r.request_kind, RequestKind::MassCancel);
                assert_eq!(r.report_seq, 0);
            }
            other => panic!("mass cancel on a drop copy: {other:?}"),
        }
        let status = dc.status_request(order_id(&o1), 0);
        assert_eq!(
            (status.state, status.open_qty.lots()),
            (OrderState::PartiallyFilled, 2),
            "the refused cancel changed nothing; the drop copy may query"
        );
        assert!(
            a.sync().is_empty(),
            "the drop copy's refusals reach no trading session"
        );
        assert_eq!(a.c.resume_point(), before, "nothing journaled");

        // The operator's copy: both streams, each in order.
        let n = a_seen.len() + b_seen.len();
        let every = all.reports(n);
        let of = |acct: u32| -> Vec<Outbound> {
            every
                .iter()
                .copied()
                .filter(|m| m.report().map(|r| r.0 .0) == Some(acct))
                .collect()
        };
        assert_eq!(of(A), a_seen);
        assert_eq!(of(B), b_seen);
        let engine: Vec<u64> = every.iter().map(Outbound::engine_seq).collect();
        assert!(engine.windows(2).all(|w| w[0] <= w[1]), "{engine:?}");
        // Resuming an all-accounts copy from engine sequence 1 replays all of it.
        let again = drop_copy(ex.addr, OPERATOR, None, 1);
        assert_eq!(
            again.recovery, every,
            "the operator's replay from the start"
        );
    });
}

/// `OrderStatus` and `OpenOrders` describe the book after a partial fill and a
/// cancel; an unknown order id and an order of another account get the same answer
/// (state `Unknown`, and `unknown_order` to a cancel), so ids cannot be probed.
///
/// Catches: statuses not following fills or cancels, cancelled orders still listed,
/// another account's live order revealed by a query or a cancel answer (the old
/// `not_owner` 11 for a foreign live order vs 10 otherwise).
#[test]
fn order_status_and_open_orders_match_the_book_and_hide_other_accounts() {
    with_timeout(120, || {
        let ex = start("");
        let mut a = trading(ex.addr, A, 0);
        let mut b = trading(ex.addr, B, 0);
        let o1 = order_id(&a.place(1, Side::Sell, 10_010, 10, TimeInForce::Gtc));
        let o2 = order_id(&a.place(2, Side::Sell, 10_020, 5, TimeInForce::Gtc));
        let o3 = order_id(&a.place(3, Side::Buy, 9_990, 4, TimeInForce::Gtc));
        b.place(100, Side::Buy, 10_010, 3, TimeInForce::Ioc);
        let foreign = order_id(&b.place(101, Side::Buy, 9_980, 6, TimeInForce::Gtc));
        let (cancelled, _) = a.ask(
            &cancel(4, OrderId(o3)),
            RequestRef::Cancel(ClientOrderId(4)),
        );
        assert!(matches!(cancelled, Outbound::Cancelled(_)), "{cancelled:?}");

        let s1 = a.status_request(o1, 0);
        assert_eq!(s1.state, OrderState::PartiallyFilled);
        assert_eq!((s1.price.units(), s1.open_qty.lots()), (10_010, 7));
        assert_eq!((s1.side, s1.client_order_id.0), (Side::Sell, 1));
        let s2 = a.status_request(0, 2); // by client order id
        assert_eq!(
            (s2.state, s2.order_id.0, s2.open_qty.lots()),
            (OrderState::New, o2, 5)
        );
        assert_eq!(
            a.status_request(o3, 0).state,
            OrderState::Unknown,
            "cancelled"
        );
        assert_eq!(
            s2.report_seq,
            a.c.resume_point() - 1,
            "the answer reflects every report so far"
        );

        // No enumeration: a foreign live order looks exactly like one never made.
        let unknown_id = foreign + 1_000;
        let mut as_unknown = |id: u64| {
            let mut s = a.status_request(id, 0);
            assert_eq!(s.order_id.0, id, "the id is echoed");
            (s.request_id, s.order_id, s.engine_seq, s.engine_time) =
                (0, OrderId(0), 0, peregrine_types::Timestamp(0));
            s
        };
        let f = as_unknown(foreign);
        assert_eq!(f.state, OrderState::Unknown);
        assert_eq!(f.account.0, A, "the session's account, not the owner's");
        assert_eq!(f, as_unknown(unknown_id));
        let mut cancel_reason = |id: u64, cl: u64| match a
            .ask(
                &cancel(cl, OrderId(id)),
                RequestRef::Cancel(ClientOrderId(cl)),
            )
            .0
        {
            Outbound::CancelRejected(r) => r.reason.0,
            other => panic!("cancel of order {id}: {other:?}"),
        };
        assert_eq!(cancel_reason(foreign, 5), UNKNOWN_ORDER);
        assert_eq!(cancel_reason(unknown_id, 6), UNKNOWN_ORDER);
        assert_eq!(
            b.status_request(foreign, 0).state,
            OrderState::New,
            "B's order is live (and untouched)"
        );

        let (open, seq) = a.open_orders(Some(A));
        let got: Vec<(u64, i64, i64, Side)> = open
            .values()
            .map(|o| (o.order_id.0, o.price.units(), o.open_qty.lots(), o.side))
            .collect();
        assert_eq!(
            got,
            [(o1, 10_010, 7, Side::Sell), (o2, 10_020, 5, Side::Sell)]
        );
        assert_eq!(seq, a.c.resume_point() - 1);
        let (theirs, _) = a.open_orders(Some(B));
        assert!(
            theirs.values().all(|o| o.account.0 == A),
            "B's orders listed to A: {theirs:?}"
        );
        let (mine, _) = b.open_orders(None);
        assert_eq!(mine.keys().copied().collect::<Vec<_>>(), [foreign]);
    });
}

/// Several requests pipelined on one session each get exactly one terminal answer
/// (a mass cancel with nothing to cancel: `MassCancelDone` 0, in the stream); a
/// second trading session of the same account gets every report of the stream, and
/// none of the first session's unsequenced answers (docs/protocol.md 4.2: "Every
/// report of the account's stream goes to every session whose scope includes the
/// account ... the answer to a request always reaches the session that sent it.
/// Unsequenced answers go only to the session that sent the request.")
///
/// Catches: a mass cancel without an answer (the original bug), a doubled or missing
/// answer, sessions of one account receiving each other's query answers, or missing
/// reports caused by the other session.
#[test]
fn every_request_gets_one_terminal_answer_and_every_session_of_the_account_the_stream() {
    with_timeout(120, || {
        let ex = start("");
        let mut a1 = trading(ex.addr, A, 0);
        let mut a2 = trading(ex.addr, A, 0);
        let mass = |id: u64| MassCancel {
            client_order_id: ClientOrderId(id),
            instrument: None,
            side: None,
        };

        // Pipelined: nothing waits for an answer before the next request is sent.
        a1.c.send(&order(10, Side::Sell, 10_050, 2, TimeInForce::Gtc))
            .unwrap();
        a1.c.send(&order(11, Side::Sell, 10_050, 0, TimeInForce::Gtc))
            .unwrap();
        // Buy side only: order 10 (a sell) stays; nothing to cancel.
        a1.c.send(&MassCancel {
            side: Some(Side::Buy),
            ..mass(12)
        })
        .unwrap();
        a1.c.send(&cancel(13, OrderId(987_654))).unwrap();
        a1.c.send(&OrderStatusRequest {
            request_id: 14,
            order_id: OrderId(0),
            client_order_id: ClientOrderId(10),
            instrument: InstrumentId(1),
        })
        .unwrap();
        a1.c.send(&OpenOrdersRequest {
            request_id: 15,
            account: None,
            instrument: None,
        })
        .unwrap();
        let seen = a1.sync();
        let mut terminals: BTreeMap<RequestRef, Vec<Outbound>> = BTreeMap::new();
        for m in &seen {
            if let Some(r) = m.terminal() {
                terminals.entry(r).or_default().push(*m);
            }
        }
        let want = [
            RequestRef::NewOrder(ClientOrderId(10)),
            RequestRef::NewOrder(ClientOrderId(11)),
            RequestRef::MassCancel(ClientOrderId(12)),
            RequestRef::Cancel(ClientOrderId(13)),
            RequestRef::Query(14),
            RequestRef::Query(15),
        ];
        assert_eq!(terminals.keys().copied().collect::<Vec<_>>(), {
            let mut w = want.to_vec();
            w.sort();
            w
        });
        assert!(terminals.values().all(|v| v.len() == 1), "{terminals:?}");
        let done = terminals[&RequestRef::MassCancel(ClientOrderId(12))][0];
        let Outbound::MassCancelDone(done) = done else {
            panic!("{done:?}")
        };
        assert_eq!(done.cancelled, 0);
        assert!(done.report_seq != 0, "MassCancelDone is in the stream");
        assert!(matches!(
            terminals[&RequestRef::NewOrder(ClientOrderId(11))][0],
            Outbound::Rejected(_)
        ));
        assert!(matches!(
            terminals[&RequestRef::Query(14)][0],
            Outbound::OrderStatus(s) if s.state == OrderState::New
        ));

        // The other session: every report of the stream, none of a1's query answers.
        let stream: Vec<Outbound> = seen
            .iter()
            .copied()
            .filter(|m| m.report().is_some())
            .collect();
        assert_eq!(a2.reports(stream.len()), stream);
        let rest = a2.sync();
        assert!(rest.is_empty(), "a1's answers leaked to a2: {rest:?}");

        // a2 mass-cancels what a1 entered: a1 sees the Cancelled and MassCancelDone 1.
        a2.c.send(&order(20, Side::Buy, 9_950, 1, TimeInForce::Gtc))
            .unwrap();
        let (done2, before) = a2.ask(&mass(21), RequestRef::MassCancel(ClientOrderId(21)));
        let Outbound::MassCancelDone(d) = done2 else {
            panic!("{done2:?}")
        };
        assert_eq!(d.cancelled, 2);
        let cancelled: Vec<u64> = before
            .iter()
            .filter_map(|m| match m {
                Outbound::Cancelled(c) if c.request_id.0 == 21 => Some(c.client_order_id.0),
                _ => None,
            })
            .collect();
        assert_eq!(cancelled.len(), 2, "{before:?}");
        let mut a2_stream: Vec<Outbound> = before
            .into_iter()
            .filter(|m| m.report().is_some())
            .collect();
        a2_stream.push(done2);
        assert_eq!(
            a1.reports(a2_stream.len()),
            a2_stream,
            "a1 sees a2's reports"
        );
        assert_eq!(a1.c.resume_point(), a2.c.resume_point());
    });
}

/// With `retain_per_account = 4`, a resume inside retention replays, one older than
/// retention gets `not_retained` and an open-orders snapshot equal to the open
/// orders, one beyond the stream `ahead_of_stream` and the same snapshot; live
/// reports then continue the stream.
///
/// Catches: retention not bounded (an old resume replaying), a snapshot that is not
/// the open orders (cancelled or filled orders listed, quantities not updated), a
/// stream that does not continue after the snapshot.
#[test]
fn a_resume_older_than_retention_gets_the_reason_and_the_open_orders() {
    with_timeout(120, || {
        let ex = start("[reports]\nretain_per_account = 4\n");
        let mut a = trading(ex.addr, A, 0);
        let mut b = trading(ex.addr, B, 0);
        let first = a.c.resume_point();
        let mut ids = Vec::new();
        for i in 0..6 {
            ids.push(order_id(&a.place(
                1 + i,
                Side::Sell,
                10_010 + i as i64,
                3,
                TimeInForce::Gtc,
            )));
        }
        for (n, &id) in ids[4..].iter().enumerate() {
            a.ask(
                &cancel(20 + n as u64, OrderId(id)),
                RequestRef::Cancel(ClientOrderId(20 + n as u64)),
            );
        }
        b.place(100, Side::Buy, 10_010, 2, TimeInForce::Ioc);
        a.reports(1); // the maker fill
        let next = a.c.resume_point();
        assert_eq!(
            next - first,
            9,
            "9 reports: 6 accepted, 2 cancelled, 1 fill"
        );
        let (open, _) = a.open_orders(Some(A));
        assert_eq!(open.keys().copied().collect::<Vec<_>>(), ids[..4]);
        let key = |o: &OpenOrder| {
            (
                o.order_id,
                o.client_order_id,
                o.price,
                o.open_qty,
                o.side,
                o.account,
            )
        };
        let want: Vec<_> = open.values().map(key).collect();
        let snapshot = |s: &Sess| -> Vec<_> {
            s.recovery
                .iter()
                .map(|m| match m {
                    Outbound::OpenOrder(o) => key(o),
                    other => panic!("not a snapshot line: {other:?}"),
                })
                .collect()
        };

        let probe = trading(ex.addr, A, next);
        let oldest = probe.login.accepted.oldest_report_seq;
        assert!(
            oldest > first && next - oldest <= 4,
            "retention: oldest {oldest}, next {next}"
        );
        drop(probe);
        let inside = trading(ex.addr, A, oldest);
        assert_eq!(inside.recovered.reason, 0);
        assert_eq!(inside.recovered.replayed, next - oldest);

        for (resume, reason) in [
            (first, NOT_RETAINED),
            (oldest - 1, NOT_RETAINED),
            (next + 10, AHEAD_OF_STREAM),
        ] {
            let s = trading(ex.addr, A, resume);
            assert_eq!(s.recovered.reason, reason, "resume at {resume}");
            assert_eq!(snapshot(&s), want, "resume at {resume}");
            assert_eq!(s.c.resume_point(), next, "the stream goes on from here");
        }

        let mut late = trading(ex.addr, A, first);
        a.place(30, Side::Buy, 9_000, 1, TimeInForce::Gtc);
        let live = late.reports(1);
        assert_eq!(live[0].report().map(|r| r.1), Some(next));
    });
}

/// A `MassCancel` refused for an unknown instrument is answered with the request's
/// own id (it used to say 0, which no client could match to its request).
#[test]
fn a_refused_mass_cancel_answers_with_the_requests_id() {
    with_timeout(60, || {
        let ex = start("[market_data]\nenabled = false");
        let mut a = trading(ex.addr, A, 0);
        let (answer, _) = a.ask(
            &MassCancel {
                client_order_id: ClientOrderId(4242),
                instrument: Some(InstrumentId(99)),
                side: None,
            },
            RequestRef::MassCancel(ClientOrderId(4242)),
        );
        match answer {
            Outbound::CancelRejected(r) => {
                assert_eq!(r.client_order_id, ClientOrderId(4242));
                assert_eq!(r.request_kind, RequestKind::MassCancel);
                assert_eq!(r.reason.0, 8, "unknown_instrument");
            }
            other => panic!("{other:?}"),
        }
    });
}

/// The exchange's clock, for expiry times: epoch nanoseconds now.
fn now_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
}

/// A GTD order past its expiry is never shown live (docs/protocol.md 4.7): an order
/// status asked after the expiry (no other command reached the book since) says
/// `Unknown`, after the order's `Cancelled` (expired); the open-orders list has it
/// no more; and an expiry nobody asks about is reported on time, unsolicited (the
/// exchange used to expire an order only when the next command reached its book,
/// and answered `New` meanwhile).
#[test]
fn an_expired_gtd_order_is_never_shown_live() {
    with_timeout(60, || {
        let ex = start("[market_data]\nenabled = false");
        let mut a = trading(ex.addr, A, 0);
        let gtd = |id: u64, in_ms: u64| {
            let mut o = order(id, Side::Buy, 9_900, 1, TimeInForce::Gtd);
            o.expire_at = peregrine_types::Timestamp(now_ns() + in_ms * 1_000_000);
            o
        };
        let (accepted, _) = a.ask(&gtd(1, 300), RequestRef::NewOrder(ClientOrderId(1)));
        let id = order_id(&accepted);
        std::thread::sleep(std::time::Duration::from_millis(600));
        a.next_query += 1;
        let q = a.next_query;
        let (status, before) = a.ask(
            &OrderStatusRequest {
                request_id: q,
                order_id: OrderId(id),
                client_order_id: ClientOrderId(0),
                instrument: InstrumentId(1),
            },
            RequestRef::Query(q),
        );
        let Outbound::OrderStatus(status) = status else {
            panic!("{status:?}")
        };
        assert_eq!(status.state, OrderState::Unknown, "never shown live");
        let expired = before
            .iter()
            .any(|m| matches!(m, Outbound::Cancelled(c) if c.order_id.0 == id && c.reason.0 == 6));
        assert!(expired, "its Cancelled (expired) comes first: {before:?}");
        let (open, _) = a.open_orders(Some(A));
        assert!(open.is_empty(), "{open:?}");
        // Nobody asks: it is expired on time all the same, unsolicited.
        let (accepted, _) = a.ask(&gtd(2, 200), RequestRef::NewOrder(ClientOrderId(2)));
        let id = order_id(&accepted);
        let got = a.reports(1);
        match got[0] {
            Outbound::Cancelled(c) => {
                assert_eq!((c.order_id.0, c.reason.0, c.request_id.0), (id, 6, 0));
                let late = now_ns().saturating_sub(c.engine_time.0);
                assert!(late < 5_000_000_000, "expired on time ({late} ns ago)");
            }
            ref other => panic!("{other:?}"),
        }
    });
}

/// A session whose stream position falls behind the report retention is told so
/// (`Disconnect`, reason 3 `behind_retention`) before the close, even one that reads
/// everything (retention 8, twelve pipelined orders released in one batch: the
/// example of issue 34); its next login gets what is retained, or the open orders.
#[test]
fn a_session_behind_retention_is_told_why() {
    with_timeout(60, || {
        let ex = start("[market_data]\nenabled = false\n[reports]\nretain_per_account = 8\n");
        let mut a = support::Client::login(ex.addr, A);
        let mut burst = Vec::new();
        for i in 0..12 {
            let mut buf = [0u8; 64];
            let n = order(100 + i, Side::Sell, 10_100 + i as i64, 1, TimeInForce::Gtc)
                .encode(&mut buf)
                .unwrap();
            burst.extend_from_slice(&buf[..n]);
        }
        a.send_raw(&burst);
        let mut last = None;
        while let Some(m) = a.recv() {
            last = Some(m);
        }
        match last {
            Some(Outbound::Disconnect(d)) => assert_eq!(d.reason.0, 3, "behind_retention"),
            other => panic!("no Disconnect before the close: {other:?}"),
        }
        // The next login from the stream's start: not retained, the open orders.
        let s = trading(ex.addr, A, 1);
        assert_eq!(s.recovered.reason, NOT_RETAINED);
        assert_eq!(s.recovered.snapshot_orders, 12);
    });
}

/// One run of issue 34's slow reader: account A rests a sell of `2 n`, sets a 4 KiB
/// receive buffer and stops reading; account B sends `n` IOC buys against it
/// (pipelined, reading its own answers on another thread), while A keeps sending
/// heartbeats and, before it reads a byte, a `MassCancel`. Then A reads: the time
/// from its first read to its `MassCancelDone`, and the fills it got.
///
/// The exchange may either drain A (it stays connected: every fill in stream order,
/// then the `Cancelled` of the rest and the `MassCancelDone`) or cut it off
/// (`slow_reader`) for a replay at its next login; with `slow_reader_ms` longer than
/// the run it must drain, so a session whose requests wait behind its own output (the
/// stall of the issue: 30,284 of 60,000 fills in 30 s, the MassCancel unanswered) fails.
fn slow_reader_drain(n: u64, shrink_after_login: bool) -> (std::time::Duration, u64) {
    use std::io::Write;
    let ex = start("slow_reader_ms = 600000\n[market_data]\nenabled = false\n");
    let mut a = if shrink_after_login {
        // The buffer shrunk under a window already advertised: the kernel drops what
        // it has no room for and the sender retransmits on its timer.
        let a = support::Client::login(ex.addr, A);
        rustix::net::sockopt::set_socket_recv_buffer_size(&a.stream, 4096).unwrap();
        a
    } else {
        let small = support::Client::connect_with_recv_buffer(ex.addr, 4096);
        support::Client::try_login_on(small, A, &key(A)).unwrap()
    };
    a.send(&order(
        1,
        Side::Sell,
        10_000,
        (2 * n) as i64,
        TimeInForce::Gtc,
    ));
    let Outbound::Accepted(rest) = a.recv_report() else {
        panic!("the resting sell")
    };
    let b = support::Client::login(ex.addr, B);
    let mut b_writer = b.stream.try_clone().unwrap();
    let reader = std::thread::spawn(move || {
        let mut b = b;
        let mut fills = 0;
        while fills < n {
            match b.recv().expect("B's connection stays") {
                Outbound::Fill(_) => fills += 1,
                Outbound::Rejected(r) => panic!("{r:?}"),
                _ => {}
            }
        }
    });
    let writer = std::thread::spawn(move || {
        let mut burst = Vec::with_capacity(64 * 1024);
        for i in 0..n {
            let mut buf = [0u8; 64];
            let len = order(1_000 + i, Side::Buy, 10_000, 1, TimeInForce::Ioc)
                .encode(&mut buf)
                .unwrap();
            burst.extend_from_slice(&buf[..len]);
            if burst.len() > 60 * 1024 {
                b_writer.write_all(&burst).unwrap();
                burst.clear();
            }
        }
        b_writer.write_all(&burst).unwrap();
    });
    while !reader.is_finished() {
        a.send(&peregrine_wire::v2::ClientHeartbeat {});
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    writer.join().unwrap();
    reader.join().unwrap();
    a.send(&MassCancel {
        client_order_id: ClientOrderId(7),
        instrument: Some(InstrumentId(1)),
        side: None,
    });
    let started = std::time::Instant::now();
    let (mut fills, mut last_seq, mut cancelled) = (0u64, None::<u64>, false);
    loop {
        let m = a.recv().expect("drained, not cut off");
        if let Some((_, seq)) = m.report() {
            if let Some(prev) = last_seq {
                assert_eq!(seq, prev + 1, "contiguous stream");
            }
            last_seq = Some(seq);
        }
        match m {
            Outbound::Fill(f) => {
                assert!(!cancelled, "a fill after the cancel");
                assert_eq!(f.order_id, rest.order_id);
                fills += 1;
            }
            Outbound::Cancelled(c) => {
                assert_eq!(
                    (c.order_id, c.request_id),
                    (rest.order_id, ClientOrderId(7))
                );
                cancelled = true;
            }
            Outbound::MassCancelDone(d) => {
                assert_eq!((d.request_id, d.cancelled), (ClientOrderId(7), 1));
                break;
            }
            Outbound::ServerHeartbeat(_) => {}
            other => panic!("{other:?}"),
        }
    }
    let drained = started.elapsed();
    assert_eq!(fills, n, "every fill, then the cancel's answer");
    assert!(cancelled);
    (drained, fills)
}

/// A reader that stopped while its fills piled up is drained once it reads again,
/// and its own MassCancel, sent before it read, is answered after them (CI size:
/// 5,000 fills; `slow_reader_drain_rate` below is the 60,000).
#[test]
fn a_slow_reader_is_drained_and_its_own_requests_answered() {
    with_timeout(120, || {
        let (t, fills) = slow_reader_drain(5_000, false);
        eprintln!("drained {fills} fills in {t:?}");
    });
}

/// The drain rate after a backlog of 60,000 fills (docs/performance.md, "Slow reader
/// drain"): `cargo test --release -p peregrine --test exchange_v2_sessions --
/// --ignored slow_reader_drain_rate --nocapture`.
#[test]
#[ignore = "a measurement: 60,000 fills, run by hand in release"]
fn slow_reader_drain_rate() {
    with_timeout(600, || {
        let runs = [
            (60_000, false),
            (60_000, false),
            (60_000, false),
            (5_000, true),
        ];
        for (run, (n, after)) in runs.into_iter().enumerate() {
            let (t, fills) = slow_reader_drain(n, after);
            println!(
                "{{\"run\":{run},\"rcvbuf_set\":\"{}\",\"fills\":{fills},\"drain_ms\":{},\"fills_per_s\":{:.0}}}",
                if after { "after_login" } else { "before_connect" },
                t.as_millis(),
                fills as f64 / t.as_secs_f64()
            );
        }
    });
}

/// A trading session of `account` that asked for cancel-on-disconnect.
fn cancel_on_disconnect(addr: SocketAddr, account: u32) -> Sess {
    let params = LoginParams::trading(AccountId(account), 0);
    let flags = peregrine_wire::v2::session::LOGIN_CANCEL_ON_DISCONNECT;
    let (mut c, login) =
        Connection::connect_with_flags(addr, params, flags, key(account), IO_TIMEOUT).unwrap();
    let mut recovery = Vec::new();
    let recovered = c.recover(|m| recovery.push(strip(m))).unwrap();
    Sess {
        c,
        login,
        recovered,
        recovery,
        next_query: 1_000_000,
    }
}

/// Cancel-on-disconnect (docs/protocol.md 4.16): when a session that asked for it
/// loses its connection, every open order of its account is cancelled by one mass
/// cancel whose reports (request id `u64::MAX`) are in the account's stream; a
/// session that did not ask (account 2), or that asked and ended with a `Logout`
/// (account 3), leaves its orders resting.
///
/// Catches: the login flag ignored, the session table not handing the mass cancel to
/// the matching stage, a `Logout` taken for a disconnect, or a cancel that reaches
/// other accounts.
#[test]
fn cancel_on_disconnect_cancels_the_accounts_orders_unless_it_logged_out() {
    const C: u32 = 3;
    with_timeout(120, || {
        let ex = start("");
        // No flag: a dropped connection leaves the order resting.
        let mut b = trading(ex.addr, B, 0);
        let b_order = order_id(&b.place(50, Side::Buy, 9_990, 1, TimeInForce::Gtc));
        drop(b);
        // The flag and a clean `Logout`: the order stays too.
        let mut c = cancel_on_disconnect(ex.addr, C);
        let c_order = order_id(&c.place(60, Side::Sell, 10_020, 1, TimeInForce::Gtc));
        c.c.send(&peregrine_wire::session::Logout {}).unwrap();
        // The exchange closes after the last outbound message.
        while c.c.read_next().is_ok() {}
        drop(c);
        // The flag and a dropped connection: every open order of A goes, those
        // entered by its other sessions too.
        let mut a = trading(ex.addr, A, 0);
        let other = order_id(&a.place(1, Side::Sell, 10_005, 5, TimeInForce::Gtc));
        let mut a_cod = cancel_on_disconnect(ex.addr, A);
        let gone = [
            other,
            order_id(&a_cod.place(3, Side::Sell, 10_007, 5, TimeInForce::Gtc)),
            order_id(&a_cod.place(4, Side::Buy, 9_980, 2, TimeInForce::Gtc)),
        ];
        assert_eq!(a.open_orders(None).0.len(), 3);
        drop(a_cod);
        support::wait_until(
            "A's orders cancelled on disconnect",
            std::time::Duration::from_secs(30),
            || a.open_orders(None).0.is_empty(),
        );
        let b_open: Vec<u64> = trading(ex.addr, B, 0)
            .open_orders(None)
            .0
            .into_keys()
            .collect();
        assert_eq!(b_open, [b_order], "B's order stays (no flag)");
        let c_open: Vec<u64> = trading(ex.addr, C, 0)
            .open_orders(None)
            .0
            .into_keys()
            .collect();
        assert_eq!(c_open, [c_order], "C's order stays (Logout)");

        // The account's stream tells why: three cancels and the mass cancel's end,
        // all with the reserved request id.
        let replay = trading(ex.addr, A, 1).recovery;
        // (In the book's mass-cancel order: not asserted.)
        let cancelled: std::collections::BTreeSet<(u64, u64)> = replay
            .iter()
            .filter_map(|m| match m {
                Outbound::Cancelled(c) => Some((c.order_id.0, c.request_id.0)),
                _ => None,
            })
            .collect();
        let want: std::collections::BTreeSet<(u64, u64)> =
            gone.iter().map(|&id| (id, u64::MAX)).collect();
        assert_eq!(cancelled, want);
        let done: Vec<(u64, u32)> = replay
            .iter()
            .filter_map(|m| match m {
                Outbound::MassCancelDone(d) => Some((d.request_id.0, d.cancelled)),
                _ => None,
            })
            .collect();
        assert_eq!(done, [(u64::MAX, 3)]);
    });
}
