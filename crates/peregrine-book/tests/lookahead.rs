//! The prefetch pipeline is only a hint: `execute_batch` produces exactly the events
//! and state of executing one command at a time, and `prefetch` at any stage changes
//! nothing, whatever the command (unknown ids, bad prices, other instruments).

mod common;

use common::Generator;
use peregrine_book::{
    BTreeLevels, Book, Command, Event, HashIds, IdWindow, Ladder, LevelIndex, MatchingEngine,
    OrderBook, OrderIds, Stage,
};
use proptest::prelude::*;

fn stream(gen: &mut Generator, n: usize) -> Vec<Command> {
    (0..n).map(|_| gen.next_command()).collect()
}

fn batch_equals_one_by_one<L: LevelIndex, I: OrderIds>(cmds: &[Command], capacity: usize) {
    let mut a: OrderBook<L, I> = OrderBook::new(common::spec(), capacity);
    let mut b: OrderBook<L, I> = OrderBook::new(common::spec(), capacity);
    let (mut ea, mut eb): (Vec<Event>, Vec<Event>) = (Vec::new(), Vec::new());
    for c in cmds {
        a.execute(c, &mut ea);
    }
    for chunk in cmds.chunks(37) {
        b.execute_batch(chunk, &mut eb);
    }
    assert_eq!(ea, eb);
    assert_eq!(a.state_hash(), b.state_hash());
    b.check_invariants().unwrap();
}

#[test]
fn execute_batch_is_execute_in_order() {
    for seed in 0..6 {
        let cmds = stream(&mut Generator::new(seed), 4_000);
        batch_equals_one_by_one::<Ladder, IdWindow>(&cmds, 64);
        batch_equals_one_by_one::<BTreeLevels, IdWindow>(&cmds, 64);
        batch_equals_one_by_one::<Ladder, HashIds>(&cmds, 64);
        let spread = stream(&mut Generator::spread(seed), 4_000);
        batch_equals_one_by_one::<Ladder, IdWindow>(&spread, 64);
    }
}

#[test]
fn engine_execute_batch_is_execute_in_order() {
    let specs = [
        common::spec(),
        peregrine_types::InstrumentSpec {
            id: peregrine_types::InstrumentId(2),
            ..common::spec()
        },
    ];
    let mut cmds = stream(&mut Generator::new(9), 6_000);
    for (i, c) in cmds.iter_mut().enumerate() {
        if i % 3 == 0 {
            if let peregrine_book::Action::New(o) = &mut c.action {
                o.instrument = peregrine_types::InstrumentId(2);
            }
        }
    }
    let mut a: MatchingEngine = MatchingEngine::new(&specs, 128).unwrap();
    let mut b: MatchingEngine = MatchingEngine::new(&specs, 128).unwrap();
    let (mut ea, mut eb): (Vec<Event>, Vec<Event>) = (Vec::new(), Vec::new());
    for c in &cmds {
        a.execute(c, &mut ea);
    }
    for chunk in cmds.chunks(50) {
        b.execute_batch(chunk, &mut eb);
    }
    assert_eq!(ea, eb);
    assert_eq!(a.state_hash(), b.state_hash());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Prefetching any command at any stage, in any state, changes nothing.
    #[test]
    fn prop_prefetch_changes_nothing(seed in any::<u64>(), warm in 0usize..600, probes in 1usize..64) {
        let mut gen = Generator::spread(seed);
        let mut book: OrderBook = OrderBook::new(common::spec(), 32);
        let mut engine: MatchingEngine = MatchingEngine::new(&[common::spec()], 32).unwrap();
        let mut ev = Vec::new();
        for _ in 0..warm {
            let c = gen.next_command();
            book.execute(&c, &mut ev);
            engine.execute(&c, &mut ev);
        }
        let (hb, he) = (book.state_hash(), engine.state_hash());
        for _ in 0..probes {
            let c = gen.next_command();
            for stage in [Stage::Ids, Stage::Nodes, Stage::Neighbours] {
                book.prefetch(&c, stage);
                engine.prefetch(&c, stage);
            }
        }
        prop_assert_eq!(book.state_hash(), hb);
        prop_assert_eq!(engine.state_hash(), he);
        prop_assert!(book.check_invariants().is_ok());
    }
}
