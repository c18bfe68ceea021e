//! Differential tests: the fast book (with both level indexes) against the reference
//! book on random command streams. Every command must give identical events, identical
//! resting orders in priority order, the same state hash, and pass the invariant
//! checkers.

mod common;

use common::{orders, Generator, Ledger};
use peregrine_book::{
    BTreeLevels, Book, Event, HashIds, IdWindow, Ladder, LevelIndex, OrderBook, OrderIds,
    ReferenceBook,
};
use proptest::prelude::*;

/// Small enough that `BookFull` happens.
const CAPACITY: usize = 16;

fn compare<L: LevelIndex>(seed: u64, commands: usize, capacity: usize) -> Result<(), String> {
    compare_with::<L, IdWindow>(Generator::new(seed), seed, commands, capacity)
}

fn compare_with<L: LevelIndex, I: OrderIds>(
    mut gen: Generator,
    seed: u64,
    commands: usize,
    capacity: usize,
) -> Result<(), String> {
    let mut fast: OrderBook<L, I> = OrderBook::new(common::spec(), capacity);
    let mut reference = ReferenceBook::new(common::spec(), capacity);
    let mut ledger = Ledger::default();
    let (mut ev_fast, mut ev_ref): (Vec<Event>, Vec<Event>) = (Vec::new(), Vec::new());
    for step in 0..commands {
        let cmd = gen.next_command();
        ev_fast.clear();
        ev_ref.clear();
        fast.execute(&cmd, &mut ev_fast);
        reference.execute(&cmd, &mut ev_ref);
        let ctx = || format!("seed {seed} step {step} cmd {cmd:?}");
        if ev_fast != ev_ref {
            return Err(format!("{}\nfast: {ev_fast:#?}\nref:  {ev_ref:#?}", ctx()));
        }
        let resting = orders(&fast);
        if resting != orders(&reference) {
            return Err(format!("{}: resting orders differ", ctx()));
        }
        fast.check_invariants()
            .map_err(|e| format!("{}: {e}", ctx()))?;
        ledger.observe(&ev_fast);
        ledger
            .check(&resting)
            .map_err(|e| format!("{}: {e}", ctx()))?;
        if step % 64 == 0 && fast.state_hash() != reference.state_hash() {
            return Err(format!("{}: state hash differs", ctx()));
        }
    }
    if fast.state_hash() != reference.state_hash() {
        return Err(format!("seed {seed}: final state hash differs"));
    }
    Ok(())
}

/// 24 seeds × 5,000 commands = 120,000 commands with a tiny arena (full often).
#[test]
fn ladder_matches_reference_over_many_seeds() {
    for seed in 0..24 {
        compare::<Ladder>(seed, 5_000, CAPACITY).unwrap();
    }
}

/// Deeper books: 6 seeds × 5,000 commands with room for hundreds of orders.
#[test]
fn ladder_matches_reference_with_deep_books() {
    for seed in 50..56 {
        compare::<Ladder>(seed, 5_000, 1024).unwrap();
    }
}

#[test]
fn btree_matches_reference_over_many_seeds() {
    for seed in 100..112 {
        compare::<BTreeLevels>(seed, 5_000, CAPACITY).unwrap();
    }
}

/// Order ids far apart and out of order: the id window slides constantly and most
/// live orders sit in its overflow map.
#[test]
fn spread_ids_match_reference() {
    for seed in 200..212 {
        compare_with::<Ladder, IdWindow>(Generator::spread(seed), seed, 5_000, CAPACITY).unwrap();
    }
    for seed in 212..215 {
        compare_with::<Ladder, IdWindow>(Generator::spread(seed), seed, 5_000, 1024).unwrap();
    }
}

/// The hash-map baseline still obeys the same rules.
#[test]
fn hashbrown_ids_match_reference() {
    for seed in 300..306 {
        compare_with::<Ladder, HashIds>(Generator::new(seed), seed, 5_000, CAPACITY).unwrap();
        compare_with::<Ladder, HashIds>(Generator::spread(seed), seed, 5_000, CAPACITY).unwrap();
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Short streams from arbitrary seeds (shrinks to the smallest failing prefix).
    #[test]
    fn prop_fast_book_equals_reference(seed in any::<u64>(), len in 1usize..400) {
        prop_assert_eq!(compare::<Ladder>(seed, len, CAPACITY), Ok(()));
    }

    /// The same with ids far apart and out of order.
    #[test]
    fn prop_spread_ids_equal_reference(seed in any::<u64>(), len in 1usize..400) {
        let gen = Generator::spread(seed);
        prop_assert_eq!(compare_with::<Ladder, IdWindow>(gen, seed, len, CAPACITY), Ok(()));
    }
}

/// The generator really exercises what it claims to: every event kind and every
/// reject reason the book can produce on its own shows up.
#[test]
fn generator_covers_every_outcome() {
    use peregrine_book::{CancelReason, RejectReason};
    use std::collections::HashSet;
    let mut gen = Generator::new(7);
    let mut book: OrderBook = OrderBook::new(common::spec(), CAPACITY);
    let (mut rejects, mut cancels, mut kinds) = (HashSet::new(), HashSet::new(), HashSet::new());
    let mut ev = Vec::new();
    for _ in 0..50_000 {
        ev.clear();
        book.execute(&gen.next_command(), &mut ev);
        for e in &ev {
            kinds.insert(std::mem::discriminant(e));
            match e {
                Event::Rejected(r) => {
                    rejects.insert(r.reason);
                }
                Event::Cancelled(c) => {
                    cancels.insert(c.reason);
                }
                _ => {}
            }
        }
    }
    assert_eq!(kinds.len(), 8, "every event kind");
    for r in RejectReason::ALL {
        if !matches!(
            r,
            RejectReason::UnknownInstrument | RejectReason::InsufficientBalance
        ) {
            assert!(rejects.contains(&r), "never rejected with {r:?}");
        }
    }
    for c in [
        CancelReason::UserRequested,
        CancelReason::MassCancel,
        CancelReason::Unfilled,
        CancelReason::FokUnfillable,
        CancelReason::SelfTrade,
        CancelReason::Expired,
    ] {
        assert!(cancels.contains(&c), "never cancelled with {c:?}");
    }
}
