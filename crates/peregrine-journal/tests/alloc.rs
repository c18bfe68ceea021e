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

fn appends_allocate_nothing(policy: FsyncPolicy) {
    let dir = tempfile::tempdir().unwrap();
    let config = JournalConfig {
        fsync: policy,
        buffer_bytes: 16 << 10, // small: the loop also exercises buffer flushes
        ..JournalConfig::default()
    };
    let (mut j, _) = Journal::open(dir.path(), config).unwrap();
    let payload = [7u8; 64];
    j.append(1, Timestamps::default(), 1, &payload).unwrap(); // creates the segment
    j.commit().unwrap();
    let before = allocations();
    for seq in 2..5_000u64 {
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
        "{policy:?}: {during} allocations in steady-state appends"
    );
}

#[test]
fn append_and_commit_do_not_allocate() {
    // One test function: the counter is global, parallel tests would mix counts.
    appends_allocate_nothing(FsyncPolicy::None);
    appends_allocate_nothing(FsyncPolicy::Batch);
    appends_allocate_nothing(FsyncPolicy::EveryCommand);
}
