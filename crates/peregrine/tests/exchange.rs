//! The exchange as clients see it: a real `peregrine exchange` process, real TCP.

mod support;

use std::time::Duration;

use peregrine_types::{ClientOrderId, OrderId, Side, TimeInForce};
use peregrine_wire::v2::ClientHeartbeat;
use peregrine_wire::v2::Outbound;
use peregrine_wire::LiquidityRole;
use support::{cancel, eventually, order, start, wait_until, with_timeout, Client};

const NO_MD: &str = "[market_data]\nenabled = false";

fn accepted(m: Outbound) -> peregrine_wire::v2::reports::Accepted {
    match m {
        Outbound::Accepted(a) => a,
        other => panic!("expected Accepted, got {other:?}"),
    }
}

fn fill(m: Outbound) -> peregrine_wire::v2::reports::Fill {
    match m {
        Outbound::Fill(f) => f,
        other => panic!("expected Fill, got {other:?}"),
    }
}

#[test]
fn login_accepts_good_and_rejects_bad_credentials() {
    with_timeout(60, || {
        let ex = start(NO_MD);
        let _ok = Client::login(ex.addr, 1);
        let bad_credentials = peregrine_wire::reason::LoginCode::BadCredentials.reason().0;
        let wrong = support::key(3);
        assert_eq!(
            Client::try_login(ex.addr, 2, &wrong).err(),
            Some(bad_credentials),
            "a wrong key"
        );
        assert_eq!(
            Client::try_login(ex.addr, 99, &support::key(99)).err(),
            Some(bad_credentials),
            "an unknown account gets the same answer"
        );
        // The log is written by its own thread: wait (bounded) for both lines, then
        // check there are exactly two.
        let _ = eventually(Duration::from_secs(10), || {
            ex.log_text().matches("refused: BadCredentials").count() >= 2
        });
        let log = ex.log_text();
        assert_eq!(log.matches("refused: BadCredentials").count(), 2, "{log}");
    });
}

#[test]
fn order_before_login_disconnects_with_a_logged_reason() {
    with_timeout(60, || {
        let ex = start(NO_MD);
        let mut c = Client::connect(ex.addr);
        c.send(&order(1, Side::Buy, 10_000, 1, TimeInForce::Gtc));
        assert!(c.closed_by_peer());
        wait_until("the logged reason", Duration::from_secs(10), || {
            ex.log_text().contains("NewOrder before login")
        });
    });
}

#[test]
fn resting_and_crossing_orders_fill_both_sessions() {
    with_timeout(60, || crossing_scenario(NO_MD));
}

#[test]
fn split_topology_fills_both_sessions() {
    with_timeout(60, || {
        crossing_scenario("topology = \"split\"\n[market_data]\nenabled = false")
    });
}

fn crossing_scenario(extra: &str) {
    let ex = start(extra);
    let mut maker = Client::login(ex.addr, 1);
    let mut taker = Client::login(ex.addr, 2);
    maker.send(&order(11, Side::Sell, 10_010, 5, TimeInForce::Gtc));
    let rest = accepted(maker.recv_report());
    assert_eq!(
        (rest.client_order_id, rest.session_seq),
        (ClientOrderId(11), maker.login_seq + 1)
    );
    taker.send(&order(21, Side::Buy, 10_020, 3, TimeInForce::Gtc));
    let take = accepted(taker.recv_report());
    assert_eq!(take.session_seq, taker.login_seq + 1);
    let tf = fill(taker.recv_report());
    assert_eq!(
        (tf.role, tf.order_id, tf.qty.lots()),
        (LiquidityRole::Taker, take.order_id, 3)
    );
    assert_eq!(
        (tf.price.units(), tf.leaves_qty.lots(), tf.session_seq),
        (10_010, 0, take.session_seq + 1)
    );
    let mf = fill(maker.recv_report());
    assert_eq!(
        (mf.role, mf.order_id, mf.client_order_id),
        (LiquidityRole::Maker, rest.order_id, ClientOrderId(11))
    );
    assert_eq!(
        (mf.leaves_qty.lots(), mf.trade_id, mf.session_seq),
        (2, tf.trade_id, rest.session_seq + 1)
    );
    assert!(mf.engine_seq > rest.engine_seq);
    assert_eq!(mf.engine_seq, tf.engine_seq);
}

