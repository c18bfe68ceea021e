//! Commitments end to end without sockets: a journaled [`Core`] with the hasher thread
//! (continuous and batch mode), then an offline replay of the journal recomputes every
//! commitment bit for bit; a restart continues the open window without duplicates;
//! the batch sequencer stamps, orders and bounds ticks; tampering with the commitment
//! log or the journal is reported at the first mismatch.

use std::path::Path;

use peregrine_book::{Action, MatchingEngine};
use peregrine_commit::commit_log::{self, CommitLog, LoggedCommitment};
use peregrine_commit::{Commitment, Committer};
use peregrine_exchange_core::dispatch::Sequencer;
use peregrine_exchange_core::journal::{JournalLog, JournalSection, MemoryLog, KIND_COMMAND};
use peregrine_exchange_core::mix;
use peregrine_exchange_core::replay::{open_journal, restore};
use peregrine_exchange_core::tools::verify::{self, compare, recompute};
use peregrine_exchange_core::{Clock, Core, Outbox, SessionKey, VenueSpec};
use peregrine_journal::{FsyncPolicy, Journal, JournalConfig, Timestamps};
use peregrine_types::{AccountId, ClientOrderId, InstrumentSpec, Qty, Timestamp};
use peregrine_wire::v2::{Inbound, Outbound};

const BASE: u64 = 1_700_000_000_000_000_000;
const MS: u64 = 1_000_000;

struct Sink;
impl Outbox for Sink {
    fn answer(&mut self, to: SessionKey, msg: Outbound) {
        self.report(AccountId(0), msg, to);
    }
    fn report(&mut self, _: AccountId, _: Outbound, _: SessionKey) {}
}

fn spec() -> InstrumentSpec {
    let mut s = InstrumentSpec::example(1);
    s.symbol = "PGN-USD".into();
    s
}

fn request(j: u64) -> (SessionKey, AccountId, Inbound) {
    let mut o = mix::order(&spec(), j);
    o.client_order_id = ClientOrderId(j + 1);
    let s = (j % 4) as u32;
    (
        SessionKey::new(s, 0),
        AccountId(s + 1),
        Inbound::NewOrder(o),
    )
}

/// The venue `peregrine verify` sees with the default exchange config.
fn venue() -> VenueSpec {
    VenueSpec {
        instruments: vec![spec()],
        arena_capacity: 65_536,
        balances: None,
        fee_account: None,
        admins: Vec::new(),
    }
}

/// `peregrine verify journal --dir DIR` without a config: the comparison's result as
/// the CLI prints it.
fn verify_journal(dir: &Path) -> Result<verify::Verified, String> {
    let check = verify::check_journal(&venue(), &JournalSection::new(dir), 100 * MS).unwrap();
    check.result.map_err(|m| m.to_string())
}

fn section(dir: &Path) -> JournalSection {
    JournalSection {
        fsync: FsyncPolicy::None,
        ..JournalSection::new(dir)
    }
}

/// A journaled core with the hasher attached and the journal replayed (a restart
/// when the directory already holds one).
fn open_core(dir: &Path, window_ns: u64, chunk: usize) -> Core<JournalLog> {
    let (journal, _) = open_journal(&section(dir), peregrine_journal::LossPolicy::Refuse).unwrap();
    let engine = MatchingEngine::new(&[spec()], 4096).unwrap();
    let (log, last) = CommitLog::open(&commit_log::dir_of(dir), FsyncPolicy::None).unwrap();
    let committer = Committer::spawn(window_ns, chunk, Some(log), last).unwrap();
    let mut core = Core::new(engine, 4096, JournalLog::new(journal), Clock::monotonic())
        .with_commitments(Box::new(committer));
    restore(&mut core, None, None).unwrap();
    core.commitments_floor();
    core
}

fn logged(dir: &Path) -> Vec<LoggedCommitment> {
    commit_log::read_all(&commit_log::dir_of(dir)).unwrap()
}

