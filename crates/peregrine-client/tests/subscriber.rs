//! The feed subscriber over real sockets against a scripted recovery service: it
//! never blocks while a recovery is slow (the test keeps polling and sending while
//! the service withholds its answer: a blocking poll would deadlock the test, which
//! runs under a timeout), it holds packets that arrive meanwhile and applies them
//! in order afterwards, snapshots per instrument with their own `as_of_seq`, and the
//! replay-not-retained fallback to snapshots. Packets carry a send time that comes
//! back on the book events.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use peregrine_client::md::{MdEvent, Subscriber, SubscriberConfig};
use peregrine_types::{InstrumentId, Price, Qty, Side, Timestamp};
use peregrine_wire::md::packet::{stamp_send_time, PacketBuilder};
use peregrine_wire::md::recovery::{
    Recovery, ReplayResponse, SnapshotEnd, SnapshotHeader, SnapshotLevel,
};
use peregrine_wire::md::L2Update;
use peregrine_wire::stream::RecvBuffer;
use peregrine_wire::{ReasonCode, WireMessage};

const SESSION: u64 = 42;

fn with_timeout(secs: u64, f: impl FnOnce() + Send + 'static) {
    let (tx, rx) = mpsc::channel();
    let h = std::thread::spawn(move || {
        f();
        let _ = tx.send(());
    });
    match rx.recv_timeout(Duration::from_secs(secs)) {
        Ok(()) => h.join().unwrap(),
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            std::panic::resume_unwind(h.join().unwrap_err())
        }
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("timed out after {secs} s"),
    }
}

fn level(instrument: u32, side: Side, price: i64, qty: i64) -> L2Update {
    L2Update {
        price: Price::from_raw(price),
        qty: Qty::from_raw(qty),
        engine_time: Timestamp(1_000 + price as u64),
        instrument: InstrumentId(instrument),
        order_count: 1,
        side,
    }
}

/// Sends one packet of `msgs` numbered from `first`, stamped `sent`.
fn send(tx: &UdpSocket, to: SocketAddr, first: u64, msgs: &[L2Update], sent: u64) {
    let mut buf = [0u8; 1400];
    let mut b = PacketBuilder::new(&mut buf, SESSION, first).unwrap();
    for m in msgs {
        b.push(*m).unwrap();
    }
    let n = b.len();
    stamp_send_time(&mut buf[..n], sent);
    tx.send_to(&buf[..n], to).unwrap();
}

fn encode(out: &mut Vec<u8>, m: &impl WireMessage) {
    let mut buf = [0u8; 256];
    let n = m.encode(&mut buf).unwrap();
    out.extend_from_slice(&buf[..n]);
}

/// Reads one recovery request from `s`.
fn request(s: &mut TcpStream, rx: &mut RecvBuffer<4096>) -> Recovery {
    loop {
        if let Some(m) = rx.next(Recovery::decode).unwrap() {
            return m;
        }
        let n = s.read(rx.spare()).unwrap();
        assert!(n > 0, "subscriber closed");
        rx.commit(n);
    }
}

fn snapshot_answer(instrument: u32, as_of: u64, levels: &[(Side, i64, i64)]) -> Vec<u8> {
    let mut out = Vec::new();
    encode(
        &mut out,
        &SnapshotHeader {
            request_id: 1,
            session_id: SESSION,
            as_of_seq: as_of,
            engine_time: Timestamp(1),
            instrument: InstrumentId(instrument),
            level_count: levels.len() as u32,
            reason: ReasonCode(0),
        },
    );
    for &(side, price, qty) in levels {
        encode(
            &mut out,
            &SnapshotLevel {
                price: Price::from_raw(price),
                qty: Qty::from_raw(qty),
                order_count: 1,
                side,
            },
        );
    }
    encode(
        &mut out,
        &SnapshotEnd {
            request_id: 1,
            as_of_seq: as_of,
            instrument: InstrumentId(instrument),
            level_count: levels.len() as u32,
        },
    );
    out
}

/// What a test saw, owned.
#[derive(Debug, Default)]
struct Seen {
    log: Vec<String>,
    /// (instrument, exchange_time, send_time) of each Book event.
    books: Vec<(u32, u64, u64)>,
}

impl Seen {
    fn on(&mut self, e: MdEvent<'_>) {
        match e {
            MdEvent::Book {
                instrument,
                exchange_time,
                send_time,
                ..
            } => self.books.push((instrument.0, exchange_time, send_time)),
            MdEvent::Level { seq, .. } => self.log.push(format!("level {seq}")),
            MdEvent::Gap { from, to } => self.log.push(format!("gap {from}..{to}")),
            MdEvent::RecoveredByReplay { from, to } => {
                self.log.push(format!("replayed {from}..{to}"))
            }
            MdEvent::RecoveredBySnapshot { as_of_seq } => {
                self.log.push(format!("snapshot recovery {as_of_seq}"))
            }
            MdEvent::Snapshot {
                instrument,
                as_of_seq,
                ..
            } => self
                .log
                .push(format!("snapshot {} as of {as_of_seq}", instrument.0)),
            MdEvent::RecoveryFailed { error, .. } => self.log.push(format!("failed {error}")),
            other => self.log.push(format!("{other:?}")),
        }
    }
}

