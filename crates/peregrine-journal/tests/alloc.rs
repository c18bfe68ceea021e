//! Proves `Journal::append` does not allocate, with a counting global allocator.
//!
//! Steady state only: opening the journal and rotating to a new segment
//! allocate (paths, the buffer); appends within a segment, buffer flushes
//! and `commit` must not.

use peregrine_journal::{FsyncPolicy, Journal, JournalConfig, Timestamps};
use peregrine_testkit::allocations;

// Counts per thread, so the harness's own threads (e.g. its "running for over 60
// seconds" notice under load) cannot make this test flaky.
#[global_allocator]
static GLOBAL: peregrine_testkit::CountingAllocator = peregrine_testkit::CountingAllocator;

fn appends_allocate_nothing(policy: FsyncPolicy, preallocate: bool) {
    let dir = tempfile::tempdir().unwrap();
    let config = JournalConfig {
        fsync: policy,
        buffer_bytes: 16 << 10, // small: the loop also exercises buffer flushes
        preallocate,
        ..JournalConfig::default()
    };
    let (mut j, _) = Journal::open(dir.path(), config).unwrap();
    let payload = [7u8; 64];
    let mut seq = 1;
    // Creates the segment, and with `preallocate` starts the helper thread (which
    // allocates its buffer once) and moves to its first prepared segment: the cold
    // steps, done before counting.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        j.append(seq, Timestamps::default(), 1, &payload).unwrap();
        j.commit().unwrap();
        seq += 1;
        if j.active_prepared() == preallocate {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "never prepared");
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    let before = allocations();
    for seq in seq..seq + 5_000u64 {
        let ts = Timestamps {
            recv_ns: seq,
            engine_ns: seq,
        };
        j.append(seq, ts, 1, &payload).unwrap();
        if seq.is_multiple_of(64) {
            j.commit().unwrap();
        }
    }
    j.commit().unwrap();
    let during = allocations() - before;
    j.close().unwrap();
    assert_eq!(
        during, 0,
        "{policy:?}, preallocate {preallocate}: {during} allocations in steady-state appends"
    );
}

#[test]
fn append_and_commit_do_not_allocate() {
    // One test function: the counter is global, parallel tests would mix counts.
    for preallocate in [false, true] {
        appends_allocate_nothing(FsyncPolicy::None, preallocate);
        appends_allocate_nothing(FsyncPolicy::Batch, preallocate);
        appends_allocate_nothing(FsyncPolicy::EveryCommand, preallocate);
    }
}