fn recomputed(dir: &Path, window_ns: u64) -> Vec<Commitment> {
    recompute(&venue(), &section(dir), window_ns, None)
        .unwrap()
        .commitments
}

/// Continuous mode: commands every 37 µs, windows of 1 ms, chunks of 7 trades (so
/// most windows travel in several chunks).
fn drive_continuous(core: &mut Core<JournalLog>, range: std::ops::Range<u64>) {
    for j in range {
        let (key, account, msg) = request(j);
        let ts = Timestamp(BASE + j * 37_000);
        core.handle_at(key, account, &msg, ts, &mut Sink).unwrap();
        if j % 8 == 7 {
            core.end_batch().unwrap();
        }
    }
    core.end_batch().unwrap();
}

#[test]
fn continuous_commitments_are_recomputed_bit_for_bit() {
    let dir = tempfile::tempdir().unwrap();
    let mut core = open_core(dir.path(), MS, 7);
    drive_continuous(&mut core, 0..3_000);
    // The idle timer closes the last window once the clock has passed it.
    core.end_tick();
    drop(core); // joins the hasher after it drained its ring
    let log = logged(dir.path());
    let re = recomputed(dir.path(), MS);
    assert!(log.len() > 100, "{} windows", log.len());
    assert_eq!(log.len(), re.len(), "every window committed");
    for (l, r) in log.iter().zip(&re) {
        assert_eq!(l.commitment, *r);
        assert_eq!(l.window_ns, MS);
    }
    assert!(
        log.iter().any(|l| l.commitment.trade_count > 7),
        "multi-chunk windows"
    );
    let total: u64 = log.iter().map(|l| l.commitment.tx_count).sum();
    assert_eq!(total, 3_000);
    let v = compare(&log, &re, MS).unwrap();
    assert_eq!((v.verified, v.pending), (log.len(), 0));
}

#[test]
fn a_restart_continues_the_open_window_without_duplicates() {
    let dir = tempfile::tempdir().unwrap();
    let mut core = open_core(dir.path(), MS, 64);
    drive_continuous(&mut core, 0..1_000);
    drop(core); // stops with a window open: it is not logged yet
    let before = logged(dir.path());
    let mut core = open_core(dir.path(), MS, 64);
    drive_continuous(&mut core, 1_000..2_000);
    core.end_tick();
    drop(core);
    let log = logged(dir.path());
    let re = recomputed(dir.path(), MS);
    assert_eq!(&log[..before.len()], &before[..]);
    assert_eq!(log.iter().map(|l| l.commitment).collect::<Vec<_>>(), re);
    let mut ticks: Vec<u64> = log.iter().map(|l| l.commitment.tick_seq).collect();
    ticks.dedup();
    assert_eq!(ticks.len(), log.len(), "no window committed twice");
}

#[test]
fn a_missing_commitment_is_recomputed_on_restart() {
    let dir = tempfile::tempdir().unwrap();
    let mut core = open_core(dir.path(), MS, 64);
    drive_continuous(&mut core, 0..500);
    core.end_tick();
    drop(core);
    let full = logged(dir.path());
    // Lose the commitment log entirely (as if the hasher never got to write it).
    std::fs::remove_dir_all(commit_log::dir_of(dir.path())).unwrap();
    let core = open_core(dir.path(), MS, 64);
    drop(core); // recovery closed every window but the last (still open)
    let again = logged(dir.path());
    assert_eq!(again.len(), full.len() - 1);
    assert_eq!(&again[..], &full[..again.len()]);
}

/// Batch mode: a request every 50 µs, ticks of 1 ms (about 20 per tick), at most
/// `capacity` per tick.
fn drive_batch(core: &mut Core<JournalLog>, seq: &mut Sequencer, n: u64) {
    for j in 0..n {
        let (key, account, msg) = request(j);
        let now = Timestamp(BASE + j * 50_000);
        let r = Sequencer::request(key, account, msg);
        seq.push(r, now, core, &mut Sink).unwrap();
        seq.run_if_due(now, core, &mut Sink).unwrap();
        core.end_batch().unwrap();
    }
    seq.run_if_due(Timestamp(u64::MAX), core, &mut Sink)
        .unwrap();
    core.end_batch().unwrap();
}

