//! Property tests: round trips, truncation anywhere, single-byte corruption.

mod common;

use std::path::Path;

use common::{config, read_all, segments, set_len, set_mark, write_all, Owned};
use peregrine_journal::{FsyncPolicy, Journal, JournalConfig, JournalError, Timestamps};
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

const HEADER: u64 = 36;
const SEG_HEADER: u64 = 16;

fn arb_records() -> impl Strategy<Value = Vec<Owned>> {
    let one = (
        any::<u8>(),
        any::<u64>(),
        prop::collection::vec(any::<u8>(), 0..300),
    );
    (1u64..1_000_000, prop::collection::vec(one, 1..120)).prop_map(|(first, items)| {
        let mut out = Vec::new();
        for (seq, (kind, ts, payload)) in (first..).zip(items) {
            let ts = Timestamps {
                recv_ns: ts,
                engine_ns: ts.wrapping_add(1),
            };
            out.push(Owned {
                seq,
                ts,
                kind,
                payload,
            });
        }
        out
    })
}

fn arb_segment_bytes() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(JournalConfig::MIN_SEGMENT_BYTES),
        JournalConfig::MIN_SEGMENT_BYTES..3 * JournalConfig::MIN_SEGMENT_BYTES,
        Just(1 << 20),
    ]
}

