//! The gateways in front of a three-node `peregrine exchange --cluster`, with real
//! processes: each is configured with every node's order-entry address, followers
//! first, so its first login is redirected to the leader; an order placed through
//! it is acknowledged by the leader; after `kill -9` of the leader it finds the new
//! one and the next order is acknowledged there. For FIX, every execution report
//! reaches the FIX client exactly once across the move (a fill made on the new
//! leader while the gateway may still be reconnecting included).

#[path = "support/http.rs"]
mod http_support;
mod support;

use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use peregrine_fix_interop::qf::{wait_until, InitiatorKit, Recorder, Seen, WireLog, QUICKFIX};
use peregrine_types::{ClientOrderId, Side, TimeInForce};
use peregrine_wire::v2::{Outbound, RequestRef};
use quickfix::{ConnectionHandler, FieldMap, Message};
use support::cluster::{Cluster, N};
use support::fix::start_gateway_at;
use support::fix::{client_recorder, client_session, client_settings};
use support::{order, with_timeout, write_key_file};

const WAIT: Duration = Duration::from_secs(60);

/// The order-entry addresses of the cluster, every follower before the leader.
fn followers_first(cluster: &Cluster, leader: usize) -> String {
    let mut order: Vec<usize> = (0..N).filter(|&i| i != leader).collect();
    order.push(leader);
    order
        .iter()
        .map(|&i| cluster.nodes[i].client.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// A resting-or-filling limit order of the counterparty (account 2) at the current
/// leader; panics unless the leader accepts it.
fn counterparty_order(cluster: &Cluster, id: u64, side: Side, price: i64, tif: TimeInForce) {
    let (mut c, _) = cluster.login(2, 0);
    c.recover(|_| {}).unwrap();
    let o = order(id, side, price, 1, tif);
    let a = c
        .request(&o, RequestRef::NewOrder(ClientOrderId(id)), |_| {})
        .unwrap();
    assert!(matches!(a, Outbound::Accepted(_)), "{a:?}");
}

fn text_of(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

fn fix_order(cl: &str, side: &str, price: &str) -> Message {
    let mut m = Message::new();
    m.with_header_mut(|h| h.set_field(35, "D")).unwrap();
    for (tag, v) in [
        (11, cl),
        (55, "PGN-USD"),
        (60, "20240101-00:00:00.000"),
        (54, side),
        (38, "1"),
        (40, "2"),
        (44, price),
        (59, "1"),
    ] {
        m.set_field(tag, v).unwrap();
    }
    m
}

/// The execution reports QuickFIX received.
fn reports(qf: &Recorder) -> Vec<Seen> {
    qf.app().into_iter().filter(|m| m.msg_type == "8").collect()
}

/// How many execution reports about ClOrdID `cl` have ExecType `exec_type`.
fn count(qf: &Recorder, cl: &str, exec_type: &str) -> usize {
    reports(qf)
        .iter()
        .filter(|m| m.field(11) == Some(cl) && m.field(150) == Some(exec_type))
        .count()
}

#[test]
fn the_fix_gateway_follows_the_leader_through_a_kill() {
    with_timeout(300, || {
        let _one = QUICKFIX.lock().unwrap_or_else(|e| e.into_inner());
        let mut cluster = Cluster::start();
        let (_, leader) = cluster.login(2, 0);
        let dir = tempfile::tempdir().unwrap();
        write_key_file(&dir.path().join("keys.toml"), &[1, 2]);
        let gateway_log = dir.path().join("gateway.log");
        let gateway = start_gateway_at(
            dir.path(),
            followers_first(&cluster, leader),
            "127.0.0.1:0",
            "gateway.log",
        );
        wait_until("the gateway's exchange session", WAIT, || {
            text_of(&gateway_log).contains("account 1 logged in")
        });
        let log = text_of(&gateway_log);
        assert!(
            log.contains("following the redirect to leader"),
            "the first node is a follower: {log}"
        );
        assert!(
            log.contains(&format!(
                "account 1 logged in at {}",
                cluster.nodes[leader].client
            )),
            "{log}"
        );

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

        // An order the leader acknowledges.
        send(fix_order("A1", "1", "100.00"));
        wait_until("A1 New", WAIT, || count(&qf, "A1", "0") == 1);

        // The leader dies. A fill of A1 on the new leader reaches the FIX client
        // (live or replayed, whichever the gateway's reconnection makes it).
        cluster.nodes[leader].kill9();
        counterparty_order(&cluster, 1, Side::Sell, 10_000, TimeInForce::Ioc);
        wait_until("A1 filled after the failover", WAIT, || {
            count(&qf, "A1", "F") == 1
        });
        // A new order, acknowledged by the new leader.
        send(fix_order("A2", "1", "99.00"));
        wait_until("A2 New", WAIT, || count(&qf, "A2", "0") == 1);
        counterparty_order(&cluster, 2, Side::Sell, 9_900, TimeInForce::Ioc);
        wait_until("A2 filled", WAIT, || count(&qf, "A2", "F") == 1);

        // A barrier: the status answer comes after anything sent before it.
        let mut status = Message::new();
        status.with_header_mut(|h| h.set_field(35, "H")).unwrap();
        for (tag, v) in [(11, "A2"), (55, "PGN-USD"), (54, "1"), (790, "barrier")] {
            status.set_field(tag, v).unwrap();
        }
        send(status);
        wait_until("the status barrier", WAIT, || {
            reports(&qf).iter().any(|m| m.field(790) == Some("barrier"))
        });
        let all = reports(&qf);
        let trading: Vec<&Seen> = all.iter().filter(|m| m.field(150) != Some("I")).collect();
        let mut got: Vec<(String, String)> = trading
            .iter()
            .map(|m| {
                (
                    m.field(11).unwrap_or("").to_owned(),
                    m.field(150).unwrap_or("").to_owned(),
                )
            })
            .collect();
        got.sort();
        let want = [("A1", "0"), ("A1", "F"), ("A2", "0"), ("A2", "F")]
            .map(|(a, b)| (a.to_owned(), b.to_owned()));
        assert_eq!(got, want, "every report exactly once: {all:#?}");
        let mut exec_ids: Vec<&str> = all.iter().filter_map(|m| m.field(17)).collect();
        let n = exec_ids.len();
        exec_ids.sort_unstable();
        exec_ids.dedup();
        assert_eq!(exec_ids.len(), n, "no ExecID twice: {all:#?}");
        assert!(all.iter().all(|m| !m.poss_dup), "{all:#?}");
        let log = text_of(&gateway_log);
        assert!(
            log.matches("account 1 logged in at").count() >= 2,
            "a second login, at the new leader: {log}"
        );
        initiator.stop().unwrap();
    });
}

/// Waits until every session of the HTTP gateway at `http` is up.
fn http_sessions_up(http: SocketAddr) -> bool {
    match http_support::try_request(http, "GET", "/peregrine/status", &[], "") {
        Ok(r) if r.status == 200 => r.json()["sessions"]
            .as_array()
            .is_some_and(|s| s.iter().all(|x| x["up"] == true)),
        _ => false,
    }
}

fn http_order(http: SocketAddr, price: &str) -> http_support::Resp {
    http_support::signed(
        http,
        "POST",
        "/api/v3/order",
        0,
        &format!("symbol=PGN-USD&side=BUY&type=LIMIT&timeInForce=GTC&quantity=1&price={price}"),
    )
}

#[test]
fn the_http_gateway_follows_the_leader_through_a_kill() {
    with_timeout(300, || {
        let mut cluster = Cluster::start();
        let (_, leader) = cluster.login(2, 0);
        let dir = tempfile::tempdir().unwrap();
        let keys = dir.path().join("keys.toml");
        write_key_file(&keys, &[1, 2, 3, 4]);
        // The gateway's view of the exchange: the cluster's default instrument, no
        // market-data recovery service (not what this test is about).
        let exchange_toml = dir.path().join("exchange.toml");
        std::fs::write(
            &exchange_toml,
            format!(
                "listen = \"{}\"\nrecovery_enabled = false\n[market_data]\ntarget = \"127.0.0.1:{}\"\n",
                cluster.nodes[leader].client,
                http_support::free_udp()
            ),
        )
        .unwrap();
        let api_keys = http_support::api_keys_toml();
        let gateway_toml = dir.path().join("gateway.toml");
        std::fs::write(
            &gateway_toml,
            format!(
                "listen = \"127.0.0.1:0\"\n[exchange]\nconfig = \"{}\"\norder_entry = \"{}\"\n\
                 keys = \"{}\"\n[history]\nurl = \"sqlite://{}/history.db\"\n{api_keys}",
                exchange_toml.display(),
                followers_first(&cluster, leader),
                keys.display(),
                dir.path().display()
            ),
        )
        .unwrap();
        let (mut child, log) = http_support::spawn(
            &[
                "gateway",
                "http",
                "--config",
                gateway_toml.to_str().unwrap(),
            ],
            dir.path(),
            "gateway",
        );
        let http: SocketAddr = http_support::first_line(&mut child, "http gateway on http://")
            .parse()
            .unwrap();
        let _gateway = http_support::Proc { child, log };
        let log = dir.path().join("gateway.log");
        assert!(
            http_support::wait_for(WAIT, || http_sessions_up(http)),
            "sessions not up: {}",
            text_of(&log)
        );
        assert!(
            text_of(&log).contains("following the redirect to leader"),
            "the first node is a follower: {}",
            text_of(&log)
        );
        let r = http_order(http, "100.00");
        assert_eq!(r.status, 200, "{}", r.body);
        assert_eq!(r.json()["status"], "NEW", "{}", r.body);

        // The leader dies; the gateway finds the new one. Orders sent while it is
        // reconnecting are refused (not sent), so retry until one is answered.
        cluster.nodes[leader].kill9();
        let mut answer = None;
        let found = http_support::wait_for(WAIT, || {
            if !http_sessions_up(http) {
                return false;
            }
            let r = http_order(http, "99.00");
            let ok = r.status == 200;
            answer = Some(r);
            ok
        });
        let r = answer.expect("no order tried");
        assert!(found, "{} {}\n{}", r.status, r.body, text_of(&log));
        assert_eq!(r.json()["status"], "NEW", "{}", r.body);
        // Both orders rest at the new leader: its cancel-all for account 1 names two.
        let (mut c, at) = cluster.login(1, 0);
        assert_ne!(at, leader);
        c.recover(|_| {}).unwrap();
        let mass = peregrine_wire::v2::MassCancel {
            client_order_id: ClientOrderId(77),
            instrument: None,
            side: None,
        };
        let end = c
            .request(&mass, RequestRef::MassCancel(ClientOrderId(77)), |_| {})
            .unwrap();
        match end {
            Outbound::MassCancelDone(d) => assert_eq!(d.cancelled, 2, "{d:?}"),
            other => panic!("{other:?}"),
        }
    });
}
