//! The journaled core: run commands through a `Core<JournalLog>` into a temp dir,
//! drop it, reopen and replay; torn (never-committed) tails recover to the prefix,
//! a cut committed record and a corrupt middle record are typed errors.

use std::path::Path;

use peregrine_book::{Command, MatchingEngine, StateHash};
use peregrine_exchange::{ReplicaFactory, Snapshotter};
use peregrine_exchange_core::journal::{JournalLog, JournalSection};
use peregrine_exchange_core::replay::{open_journal, replay_commands, restore, ReplayError};
use peregrine_exchange_core::{Clock, Core, NoLog, Outbox, SessionKey};
use peregrine_journal::{FsyncPolicy, JournalError, SnapshotConfig, SnapshotStore};
use peregrine_types::{
    AccountId, ClientOrderId, InstrumentId, InstrumentSpec, OrderId, OrderType, Price, Qty, Side,
    StpMode, TimeInForce, Timestamp,
};
use peregrine_wire::orders::{Cancel, NewOrder};
use peregrine_wire::v2::{Inbound, Outbound};

struct Discard;

impl Outbox for Discard {
    fn report(&mut self, _: AccountId, _: Outbound, _: SessionKey) {}
    fn answer(&mut self, _: SessionKey, _: Outbound) {}
}

fn engine() -> MatchingEngine {
    MatchingEngine::new(&[InstrumentSpec::example(1)], 4096).unwrap()
}

fn section(dir: &Path) -> JournalSection {
    JournalSection {
        fsync: FsyncPolicy::None, // the file contents are what matter here, not power loss
        segment_bytes: 64 << 10,  // several segments, so rotation is covered
        ..JournalSection::new(dir)
    }
}

fn core(dir: &Path) -> Core<JournalLog> {
    let (journal, _) = open_journal(&section(dir), peregrine_journal::LossPolicy::Refuse).unwrap();
    let log = JournalLog::new(journal);
    Core::new(engine(), 1024, log, Clock::monotonic())
}

/// A small deterministic generator (xorshift), so the test needs no RNG crate.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// Crossing and resting orders around 100.00 and cancels of recent ids, from four
/// accounts, committed in batches of 8.
fn drive(core: &mut Core<JournalLog>, n: u64, seed: u64) {
    let mut rng = Rng(seed | 1);
    for i in 0..n {
        let account = AccountId(1 + rng.below(4) as u32);
        let msg = if i % 4 == 3 {
            let hi = core.engine().next_order_id().0;
            Inbound::Cancel(Cancel {
                client_order_id: ClientOrderId(i),
                order_id: OrderId(1 + rng.below(hi)),
                instrument: InstrumentId(1),
            })
        } else {
            Inbound::NewOrder(NewOrder {
                client_order_id: ClientOrderId(i),
                price: Price::from_raw(9_990 + rng.below(21) as i64),
                qty: Qty::from_raw(1 + rng.below(9) as i64),
                expire_at: Timestamp(0),
                instrument: InstrumentId(1),
                side: if rng.below(2) == 0 {
                    Side::Buy
                } else {
                    Side::Sell
                },
                order_type: OrderType::Limit,
                tif: TimeInForce::Gtc,
                stp: StpMode::None,
            })
        };
        let key = SessionKey::new(account.0, 0);
        core.handle(key, account, &msg, &mut Discard).unwrap();
        if i % 8 == 7 {
            core.end_batch().unwrap();
        }
    }
    core.end_batch().unwrap();
}

fn recovered(dir: &Path) -> (Core<JournalLog>, StateHash) {
    let mut c = core(dir);
    let (done, hash) = restore(&mut c, None, None).unwrap();
    assert_eq!(done.last_seq, c.engine_seq());
    (c, hash)
}

/// Every journaled command, read back.
fn commands(dir: &Path) -> Vec<Command> {
    let (mut journal, _) =
        open_journal(&section(dir), peregrine_journal::LossPolicy::Refuse).unwrap();
    let mut all = Vec::new();
    replay_commands(&mut journal, |_, c| all.push(*c)).unwrap();
    all
}

fn hash_of_prefix(cmds: &[Command]) -> StateHash {
    let mut e = engine();
    let mut events = Vec::new();
    for c in cmds {
        events.clear();
        e.execute(c, &mut events);
    }
    e.state_hash()
}

#[test]
fn a_reopened_journal_replays_to_the_same_state_and_continues() {
    let dir = tempfile::tempdir().unwrap();
    let (hash, seq, next_id) = {
        let mut c = core(dir.path());
        drive(&mut c, 2_000, 7);
        let e = c.engine();
        (e.state_hash(), c.engine_seq(), e.next_order_id())
    };
    assert!(segments(dir.path()).len() > 1, "rotated");
    let (mut c, replayed) = recovered(dir.path());
    assert_eq!(replayed, hash);
    assert_eq!(c.engine_seq(), seq);
    assert_eq!(c.engine().next_order_id(), next_id);
    assert!(
        c.tracked_orders() > 0,
        "ownership rebuilt for resting orders"
    );
    // Appending continues with the next sequence number, and a second restart
    // reproduces the continued state.
    drive(&mut c, 500, 11);
    let continued = c.engine().state_hash();
    assert_eq!(c.engine_seq(), seq + 500);
    drop(c);
    assert_eq!(recovered(dir.path()).1, continued);
}

