//! Market data and the load generator against a real exchange process.

mod support;

use std::net::UdpSocket;
use std::time::Duration;

use peregrine_types::{Side, TimeInForce};
use peregrine_wire::md::packet::{PacketKind, PacketReader};
use peregrine_wire::md::MdMessage;
use support::{order, start, with_timeout, Client};

#[test]
fn feed_carries_trades_and_l2_with_contiguous_sequence_numbers() {
    with_timeout(60, || {
        let sub = UdpSocket::bind("127.0.0.1:0").unwrap();
        sub.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let port = sub.local_addr().unwrap().port();
        let ex = start(&format!(
            "[market_data]\ntarget = \"127.0.0.1:{port}\"\nheartbeat_ms = 100"
        ));
        let mut a = Client::login(ex.addr, 1);
        let mut b = Client::login(ex.addr, 2);
        a.send(&order(1, Side::Sell, 10_005, 4, TimeInForce::Gtc));
        a.recv_report();
        a.send(&order(2, Side::Buy, 9_995, 2, TimeInForce::Gtc));
        a.recv_report();
        b.send(&order(3, Side::Buy, 10_005, 3, TimeInForce::Ioc));
        b.recv_report();
        let (mut next, mut trades, mut levels) = (1u64, 0, 0);
        let mut buf = [0u8; 2048];
        let wall = || {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        };
        while trades == 0 || levels < 3 {
            let n = sub.recv(&mut buf).expect("feed packet before the timeout");
            let received = wall();
            let reader = PacketReader::new(&buf[..n]).unwrap();
            // Stamped by the exchange just before sending, on its epoch clock (the
            // same host: within a second of our own wall clock, and before receipt
            // up to that slack).
            let sent = reader.header().send_time;
            assert!(
                sent > received - 1_000_000_000 && sent < received + 1_000_000_000,
                "send_time {sent} vs received {received}"
            );
            if reader.kind() != PacketKind::Heartbeat {
                assert_eq!(reader.header().first_seq, next, "gap or duplicate");
            }
            next = reader.header().next_seq();
            for item in reader {
                match item.unwrap().1 {
                    MdMessage::Trade(t) => {
                        assert_eq!(
                            (t.price.units(), t.qty.lots(), t.aggressor_side),
                            (10_005, 3, Side::Buy)
                        );
                        trades += 1;
                    }
                    MdMessage::L2Update(_) => levels += 1,
                    MdMessage::Commitment(_)
                    | MdMessage::MarketStatus(_)
                    | MdMessage::AuctionIndicative(_) => {}
                }
            }
        }
        assert_eq!(trades, 1);
    });
}

#[test]
fn loadgen_short_run_loses_nothing() {
    with_timeout(120, || {
        let ex = start("[market_data]\nenabled = false");
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("loadgen.json");
        let keys = dir.path().join("keys.toml");
        support::write_key_file(&keys, &[1, 2, 3, 4]);
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_peregrine"))
            .args([
                "loadgen",
                "--duration",
                "1.5",
                "--rate",
                "2000",
                "--connections",
                "4",
                "--wait",
                "park",
            ])
            .arg("--config")
            .arg(&ex.config)
            .arg("--addr")
            .arg(ex.addr.to_string())
            .arg("--keys")
            .arg(&keys)
            .arg("--json")
            .arg(&json)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{text}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            text.contains("order→ack") && text.contains("p99.99"),
            "{text}"
        );
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        assert_eq!(v["lost"], 0);
        assert_eq!(v["errors"], 0);
        assert_eq!(v["rejects"], 0);
        assert!(v["sent"].as_u64().unwrap() >= 2500, "{v}");
        assert_eq!(v["sent"], v["answered"]);
        assert!(v["fill"]["count"].as_u64().unwrap() > 0);
        let closed = std::process::Command::new(env!("CARGO_BIN_EXE_peregrine"))
            .args([
                "loadgen",
                "--closed",
                "--window",
                "4",
                "--duration",
                "1",
                "--wait",
                "park",
            ])
            .arg("--config")
            .arg(&ex.config)
            .arg("--addr")
            .arg(ex.addr.to_string())
            .arg("--keys")
            .arg(&keys)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&closed.stdout);
        assert!(closed.status.success(), "{text}");
        assert!(
            text.contains("closed loop") && text.contains("lost 0"),
            "{text}"
        );
    });
}

