//! Snapshot restore: a book rebuilt from its clocks, status and resting orders in
//! priority order has the same state hash and produces the same events from then on.

mod common;

use common::Generator;
use peregrine_book::{Book, MatchingEngine, OrderBook, RestingOrder, RestoreError, StateHash};
use peregrine_types::{InstrumentId, OrderId, Timestamp};

fn snapshot(book: &OrderBook) -> Vec<RestingOrder> {
    let mut v = Vec::new();
    book.visit_orders(&mut |o| v.push(*o));
    v
}

fn restored(from: &OrderBook) -> OrderBook {
    let mut b: OrderBook = OrderBook::new(common::spec(), 256);
    b.restore(
        from.now(),
        from.trade_seq(),
        from.spec().status,
        &snapshot(from),
    )
    .unwrap();
    b.restore_venue(&from.venue_state()).unwrap();
    b.check_invariants().unwrap();
    b
}

#[test]
fn a_restored_book_has_the_same_hash_and_future() {
    for seed in [1, 2, 3, 4] {
        let mut g = Generator::new(seed);
        let mut live: OrderBook = OrderBook::new(common::spec(), 256);
        let mut events = Vec::new();
        for _ in 0..5_000 {
            live.execute(&g.next_command(), &mut events);
        }
        assert!(!live.is_empty(), "seed {seed}: snapshot something");
        let mut copy = restored(&live);
        assert_eq!(copy.state_hash(), live.state_hash(), "seed {seed}");
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for _ in 0..5_000 {
            let cmd = g.next_command();
            live.execute(&cmd, &mut a);
            copy.execute(&cmd, &mut b);
        }
        assert_eq!(a, b, "seed {seed}: events diverge after restore");
        assert_eq!(copy.state_hash(), live.state_hash());
        copy.check_invariants().unwrap();
    }
}

#[test]
fn restore_refuses_a_non_empty_book_duplicates_and_overflow() {
    let mut g = Generator::new(9);
    let mut live: OrderBook = OrderBook::new(common::spec(), 256);
    let mut events = Vec::new();
    for _ in 0..2_000 {
        live.execute(&g.next_command(), &mut events);
    }
    let orders = snapshot(&live);
    assert!(orders.len() >= 2);
    let (now, seq, status) = (Timestamp(1), 0, live.spec().status);
    assert_eq!(
        live.restore(now, seq, status, &orders),
        Err(RestoreError::NotEmpty)
    );
    let mut twice = orders.clone();
    twice.push(orders[0]);
    let mut b: OrderBook = OrderBook::new(common::spec(), 256);
    assert_eq!(
        b.restore(now, seq, status, &twice),
        Err(RestoreError::DuplicateId(orders[0].id.0))
    );
    let mut small: OrderBook = OrderBook::new(common::spec(), 1);
    assert_eq!(
        small.restore(now, seq, status, &orders),
        Err(RestoreError::Full(1))
    );
}

#[test]
fn an_engine_restored_book_by_book_has_the_same_hash() {
    let spec = common::spec();
    let mut g = Generator::new(5);
    let mut live: MatchingEngine = MatchingEngine::new(std::slice::from_ref(&spec), 256).unwrap();
    let mut events = Vec::new();
    for _ in 0..3_000 {
        live.execute(&g.next_command(), &mut events);
    }
    let mut copy: MatchingEngine = MatchingEngine::new(std::slice::from_ref(&spec), 256).unwrap();
    let book = live.book(spec.id).unwrap();
    assert!(!book.is_empty());
    copy.book_mut(spec.id)
        .unwrap()
        .restore(
            book.now(),
            book.trade_seq(),
            book.spec().status,
            &snapshot(book),
        )
        .unwrap();
    copy.book_mut(spec.id)
        .unwrap()
        .restore_venue(&book.venue_state())
        .unwrap();
    copy.set_next_order_id(live.next_order_id());
    let h: StateHash = copy.state_hash();
    assert_eq!(h, live.state_hash());
    assert!(copy.book_mut(InstrumentId(999)).is_none());
    assert_ne!(live.next_order_id(), OrderId(1));
}

/// A book in the middle of a venue stream (stops, trailing stops, icebergs, lists,
/// protections, auctions) rebuilt from its resting orders and venue state: the same
/// hash, and the same events from then on, against the reference too.
#[test]
fn a_restored_venue_book_has_the_same_hash_and_future() {
    use common::venue::{scheduled_spec, venue_spec, VenueGenerator};
    for seed in 0..8u64 {
        let (spec, mut g) = if seed % 2 == 0 {
            (venue_spec(), VenueGenerator::new(seed))
        } else {
            (scheduled_spec(), VenueGenerator::with_hours(seed))
        };
        let mut live: OrderBook = OrderBook::with_capacities(spec.clone(), 64, 32);
        let mut events = Vec::new();
        for _ in 0..(1_000 + 300 * seed) {
            g.next_op().apply(&mut live, &mut events);
        }
        let mut copy: OrderBook = OrderBook::with_capacities(spec, 64, 32);
        copy.restore(
            live.now(),
            live.trade_seq(),
            live.spec().status,
            &snapshot(&live),
        )
        .unwrap();
        copy.restore_venue(&live.venue_state()).unwrap();
        copy.check_invariants().unwrap();
        assert_eq!(copy.state_hash(), live.state_hash(), "seed {seed}");
        assert_eq!(copy.venue_state(), live.venue_state());
        for step in 0..2_000 {
            let op = g.next_op();
            let (mut a, mut b) = (Vec::new(), Vec::new());
            op.apply(&mut live, &mut a);
            op.apply(&mut copy, &mut b);
            assert_eq!(
                a, b,
                "seed {seed} step {step}: events diverge after restore"
            );
        }
        assert_eq!(copy.state_hash(), live.state_hash());
    }
}
