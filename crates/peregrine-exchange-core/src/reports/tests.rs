use peregrine_types::{ClientOrderId, InstrumentId, Timestamp};
use peregrine_wire::field::{Pad, ReasonCode};
use peregrine_wire::v2::reports::Rejected;
use proptest::prelude::*;

use super::*;

fn report(engine_seq: u64, account: u32) -> Outbound {
    Rejected {
        session_seq: 0,
        engine_seq,
        engine_time: Timestamp(engine_seq),
        client_order_id: ClientOrderId(engine_seq),
        instrument: InstrumentId(1),
        reason: ReasonCode(1),
        reserved: Pad,
        report_seq: 0,
        account: AccountId(account),
    }
    .into()
}

/// Appends a report of `account` for command `engine`, numbered as the core would
/// (the account's next number).
fn put(s: &mut ReportStore, account: AccountId, engine: u64) -> u64 {
    let mut r = report(engine, account.0);
    r.set_report_seq(s.next_seq(account));
    s.append(account, r)
}

fn store(per_account: usize) -> ReportStore {
    ReportStore::new(Retention { per_account })
}

#[test]
fn each_account_counts_from_one_and_replays_by_sequence() {
    let mut s = store(10);
    let a = AccountId(1);
    let b = AccountId(2);
    assert_eq!((s.next_seq(a), s.oldest_seq(a)), (1, 1));
    assert_eq!(put(&mut s, a, 1), 1);
    assert_eq!(put(&mut s, b, 1), 1);
    assert_eq!(put(&mut s, a, 2), 2);
    assert_eq!(s.next_seq(a), 3);
    let r = s.get(a, 2).unwrap();
    assert_eq!((r.report(), r.engine_seq()), (Some((a, 2)), 2));
    assert!(s.get(a, 3).is_none());
    assert_eq!(s.position(a, 1), Position::Replay);
    assert_eq!(s.position(a, 3), Position::Replay, "nothing missed");
    assert_eq!(s.position(a, 4), Position::Ahead);
}

#[test]
fn retention_drops_the_oldest_and_says_so() {
    let mut s = store(3);
    let a = AccountId(7);
    for e in 1..=5 {
        put(&mut s, a, e);
    }
    assert_eq!((s.oldest_seq(a), s.next_seq(a)), (3, 6));
    assert_eq!(s.position(a, 2), Position::NotRetained);
    assert_eq!(s.position(a, 3), Position::Replay);
    assert!(s.get(a, 2).is_none());
    assert_eq!(s.get(a, 3).unwrap().report(), Some((a, 3)));
    assert_eq!(s.retained(), 3);
    assert_eq!(s.all_floor(), 3, "commands 1 and 2 lost a report");
}

#[test]
fn resume_continues_the_numbering_after_a_snapshot() {
    let mut s = store(10);
    s.resume(&[(AccountId(1), 41), (AccountId(2), 7)], 1000);
    assert_eq!(s.next_seq(AccountId(1)), 41);
    assert_eq!(s.position(AccountId(1), 40), Position::NotRetained);
    assert_eq!(put(&mut s, AccountId(1), 1000), 41);
    assert_eq!(s.first_global_at(999), None);
    assert_eq!(s.first_global_at(1000), Some(0));
    assert_eq!(s.counters(), vec![(AccountId(1), 42), (AccountId(2), 7)]);
}

#[test]
fn all_accounts_read_in_emission_order_from_an_engine_seq() {
    let mut s = store(100);
    for e in 1..=6u64 {
        put(&mut s, AccountId(1 + (e % 3) as u32), e);
        put(&mut s, AccountId(9), e);
    }
    let g = s.first_global_at(4).unwrap();
    let got: Vec<u64> = (g..s.next_global())
        .map(|g| s.at_global(g).unwrap().engine_seq())
        .collect();
    assert_eq!(got, [4, 4, 5, 5, 6, 6]);
    assert_eq!(s.first_global_at(7), Some(s.next_global()));
}

#[test]
fn a_quiet_account_does_not_pin_the_emission_order() {
    let mut s = store(2);
    put(&mut s, AccountId(1), 1); // never evicted
    for e in 2..1000 {
        put(&mut s, AccountId(2), e);
    }
    assert!(s.order.len() <= 4, "order bounded: {}", s.order.len());
    assert_eq!(
        s.get(AccountId(1), 1).unwrap().engine_seq(),
        1,
        "still replayable"
    );
    assert_eq!(
        s.first_global_at(1),
        None,
        "but no longer for every account"
    );
    let g = s.first_global_at(998).unwrap();
    assert_eq!(s.at_global(g).unwrap().engine_seq(), 998);
}

