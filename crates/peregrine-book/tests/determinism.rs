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

/// The state hashes of seeds 1-3, pinned: a change of matching semantics (or of the
/// generator, or of what the hash covers) fails here even though two runs in one
/// process still agree. If the change is intended, say so in its commit and put the
/// new hashes here (the failure prints them).
const GOLDEN: [(u64, &str); 3] = [
    (
        1,
        "cb6b276aac7ad7b2a0ffff1eab78108d8f6795acc5ff62bda238aee7b858166a",
    ),
    (
        2,
        "2354d81915798d39c7e116e5171ad151fe8c6767c43fdf6e34344beada63e5f7",
    ),
    (
        3,
        "f3b285d29426cd570206d546d75bc4db4cfb8df1e6abcc20c86d40af209a544b",
    ),
];

#[test]
fn state_hashes_are_pinned() {
    let got: Vec<(u64, String)> = GOLDEN
        .iter()
        .map(|&(seed, _)| (seed, replay::<Ladder>(seed).1.to_string()))
        .collect();
    let want: Vec<(u64, String)> = GOLDEN.iter().map(|&(s, h)| (s, h.to_owned())).collect();
    assert_eq!(got, want, "the pinned state hashes changed: {got:?}");
}