#[test]
fn batch_commitments_are_recomputed_bit_for_bit() {
    for capacity in [65_536, 8] {
        let dir = tempfile::tempdir().unwrap();
        let mut core = open_core(dir.path(), MS, 16);
        let mut seq = Sequencer::new(MS, capacity);
        drive_batch(&mut core, &mut seq, 2_000);
        let (ticks, early) = seq.stats();
        drop(core);
        let log = logged(dir.path());
        let re = recomputed(dir.path(), MS);
        assert_eq!(log.len() as u64, ticks, "one commitment per tick");
        assert_eq!(log.iter().map(|l| l.commitment).collect::<Vec<_>>(), re);
        for l in &log {
            let c = l.commitment;
            assert_eq!(c.timestamp, c.tick_seq * MS, "tick time on the grid");
            assert!(c.tx_count as usize <= capacity);
        }
        if capacity == 8 {
            assert!(early > 0, "small ticks close early");
        } else {
            assert_eq!(early, 0);
            assert!(log.iter().any(|l| l.commitment.tx_count >= 19));
        }
    }
}

fn memory_core() -> Core<MemoryLog> {
    let engine = MatchingEngine::new(&[spec()], 4096).unwrap();
    Core::new(engine, 4096, MemoryLog::default(), Clock::monotonic())
}

#[test]
fn ticks_are_stamped_ordered_and_bounded() {
    let mut core = memory_core();
    let mut seq = Sequencer::new(MS, 3);
    let at = |us: u64| Timestamp(BASE + us * 1_000);
    for j in 0..2 {
        let (k, a, m) = request(j);
        assert!(!seq
            .push(Sequencer::request(k, a, m), at(1_500), &mut core, &mut Sink)
            .unwrap());
    }
    assert!(!seq.due(at(1_999)));
    assert!(seq.due(at(2_000)));
    assert!(seq.run_if_due(at(2_000), &mut core, &mut Sink).unwrap());
    assert_eq!(seq.pending(), 0);
    // Four requests at 2.1 ms into a tick of 3: the fourth closes it early.
    let mut ran = Vec::new();
    for j in 2..6 {
        let (k, a, m) = request(j);
        ran.push(
            seq.push(Sequencer::request(k, a, m), at(2_100), &mut core, &mut Sink)
                .unwrap(),
        );
    }
    assert_eq!(ran, [false, false, false, true]);
    seq.run_if_due(at(4_000), &mut core, &mut Sink).unwrap();
    core.end_batch().unwrap();
    let recs = &core.log().records;
    let times: Vec<u64> = recs.iter().map(|(_, c)| (c.ts.0 - BASE) / 1_000).collect();
    assert_eq!(times, [2_000, 2_000, 3_000, 3_000, 3_000, 4_000]);
    let clients: Vec<u64> = recs
        .iter()
        .map(|(_, c)| match c.action {
            Action::New(o) => o.client_id.0,
            _ => 0,
        })
        .collect();
    assert_eq!(clients, [1, 2, 3, 4, 5, 6], "arrival order");
    assert_eq!(seq.stats(), (3, 1));
}

fn rewrite_log(dir: &Path, entries: &[LoggedCommitment]) {
    let d = commit_log::dir_of(dir);
    std::fs::remove_dir_all(&d).unwrap();
    let (mut log, _) = CommitLog::open(&d, FsyncPolicy::None).unwrap();
    for e in entries {
        log.append(e).unwrap();
    }
}

fn continuous_run(dir: &Path) {
    let mut core = open_core(dir, MS, 64);
    drive_continuous(&mut core, 0..1_000);
    core.end_tick();
    drop(core);
}