#[test]
fn zero_retention_keeps_counters_only() {
    let mut s = store(0);
    assert_eq!(put(&mut s, AccountId(1), 5), 1);
    assert_eq!(put(&mut s, AccountId(1), 6), 2);
    assert_eq!(s.position(AccountId(1), 1), Position::NotRetained);
    assert_eq!(s.position(AccountId(1), 3), Position::Replay);
    assert_eq!(s.all_floor(), 7);
}

/// Release builds: a repeat is dropped, a jump restarts the retention at it; the
/// number is never changed (debug builds assert instead, below).
#[cfg(not(debug_assertions))]
#[test]
fn a_report_out_of_sequence_is_dropped_or_restarts_the_retention_but_never_renumbered() {
    let mut s = store(10);
    let a = AccountId(3);
    put(&mut s, a, 1);
    put(&mut s, a, 2);
    let mut again = report(3, 3);
    again.set_report_seq(1);
    assert_eq!(s.append(a, again), 1, "a repeat keeps its number");
    assert_eq!(s.next_seq(a), 3, "and is dropped");
    let mut jump = report(4, 3);
    jump.set_report_seq(9);
    assert_eq!(s.append(a, jump), 9, "never renumbered");
    assert_eq!((s.oldest_seq(a), s.next_seq(a)), (9, 10));
    assert_eq!(s.get(a, 9).unwrap().report(), Some((a, 9)));
}

#[cfg(debug_assertions)]
#[test]
#[should_panic(expected = "out of sequence")]
fn a_report_out_of_sequence_is_a_bug_debug_builds_assert() {
    let mut s = store(10);
    put(&mut s, AccountId(3), 1);
    let mut again = report(2, 3);
    again.set_report_seq(1);
    s.append(AccountId(3), again);
}

#[test]
fn a_store_rebuilt_from_its_parts_is_the_same_store_and_obeys_a_smaller_retention() {
    let mut s = store(5);
    for e in 1..=12u64 {
        put(&mut s, AccountId(1 + (e % 2) as u32), e);
    }
    let p = s.parts();
    let rebuild = |per_account| {
        ReportStore::from_parts(
            Retention { per_account },
            p.streams
                .iter()
                .map(|(a, n, items)| (*a, *n, (*items).clone()))
                .collect(),
            p.order.clone(),
            p.order_base,
            p.all_floor,
        )
    };
    assert_eq!(rebuild(5), s);
    let small = rebuild(2);
    for a in [AccountId(1), AccountId(2)] {
        assert_eq!(small.next_seq(a), s.next_seq(a));
        assert_eq!(small.oldest_seq(a), s.next_seq(a) - 2);
    }
    assert!(small.all_floor() >= s.all_floor());
}

proptest! {
    /// Against a model that keeps everything: every retained report is exactly the
    /// model's, numbering is gap-free per account, and a drop copy of every account
    /// resuming from any engine seq at or above the floor sees exactly the model's
    /// reports from there, in order.
    #[test]
    fn prop_store_matches_a_keep_everything_model(
        ops in prop::collection::vec((0u32..4, 0u8..3), 1..300),
        per_account in 0usize..20,
    ) {
        let mut s = store(per_account);
        let mut model: Vec<(AccountId, u64, u64)> = Vec::new(); // (account, seq, engine)
        let mut engine = 1u64;
        for (account, bump) in ops {
            engine += u64::from(bump); // several reports may share an engine seq
            let a = AccountId(account);
            let seq = put(&mut s, a, engine);
            let expect = model.iter().filter(|m| m.0 == a).count() as u64 + 1;
            prop_assert_eq!(seq, expect);
            model.push((a, seq, engine));
        }
        for a in 0..4 {
            let a = AccountId(a);
            let oldest = s.oldest_seq(a);
            for &(_, seq, e) in model.iter().filter(|m| m.0 == a) {
                match s.get(a, seq) {
                    Some(r) => {
                        prop_assert!(seq >= oldest);
                        prop_assert_eq!((r.report(), r.engine_seq()), (Some((a, seq)), e));
                    }
                    None => prop_assert!(seq < oldest),
                }
            }
        }
        for from in 1..=engine + 1 {
            match s.first_global_at(from) {
                None => prop_assert!(from < s.all_floor()),
                Some(g) => {
                    let got: Vec<_> = (g..s.next_global())
                        .map(|g| s.at_global(g).map(|r| r.report()))
                        .collect();
                    let want: Vec<_> = model
                        .iter()
                        .filter(|m| m.2 >= from)
                        .map(|m| Some(Some((m.0, m.1))))
                        .collect();
                    prop_assert_eq!(got, want);
                }
            }
        }
    }
}
