//! Shared-memory rings across real processes.
//!
//! The parent test creates a ring file and re-runs this test binary, filtered to the
//! `child_*` test, with `PEREGRINE_SHM_CHILD` naming the file. Without that variable the
//! child tests return at once, so a plain `cargo test` passes them trivially. Everything
//! has a deadline: a stuck child is killed and the test fails instead of hanging.
#![cfg(not(miri))]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use peregrine_queue::shm::{ShmMpsc, ShmSpsc};

const ENV: &str = "PEREGRINE_SHM_CHILD";
const COUNT: u64 = 200_000;
const DEADLINE: Duration = Duration::from_secs(60);

fn spawn_child(test: &str, path: &Path, id: u64) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env(ENV, path)
        .env("PEREGRINE_SHM_CHILD_ID", id.to_string())
        // The child's own test summary would confuse whoever reads ours; failures still
        // show on stderr and in the exit status.
        .stdout(Stdio::null())
        .spawn()
        .unwrap()
}

fn wait_child(mut child: Child, deadline: Instant) {
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "child failed: {status}");
            return;
        }
        if Instant::now() > deadline {
            child.kill().unwrap();
            panic!("child timed out");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn child_args() -> Option<(PathBuf, u64)> {
    let path = std::env::var_os(ENV)?;
    let id = std::env::var("PEREGRINE_SHM_CHILD_ID")
        .unwrap()
        .parse()
        .unwrap();
    Some((PathBuf::from(path), id))
}

#[test]
fn child_spsc_producer() {
    let Some((path, _)) = child_args() else {
        return;
    };
    let mut tx = ShmSpsc::<[u64; 4]>::attach(&path)
        .unwrap()
        .producer()
        .unwrap();
    let start = Instant::now();
    for i in 0..COUNT {
        while tx.try_push([i, i * 2, i * 3, !i]).is_err() {
            assert!(start.elapsed() < DEADLINE, "consumer stalled");
            std::thread::yield_now();
        }
    }
}

#[test]
fn child_mpsc_producer() {
    let Some((path, id)) = child_args() else {
        return;
    };
    let tx = ShmMpsc::<[u64; 2]>::attach(&path).unwrap().producer();
    let start = Instant::now();
    for i in 0..COUNT {
        while tx.try_push([id, i]).is_err() {
            assert!(start.elapsed() < DEADLINE, "consumer stalled");
            std::thread::yield_now();
        }
    }
}

#[test]
fn spsc_across_processes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("spsc");
    let ring = ShmSpsc::<[u64; 4]>::create(&path, 256).unwrap();
    let mut rx = ring.consumer().unwrap();
    let deadline = Instant::now() + DEADLINE;
    let child = spawn_child("child_spsc_producer", &path, 0);
    let mut expected = 0;
    while expected < COUNT {
        match rx.try_pop() {
            Some(v) => {
                assert_eq!(v, [expected, expected * 2, expected * 3, !expected]);
                expected += 1;
            }
            None => {
                assert!(Instant::now() < deadline, "timed out at {expected}");
                std::thread::yield_now();
            }
        }
    }
    wait_child(child, deadline);
}

#[test]
fn mpsc_across_processes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mpsc");
    let ring = ShmMpsc::<[u64; 2]>::create(&path, 256).unwrap();
    let mut rx = ring.consumer().unwrap();
    let deadline = Instant::now() + DEADLINE;
    let children: Vec<_> = (0..2)
        .map(|id| spawn_child("child_mpsc_producer", &path, id))
        .collect();
    let mut next = [0u64; 2];
    while next.iter().sum::<u64>() < 2 * COUNT {
        match rx.try_pop() {
            Some([id, i]) => {
                assert_eq!(next[id as usize], i, "per-producer FIFO");
                next[id as usize] += 1;
            }
            None => {
                assert!(Instant::now() < deadline, "timed out at {next:?}");
                std::thread::yield_now();
            }
        }
    }
    for child in children {
        wait_child(child, deadline);
    }
}