#[test]
fn md_subscriber_starts_from_a_snapshot_and_follows_the_feed() {
    with_timeout(60, || {
        let port = UdpSocket::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let rec = support::free_port();
        let ex = start(&format!(
            "recovery_listen = \"127.0.0.1:{rec}\"\n[market_data]\ntarget = \"127.0.0.1:{port}\""
        ));
        let mut a = Client::login(ex.addr, 1);
        // Before the subscriber starts: only the snapshot can tell it about these.
        a.send(&order(1, Side::Sell, 10_005, 4, TimeInForce::Gtc));
        a.recv_report();
        a.send(&order(2, Side::Buy, 9_990, 7, TimeInForce::Gtc));
        a.recv_report();
        let md = std::process::Command::new(env!("CARGO_BIN_EXE_peregrine"))
            .args(["md", "--instrument", "PGN-USD", "--duration", "4"])
            .arg("--config")
            .arg(&ex.config)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut md = support::KillOnDrop::new(md);
        // Wait until the subscriber holds its snapshot (its feed socket is bound first).
        let mut early = md.read_until("BOOK");
        a.send(&order(3, Side::Buy, 10_005, 1, TimeInForce::Ioc));
        a.recv_report();
        early.push_str(&md.wait_output());
        let out = early;
        assert!(out.contains("snapshot as of #2"), "{out}");
        assert!(out.contains("BOOK bid 7@99.90 | ask 4@100.05"), "{out}");
        assert!(out.contains("TRADE 1@100.05 aggressor Buy"), "{out}");
        assert!(out.contains("BOOK bid 7@99.90 | ask 3@100.05"), "{out}");
        assert!(!out.contains("GAP"), "{out}");
    });
}

#[test]
fn md_subscriber_heals_lost_packets_by_replay() {
    with_timeout(60, || {
        let port = UdpSocket::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let rec = support::free_port();
        let ex = start(&format!(
            "recovery_listen = \"127.0.0.1:{rec}\"\n[market_data]\ntarget = \"127.0.0.1:{port}\""
        ));
        let mut a = Client::login(ex.addr, 1);
        let md = std::process::Command::new(env!("CARGO_BIN_EXE_peregrine"))
            .args(["md", "--instrument", "PGN-USD", "--duration", "4"])
            .args(["--simulate-loss", "2"])
            .arg("--config")
            .arg(&ex.config)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut md = support::KillOnDrop::new(md);
        let mut out = md.read_until("BOOK");
        // One feed packet per order (the client sends the next order only after the
        // ack, and the exchange sends a batch's packet right after its reports); the
        // subscriber drops every second one and must get each back from the replay
        // service, so it ends on the true book.
        for i in 0..6u64 {
            a.send(&order(
                i + 1,
                Side::Sell,
                10_001 + i as i64,
                1 + i as i64,
                TimeInForce::Gtc,
            ));
            a.recv_report();
        }
        a.send(&order(7, Side::Buy, 10_001, 1, TimeInForce::Ioc));
        a.recv_report();
        // A last packet so that a loss of the previous one is seen as a gap.
        a.send(&order(8, Side::Buy, 9_000, 1, TimeInForce::Gtc));
        a.recv_report();
        out.push_str(&md.wait_output());
        assert!(out.contains("GAP"), "{out}");
        assert!(out.contains("by replay"), "{out}");
        assert!(!out.contains("recovered from snapshot"), "{out}");
        assert!(out.contains("TRADE 1@100.01 aggressor Buy"), "{out}");
        let last = out.lines().rfind(|l| l.starts_with("BOOK")).unwrap();
        assert!(
            last.starts_with("BOOK bid 1@90.00 | ask 2@100.02 at "),
            "{out}"
        );
    });
}

