//! Crash recovery with real processes: a journaled `peregrine exchange` is driven by a
//! client, killed with SIGKILL at a seeded random point, and restarted on the same
//! journal. Every order acknowledged before the kill must be live after the restart
//! (cancelling it gives `Cancelled`, not a reject), and the state hash the restarted
//! server logs must equal `peregrine journal replay` of the journal as the kill left
//! it. Three kill points on one journal, so each restart also recovers the previous
//! restarts' records; under every fsync policy (with `batch` the syncs run on the
//! group commit's thread while matching goes on).
//!
//! Negative control: the same run with `PEREGRINE_SABOTAGE=release-before-durable`
//! (results leave before the journal has them) must lose acknowledged orders, so
//! the check above is known to catch that bug. Only a build with the `sabotage`
//! feature has that code; the one users run ignores the variable (tested below).

mod support;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use peregrine_types::{OrderId, Rng, Side, TimeInForce};
use peregrine_wire::v2::Outbound;
use peregrine_wire::WireMessage;
use support::{
    cancel, order, start_with_env, try_start_with_env, with_timeout, Client, Exchange, KillOnDrop,
};

const KILL_SEEDS: [u64; 3] = [0x9E37_79B9, 0x85EB_CA6B, 0xC2B2_AE35];

fn exchange_config(journal: &Path, fsync: &str) -> String {
    format!(
        "[market_data]\nenabled = false\n[journal]\ndir = {:?}\nfsync = \"{fsync}\"\nsnapshot_every = 50\n",
        journal.display().to_string()
    )
}