/// Record start offsets in the segment at `path`, plus its end.
fn boundaries(path: &Path, recs: &[Owned]) -> Vec<u64> {
    let first = peregrine_journal::segment::list(path.parent().unwrap())
        .unwrap()
        .into_iter()
        .find(|s| s.path == path)
        .unwrap()
        .first_seq;
    let mut at = SEG_HEADER;
    let mut out = vec![at];
    for r in recs.iter().filter(|r| r.seq >= first) {
        let next = at + HEADER + r.payload.len() as u64;
        let len = std::fs::metadata(path).unwrap().len();
        if next > len {
            break;
        }
        at = next;
        out.push(at);
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 64,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "proptest-regressions/props.txt",
        ))),
        ..ProptestConfig::default()
    })]

    #[test]
    fn prop_round_trip_with_rotation_and_replay_from(
        recs in arb_records(),
        seg in arb_segment_bytes(),
        batch in 1usize..50,
        policy in prop_oneof![Just(FsyncPolicy::None), Just(FsyncPolicy::Batch)],
        pick in any::<prop::sample::Index>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let cfg = config(seg, policy);
        {
            let (mut j, _) = Journal::open(dir.path(), cfg.clone()).unwrap();
            for (i, r) in recs.iter().enumerate() {
                j.append(r.seq, r.ts, r.kind, &r.payload).unwrap();
                if i.is_multiple_of(batch) { j.commit().unwrap(); }
            }
            j.close().unwrap();
        }
        let (report, got) = read_all(dir.path(), cfg.clone());
        prop_assert_eq!(&got, &recs);
        prop_assert_eq!(report.truncated, None);
        let from = recs[pick.index(recs.len())].seq;
        let (mut j, _) = Journal::open(dir.path(), cfg).unwrap();
        let mut replay = j.replay_from(from).unwrap();
        let mut n = 0;
        while let Some(r) = replay.next().unwrap() {
            prop_assert_eq!(r.seq, from + n);
            n += 1;
        }
        prop_assert_eq!(from + n, recs.last().unwrap().seq + 1);
    }

    #[test]
    fn prop_truncating_last_segment_anywhere_yields_a_reported_prefix_or_the_lost_count(
        recs in arb_records(),
        seg in arb_segment_bytes(),
        cut in any::<prop::sample::Index>(),
        committed in any::<prop::sample::Index>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let cfg = config(seg, FsyncPolicy::None);
        write_all(dir.path(), cfg.clone(), &recs);
        // Only a prefix was acknowledged; the rest reached the file uncommitted.
        let committed = recs[committed.index(recs.len())].seq;
        set_mark(dir.path(), committed);
        let last = segments(dir.path()).pop().unwrap();
        let len = std::fs::metadata(&last).unwrap().len();
        let cut = cut.index(len as usize + 1) as u64;
        let bounds = boundaries(&last, &recs);
        set_len(&last, cut);

        let first_in_last = peregrine_journal::segment::list(dir.path()).unwrap()
            .last().unwrap().first_seq;
        let kept_in_last = bounds.iter().filter(|&&b| b <= cut).count().saturating_sub(1) as u64;
        let kept_last = first_in_last + kept_in_last - 1;
        if kept_last < committed {
            match Journal::open(dir.path(), cfg) {
                Err(JournalError::CommittedRecordsLost { missing, found_last, .. }) => {
                    prop_assert_eq!(missing, committed - kept_last);
                    prop_assert_eq!(found_last, (kept_last >= recs[0].seq).then_some(kept_last));
                }
                other => prop_assert!(false, "expected a refusal, got {:?}", other.map(|r| r.1)),
            }
            return Ok(());
        }
        let (report, got) = read_all(dir.path(), cfg);
        prop_assert_eq!(&got[..], &recs[..got.len()]);
        prop_assert!(got.last().unwrap().seq >= committed);
        let kept_end = bounds.iter().copied().filter(|&b| b <= cut).max().unwrap_or(0);
        let on_boundary = cut >= SEG_HEADER && bounds.contains(&cut);
        match report.truncated {
            None => prop_assert!(on_boundary, "cut {} not reported", cut),
            Some(t) => {
                prop_assert!(!on_boundary);
                prop_assert_eq!(t.segment, last);
                prop_assert_eq!(t.offset, kept_end);
                prop_assert_eq!(t.bytes_dropped, cut - kept_end);
                prop_assert_eq!(t.last_good_seq, got.last().map(|r| r.seq));
            }
        }
    }

    #[test]
    fn prop_single_byte_corruption_is_an_error_or_a_dropped_tail(
        recs in arb_records(),
        seg in arb_segment_bytes(),
        which in any::<prop::sample::Index>(),
        at in any::<prop::sample::Index>(),
        xor in 1u8..=255,
        last_committed in any::<bool>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let cfg = config(seg, FsyncPolicy::None);
        write_all(dir.path(), cfg.clone(), &recs);
        // Either every record was acknowledged, or all but the last.
        let last_seq = recs.last().unwrap().seq;
        if !last_committed {
            // The record before the last, or nothing when the last is the first (the
            // journal may start past seq 1: a mark of `first - 1` would name a record
            // it never held).
            set_mark(dir.path(), if recs.len() >= 2 { last_seq - 1 } else { 0 });
        }
        let segs = segments(dir.path());
        let hit_seg = &segs[which.index(segs.len())];
        let mut bytes = std::fs::read(hit_seg).unwrap();
        let pos = at.index(bytes.len());
        bytes[pos] ^= xor;
        std::fs::write(hit_seg, &bytes).unwrap();

        let bounds = boundaries(hit_seg, &recs);
        let rec_start = bounds.iter().copied().filter(|&b| b <= pos as u64).max().unwrap_or(0);
        let is_last_record = hit_seg == segs.last().unwrap() && rec_start == bounds[bounds.len() - 2];
        match Journal::open(dir.path(), cfg) {
            Err(JournalError::CommittedRecordsLost { missing, .. }) => {
                prop_assert!(is_last_record && last_committed, "loss at {} misreported", pos);
                prop_assert_eq!(missing, 1);
            }
            Ok((_, report)) => {
                prop_assert!(is_last_record, "corruption at {} accepted", pos);
                prop_assert!(!last_committed, "a committed record was dropped as tail");
                let t = report.truncated.unwrap();
                prop_assert_eq!(t.offset, rec_start);
                let before_last = recs.len().checked_sub(2).map(|i| recs[i].seq);
                prop_assert_eq!(t.last_good_seq, before_last);
            }
            Err(JournalError::BadSegmentHeader { segment }) => {
                prop_assert!(pos < SEG_HEADER as usize);
                prop_assert_eq!(&segment, hit_seg);
            }
            Err(JournalError::CorruptRecord { segment, offset, .. }) => {
                prop_assert!(!is_last_record);
                prop_assert_eq!(&segment, hit_seg);
                prop_assert_eq!(offset, rec_start);
            }
            Err(other) => prop_assert!(false, "unexpected error {}", other),
        }
    }

    #[test]
    fn prop_holes_after_the_last_commit_never_lose_committed_records(
        recs in arb_records(),
        committed in any::<prop::sample::Index>(),
        hole_start in any::<prop::sample::Index>(),
        hole_len in 1usize..5_000,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let cfg = config(1 << 20, FsyncPolicy::Batch);
        let n_committed = committed.index(recs.len() + 1);
        let (mut j, _) = Journal::open(dir.path(), cfg.clone()).unwrap();
        for (i, r) in recs.iter().enumerate() {
            j.append(r.seq, r.ts, r.kind, &r.payload).unwrap();
            if i + 1 == n_committed {
                j.commit().unwrap();
            }
        }
        std::mem::forget(j); // a crash: no Drop commit, the buffer is lost
        let Some(seg) = segments(dir.path()).pop() else {
            return Ok(()); // nothing ever reached the file
        };
        let committed_end = SEG_HEADER
            + recs[..n_committed].iter().map(|r| HEADER + r.payload.len() as u64).sum::<u64>();
        let mut bytes = std::fs::read(&seg).unwrap();
        let len = bytes.len() as u64;
        if len > committed_end {
            let start = committed_end as usize + hole_start.index((len - committed_end) as usize);
            let end = (start + hole_len).min(bytes.len());
            bytes[start..end].fill(0); // pages lost out of order by a power loss
            std::fs::write(&seg, &bytes).unwrap();
        }
        let (_, got) = read_all(dir.path(), cfg);
        prop_assert!(got.len() >= n_committed, "{} < {}", got.len(), n_committed);
        prop_assert_eq!(&got[..], &recs[..got.len()]);
    }
}
