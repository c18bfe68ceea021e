//! The guarded end of the journal, with real processes: a journaled exchange takes
//! acknowledged orders and stops; the end of its journal is then damaged the three
//! ways an operator meets (the last segment truncated, a byte of its last record
//! flipped, the last segment deleted). Each time the restart must refuse, naming how
//! many committed records are missing, and modify nothing; `--accept-loss` then
//! starts it. The undamaged journal restarts (the control: the refusal comes from
//! the damage, not from the harness).

mod support;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use peregrine_types::{Side, TimeInForce};
use peregrine_wire::v2::Outbound;
use support::{order, start, try_start_with_args, try_start_with_env, with_timeout, Client};

/// Orders placed (and acknowledged) before the damage.
const ORDERS: u64 = 150;

fn journaled(journal: &Path) -> String {
    format!(
        "[market_data]\nenabled = false\n[journal]\ndir = {:?}\nsegment_bytes = 4200\n",
        journal.display().to_string()
    )
}

/// Places `n` resting orders from account 1; all must be acknowledged.
fn place(addr: SocketAddr, n: u64) {
    let mut c = Client::login(addr, 1);
    for i in 0..n {
        c.send(&order(
            i + 1,
            Side::Buy,
            9_000 + i as i64,
            1,
            TimeInForce::Gtc,
        ));
        loop {
            match c.recv_report() {
                Outbound::ServerHeartbeat(_) => continue,
                Outbound::Accepted(_) => break,
                m => panic!("order {i}: {m:?}"),
            }
        }
    }
}

/// The journal's segments, oldest first.
fn segments(journal: &Path) -> Vec<PathBuf> {
    let mut s: Vec<PathBuf> = std::fs::read_dir(journal)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .collect();
    s.sort();
    s
}

/// Every file of the journal directory and its bytes.
fn contents(journal: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut v: Vec<(PathBuf, Vec<u8>)> = std::fs::read_dir(journal)
        .unwrap()
        .map(|e| e.unwrap().path())
        // The directory lock holds the pid of the last process that took it: not
        // journal content.
        .filter(|p| p.is_file() && p.file_name().is_some_and(|n| n != "LOCK"))
        .map(|p| {
            let b = std::fs::read(&p).unwrap();
            (p, b)
        })
        .collect();
    v.sort();
    v
}

#[derive(Debug, Clone, Copy)]
enum Damage {
    Truncate,
    FlipLastRecord,
    DeleteLastSegment,
}

fn damage(journal: &Path, d: Damage) {
    let last = segments(journal).pop().expect("a segment");
    let len = std::fs::metadata(&last).unwrap().len();
    assert!(len > 40, "{} is {len} bytes", last.display());
    match d {
        Damage::Truncate => {
            let f = std::fs::OpenOptions::new().write(true).open(&last).unwrap();
            f.set_len(len - 40).unwrap();
        }
        Damage::FlipLastRecord => {
            let mut bytes = std::fs::read(&last).unwrap();
            let at = bytes.len() - 5;
            bytes[at] ^= 0x5A;
            std::fs::write(&last, bytes).unwrap();
        }
        Damage::DeleteLastSegment => std::fs::remove_file(&last).unwrap(),
    }
}

/// The count in "N committed record(s) missing".
fn missing_count(log: &str) -> Option<u64> {
    let at = log.find(" committed record(s) missing")?;
    log[..at]
        .rsplit(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

fn refuses_after(d: Damage) {
    with_timeout(120, move || {
        let dir = tempfile::tempdir().unwrap();
        let journal = dir.path().join("journal");
        let extra = journaled(&journal);
        let ex = start(&extra);
        place(ex.addr, ORDERS);
        let (status, _) = ex.terminate();
        assert!(status.success(), "{status:?}");
        assert!(segments(&journal).len() > 1, "several segments");
        // Control: undamaged, it restarts.
        let (status, _) = start(&extra).terminate();
        assert!(status.success());
        damage(&journal, d);
        let before = contents(&journal);
        let log = match try_start_with_env(&extra, &[]) {
            Ok(_) => panic!("{d:?}: the exchange started over a damaged journal end"),
            Err(log) => log,
        };
        let n = missing_count(&log).unwrap_or_else(|| panic!("{d:?}: no count in {log}"));
        assert!((1..=ORDERS).contains(&n), "{d:?}: {n} missing\n{log}");
        assert_eq!(
            contents(&journal),
            before,
            "{d:?}: the refusal modified the journal"
        );
        eprintln!("{d:?}: refused, {n} committed record(s) missing");
        if let Err(log) = try_start_with_args(&extra, &[], &["--accept-loss"]) {
            panic!("{d:?}: --accept-loss did not start it: {log}");
        }
    });
}

#[test]
fn a_truncated_last_segment_refuses_with_the_count() {
    refuses_after(Damage::Truncate);
}

#[test]
fn a_flipped_byte_in_the_last_record_refuses_with_the_count() {
    refuses_after(Damage::FlipLastRecord);
}

#[test]
fn a_deleted_last_segment_refuses_with_the_count() {
    refuses_after(Damage::DeleteLastSegment);
}