#[test]
fn replay_serves_only_what_is_retained() {
    with_timeout(60, || {
        let port = support::free_port();
        let rec = support::free_port();
        let ex = start(&format!(
            "recovery_listen = \"127.0.0.1:{rec}\"\n[market_data]\ntarget = \"127.0.0.1:{port}\"\nreplay_retain = 4"
        ));
        let mut a = Client::login(ex.addr, 1);
        // Six resting orders: six L2 updates, feed sequence numbers 1..=6.
        for i in 0..6u64 {
            a.send(&order(
                i + 1,
                Side::Buy,
                9_990 - i as i64,
                1,
                TimeInForce::Gtc,
            ));
            a.recv_report();
        }
        let addr: std::net::SocketAddr = format!("127.0.0.1:{rec}").parse().unwrap();
        let snap =
            peregrine_client::md::snapshot(&[addr], peregrine_types::InstrumentId(1)).unwrap();
        let (session, as_of) = (snap.session_id, snap.as_of_seq);
        assert_eq!(as_of, 6);
        let got = peregrine_client::md::replay(&[addr], session, 3, 4)
            .unwrap()
            .expect("3..=6 retained");
        let seqs: Vec<u64> = got.iter().map(|(s, _)| *s).collect();
        assert_eq!(seqs, [3, 4, 5, 6]);
        match got[0].1 {
            peregrine_wire::md::MdMessage::L2Update(u) => assert_eq!(u.price.units(), 9_988),
            other => panic!("{other:?}"),
        }
        use peregrine_client::md::replay;
        assert!(replay(&[addr], session, 2, 1).unwrap().is_none(), "evicted");
        assert!(
            replay(&[addr], session, 7, 1).unwrap().is_none(),
            "not sent yet"
        );
        assert!(
            replay(&[addr], session + 1, 3, 1).unwrap().is_none(),
            "other session"
        );
    });
}

#[test]
fn recovery_snapshot_matches_the_book() {
    with_timeout(60, || {
        let rec = support::free_port();
        let ex = start(&format!(
            "recovery_listen = \"127.0.0.1:{rec}\"\n[market_data]\nenabled = false"
        ));
        let mut a = Client::login(ex.addr, 1);
        for (i, (side, px, q)) in [
            (Side::Buy, 9_990, 2),
            (Side::Buy, 9_990, 3),
            (Side::Buy, 9_980, 1),
            (Side::Sell, 10_010, 5),
        ]
        .into_iter()
        .enumerate()
        {
            a.send(&order(i as u64 + 1, side, px, q, TimeInForce::Gtc));
            a.recv_report();
        }
        let addr: std::net::SocketAddr = format!("127.0.0.1:{rec}").parse().unwrap();
        let snap =
            peregrine_client::md::snapshot(&[addr], peregrine_types::InstrumentId(1)).unwrap();
        assert_eq!(snap.book.top(), (Some((9_990, 5)), Some((10_010, 5))));
        let unknown = peregrine_client::md::snapshot(&[addr], peregrine_types::InstrumentId(9));
        assert!(unknown.is_err());
    });
}

/// SIGTERM ends the feed session with its end-of-session packet (docs/protocol.md 5.1;
/// it used to be sent in 0 of 5 tries) and tells a logged-in session why it closes
/// (`Disconnect` reason 5, `shutdown`), in both topologies.
#[test]
fn sigterm_sends_the_end_of_session_packet_and_a_shutdown_disconnect() {
    use peregrine_wire::v2::Outbound;
    for topology in ["compact", "split"] {
        with_timeout(60, move || {
            let sub = UdpSocket::bind("127.0.0.1:0").unwrap();
            sub.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
            let port = sub.local_addr().unwrap().port();
            let ex = start(&format!(
                "topology = \"{topology}\"\n[market_data]\ntarget = \"127.0.0.1:{port}\"\nheartbeat_ms = 100"
            ));
            let mut a = Client::login(ex.addr, 1);
            a.send(&order(1, Side::Sell, 10_005, 4, TimeInForce::Gtc));
            a.recv_report();
            let (status, _) = ex.terminate();
            assert!(status.success(), "{topology}: {status:?}");
            let mut buf = [0u8; 2048];
            let mut session = None;
            loop {
                let n = sub
                    .recv(&mut buf)
                    .unwrap_or_else(|e| panic!("{topology}: no end-of-session packet: {e}"));
                let reader = PacketReader::new(&buf[..n]).unwrap();
                let id = reader.header().session_id;
                assert_eq!(*session.get_or_insert(id), id, "one feed session");
                if reader.kind() == PacketKind::EndOfSession {
                    break;
                }
            }
            let mut last = None;
            while let Some(m) = a.recv() {
                last = Some(m);
            }
            match last {
                Some(Outbound::Disconnect(d)) => assert_eq!(d.reason.0, 5, "{topology}: shutdown"),
                other => panic!("{topology}: no Disconnect before the close: {other:?}"),
            }
        });
    }
}