#[test]
fn cancelling_another_accounts_order_is_rejected_as_unknown() {
    with_timeout(60, || {
        let ex = start(NO_MD);
        let mut owner = Client::login(ex.addr, 1);
        let mut other = Client::login(ex.addr, 2);
        owner.send(&order(1, Side::Buy, 9_990, 1, TimeInForce::Gtc));
        let a = accepted(owner.recv_report());
        // Protocol v2 answers "unknown order" for another account's order, exactly as
        // for an id that never existed, so order ids cannot be probed.
        let unknown = peregrine_wire::reason::RejectCode::UnknownOrder.reason();
        for (request, id) in [(7, a.order_id), (8, OrderId(a.order_id.0 + 1_000))] {
            other.send(&cancel(request, id));
            match other.recv_report() {
                Outbound::CancelRejected(r) => {
                    assert_eq!(r.reason, unknown);
                    assert_eq!(
                        (r.order_id, r.client_order_id),
                        (id, ClientOrderId(request))
                    );
                }
                m => panic!("expected CancelRejected, got {m:?}"),
            }
        }
        owner.send(&cancel(2, a.order_id));
        match owner.recv_report() {
            Outbound::Cancelled(c) => {
                assert_eq!((c.order_id, c.request_id), (a.order_id, ClientOrderId(2)))
            }
            m => panic!("expected Cancelled, got {m:?}"),
        }
        other.send(&cancel(8, OrderId(12345)));
        assert!(matches!(other.recv_report(), Outbound::CancelRejected(_)));
    });
}

#[test]
fn malformed_frames_disconnect_only_the_offender() {
    with_timeout(60, || {
        let ex = start(NO_MD);
        let mut good = Client::login(ex.addr, 1);
        for (i, garbage) in [
            vec![3u8, 0, 0x10, 1, 0, 0, 0, 0],     // length below the header
            vec![0xff, 0xff, 0x10, 1, 0, 0, 0, 0], // oversized length
            vec![8u8, 0, 0x7e, 1, 0, 0, 0, 0],     // unknown type
        ]
        .into_iter()
        .enumerate()
        {
            let mut bad = Client::login(ex.addr, 2);
            bad.send_raw(&garbage);
            assert!(bad.closed_by_peer(), "case {i}");
            good.send(&order(i as u64 + 1, Side::Buy, 9_990, 1, TimeInForce::Gtc));
            accepted(good.recv_report());
        }
        good.send(&ClientHeartbeat {});
        wait_until("three logged disconnects", Duration::from_secs(10), || {
            ex.log_text().matches("malformed input").count() >= 3
        });
        let log = ex.log_text();
        assert_eq!(log.matches("malformed input").count(), 3, "{log}");
    });
}

#[test]
fn a_slow_reader_is_cut_off_and_the_server_stays_responsive() {
    with_timeout(120, || {
        let mut ex = start("session_out_buffer = 4096\n[market_data]\nenabled = false");
        let mut slow = Client::login(ex.addr, 3);
        slow.stream
            .set_write_timeout(Some(std::time::Duration::from_secs(2)))
            .unwrap();
        // IOC orders that never trade: two reports each, nothing rests.
        let mut chunk = Vec::new();
        for i in 0..1000u64 {
            let mut buf = [0u8; 64];
            use peregrine_wire::WireMessage;
            let n = order(i + 1, Side::Buy, 9_000, 1, TimeInForce::Ioc)
                .encode(&mut buf)
                .unwrap();
            chunk.extend_from_slice(&buf[..n]);
        }
        // Reports are pulled from the account's stream at the reader's pace: a slow
        // reader lags, and is closed once it falls out of the stream's retention (it
        // can reconnect and resume from its last report_seq).
        let cut = |log: &str| {
            log.contains("slow reader") || log.contains("fell behind the report retention")
        };
        let mut cut_off = false;
        for _ in 0..400 {
            if std::io::Write::write_all(&mut slow.stream, &chunk).is_err() {
                cut_off = true;
                break;
            }
            if cut(&ex.log_text()) {
                cut_off = true;
                break;
            }
        }
        assert!(cut_off, "never disconnected");
        if !eventually(Duration::from_secs(10), || cut(&ex.log_text())) {
            panic!("no logged cut-off:\n{}", ex.log_text());
        }
        assert!(ex.alive());
        let mut fresh = Client::login(ex.addr, 1);
        fresh.send(&order(1, Side::Sell, 10_100, 1, TimeInForce::Gtc));
        accepted(fresh.recv_report());
    });
}

