//! Order ids the id window does not expect: far apart, out of order, behind the
//! window, reused after a cancel. Every one behaves exactly as a dense id does, a full
//! book rejects with `BookFull`, and nothing panics.

mod common;

use common::{cancel, limit, new, orders, replace, run};
use peregrine_book::{Book, Event, IdWindow, OrderBook, OrderIds, RejectReason};
use peregrine_types::Side::{Buy, Sell};

/// Ids chosen so that almost every one lands in a different window generation.
const FAR: [u64; 8] = [
    1 << 40,
    3,
    u64::MAX - 1,
    (1 << 40) + 1,
    17,
    1 << 62,
    (1 << 62) - 64,
    u64::MAX,
];

#[test]
fn far_apart_ids_rest_trade_cancel_and_replace() {
    let mut b: OrderBook = OrderBook::new(common::spec(), 8);
    for (i, &id) in FAR.iter().enumerate() {
        let ev = run(&mut b, new(1, limit(id, 1, Buy, 9_900 + 5 * i as i64, 20)));
        assert!(matches!(ev[0], Event::Accepted(_)), "{id}: {ev:?}");
    }
    b.check_invariants().unwrap();
    // The book is full: a resting order is refused with a reason, not a panic.
    let ev = run(&mut b, new(1, limit(99, 2, Buy, 9_600, 20)));
    assert!(
        matches!(ev[0], Event::Rejected(r) if r.reason == RejectReason::BookFull),
        "{ev:?}"
    );
    // Duplicates are still found, whichever part of the map holds them.
    for &id in &FAR {
        let ev = run(&mut b, new(1, limit(id, 1, Buy, 9_500, 20)));
        assert!(
            matches!(ev[0], Event::Rejected(r) if r.reason == RejectReason::DuplicateOrderId),
            "{id}: {ev:?}"
        );
    }
    // Replace and cancel reach every one.
    for &id in &FAR[..4] {
        let ev = run(&mut b, replace(2, id, 1, 9_850, 20));
        assert!(matches!(ev[0], Event::Replaced(_)), "{id}: {ev:?}");
    }
    for &id in &FAR[4..] {
        let ev = run(&mut b, cancel(2, id, 1));
        assert!(matches!(ev[0], Event::Cancelled(_)), "{id}: {ev:?}");
    }
    // A freed slot is reused under a new id; a cancelled id is unknown now.
    let ev = run(&mut b, new(3, limit(5, 1, Buy, 9_600, 20)));
    assert!(matches!(ev[0], Event::Accepted(_)), "{ev:?}");
    let ev = run(&mut b, cancel(3, FAR[4], 1));
    assert!(
        matches!(ev[0], Event::Rejected(r) if r.reason == RejectReason::UnknownOrder),
        "{ev:?}"
    );
    // A seller takes the oldest and highest bids first, ids far apart or not.
    let ev = run(&mut b, new(4, limit(6, 2, Sell, 9_500, 100)));
    let makers: Vec<u64> = ev
        .iter()
        .filter_map(|e| match e {
            Event::Fill(f) => Some(f.maker_id.0),
            _ => None,
        })
        .collect();
    assert_eq!(makers, vec![FAR[0], FAR[1], FAR[2], FAR[3], 5]);
    b.check_invariants().unwrap();
    assert!(b.is_empty());
}

#[test]
fn an_order_far_behind_the_window_still_trades() {
    let mut b: OrderBook = OrderBook::new(common::spec(), 64);
    run(&mut b, new(1, limit(1, 1, Buy, 9_900, 20)));
    // Many newer orders come and go: the window slides far past id 1.
    let window = IdWindow::with_capacity(64).window() as u64;
    let mut id = 2;
    while id < 20 * window {
        run(&mut b, new(1, limit(id, 2, Buy, 9_800, 20)));
        run(&mut b, cancel(1, id, 2));
        id += 7;
    }
    let ev = run(&mut b, replace(2, 1, 1, 9_905, 30));
    assert!(matches!(ev[0], Event::Replaced(_)), "{ev:?}");
    let ev = run(&mut b, new(3, limit(id, 3, Sell, 9_905, 30)));
    assert!(
        ev.iter()
            .any(|e| matches!(e, Event::Fill(f) if f.maker_id.0 == 1 && f.maker_leaves.is_zero())),
        "{ev:?}"
    );
    assert!(b.is_empty());
    b.check_invariants().unwrap();
}

#[test]
fn restore_takes_ids_far_apart() {
    let mut live: OrderBook = OrderBook::new(common::spec(), 16);
    for (i, &id) in FAR.iter().enumerate() {
        run(
            &mut live,
            new(1, limit(id, 1, Buy, 9_900 + 5 * i as i64, 20)),
        );
    }
    let snapshot = orders(&live);
    let mut copy: OrderBook = OrderBook::new(common::spec(), 16);
    copy.restore(live.now(), live.trade_seq(), live.spec().status, &snapshot)
        .unwrap();
    copy.check_invariants().unwrap();
    assert_eq!(copy.state_hash(), live.state_hash());
    for &id in &FAR {
        assert_eq!(
            copy.order_qty(peregrine_types::OrderId(id)),
            Some(peregrine_types::Qty::from_raw(20))
        );
    }
}