#[test]
fn snapshot_plus_tail_equals_a_full_replay() {
    let dir = tempfile::tempdir().unwrap();
    let store = || SnapshotStore::open(dir.path().join("snapshots"), Default::default()).unwrap();
    let (hash, seq) = {
        let mut c =
            core(dir.path()).with_snapshots(Box::new(Snapshotter::spawn(store(), 300).unwrap()));
        drive(&mut c, 2_000, 13);
        (c.engine().state_hash(), c.engine_seq())
    }; // dropping the core joins the snapshot writer
    let latest = store()
        .latest_valid()
        .unwrap()
        .snapshot
        .expect("a snapshot");
    assert!(
        latest.last_seq % 300 == 0 && latest.last_seq < seq, // the busy writer may skip some
        "{}",
        latest.last_seq
    );
    let mut c = core(dir.path());
    let (done, from_snapshot) = restore(&mut c, Some(&store()), None).unwrap();
    assert_eq!(
        done.records,
        seq - latest.last_seq,
        "only the tail is replayed"
    );
    assert_eq!(from_snapshot, hash);
    assert_eq!(c.engine_seq(), seq);
    assert_eq!(recovered(dir.path()).1, hash, "full replay agrees");
    drive(&mut c, 100, 17);
    assert_eq!(
        c.engine_seq(),
        seq + 100,
        "appends continue after the snapshot + tail"
    );
}

fn replica() -> ReplicaFactory {
    Box::new(|| Some(Core::new(engine(), 1024, NoLog, Clock::monotonic())))
}

/// The replica snapshotter (the server's): snapshots come from a copy of the state fed
/// by the journaled records, never from the live engine; the newest one plus the
/// journal tail must still equal the live state. With a 4-record ring the replica
/// falls behind often, so the re-seed path runs too.
#[test]
fn replica_snapshots_plus_tail_equal_the_live_state() {
    for ring in [1 << 16, 4] {
        let dir = tempfile::tempdir().unwrap();
        let store =
            || SnapshotStore::open(dir.path().join("snapshots"), Default::default()).unwrap();
        let (hash, seq) = {
            let s = Snapshotter::spawn_replica_with_ring(store(), 300, replica(), ring).unwrap();
            let mut c = core(dir.path()).with_snapshots(Box::new(s));
            drive(&mut c, 3_000, 29);
            // With the tiny ring, snapshots come from re-seeds, which need the replica
            // thread to have run: keep trading until one is on disk (bounded).
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
            let mut round = 0;
            // Polls the directory, not a second `SnapshotStore`: opening one removes
            // temp files, which would race with the replica's write in progress.
            let written = || {
                std::fs::read_dir(dir.path().join("snapshots"))
                    .unwrap()
                    .any(|e| e.unwrap().file_name().to_string_lossy().ends_with(".snap"))
            };
            while !written() {
                assert!(std::time::Instant::now() < deadline, "no snapshot in 30 s");
                std::thread::sleep(std::time::Duration::from_millis(5));
                drive(&mut c, 300, 31 + round);
                round += 1;
            }
            (c.engine().state_hash(), c.engine_seq())
        }; // dropping the core lets the replica finish and joins it
        let latest = store()
            .latest_valid()
            .unwrap()
            .snapshot
            .expect("a snapshot");
        // A snapshot point, or (after a re-seed) the seed's own sequence number.
        assert!(
            latest.last_seq > 0 && latest.last_seq <= seq,
            "{}",
            latest.last_seq
        );
        if ring == 1 << 16 {
            assert_eq!(latest.last_seq % 300, 0, "{}", latest.last_seq);
        }
        let mut c = core(dir.path());
        let (done, from_snapshot) = restore(&mut c, Some(&store()), None).unwrap();
        assert_eq!(done.records, seq - latest.last_seq, "ring {ring}");
        assert_eq!(from_snapshot, hash, "ring {ring}");
        assert_eq!(c.engine_seq(), seq);
    }
}