/// Sends resting (non-crossing) orders from account 1, one at a time with a short
/// pause, and records the id of each one acknowledged, until the connection dies.
fn drive(addr: SocketAddr, acked: Arc<Mutex<Vec<OrderId>>>, base: u64) {
    let mut c = Client::login(addr, 1);
    let mut buf = [0u8; 256];
    for i in 0..2_000u64 {
        let side = if i % 2 == 0 { Side::Buy } else { Side::Sell };
        let price = if side == Side::Buy { 9_000 } else { 11_000 } + (i % 50) as i64;
        let n = order(base + i, side, price, 1 + (i % 5) as i64, TimeInForce::Gtc)
            .encode(&mut buf)
            .unwrap();
        c.send_raw(&buf[..n]);
        loop {
            match c.recv() {
                Some(Outbound::ServerHeartbeat(_)) => continue,
                Some(Outbound::Accepted(a)) => {
                    acked.lock().unwrap().push(a.order_id);
                    break;
                }
                Some(m) => panic!("unexpected report {m:?}"),
                None => return, // killed
            }
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// `peregrine journal replay` (a full replay from seq 1, ignoring snapshots) on a
/// copy of the journal: (last seq, state hash).
fn offline_replay(config: &Path, journal: &Path) -> (u64, String) {
    let child = Command::new(env!("CARGO_BIN_EXE_peregrine"))
        .args(["journal", "replay", "--config"])
        .arg(config)
        .arg("--dir")
        .arg(journal)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let out = KillOnDrop::new(child).wait_output();
    let line = out.lines().next().unwrap_or_default().to_string();
    let words: Vec<&str> = line.split_whitespace().collect();
    assert!(
        words.len() == 6 && words[0] == "records",
        "replay said {out:?}"
    );
    (words[3].parse().unwrap(), words[5].to_string())
}

/// (last seq, state hash) from the restarted server's log line (snapshot + tail).
fn logged_replay(ex: &Exchange) -> (u64, String) {
    let log = ex.log_with("journal: replayed");
    let line = log
        .lines()
        .find(|l| l.contains("journal: replayed"))
        .unwrap_or_else(|| panic!("no replay line in {log}"));
    let after = line.split(" to seq ").nth(1).unwrap();
    let seq = after.split_whitespace().next().unwrap().parse().unwrap();
    let hash = line
        .rsplit("state hash ")
        .next()
        .unwrap()
        .trim()
        .to_string();
    (seq, hash)
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_file() {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap(); // segments, not snapshots/
        }
    }
}

/// Cancels every acknowledged order (each must still rest after the restart);
/// returns those that were lost.
fn lost_after_restart(addr: SocketAddr, acked: &[OrderId]) -> Vec<OrderId> {
    let mut c = Client::login(addr, 1);
    let mut lost = Vec::new();
    for (i, &id) in acked.iter().enumerate() {
        c.send(&cancel(1_000_000 + i as u64, id));
        match c.recv_report() {
            Outbound::Cancelled(x) => assert_eq!(x.order_id, id),
            Outbound::CancelRejected(_) => lost.push(id),
            m => panic!("unexpected answer to the cancel of {id:?}: {m:?}"),
        }
    }
    lost
}

/// Three kill -9 rounds on one journal under `fsync`; the acknowledged orders each
/// round lost (empty when nothing acknowledged is lost).
fn kill_rounds(fsync: &str, env: &[(&str, &str)]) -> Vec<Vec<OrderId>> {
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("journal");
    let extra = exchange_config(&journal, fsync);
    let cli_config = dir.path().join("replay.toml");
    // The replay reads the same config the exchange runs (its accounts included).
    std::fs::write(
        &cli_config,
        format!("{extra}\n{}", support::accounts_toml()),
    )
    .unwrap();
    let mut previous: Vec<OrderId> = Vec::new();
    let mut losses = Vec::new();
    let mut ex = start_with_env(&extra, env);
    for (round, seed) in KILL_SEEDS.iter().enumerate() {
        let acked = Arc::new(Mutex::new(Vec::new()));
        let (addr, a) = (ex.addr, Arc::clone(&acked));
        let client = std::thread::spawn(move || drive(addr, a, round as u64 * 10_000));
        let delay = Rng::new(*seed).range(150, 599);
        eprintln!("fsync {fsync}, round {round}: kill -9 after {delay} ms");
        std::thread::sleep(Duration::from_millis(delay));
        drop(ex); // SIGKILL, then reap
        client.join().unwrap();
        let acked = acked.lock().unwrap().clone();
        assert!(!acked.is_empty(), "round {round}: nothing acknowledged");
        let copy: PathBuf = dir.path().join(format!("copy-{round}"));
        copy_dir(&journal, &copy);
        ex = match try_start_with_env(&extra, env) {
            Ok(ex) => ex,
            // A snapshot taken from commands the journal never got: the exchange
            // refuses to start rather than serve a state it cannot rebuild. Every
            // order acknowledged this round is then unrecoverable; counted as lost.
            Err(log) if log.contains("ahead of the journal") => {
                eprintln!("fsync {fsync}, round {round}: restart refused: {log}");
                losses.push(acked);
                return losses;
            }
            Err(log) => panic!("fsync {fsync}, round {round}: restart failed: {log}"),
        };
        let expected = offline_replay(&cli_config, &copy);
        assert_eq!(logged_replay(&ex), expected, "fsync {fsync}, round {round}");
        // Which path recovery took (snapshot + tail, or full replay) depends on
        // whether the writer finished a snapshot before the kill: shown, not asserted.
        for l in ex.log_text().lines().filter(|l| l.contains("snapshot")) {
            eprintln!("round {round}: {l}");
        }
        let lost = lost_after_restart(ex.addr, &acked);
        if lost.is_empty() {
            assert!(expected.0 >= (previous.len() + acked.len()) as u64);
        }
        previous.extend(acked);
        losses.push(lost);
    }
    losses
}

#[test]
fn acknowledged_orders_survive_kill_9_and_the_state_matches_a_replay() {
    with_timeout(120, || {
        for fsync in ["batch", "none", "every_command"] {
            let losses = kill_rounds(fsync, &[]);
            for (round, lost) in losses.iter().enumerate() {
                assert!(
                    lost.is_empty(),
                    "fsync {fsync}, round {round}: acknowledged orders lost after restart: {lost:?}"
                );
            }
        }
    });
}

/// The negative control: releasing results before the journal has them loses
/// acknowledged orders, and the check above sees it. The sabotage exists only in a
/// build with the `sabotage` feature: `cargo test -p peregrine --features sabotage
/// --test crash` (scripts/test-all.sh runs it).
#[cfg(feature = "sabotage")]
#[test]
fn sabotage_releasing_before_durable_is_caught() {
    with_timeout(120, || {
        let losses = kill_rounds("batch", &[("PEREGRINE_SABOTAGE", "release-before-durable")]);
        let lost: usize = losses.iter().map(Vec::len).sum();
        assert!(
            lost > 0,
            "the sabotaged exchange lost nothing: the check is blind"
        );
    });
}

/// Defect 5 (issue 27): the sabotage switch was in the production binary. Without the
/// `sabotage` feature the variable changes nothing: the exchange says nothing of it,
/// and a kill loses no acknowledged order.
#[cfg(not(feature = "sabotage"))]
#[test]
fn the_production_binary_has_no_sabotage() {
    with_timeout(120, || {
        let losses = kill_rounds("batch", &[("PEREGRINE_SABOTAGE", "release-before-durable")]);
        let lost: usize = losses.iter().map(Vec::len).sum();
        assert_eq!(lost, 0, "the variable sabotaged the production binary");
    });
}