#[test]
fn a_tampered_commitment_log_is_reported_at_the_first_mismatch() {
    let dir = tempfile::tempdir().unwrap();
    continuous_run(dir.path());
    assert!(verify_journal(dir.path()).is_ok());
    let mut entries = logged(dir.path());
    entries[5].commitment.merkle_root[3] ^= 0x10;
    entries[9].commitment.tx_count += 1;
    let tick = entries[5].commitment.tick_seq;
    rewrite_log(dir.path(), &entries);
    let err = verify_journal(dir.path()).unwrap_err();
    assert!(
        err.contains(&format!("commitment #6 (tick_seq {tick})")),
        "{err}"
    );
    assert!(err.contains("merkle_root"), "{err}");
}

#[test]
fn a_tampered_journal_is_reported_at_the_first_mismatch() {
    let dir = tempfile::tempdir().unwrap();
    continuous_run(dir.path());
    // Rewrite the journal with valid CRCs but command 403 (an IOC that trades) for a
    // different quantity.
    let forged = tempfile::tempdir().unwrap();
    let (mut src, _) =
        open_journal(&section(dir.path()), peregrine_journal::LossPolicy::Refuse).unwrap();
    let (mut dst, _) = Journal::open(forged.path(), JournalConfig::default()).unwrap();
    let mut replay = src.replay_from(1).unwrap();
    let mut tampered_ts = 0;
    while let Some(rec) = replay.next().unwrap() {
        let mut cmd = peregrine_exchange_core::codec::command::decode(rec.payload).unwrap();
        if rec.seq == 403 {
            if let Action::New(o) = &mut cmd.action {
                o.qty = Qty::from_raw(o.qty.lots() - 1);
            }
            tampered_ts = cmd.ts.0;
        }
        let mut buf = [0u8; peregrine_exchange_core::codec::command::MAX_ENCODED];
        let n = peregrine_exchange_core::codec::command::encode(&cmd, &mut buf);
        let ts = Timestamps {
            recv_ns: cmd.ts.0,
            engine_ns: cmd.ts.0,
        };
        dst.append(rec.seq, ts, KIND_COMMAND, &buf[..n]).unwrap();
    }
    dst.close().unwrap();
    let log_src = commit_log::dir_of(dir.path());
    let log_dst = commit_log::dir_of(forged.path());
    std::fs::create_dir_all(&log_dst).unwrap();
    for f in std::fs::read_dir(&log_src).unwrap() {
        let f = f.unwrap();
        std::fs::copy(f.path(), log_dst.join(f.file_name())).unwrap();
    }
    let err = verify_journal(forged.path()).unwrap_err();
    let tick = tampered_ts / MS;
    assert!(err.contains(&format!("(tick_seq {tick})")), "{err}");
    assert!(
        [
            "trade_count differs",
            "state_hash differs",
            "merkle_root differs"
        ]
        .iter()
        .any(|f| err.contains(f)),
        "{err}"
    );
}

#[test]
fn a_trade_proves_against_its_logged_root() {
    let dir = tempfile::tempdir().unwrap();
    continuous_run(dir.path());
    let entry = logged(dir.path())
        .into_iter()
        .find(|l| l.commitment.trade_count >= 3)
        .unwrap();
    let re = recompute(
        &venue(),
        &section(dir.path()),
        MS,
        Some(entry.commitment.tick_seq),
    )
    .unwrap();
    let trade = re.trades.unwrap()[1];
    let tick = entry.commitment.tick_seq;
    let section = JournalSection::new(dir.path());
    let logged = logged(dir.path());
    let prove =
        |trade_id| verify::prove_trade(&venue(), &section, &logged, MS, tick, trade_id, None);
    let proof = prove(trade.trade_id).unwrap();
    assert!(proof.valid, "the proof checks against the logged root");
    assert_eq!((proof.index, proof.proof.index), (1, 1));
    assert_eq!(proof.root, entry.commitment.merkle_root);
    assert!(matches!(
        prove(u64::MAX),
        Err(verify::VerifyError::NoSuchTrade { .. })
    ));
}