#[test]
fn pruned_segments_recover_from_the_snapshot_and_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let pruning = || SnapshotConfig {
        prune_journal_dir: Some(dir.path().to_path_buf()),
        ..SnapshotConfig::default()
    };
    let store = || SnapshotStore::open(dir.path().join("snapshots"), pruning()).unwrap();
    let before = segments(dir.path()).len();
    assert_eq!(before, 0);
    let (hash, seq) = {
        let mut c =
            core(dir.path()).with_snapshots(Box::new(Snapshotter::spawn(store(), 500).unwrap()));
        drive(&mut c, 6_000, 21);
        (c.engine().state_hash(), c.engine_seq())
    }; // dropping the core joins the snapshot writer
    let (journal, _) =
        open_journal(&section(dir.path()), peregrine_journal::LossPolicy::Refuse).unwrap();
    let first = journal.first_seq().unwrap();
    assert!(
        first > 1,
        "the first segments were pruned (journal starts at {first})"
    );
    drop(journal);
    let mut c = core(dir.path());
    let (_, from_snapshot) = restore(&mut c, Some(&store()), None).unwrap();
    assert_eq!(
        from_snapshot, hash,
        "snapshot + remaining journal = the live state"
    );
    assert_eq!(c.engine_seq(), seq);
    // A journal without its prefix and no snapshot refuses to start.
    let mut c = core(dir.path());
    assert!(matches!(
        restore(&mut c, None, None),
        Err(ReplayError::MissingPrefix { .. })
    ));
}

#[test]
fn a_torn_tail_recovers_to_the_prefix() {
    let dir = tempfile::tempdir().unwrap();
    drive(&mut core(dir.path()), 300, 3);
    let all = commands(dir.path());
    let last = last_segment(dir.path());
    // Half a record after the last commit: written by a crash, never acknowledged.
    let mut bytes = std::fs::read(&last).unwrap();
    let whole = bytes.len();
    let half = bytes[record_offset(&bytes, 0)..][..40].to_vec();
    bytes.extend_from_slice(&half);
    std::fs::write(&last, &bytes).unwrap();
    let (_, report) =
        open_journal(&section(dir.path()), peregrine_journal::LossPolicy::Refuse).unwrap();
    let cut = report.truncated.expect("the torn tail is reported");
    assert_eq!(cut.last_good_seq, Some(all.len() as u64));
    assert_eq!(cut.offset, whole as u64);
    let (c, hash) = recovered(dir.path());
    assert_eq!(c.engine_seq(), all.len() as u64);
    assert_eq!(hash, hash_of_prefix(&all));
}

#[test]
fn a_cut_committed_record_refuses_to_start_with_the_count() {
    let dir = tempfile::tempdir().unwrap();
    drive(&mut core(dir.path()), 300, 3);
    let last = last_segment(dir.path());
    let len = std::fs::metadata(&last).unwrap().len();
    let file = std::fs::OpenOptions::new().write(true).open(&last).unwrap();
    file.set_len(len - 10).unwrap(); // mid-record: every record is > 10 bytes
    drop(file);
    match open_journal(&section(dir.path()), peregrine_journal::LossPolicy::Refuse) {
        Err(ReplayError::Journal(JournalError::CommittedRecordsLost { missing, .. })) => {
            assert_eq!(missing, 1);
        }
        other => panic!(
            "expected CommittedRecordsLost, got {:?}",
            other.map(|r| r.1)
        ),
    }
    assert_eq!(
        std::fs::metadata(&last).unwrap().len(),
        len - 10,
        "untouched"
    );
}

#[test]
fn a_corrupt_middle_record_is_a_typed_error() {
    let dir = tempfile::tempdir().unwrap();
    drive(&mut core(dir.path()), 300, 5);
    let first = first_segment(dir.path());
    let mut bytes = std::fs::read(&first).unwrap();
    let at = record_offset(&bytes, 10) + peregrine_journal::record::HEADER_LEN + 3;
    bytes[at] ^= 0x40;
    std::fs::write(&first, bytes).unwrap();
    match open_journal(&section(dir.path()), peregrine_journal::LossPolicy::Refuse) {
        Err(ReplayError::Journal(JournalError::CorruptRecord { segment, .. })) => {
            assert_eq!(segment, first);
        }
        other => panic!("expected CorruptRecord, got {:?}", other.map(|r| r.1)),
    }
}

/// The segment files, oldest first (the directory also holds the high-water mark).
fn segments(dir: &Path) -> Vec<std::path::PathBuf> {
    peregrine_journal::segment::list(dir)
        .unwrap()
        .into_iter()
        .map(|s| s.path)
        .collect()
}

fn first_segment(dir: &Path) -> std::path::PathBuf {
    segments(dir).remove(0)
}

fn last_segment(dir: &Path) -> std::path::PathBuf {
    segments(dir).pop().unwrap()
}

/// Byte offset of record number `k` (0-based) in a segment.
fn record_offset(seg: &[u8], k: usize) -> usize {
    let mut at = peregrine_journal::segment::SEGMENT_HEADER_LEN;
    for _ in 0..k {
        at += peregrine_journal::record::decode(&seg[at..])
            .unwrap()
            .encoded_len();
    }
    at
}