/// Polls until `done`, parking in `wait` between empty polls.
fn poll_until(sub: &mut Subscriber, seen: &mut Seen, done: impl Fn(&Subscriber, &Seen) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !done(sub, seen) {
        assert!(
            Instant::now() < deadline,
            "condition never met: {:?}",
            seen.log
        );
        if sub.poll(&mut |e| seen.on(e)).unwrap() == 0 {
            sub.wait(Duration::from_millis(5));
        }
    }
}

fn subscriber(recovery: Option<SocketAddr>, instruments: &[u32]) -> (Subscriber, SocketAddr) {
    subscriber_of(recovery.into_iter().collect(), instruments)
}

fn subscriber_of(recovery: Vec<SocketAddr>, instruments: &[u32]) -> (Subscriber, SocketAddr) {
    let sub = Subscriber::bind(SubscriberConfig {
        feed: "127.0.0.1:0".parse().unwrap(),
        recovery,
        instruments: instruments.iter().map(|i| InstrumentId(*i)).collect(),
        simulate_loss: None,
        interface: std::net::Ipv4Addr::UNSPECIFIED,
    })
    .unwrap();
    let addr = sub.local_addr().unwrap();
    (sub, addr)
}

#[test]
fn a_gap_is_replayed_without_blocking_and_held_packets_follow_in_order() {
    with_timeout(60, || {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let recovery = listener.local_addr().unwrap();
        let (release_tx, release_rx) = mpsc::channel::<()>();
        let (asked_tx, asked_rx) = mpsc::channel::<(u64, u64, u16)>();
        let server = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let mut rx = RecvBuffer::<4096>::new();
            let Recovery::ReplayRequest(r) = request(&mut s, &mut rx) else {
                panic!("expected a replay request");
            };
            asked_tx.send((r.session_id, r.first_seq, r.count)).unwrap();
            release_rx.recv().unwrap(); // withhold the answer until told
            let mut out = Vec::new();
            encode(
                &mut out,
                &ReplayResponse {
                    session_id: SESSION,
                    first_seq: 2,
                    count: 2,
                    reason: ReasonCode(0),
                },
            );
            for m in [level(1, Side::Buy, 99, 2), level(1, Side::Sell, 101, 3)] {
                encode(&mut out, &m);
            }
            s.write_all(&out).unwrap();
        });
        let (mut sub, feed) = subscriber(Some(recovery), &[1]);
        let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
        let mut seen = Seen::default();
        send(&tx, feed, 1, &[level(1, Side::Buy, 98, 1)], 5_000);
        poll_until(&mut sub, &mut seen, |_, s| !s.books.is_empty());
        assert_eq!(seen.books, [(1, 1_098, 5_000)], "exchange and send times");
        // 2 and 3 are lost; 4 arrives: a gap, and a replay request.
        send(&tx, feed, 4, &[level(1, Side::Buy, 97, 4)], 6_000);
        poll_until(&mut sub, &mut seen, |s, _| s.recovering());
        // The request goes out as the subscriber is polled.
        let asked = loop {
            sub.poll(&mut |e| seen.on(e)).unwrap();
            if let Ok(a) = asked_rx.recv_timeout(Duration::from_millis(1)) {
                break a;
            }
        };
        assert_eq!(asked, (SESSION, 2, 2));
        // The service is silent; polling goes on and later packets are held.
        send(&tx, feed, 5, &[level(1, Side::Sell, 102, 5)], 7_000);
        for _ in 0..50 {
            sub.poll(&mut |e| seen.on(e)).unwrap();
        }
        assert!(sub.recovering());
        assert_eq!(seen.books.len(), 1, "nothing applied during the recovery");
        release_tx.send(()).unwrap();
        poll_until(&mut sub, &mut seen, |s, _| {
            !s.recovering() && s.book(InstrumentId(1)).unwrap().levels(Side::Sell).len() == 2
        });
        server.join().unwrap();
        assert_eq!(
            seen.log,
            [
                "level 1",
                "gap 2..4",
                "replayed 2..4",
                "level 2",
                "level 3",
                "level 4",
                "level 5"
            ]
        );
        let book = sub.book(InstrumentId(1)).unwrap();
        assert_eq!(book.levels(Side::Buy), [(99, 2), (98, 1), (97, 4)]);
        assert_eq!(book.levels(Side::Sell), [(101, 3), (102, 5)]);
        // Replayed messages carry no send time; held packets keep theirs.
        assert_eq!(
            seen.books[1..],
            [(1, 1_101, 0), (1, 1_097, 6_000), (1, 1_102, 7_000)]
        );
    });
}

