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

fn store(per_account: usize) -> ReportStore {
    ReportStore::new(Retention { per_account })
}

#[test]
fn each_account_counts_from_one_and_replays_by_sequence() {
    let mut s = store(10);
    let a = AccountId(1);
    let b = AccountId(2);
    assert_eq!((s.next_seq(a), s.oldest_seq(a)), (1, 1));
    assert_eq!(s.append(a, report(1, 1)), 1);
    assert_eq!(s.append(b, report(1, 2)), 1);
    assert_eq!(s.append(a, report(2, 1)), 2);
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
        s.append(a, report(e, 7));
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
    assert_eq!(s.append(AccountId(1), report(1000, 1)), 41);
    assert_eq!(s.first_global_at(999), None);
    assert_eq!(s.first_global_at(1000), Some(0));
    assert_eq!(s.counters(), vec![(AccountId(1), 42), (AccountId(2), 7)]);
}

#[test]
fn all_accounts_read_in_emission_order_from_an_engine_seq() {
    let mut s = store(100);
    for e in 1..=6u64 {
        s.append(AccountId(1 + (e % 3) as u32), report(e, 1 + (e % 3) as u32));
        s.append(AccountId(9), report(e, 9));
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
    s.append(AccountId(1), report(1, 1)); // never evicted
    for e in 2..1000 {
        s.append(AccountId(2), report(e, 2));
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
    assert_eq!(s.append(AccountId(1), report(5, 1)), 1);
    assert_eq!(s.append(AccountId(1), report(6, 1)), 2);
    assert_eq!(s.position(AccountId(1), 1), Position::NotRetained);
    assert_eq!(s.position(AccountId(1), 3), Position::Replay);
    assert_eq!(s.all_floor(), 7);
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
            let seq = s.append(a, report(engine, account));
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