#[test]
fn sixty_four_sessions_trade_concurrently() {
    with_timeout(120, || {
        let ex = start("max_sessions = 80\n[market_data]\nenabled = false");
        let mut clients: Vec<Client> = (0..64).map(|i| Client::login(ex.addr, i % 4 + 1)).collect();
        for (i, c) in clients.iter_mut().enumerate() {
            let side = if i % 2 == 0 { Side::Buy } else { Side::Sell };
            c.send(&order(i as u64 + 1, side, 10_000, 1, TimeInForce::Gtc));
        }
        // Every session of an account gets every report of the account: each of the
        // 16 sessions of account k sees the acceptance of all 16 orders of account k
        // (its own included), in the account's stream order, whoever sent them.
        for (i, c) in clients.iter_mut().enumerate() {
            let mine: Vec<u64> = (0..64u64)
                .filter(|j| j % 4 == i as u64 % 4)
                .map(|j| j + 1)
                .collect();
            let mut seen = Vec::new();
            while seen.len() < mine.len() {
                match c.recv_report() {
                    Outbound::Accepted(a) => seen.push(a.client_order_id.0),
                    Outbound::Fill(_) => {}
                    other => panic!("session {i}: unexpected {other:?}"),
                }
            }
            seen.sort_unstable();
            assert_eq!(seen, mine, "session {i}");
        }
    });
}

#[test]
fn maker_fills_follow_the_account_to_its_new_session() {
    with_timeout(60, || {
        let ex = start(NO_MD);
        let mut first = Client::login(ex.addr, 1);
        first.send(&order(5, Side::Sell, 10_050, 2, TimeInForce::Gtc));
        let rest = accepted(first.recv_report());
        drop(first);
        // The fill must follow the account to a new session, not find the old one.
        wait_until(
            "the first session's disconnect",
            Duration::from_secs(10),
            || ex.log_text().contains(": disconnected ("),
        );
        let mut again = Client::login(ex.addr, 1);
        let mut taker = Client::login(ex.addr, 2);
        taker.send(&order(6, Side::Buy, 10_050, 2, TimeInForce::Ioc));
        accepted(taker.recv_report());
        let f = fill(again.recv_report());
        assert_eq!(
            (f.order_id, f.role, f.session_seq),
            (rest.order_id, LiquidityRole::Maker, again.login_seq + 1)
        );
    });
}

#[test]
fn idle_sessions_get_heartbeats_and_silent_ones_are_dropped() {
    with_timeout(60, || {
        let ex = start("heartbeat_ms = 100\n[market_data]\nenabled = false");
        let mut c = Client::login(ex.addr, 1);
        match c.recv() {
            Some(Outbound::ServerHeartbeat(h)) => assert_eq!(h.session_seq, c.login_seq + 1),
            other => panic!("expected a heartbeat, got {other:?}"),
        }
        // The client never sends anything: dropped after three intervals.
        assert!(c.closed_by_peer());
        assert!(ex
            .log_with("no input for three heartbeat intervals")
            .contains("no input for three heartbeat intervals"));
    });
}