#[test]
fn snapshots_per_instrument_skip_what_each_already_holds() {
    with_timeout(60, || {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let recovery = listener.local_addr().unwrap();
        let server = std::thread::spawn(move || {
            // Instrument 1 as of 3, instrument 2 as of 5: one connection each.
            for (instrument, as_of, lvl) in
                [(1, 3, (Side::Buy, 100, 1)), (2, 5, (Side::Sell, 200, 2))]
            {
                let (mut s, _) = listener.accept().unwrap();
                let mut rx = RecvBuffer::<4096>::new();
                let Recovery::SnapshotRequest(r) = request(&mut s, &mut rx) else {
                    panic!("expected a snapshot request");
                };
                assert_eq!(r.instrument, InstrumentId(instrument));
                s.write_all(&snapshot_answer(instrument, as_of, &[lvl]))
                    .unwrap();
            }
        });
        let (mut sub, feed) = subscriber(Some(recovery), &[1, 2]);
        let mut seen = Seen::default();
        sub.start(&mut |e| seen.on(e));
        let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
        // Sent while the snapshots are on their way: held, then filtered per book.
        send(
            &tx,
            feed,
            3,
            &[
                level(1, Side::Buy, 100, 9),  // 3: already in instrument 1's snapshot
                level(2, Side::Sell, 200, 9), // 4: already in instrument 2's
                level(1, Side::Buy, 99, 1),   // 5: new for 1
                level(2, Side::Sell, 201, 1), // 6: new for 2
                level(3, Side::Sell, 300, 1), // 7: not subscribed
            ],
            8_000,
        );
        poll_until(&mut sub, &mut seen, |s, seen| {
            !s.recovering() && seen.log.iter().any(|l| l == "level 6")
        });
        server.join().unwrap();
        assert_eq!(
            seen.log,
            [
                "snapshot 1 as of 3",
                "snapshot 2 as of 5",
                "level 5",
                "level 6"
            ]
        );
        let b1 = sub.book(InstrumentId(1)).unwrap();
        assert_eq!(b1.levels(Side::Buy), [(100, 1), (99, 1)]);
        let b2 = sub.book(InstrumentId(2)).unwrap();
        assert_eq!(b2.levels(Side::Sell), [(200, 2), (201, 1)]);
        assert_eq!(seen.books, [(1, 1_099, 8_000), (2, 1_201, 8_000)]);
    });
}

#[test]
fn a_range_no_longer_retained_falls_back_to_a_snapshot() {
    with_timeout(60, || {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let recovery = listener.local_addr().unwrap();
        let server = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let mut rx = RecvBuffer::<4096>::new();
            let Recovery::ReplayRequest(r) = request(&mut s, &mut rx) else {
                panic!("expected a replay request");
            };
            let mut out = Vec::new();
            encode(
                &mut out,
                &ReplayResponse {
                    session_id: r.session_id,
                    first_seq: r.first_seq,
                    count: 0,
                    reason: ReasonCode(1),
                },
            );
            s.write_all(&out).unwrap();
            let (mut s, _) = listener.accept().unwrap();
            let mut rx = RecvBuffer::<4096>::new();
            let Recovery::SnapshotRequest(_) = request(&mut s, &mut rx) else {
                panic!("expected a snapshot request");
            };
            s.write_all(&snapshot_answer(1, 10, &[(Side::Buy, 95, 7)]))
                .unwrap();
        });
        let (mut sub, feed) = subscriber(Some(recovery), &[1]);
        let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
        let mut seen = Seen::default();
        send(&tx, feed, 1, &[level(1, Side::Buy, 98, 1)], 1);
        send(
            &tx,
            feed,
            9,
            &[level(1, Side::Buy, 97, 1), level(1, Side::Buy, 96, 1)],
            2,
        );
        poll_until(&mut sub, &mut seen, |s, seen| {
            !s.recovering() && seen.log.iter().any(|l| l.starts_with("snapshot recovery"))
        });
        server.join().unwrap();
        assert_eq!(
            seen.log,
            [
                "level 1",
                "gap 2..9",
                "snapshot 1 as of 10",
                "snapshot recovery 10"
            ]
        );
        // 9 and 10 are in the snapshot (as of 10): only its level remains.
        assert_eq!(
            sub.book(InstrumentId(1)).unwrap().levels(Side::Buy),
            [(95, 7)]
        );
    });
}

