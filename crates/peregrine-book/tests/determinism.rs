//! Determinism: the same command stream gives byte-identical events and the same state
//! hash, run after run and whichever level index the book uses.

mod common;

use common::Generator;
use peregrine_book::{BTreeLevels, Book, Ladder, LevelIndex, OrderBook, StateHash};

fn replay<L: LevelIndex>(seed: u64) -> (Vec<u8>, StateHash) {
    let mut g = Generator::new(seed);
    let mut book: OrderBook<L> = OrderBook::new(common::spec(), 256);
    let mut events = Vec::new();
    let mut bytes = Vec::new();
    for _ in 0..20_000 {
        events.clear();
        book.execute(&g.next_command(), &mut events);
        for e in &events {
            bytes.extend_from_slice(format!("{e:?}\n").as_bytes());
        }
    }
    (bytes, book.state_hash())
}

#[test]
fn same_stream_same_bytes_and_hash() {
    for seed in [1, 2, 3] {
        let a = replay::<Ladder>(seed);
        let b = replay::<Ladder>(seed);
        assert!(a.0 == b.0, "event bytes differ for seed {seed}");
        assert_eq!(a.1, b.1);
        let c = replay::<BTreeLevels>(seed);
        assert!(a.0 == c.0, "index layouts disagree for seed {seed}");
        assert_eq!(a.1, c.1);
    }
}

#[test]
fn different_streams_different_hashes() {
    assert_ne!(replay::<Ladder>(1).1, replay::<Ladder>(2).1);
}
