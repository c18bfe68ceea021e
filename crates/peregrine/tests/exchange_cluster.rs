//! `peregrine exchange --cluster` with three real processes on loopback: the leader
//! serves, followers redirect; `kill -9` of the leader under load loses no
//! acknowledged order, order ids continue, and every node converges on the same
//! state hash after the killed one rejoins; a leader cut off from its majority
//! (both followers stopped with SIGSTOP) acknowledges nothing; a paused old leader
//! that resumes after a new election acknowledges nothing either.
//!
//! `CLUSTER_KILLS=N` sets the number of leader kills (default 3; the 20
//! for a longer run).

mod support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use peregrine_client::order_entry::Connection;
use peregrine_client::ClientError;
use peregrine_types::{AccountId, ClientOrderId, OrderId, Side, TimeInForce};
use peregrine_wire::v2::client::LoginParams;
use peregrine_wire::v2::{Outbound, RequestRef};
use support::cluster::{Cluster, N};
use support::{cancel, key, order, with_timeout};

/// Sends `o` (new order `id`) and waits for its answer; a `busy` refusal (reason 19:
/// on a loaded machine a replication round can pass `[backpressure] max_delay_ms`) is
/// sent again after 10 ms, as docs/cluster.md tells clients to (nothing was entered).
fn request_taken(
    c: &mut Connection,
    o: &peregrine_wire::orders::NewOrder,
    id: u64,
) -> Result<Outbound, ClientError> {
    loop {
        match c.request(o, RequestRef::NewOrder(ClientOrderId(id)), |_| {})? {
            Outbound::Rejected(r)
                if r.reason == peregrine_wire::reason::RejectCode::Busy.reason() =>
            {
                std::thread::sleep(Duration::from_millis(10));
            }
            other => return Ok(other),
        }
    }
}

/// Places resting orders one at a time and records each acknowledged id, until the
/// connection breaks or `stop`.
fn drive(mut c: Connection, base: u64, acked: Arc<Mutex<Vec<OrderId>>>, stop: Arc<AtomicBool>) {
    for i in 0..1_000_000u64 {
        if stop.load(Ordering::Relaxed) {
            return;
        }
        let side = if i % 2 == 0 { Side::Buy } else { Side::Sell };
        let price = if side == Side::Buy { 9_000 } else { 11_000 } + (i % 50) as i64;
        let id = base + i;
        let o = order(id, side, price, 1, TimeInForce::Gtc);
        match request_taken(&mut c, &o, id) {
            Ok(Outbound::Accepted(a)) => acked.lock().unwrap().push(a.order_id),
            Ok(other) => panic!("order {id}: {other:?}"),
            Err(_) => return, // the leader died
        }
    }
}

/// Every order in `acked` is live on the serving leader: cancelling it is
/// `Cancelled`, not a reject.
fn all_live(cluster: &Cluster, acked: &[OrderId], base: u64) {
    let (mut c, _) = cluster.login(1, 0);
    for (i, &id) in acked.iter().enumerate() {
        let cid = base + i as u64;
        match c.request(
            &cancel(cid, id),
            RequestRef::Cancel(ClientOrderId(cid)),
            |_| {},
        ) {
            Ok(Outbound::Cancelled(_)) => {}
            Ok(Outbound::Rejected(r)) => panic!("acknowledged order {id:?} lost: {r:?}"),
            other => panic!("cancel of {id:?}: {other:?}"),
        }
    }
}