/// A recovery service that refuses connections is reported once and tried again
/// with backoff; the book waits (the packet after the gap is held) and is trusted
/// only once a snapshot arrives from the service when it is back. Before retries,
/// the failure left the book to heal from later levels (never told the truth).
#[test]
fn a_refused_recovery_service_is_retried_until_a_snapshot_arrives() {
    with_timeout(60, || {
        // A port nobody listens on, for now.
        let recovery = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap();
        let (mut sub, feed) = subscriber(Some(recovery), &[1]);
        let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
        let mut seen = Seen::default();
        send(&tx, feed, 1, &[level(1, Side::Buy, 98, 1)], 1);
        send(&tx, feed, 5, &[level(1, Side::Buy, 97, 1)], 2);
        poll_until(&mut sub, &mut seen, |_, s| {
            s.log.iter().any(|l| l.starts_with("failed"))
        });
        // Keep polling through several retries (50 + 100 + 200 ms nominal).
        let until = Instant::now() + Duration::from_millis(400);
        while Instant::now() < until {
            sub.poll(&mut |e| seen.on(e)).unwrap();
            sub.wait(Duration::from_millis(5));
        }
        assert!(sub.recovering(), "{:?}", seen.log);
        assert_eq!(
            sub.book(InstrumentId(1)).unwrap().levels(Side::Buy),
            [(98, 1)],
            "nothing after the gap applied without a snapshot"
        );
        // The service comes up and answers a snapshot as of 6.
        let listener = TcpListener::bind(recovery).unwrap();
        let server = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let mut rx = RecvBuffer::<4096>::new();
            let Recovery::SnapshotRequest(r) = request(&mut s, &mut rx) else {
                panic!("expected a snapshot request");
            };
            assert_eq!(r.instrument, InstrumentId(1));
            s.write_all(&snapshot_answer(1, 6, &[(Side::Buy, 96, 3)]))
                .unwrap();
        });
        poll_until(&mut sub, &mut seen, |s, _| !s.recovering());
        server.join().unwrap();
        assert_eq!(
            sub.book(InstrumentId(1)).unwrap().levels(Side::Buy),
            [(96, 3)],
            "the snapshot's book; the held packet (5) is older than it"
        );
        let failed = seen.log.iter().filter(|l| l.starts_with("failed")).count();
        assert_eq!(failed, 1, "reported once per streak: {:?}", seen.log);
        assert_eq!(
            seen.log[seen.log.len() - 2..],
            [
                "snapshot 1 as of 6".to_owned(),
                "snapshot recovery 6".to_owned()
            ]
        );
    });
}

/// A cluster: the first configured node is down, the second does not lead and
/// redirects (`RecoveryRedirect`) to the leader's service, which answers. The
/// subscriber passes the dead node, follows the redirect and installs the leader's
/// snapshot.
#[test]
fn a_cluster_subscriber_passes_a_dead_node_and_follows_the_redirect_to_the_leader() {
    use peregrine_wire::field::{LeaderAddress, Pad};
    use peregrine_wire::md::recovery::RecoveryRedirect;
    with_timeout(60, || {
        let dead = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap();
        let follower = TcpListener::bind("127.0.0.1:0").unwrap();
        let leader = TcpListener::bind("127.0.0.1:0").unwrap();
        let leader_addr = leader.local_addr().unwrap();
        let (mut sub, _feed) = subscriber_of(vec![dead, follower.local_addr().unwrap()], &[1]);
        let redirects = std::thread::spawn(move || {
            let (mut s, _) = follower.accept().unwrap();
            let mut out = Vec::new();
            encode(
                &mut out,
                &RecoveryRedirect {
                    leader_id: 3,
                    retry_after_ms: 0,
                    reserved: Pad,
                    address: LeaderAddress::from_text(&leader_addr.to_string()).unwrap(),
                },
            );
            s.write_all(&out).unwrap();
        });
        let answers = std::thread::spawn(move || {
            let (mut s, _) = leader.accept().unwrap();
            let mut rx = RecvBuffer::<4096>::new();
            let Recovery::SnapshotRequest(_) = request(&mut s, &mut rx) else {
                panic!("expected a snapshot request");
            };
            s.write_all(&snapshot_answer(1, 4, &[(Side::Sell, 105, 2)]))
                .unwrap();
        });
        let mut seen = Seen::default();
        sub.start(&mut |e| seen.on(e));
        poll_until(&mut sub, &mut seen, |s, _| !s.recovering());
        redirects.join().unwrap();
        answers.join().unwrap();
        assert_eq!(
            sub.book(InstrumentId(1)).unwrap().levels(Side::Sell),
            [(105, 2)]
        );
        let want = format!("Redirected {{ to: {leader_addr} }}");
        assert!(seen.log.contains(&want), "{:?}", seen.log);
        assert!(
            seen.log.iter().any(|l| l.starts_with("failed")),
            "the dead node was tried first: {:?}",
            seen.log
        );
    });
}