#[test]
fn connections_beyond_max_sessions_are_refused() {
    with_timeout(60, || {
        let ex =
            start("max_sessions = 2\nmax_sessions_per_account = 2\n[market_data]\nenabled = false");
        let _a = Client::login(ex.addr, 1);
        let _b = Client::login(ex.addr, 2);
        let session_limit = peregrine_wire::reason::LoginCode::SessionLimit.reason().0;
        assert_eq!(
            Client::try_login(ex.addr, 3, &support::key(3)).err(),
            Some(session_limit)
        );
        let log = ex.log_with("max_sessions (2) reached");
        assert!(log.contains("max_sessions (2) reached"), "{log}");
        // A slot frees when a session ends.
        drop(_b);
        wait_until(
            "the second session's disconnect",
            Duration::from_secs(10),
            || ex.log_text().contains("disconnected (account 2"),
        );
        let _c = Client::login(ex.addr, 3);
    });
}

#[test]
fn logout_closes_the_session_and_keeps_resting_orders() {
    with_timeout(60, || {
        let ex = start(NO_MD);
        let mut a = Client::login(ex.addr, 1);
        a.send(&order(1, Side::Sell, 10_030, 1, TimeInForce::Gtc));
        accepted(a.recv_report());
        a.send(&peregrine_wire::session::Logout {});
        a.send(&order(2, Side::Sell, 10_031, 1, TimeInForce::Gtc));
        assert!(a.closed_by_peer());
        let mut b = Client::login(ex.addr, 2);
        b.send(&order(3, Side::Buy, 10_031, 2, TimeInForce::Ioc));
        accepted(b.recv_report());
        let f = fill(b.recv_report());
        assert_eq!(
            (f.price.units(), f.qty.lots()),
            (10_030, 1),
            "only the first order rested"
        );
        assert!(matches!(b.recv_report(), Outbound::Cancelled(c) if c.cancelled_qty.lots() == 1));
    });
}

/// Past `[backpressure]`'s limit on what waits for the journal's sync, orders are
/// answered `Rejected` with reason `busy` at once (nothing entered, `report_seq` 0)
/// instead of queueing: 50 orders in one write find one admitted command in flight.
#[test]
fn orders_past_the_backpressure_limit_are_refused_busy_at_once() {
    use peregrine_wire::reason::RejectCode;
    use peregrine_wire::v2::queries::OpenOrdersRequest;
    use peregrine_wire::WireMessage;
    with_timeout(60, || {
        let journal = tempfile::tempdir().unwrap();
        let ex = start(&format!(
            "{NO_MD}\n[journal]\ndir = {:?}\nfsync = \"batch\"\n\
             [backpressure]\nmax_in_flight = 1\nmax_delay_ms = 0\n",
            journal.path().display().to_string()
        ));
        let mut c = Client::login(ex.addr, 1);
        let mut bytes = Vec::new();
        for i in 1..=50u64 {
            let mut buf = [0u8; 512];
            let o = order(i, Side::Buy, 9_000 + i as i64, 1, TimeInForce::Gtc);
            let n = o.encode(&mut buf).unwrap();
            bytes.extend_from_slice(&buf[..n]);
        }
        c.send_raw(&bytes);
        let (mut acked, mut busy) = (0u32, 0u32);
        while acked + busy < 50 {
            match c.recv_report() {
                Outbound::Accepted(_) => acked += 1,
                Outbound::Rejected(r) if r.reason == RejectCode::Busy.reason() => {
                    assert_eq!(r.report_seq, 0, "a busy refusal is not journaled: {r:?}");
                    busy += 1;
                }
                other => panic!("{other:?}"),
            }
        }
        assert!(acked >= 1 && busy >= 1, "acked {acked}, busy {busy}");
        // What was refused was not entered: the open orders are the acknowledged ones.
        c.send(&OpenOrdersRequest {
            request_id: 7,
            account: None,
            instrument: None,
        });
        let open = loop {
            match c.recv_report() {
                Outbound::OpenOrdersEnd(e) if e.request_id == 7 => break e.count,
                Outbound::OpenOrder(_) => {}
                other => panic!("{other:?}"),
            }
        };
        assert_eq!(open, acked);
    });
}