#[test]
fn the_leader_serves_and_followers_redirect_to_it() {
    with_timeout(120, || {
        let cluster = Cluster::start();
        let (mut c, leader) = cluster.login(1, 0);
        let o = order(1, Side::Buy, 9_000, 1, TimeInForce::Gtc);
        let a = c
            .request(&o, RequestRef::NewOrder(ClientOrderId(1)), |_| {})
            .unwrap();
        assert!(matches!(a, Outbound::Accepted(_)), "{a:?}");
        for (i, n) in cluster.nodes.iter().enumerate() {
            if i == leader {
                continue;
            }
            // The order is committed with one follower: the other may not have heard
            // from the leader yet on a loaded machine ("no leader known", id 0).
            let until = Instant::now() + Duration::from_secs(20);
            let r = loop {
                let r = Connection::connect(
                    n.client,
                    LoginParams::trading(AccountId(1), 0),
                    key(1),
                    Duration::from_secs(5),
                );
                match r {
                    Err(ClientError::Redirected { leader_id: 0, .. }) if Instant::now() < until => {
                        std::thread::sleep(Duration::from_millis(50));
                    }
                    r => break r,
                }
            };
            match r {
                Err(ClientError::Redirected {
                    leader_id, address, ..
                }) => {
                    assert_eq!(leader_id, cluster.nodes[leader].id);
                    assert_eq!(address, Some(cluster.nodes[leader].client.to_string()));
                }
                other => panic!("a follower answered {:?}", other.map(|_| ())),
            }
        }
        let status = cluster.nodes[leader].status().unwrap();
        assert_eq!(status["role"], "leader", "{status}");
        assert_eq!(status["serving"], true);
        cluster.converged(Duration::from_secs(20));
        // Every node, followers included, exposes its cluster state to Prometheus.
        for (i, n) in cluster.nodes.iter().enumerate() {
            let mut s = TcpStream::connect_timeout(&n.admin, Duration::from_secs(2)).unwrap();
            s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            s.write_all(b"GET /metrics HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
                .unwrap();
            let mut text = String::new();
            s.read_to_string(&mut text).unwrap();
            let want = format!("\nperegrine_cluster_leader {}\n", u8::from(i == leader));
            assert!(text.contains(&want), "node {}: {text}", n.id);
            assert!(
                text.contains("\nperegrine_cluster_hash_mismatches_total 0\n"),
                "{text}"
            );
            assert!(text.ends_with("# EOF\n"), "{text}");
        }
        // The operator's view, through the CLI against the real endpoints.
        let admins: Vec<String> = cluster.nodes.iter().map(|n| n.admin.to_string()).collect();
        let out = Command::new(env!("CARGO_BIN_EXE_peregrine"))
            .args(["admin", "cluster", "status", "--node", &admins.join(",")])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let lead_id = cluster.nodes[leader].id;
        assert!(
            text.contains(&format!("node {lead_id} at {}: leader", admins[leader])),
            "{text}"
        );
        assert_eq!(text.matches(": follower, term").count(), N - 1, "{text}");
        // A leadership transfer through the CLI: another node serves. (A transfer is a
        // request: raft-rs drops it if the target does not catch up within an
        // election timeout, so it is repeated until it happens.)
        let to = (leader + 1) % N;
        let until = Instant::now() + Duration::from_secs(30);
        let mut asked = Instant::now() - Duration::from_secs(10);
        loop {
            if cluster.nodes[to]
                .status()
                .is_some_and(|s| s["serving"] == true)
            {
                break;
            }
            assert!(
                Instant::now() < until,
                "no transfer to node {}\n{}",
                cluster.nodes[to].id,
                cluster.logs()
            );
            if asked.elapsed() > Duration::from_secs(2) {
                let out = Command::new(env!("CARGO_BIN_EXE_peregrine"))
                    .args([
                        "admin",
                        "cluster",
                        "transfer",
                        "--node",
                        &admins.join(","),
                        "--to",
                    ])
                    .arg(cluster.nodes[to].id.to_string())
                    .output()
                    .unwrap();
                assert!(
                    out.status.success(),
                    "{}",
                    String::from_utf8_lossy(&out.stderr)
                );
                asked = Instant::now();
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let (mut c, now) = cluster.login(1, 0);
        assert_eq!(now, (leader + 1) % N);
        let o = order(2, Side::Buy, 9_000, 1, TimeInForce::Gtc);
        assert!(matches!(
            c.request(&o, RequestRef::NewOrder(ClientOrderId(2)), |_| {}),
            Ok(Outbound::Accepted(_))
        ));
        cluster.converged(Duration::from_secs(20));
    });
}

#[test]
fn kill_9_of_the_leader_under_load_loses_no_acknowledged_order() {
    let kills: usize = std::env::var("CLUSTER_KILLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    with_timeout(120 + 40 * kills as u64, move || {
        let mut cluster = Cluster::start();
        let acked = Arc::new(Mutex::new(Vec::new()));
        let mut failovers = Vec::new();
        for k in 0..kills {
            let base = 1_000_000 * (k as u64 + 1);
            let (c, leader) = cluster.login(1, 0);
            let stop = Arc::new(AtomicBool::new(false));
            let (a, s) = (Arc::clone(&acked), Arc::clone(&stop));
            let driver = std::thread::spawn(move || drive(c, base, a, s));
            // Let acknowledgements flow, then kill the leader mid-stream.
            let before = acked.lock().unwrap().len();
            support::wait_until("orders acknowledged", Duration::from_secs(30), || {
                acked.lock().unwrap().len() >= before + 50
            });
            let killed_at = Instant::now();
            cluster.nodes[leader].kill9();
            driver.join().unwrap();
            stop.store(true, Ordering::Relaxed);
            // The new leader serves, and holds every acknowledged order.
            let (mut c, new_leader) = cluster.login(1, 0);
            assert_ne!(new_leader, leader);
            let probe = 900_000_000 + k as u64;
            let o = order(probe, Side::Buy, 8_000, 1, TimeInForce::Gtc);
            let a = c
                .request(&o, RequestRef::NewOrder(ClientOrderId(probe)), |_| {})
                .unwrap();
            let Outbound::Accepted(a) = a else {
                panic!("{a:?}")
            };
            // Failover: the kill → the first acknowledgement from the new leader.
            failovers.push(killed_at.elapsed());
            let round: Vec<OrderId> = acked.lock().unwrap()[before..].to_vec();
            // Order ids continue: the new leader's next id is past every one acked.
            assert!(round.iter().all(|id| id.0 < a.order_id.0), "ids went back");
            drop(c);
            // (Each round cancels its own orders: the book stays small.)
            all_live(&cluster, &round, base + 500_000);
            // The killed node rejoins and catches up.
            cluster.nodes[leader].start();
            cluster.converged(Duration::from_secs(30));
        }
        let total = acked.lock().unwrap().len();
        let mut sorted = failovers.clone();
        sorted.sort();
        let at =
            |q: f64| sorted[((sorted.len() as f64 * q).ceil() as usize).clamp(1, sorted.len()) - 1];
        eprintln!(
            "{kills} leader kills, {total} acknowledged orders all live; failover (kill -9 → \
             first ack from the new leader): p50 {:?}, p99 {:?}, max {:?}; all: {failovers:?}",
            at(0.5),
            at(0.99),
            at(1.0)
        );
    });
}

/// How a leader cut off from its majority answered an order.
#[derive(Debug)]
enum Cut {
    /// It acknowledged it (the sabotage of the negative control).
    Acked,
    /// It ended the session with `LeaderRedirect`, this long after the order.
    Redirected(Duration, u64),
    /// Anything else (a close, a timeout).
    Other(String),
}

/// Stops both followers of the serving leader, sends one order, and says how the
/// leader answered; then heals and checks the cluster serves again.
fn ack_without_majority(env: &[(&str, &str)]) -> Cut {
    use rustix::process::Signal;
    let cluster = Cluster::start_with_env(env);
    let (mut c, leader) = cluster.login(1, 0);
    let o = order(1, Side::Buy, 9_000, 1, TimeInForce::Gtc);
    assert!(matches!(
        c.request(&o, RequestRef::NewOrder(ClientOrderId(1)), |_| {}),
        Ok(Outbound::Accepted(_))
    ));
    let followers: Vec<usize> = (0..N).filter(|&i| i != leader).collect();
    // Stopped for good before the order leaves: a follower whose threads still ran
    // after kill(2) returned could take the order's append and acknowledge it (a
    // legitimate commit; this test once failed that way under load).
    for &f in &followers {
        let took = cluster.nodes[f].pause();
        eprintln!(
            "follower {} stopped {took:?} after SIGSTOP",
            cluster.nodes[f].id
        );
    }
    // Cut off: the order executes on the leader but is never replicated, so its
    // acknowledgement must never leave (the leader steps down within an election
    // timeout and closes the session).
    let o = order(2, Side::Buy, 9_001, 1, TimeInForce::Gtc);
    let sent = Instant::now();
    // A `busy` refusal (a timer's batch waiting for its replication past
    // `max_delay_ms`) is not an answer to this question: the order is sent again.
    let r = request_taken(&mut c, &o, 2);
    let cut = match r {
        Ok(Outbound::Accepted(_)) => Cut::Acked,
        Err(ClientError::Redirected { leader_id, .. }) => {
            Cut::Redirected(sent.elapsed(), leader_id)
        }
        other => Cut::Other(format!("{other:?}")),
    };
    for &f in &followers {
        cluster.nodes[f].signal(Signal::CONT);
    }
    // After healing, a leader serves again and the cluster converges.
    let (mut c, _) = cluster.login(1, 0);
    let o = order(3, Side::Buy, 9_002, 1, TimeInForce::Gtc);
    assert!(matches!(
        request_taken(&mut c, &o, 3),
        Ok(Outbound::Accepted(_))
    ));
    cluster.converged(Duration::from_secs(30));
    cut
}

/// The leader cut off from its majority acknowledges nothing, steps down once it has
/// not heard from a majority for an election timeout, and tells its session so
/// (`LeaderRedirect` with no leader known) instead of leaving it to time out.
#[test]
fn a_leader_without_its_majority_acknowledges_nothing_and_says_so() {
    with_timeout(120, || match ack_without_majority(&[]) {
        Cut::Redirected(after, leader) => {
            assert_eq!(leader, 0, "no leader can be known without a majority");
            eprintln!("the cut-off leader told its session after {after:?}");
        }
        Cut::Acked => panic!("a leader without a majority acknowledged an order"),
        Cut::Other(what) => panic!("a leader without a majority answered {what}"),
    });
}

/// Negative control: with results released before replication
/// (`PEREGRINE_SABOTAGE=release-before-durable`), the same scenario must see the
/// acknowledgement, so the test above is known to catch that bug. Only in a build
/// with the `sabotage` feature (`cargo test -p peregrine --features sabotage --test
/// exchange_cluster`), never in what users run.
#[cfg(feature = "sabotage")]
#[test]
fn negative_control_release_before_replication_is_caught() {
    with_timeout(120, || {
        let cut = ack_without_majority(&[("PEREGRINE_SABOTAGE", "release-before-durable")]);
        assert!(matches!(cut, Cut::Acked), "{cut:?}");
    });
}

/// Places `n` resting orders from account 1 through the leader; their ids.
fn place(cluster: &Cluster, first: u64, n: u64) -> Vec<OrderId> {
    let (mut c, _) = cluster.login(1, 0);
    (first..first + n)
        .map(|id| {
            let o = order(id, Side::Buy, 8_000 + (id % 50) as i64, 1, TimeInForce::Gtc);
            match request_taken(&mut c, &o, id) {
                Ok(Outbound::Accepted(a)) => a.order_id,
                other => panic!("order {id}: {other:?}"),
            }
        })
        .collect()
}

/// `peregrine journal replay` / `verify journal` on a stopped node's config: the
/// Raft log replayed offline (from the newest snapshot: 150 orders pass
/// `snapshot_every` 64 twice) prints the engine seq and state hash every node
/// reported on its admin endpoint, and the replicated hash checks match.
#[test]
fn a_stopped_nodes_log_replays_offline_to_the_hash_it_reported() {
    with_timeout(180, || {
        let mut cluster = Cluster::start();
        place(&cluster, 1, 150);
        let seq = cluster.converged(Duration::from_secs(30));
        let s = cluster.nodes[0].status().unwrap();
        let hash = s["current_state"]["hash"].as_str().unwrap().to_string();
        for n in &mut cluster.nodes {
            n.signal(rustix::process::Signal::TERM);
            if let Some(mut c) = n.child.take() {
                c.wait().unwrap();
            }
        }
        let want = format!("engine_seq {seq} state_hash {hash}");
        for n in &cluster.nodes {
            let out = Command::new(env!("CARGO_BIN_EXE_peregrine"))
                .args(["journal", "replay", "--config"])
                .arg(&n.config)
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(
                out.status.success() && text.contains(&want),
                "node {}: want {want:?}\n{text}{}",
                n.id,
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(text.contains("0 mismatched"), "{text}");
            let out = Command::new(env!("CARGO_BIN_EXE_peregrine"))
                .args(["verify", "journal", "--dir"])
                .arg(&n.raft)
                .arg("--config")
                .arg(&n.config)
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(
                out.status.success() && text.contains(&want) && text.contains("OK: "),
                "node {} verify: {text}{}",
                n.id,
                String::from_utf8_lossy(&out.stderr)
            );
        }
    });
}

#[test]
fn a_paused_old_leader_acknowledges_nothing_after_a_new_election() {
    use rustix::process::Signal;
    with_timeout(120, || {
        let cluster = Cluster::start();
        let (mut c, old) = cluster.login(1, 0);
        let o = order(1, Side::Buy, 9_000, 1, TimeInForce::Gtc);
        assert!(matches!(
            c.request(&o, RequestRef::NewOrder(ClientOrderId(1)), |_| {}),
            Ok(Outbound::Accepted(_))
        ));
        cluster.nodes[old].pause();
        support::wait_until("a new leader serves", Duration::from_secs(30), || {
            (0..N).filter(|&i| i != old).any(|i| {
                cluster.nodes[i]
                    .status()
                    .is_some_and(|s| s["serving"] == true)
            })
        });
        // The old leader still believes it leads: the order reaches it as soon as it
        // runs again, executes there, and must never be acknowledged.
        let o = order(2, Side::Buy, 9_001, 1, TimeInForce::Gtc);
        c.send(&o).unwrap();
        cluster.nodes[old].signal(Signal::CONT);
        let mut acked = None;
        while let Ok((_, m)) = c.read_next() {
            if let Outbound::Accepted(a) = m {
                acked = Some(a);
            }
        }
        assert!(acked.is_none(), "the deposed leader acknowledged {acked:?}");
        // The order does not exist on the new leader either, and the old one rejoins.
        let (mut c, now) = cluster.login(1, 0);
        assert_ne!(now, old);
        let st = peregrine_wire::v2::queries::OrderStatusRequest {
            request_id: 7,
            client_order_id: ClientOrderId(2),
            order_id: OrderId(0),
            instrument: peregrine_types::InstrumentId(1),
        };
        let r = c.request(&st, RequestRef::Query(7), |_| {}).unwrap();
        let Outbound::OrderStatus(r) = r else {
            panic!("{r:?}")
        };
        assert_eq!(
            r.open_qty.lots(),
            0,
            "the unacknowledged order exists: {r:?}"
        );
        cluster.converged(Duration::from_secs(30));
    });
}

#[test]
fn a_wiped_follower_rejoins_and_catches_up_from_a_snapshot() {
    with_timeout(180, || {
        let mut cluster = Cluster::start();
        // More entries than `snapshot_every` + `log_retain`: the log behind the
        // newest snapshot is compacted, so a new member needs the snapshot.
        let ids = place(&cluster, 1, 150);
        let (_, leader) = cluster.login(1, 0);
        let f = (0..N).find(|&i| i != leader).unwrap();
        let id = cluster.nodes[f].id;
        let lead = &cluster.nodes[leader];
        let (code, body) = lead
            .admin_call("POST", &format!("/cluster/remove?id={id}"))
            .unwrap();
        assert_eq!(code, 202, "{body}");
        support::wait_until("node removed", Duration::from_secs(20), || {
            lead.status()
                .is_some_and(|s| !s["voters"].as_array().unwrap().iter().any(|v| v == id))
        });
        cluster.nodes[f].kill9();
        std::fs::remove_dir_all(&cluster.nodes[f].raft).unwrap();
        cluster.nodes[f].set_join();
        cluster.nodes[f].start();
        let peer = cluster.nodes[f].peer.clone();
        // At whichever node leads now (a loaded machine may have moved the
        // leadership between the two remaining voters meanwhile).
        let at_leader = |path: &str| {
            support::wait_until(path, Duration::from_secs(30), || {
                (0..N).filter(|&i| i != f).any(|i| {
                    cluster.nodes[i]
                        .admin_call("POST", path)
                        .is_some_and(|(code, _)| code == 202)
                })
            })
        };
        at_leader(&format!("/cluster/add?id={id}&addr={peer}"));
        support::wait_until("the learner caught up", Duration::from_secs(30), || {
            cluster.nodes[f]
                .status()
                .is_some_and(|s| s["engine_seq"].as_u64() >= Some(ids.len() as u64))
        });
        at_leader(&format!("/cluster/promote?id={id}&addr={peer}"));
        let seq = cluster.converged(Duration::from_secs(30));
        assert!(seq >= ids.len() as u64);
        let s = cluster.nodes[f].status().unwrap();
        assert!(
            s["snapshots_installed"].as_u64() >= Some(1),
            "the wiped node did not need a snapshot: {s}"
        );
        // The promotion is acknowledged (202) once proposed; the wiped node counts
        // itself a voter once it has applied that entry, which may come after the
        // states converged (the entry carries no command).
        support::wait_until("the wiped node is a voter", Duration::from_secs(30), || {
            cluster.nodes[f]
                .status()
                .is_some_and(|s| s["voters"].as_array().unwrap().iter().any(|v| v == id))
        });
    });
}

/// Polls `sub` (logging its events) until `done`, or panics after 30 s.
fn poll_md(
    sub: &mut peregrine_client::md::Subscriber,
    log: &mut Vec<String>,
    what: &str,
    cluster: &Cluster,
    done: impl Fn(&peregrine_client::md::Subscriber) -> bool,
) {
    let until = Instant::now() + Duration::from_secs(30);
    while !done(sub) {
        assert!(
            Instant::now() < until,
            "market data: {what}; events {log:?}\n{}",
            cluster.logs()
        );
        let n = sub
            .poll(&mut |e| match e {
                peregrine_client::md::MdEvent::Level { .. }
                | peregrine_client::md::MdEvent::Book { .. } => {}
                other => log.push(format!("{other:?}")),
            })
            .unwrap();
        if n == 0 {
            sub.wait(Duration::from_millis(5));
        }
    }
}

/// The feed and its recovery service find the leader: a subscriber given every
/// node's recovery address (followers redirect to the leader's) builds the book
/// from the leader's snapshot and the feed; after `kill -9` of the leader, the new
/// leader's feed is a new session, and the subscriber rebuilds the book from the
/// new leader's snapshot (past the dead node), ending with exactly the resting
/// orders that were acknowledged.
#[test]
fn market_data_follows_the_leader_across_a_failover() {
    use peregrine_client::md::{Subscriber, SubscriberConfig};
    use peregrine_types::InstrumentId;
    with_timeout(180, || {
        let sub = Subscriber::bind(SubscriberConfig {
            feed: "127.0.0.1:0".parse().unwrap(),
            recovery: Vec::new(),
            instruments: vec![InstrumentId(1)],
            simulate_loss: None,
            interface: std::net::Ipv4Addr::UNSPECIFIED,
        })
        .unwrap();
        let feed = sub.local_addr().unwrap();
        let mut cluster = Cluster::start_with(&support::cluster::Opts {
            market_data: Some(feed.to_string()),
            ..Default::default()
        });
        // The subscriber is rebound with the nodes' recovery addresses, on the same
        // feed port (the nodes publish there).
        drop(sub);
        let mut sub = Subscriber::bind(SubscriberConfig {
            feed,
            recovery: cluster.nodes.iter().map(|n| n.recovery).collect(),
            instruments: vec![InstrumentId(1)],
            simulate_loss: None,
            interface: std::net::Ipv4Addr::UNSPECIFIED,
        })
        .unwrap();
        let (mut c, leader) = cluster.login(1, 0);
        let place = |c: &mut Connection, id: u64, side: Side, price: i64, qty: i64| {
            let o = order(id, side, price, qty, TimeInForce::Gtc);
            let r = c.request(&o, RequestRef::NewOrder(ClientOrderId(id)), |_| {});
            assert!(matches!(r, Ok(Outbound::Accepted(_))), "{r:?}");
        };
        place(&mut c, 1, Side::Buy, 9_000, 5);
        place(&mut c, 2, Side::Sell, 11_000, 3);
        let mut log = Vec::new();
        sub.start(&mut |e| log.push(format!("{e:?}")));
        let book = |s: &Subscriber| {
            let b = s.book(InstrumentId(1)).unwrap();
            (b.levels(Side::Buy), b.levels(Side::Sell))
        };
        poll_md(&mut sub, &mut log, "the first book", &cluster, |s| {
            !s.recovering() && book(s) == (vec![(9_000, 5)], vec![(11_000, 3)])
        });
        // Live updates through the feed.
        place(&mut c, 3, Side::Buy, 9_100, 2);
        poll_md(&mut sub, &mut log, "a live update", &cluster, |s| {
            book(s).0 == vec![(9_100, 2), (9_000, 5)]
        });
        drop(c);
        cluster.nodes[leader].kill9();
        let (mut c, _) = cluster.login(1, 0);
        place(&mut c, 4, Side::Sell, 10_900, 7);
        let want = (vec![(9_100, 2), (9_000, 5)], vec![(10_900, 7), (11_000, 3)]);
        poll_md(
            &mut sub,
            &mut log,
            "the book after the failover",
            &cluster,
            |s| !s.recovering() && book(s) == want,
        );
        assert!(
            log.iter().any(|l| l.starts_with("NewSession")),
            "the new leader's feed is a new session: {log:?}"
        );
        assert!(
            log.iter().filter(|l| l.starts_with("Snapshot")).count() >= 2,
            "rebuilt from the new leader's snapshot: {log:?}"
        );
    });
}

/// Overload: the cluster is offered far more than it can replicate, with a small
/// `[backpressure]` limit. Every order is answered, acknowledged or refused `busy`
/// (none goes unanswered), and the leadership holds throughout (a change would leave
/// the deposed leader's executed orders unanswered). `CLUSTER_OVERLOAD_SECS`
/// lengthens the run (default 2 s; the 5-minute run is `scripts/bench-cluster.sh
/// overload`).
///
/// It used to fail about 1 run in 6-10 (dev build): with the harness's
/// `snapshot_every = 64`, every node stopped at index 64 to take a 7 MB snapshot on
/// its Raft thread, the followers for longer than the leader's lease, and the leader
/// stepped down (docs/cluster.md, Overload, "Snapshots under load"; the next test
/// covers that case since the fix). It runs with the shipped `snapshot_every`: 10 of
/// 10 under `stress-ng --cpu 2` at load ~15 (dev build, 3-5 s) and 10 of 10 in the
/// ci profile (2.6-2.9 s).
#[test]
fn overload_is_answered_busy_and_the_leadership_holds() {
    overload_run(100_000);
}

/// The overload run with a snapshot every 16 entries (megabytes of state after a
/// second): the leadership still holds and every node takes snapshots. Before the
/// files were written off the Raft thread at staggered indices, every node stopped
/// at the same index to encode and write its file, and the leader's lease ran out
/// (1 run in 4 failed at load ~14 with an interval of 32; docs/cluster.md,
/// "Overload").
#[test]
fn overload_with_frequent_snapshots_keeps_the_leader() {
    overload_run(16);
}

fn overload_run(snapshot_every: u64) {
    use peregrine_client::loadgen::{self, LoadgenParams};
    let secs: f64 = std::env::var("CLUSTER_OVERLOAD_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2.0);
    with_timeout(120 + 2 * secs as u64, move || {
        // Alone among this binary's clusters (three more nodes on two cores would
        // starve these), with the shipped election timing (30 ticks of 10 ms).
        let cluster = Cluster::start_with(&support::cluster::Opts {
            extra: "[backpressure]\nmax_in_flight = 512\nmax_delay_ms = 20\n".into(),
            election_ticks: Some(30),
            snapshot_every: Some(snapshot_every),
            exclusive: true,
            ..Default::default()
        });
        // One order committed before the load: the leadership counted from here is
        // the one under load (a node stalled by the machine at start-up, before any
        // order, was once replaced at load ~17; not what this test is about).
        place(&cluster, 9_000_000_000, 1);
        let leaderships = cluster.leaderships();
        let (_, leader) = cluster.login(1, 0);
        let summary = loadgen::run(&LoadgenParams {
            addrs: cluster.addrs(),
            accounts: (1..=4).map(|a| (AccountId(a), key(a))).collect(),
            spec: peregrine_types::InstrumentSpec::example(1),
            connections: 4,
            rate: 100_000,
            closed: false,
            window: 1,
            duration: secs,
            drain: 20.0,
            // Yields its core when idle: the nodes need both.
            wait: peregrine_queue::WaitStrategy::SpinThenPark,
        })
        .unwrap_or_else(|e| panic!("loadgen: {e}\n{}", cluster.logs()));
        eprintln!("{}", summary.text());
        assert_eq!(summary.lost, 0, "unanswered orders\n{}", cluster.logs());
        assert_eq!(summary.answered, summary.sent);
        assert_eq!((summary.errors, summary.redirected), (0, 0));
        assert!(
            summary.busy > 0,
            "never busy at 100k/s offered: {summary:?}"
        );
        assert_eq!(
            cluster.leaderships(),
            leaderships,
            "a leadership change under load\n{}",
            cluster.logs()
        );
        let s = cluster.nodes[leader].status().unwrap();
        assert_eq!(s["serving"], true, "{s}");
        cluster.converged(Duration::from_secs(30));
        if snapshot_every < 100_000 {
            // What a node logs when a pass of its loop kept it from the network for
            // half an election timeout (printed, not asserted: a loaded machine can
            // stall a thread for other reasons).
            let logs = cluster.logs();
            let stalls: Vec<&str> = logs
                .lines()
                .filter(|l| l.contains("without reading the network"))
                .collect();
            eprintln!("{} stall lines: {stalls:#?}", stalls.len());
            for n in &cluster.nodes {
                let s = n.status().unwrap();
                let taken = s["snapshots_taken"].as_u64().unwrap_or(0);
                assert!(taken > 0, "node {} took no snapshot: {s}", n.id);
            }
        }
    });
}
