//! Batch mode with commitments against the real `peregrine exchange` process: a short
//! open-loop `peregrine loadgen` run, `Commitment` messages on the UDP feed, then
//! `peregrine verify journal` recomputes every logged commitment from the journal and
//! `peregrine verify trade` proves a trade seen on the feed.

mod support;

use std::net::UdpSocket;
use std::process::Command;
use std::time::{Duration, Instant};

use peregrine_wire::md::packet::{PacketKind, PacketReader};
use peregrine_wire::md::MdMessage;
use support::{start, with_timeout};

fn peregrine(args: &[&str], extra: &[&std::ffi::OsStr]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_peregrine"))
        .args(args)
        .args(extra)
        .output()
        .unwrap();
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

#[test]
fn batch_exchange_commits_publishes_and_verifies() {
    run("compact");
}

#[test]
fn batch_exchange_split_topology_commits_and_verifies() {
    run("split");
}

fn run(topology: &'static str) {
    with_timeout(180, move || {
        let sub = UdpSocket::bind("127.0.0.1:0").unwrap();
        sub.set_read_timeout(Some(Duration::from_millis(200)))
            .unwrap();
        let port = sub.local_addr().unwrap().port();
        let data = tempfile::tempdir().unwrap();
        let journal = data.path().join("journal");
        let mut ex = start(&format!(
            "topology = \"{topology}\"\nmode = \"batch\"\ntick_us = 1000\n\
             [journal]\ndir = \"{}\"\nfsync = \"none\"\n\
             [commitments]\nenabled = true\n\
             [market_data]\ntarget = \"127.0.0.1:{port}\"\nheartbeat_ms = 100\n",
            journal.display()
        ));
        let collector = std::thread::spawn(move || {
            let (mut commitments, mut trades) = (Vec::new(), Vec::new());
            let mut buf = [0u8; 2048];
            let deadline = Instant::now() + Duration::from_secs(60);
            let mut last = Instant::now();
            // Stop 1.5 s after the last commitment, once some arrived.
            while Instant::now() < deadline
                && (commitments.is_empty() || last.elapsed() < Duration::from_millis(1500))
            {
                let Ok(n) = sub.recv(&mut buf) else {
                    continue;
                };
                let reader = PacketReader::new(&buf[..n]).unwrap();
                if reader.kind() == PacketKind::Heartbeat {
                    continue;
                }
                for item in reader {
                    match item.unwrap().1 {
                        MdMessage::Commitment(c) => {
                            last = Instant::now();
                            commitments.push(c);
                        }
                        MdMessage::Trade(t) => trades.push(t),
                        MdMessage::L2Update(_)
                        | MdMessage::MarketStatus(_)
                        | MdMessage::AuctionIndicative(_) => {}
                    }
                }
            }
            (commitments, trades)
        });
        let keys = data.path().join("keys.toml");
        support::write_key_file(&keys, &[1, 2]);
        let (ok, text) = peregrine(
            &[
                "loadgen",
                "--duration",
                "1.5",
                "--rate",
                "2000",
                "--connections",
                "2",
                "--wait",
                "park",
            ],
            &[
                "--config".as_ref(),
                ex.config.as_os_str(),
                "--addr".as_ref(),
                ex.addr.to_string().as_ref(),
                "--keys".as_ref(),
                keys.as_os_str(),
            ],
        );
        assert!(ok, "{text}");
        let (commitments, trades) = collector.join().unwrap();
        assert!(ex.alive(), "{}", ex.log_text());
        assert!(
            commitments.len() >= 10,
            "{} commitments on the feed",
            commitments.len()
        );
        for c in &commitments {
            assert!(c.tx_count > 0, "empty windows are not committed");
            assert_eq!(c.timestamp.0, c.tick_seq * 1_000_000, "tick on the grid");
        }
        assert!(commitments.iter().any(|c| c.trade_count > 0));
        let total: u64 = commitments.iter().map(|c| c.trade_count).sum();
        assert_eq!(
            total as usize,
            trades.len(),
            "every trade is in a commitment"
        );
        drop(ex); // kill -9: the journal and the commitment log stay as they are

        let (ok, text) = peregrine(&["verify", "journal", "--dir"], &[journal.as_os_str()]);
        assert!(ok, "{text}");
        assert!(text.contains("OK:"), "{text}");
        let verified: usize = text
            .split("OK: ")
            .nth(1)
            .and_then(|r| r.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        assert!(verified >= commitments.len(), "{text}");

        let t = trades[0];
        let tick = (t.engine_time.0 / 1_000_000).to_string();
        let id = t.trade_id.to_string();
        let (ok, text) = peregrine(
            &[
                "verify",
                "trade",
                "--tick",
                &tick,
                "--trade-id",
                &id,
                "--dir",
            ],
            &[journal.as_os_str()],
        );
        assert!(ok, "{text}");
        assert!(text.contains("OK: the trade is included"), "{text}");
        assert!(text.contains("root "), "{text}");
    });
}

/// Issue 27, defect 7: offline checks said yes to mistakes. A missing directory is an
/// error (and is not created), and a journal without a commitment log is not "OK".
#[test]
fn offline_checks_refuse_a_missing_directory_and_a_journal_without_commitments() {
    let dir = tempfile::tempdir().unwrap();
    let typo = dir.path().join("typo");
    let config = dir.path().join("exchange.toml");
    std::fs::write(&config, "").unwrap();
    let (ok, text) = peregrine(
        &["journal", "replay", "--config"],
        &[config.as_os_str(), "--dir".as_ref(), typo.as_os_str()],
    );
    assert!(!ok && text.contains("no journal directory"), "{text}");
    let (ok, text) = peregrine(&["verify", "journal", "--dir"], &[typo.as_os_str()]);
    assert!(!ok && text.contains("no journal directory"), "{text}");
    assert!(!typo.exists(), "an offline check created the directory");
    // A directory with no commitment log (a journal written without [commitments]).
    let plain = dir.path().join("plain");
    std::fs::create_dir(&plain).unwrap();
    let (ok, text) = peregrine(&["verify", "journal", "--dir"], &[plain.as_os_str()]);
    assert!(!ok && text.contains("no commitment log"), "{text}");
    assert!(!text.contains("OK:"), "{text}");
}
