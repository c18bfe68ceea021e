//! One test per rule of the challenge, reports written out by hand.

use peregrine_capi::{challenge_spec, Adapter, CapiBook, Report, MAX_PRICE_TICKS};

use super::util::*;

/// A small fast book (the shipped one holds 2^18 orders; the rules do not depend on it).
fn adapter() -> Adapter {
    Adapter::with_book(CapiBook::new(challenge_spec(), 1024))
}

#[test]
fn a_resting_order_is_acked_and_queryable() {
    let mut a = adapter();
    let mut out = Vec::new();
    assert_eq!((a.best_bid(), a.best_ask()), (i64::MIN, i64::MAX));
    a.on_new(&new(7, 1, BUY, 100, 5), &mut out);
    a.on_new(&new(8, 2, SELL, 105, 3), &mut out);
    a.on_new(&new(9, 3, SELL, 105, 4), &mut out);
    assert_eq!(
        out,
        vec![
            order_ack(1, BUY, 7, 100, 5),
            order_ack(2, SELL, 8, 105, 3),
            order_ack(3, SELL, 9, 105, 4)
        ]
    );
    assert_eq!((a.best_bid(), a.best_ask()), (100, 105));
    assert_eq!(a.depth_at(105, SELL), 7);
    assert_eq!(a.depth_at(105, BUY), 0);
    assert_eq!(a.depth_at(100, BUY), 5);
    // Outside the domain or a bad side byte: empty, not a panic.
    for p in [i64::MIN, -1, 0, MAX_PRICE_TICKS + 1, i64::MAX] {
        assert_eq!(a.depth_at(p, BUY), 0);
    }
    assert_eq!(a.depth_at(100, 2), 0);
}

#[test]
fn trades_print_at_the_makers_price_with_the_aggressors_sequence_both_ways() {
    let mut a = adapter();
    let mut out = Vec::new();
    a.on_new(&new(1, 10, SELL, 100, 5), &mut out);
    a.on_new(&new(2, 11, BUY, 90, 5), &mut out);
    out.clear();
    // A buy lifting a cheaper ask prints at the ask.
    a.on_new(&new(3, 12, BUY, 104, 2), &mut out);
    // A sell hitting a higher bid prints at the bid.
    a.on_new(&new(4, 13, SELL, 80, 1), &mut out);
    assert_eq!(
        out,
        vec![
            order_ack(12, BUY, 3, 104, 2),
            trade(12, BUY, 100, 2, 1, 3),
            order_ack(13, SELL, 4, 80, 1),
            trade(13, SELL, 90, 1, 2, 4),
        ]
    );
    assert_eq!(a.depth_at(100, SELL), 3);
    assert_eq!(a.depth_at(90, BUY), 4);
}

#[test]
fn a_sweep_fills_best_price_first_fifo_within_a_price_and_rests_at_its_limit() {
    let mut a = adapter();
    let mut out = Vec::new();
    a.on_new(&new(1, 1, SELL, 101, 2), &mut out);
    a.on_new(&new(2, 2, SELL, 100, 2), &mut out);
    a.on_new(&new(3, 3, SELL, 100, 2), &mut out);
    a.on_new(&new(4, 4, SELL, 103, 9), &mut out);
    out.clear();
    a.on_new(&new(5, 5, BUY, 102, 10), &mut out);
    assert_eq!(
        out,
        vec![
            order_ack(5, BUY, 5, 102, 10),
            trade(5, BUY, 100, 2, 2, 5),
            trade(5, BUY, 100, 2, 3, 5),
            trade(5, BUY, 101, 2, 1, 5),
        ]
    );
    // The residual rests at its own limit as the new best bid, not through 103.
    assert_eq!((a.best_bid(), a.best_ask()), (102, 103));
    assert_eq!(a.depth_at(102, BUY), 4);
}

#[test]
fn an_ioc_residual_is_a_cancel_ack_and_never_rests() {
    let mut a = adapter();
    let mut out = Vec::new();
    a.on_new(&new(1, 1, SELL, 100, 3), &mut out);
    out.clear();
    a.on_new(&ioc(2, 2, BUY, 100, 5), &mut out);
    // No liquidity at all: ack, then the whole quantity cancelled.
    a.on_new(&ioc(3, 3, BUY, 100, 4), &mut out);
    a.on_new(&new(4, 4, SELL, 100, 3), &mut out);
    // Filled exactly: no CancelAck.
    a.on_new(&ioc(5, 5, BUY, 100, 3), &mut out);
    assert_eq!(
        out,
        vec![
            order_ack(2, BUY, 2, 100, 5),
            trade(2, BUY, 100, 3, 1, 2),
            cancel_ack(2, BUY, 2, 100, 2),
            order_ack(3, BUY, 3, 100, 4),
            cancel_ack(3, BUY, 3, 100, 4),
            order_ack(4, SELL, 4, 100, 3),
            order_ack(5, BUY, 5, 100, 3),
            trade(5, BUY, 100, 3, 4, 5),
        ]
    );
    assert_eq!((a.best_bid(), a.best_ask()), (i64::MIN, i64::MAX));
    // The IOC orders never rested: cancelling them is rejected.
    out.clear();
    a.on_cancel(&cancel(2, 6), &mut out);
    assert_eq!(out, vec![cancel_reject(6, 2)]);
}

#[test]
fn cancels_of_orders_that_do_not_rest_are_rejected() {
    let mut a = adapter();
    let mut out = Vec::new();
    // Never seen, on a virgin book.
    a.on_cancel(&cancel(42, 1), &mut out);
    a.on_new(&new(1, 2, BUY, 100, 5), &mut out);
    a.on_cancel(&cancel(1, 3), &mut out);
    // Already cancelled.
    a.on_cancel(&cancel(1, 4), &mut out);
    a.on_new(&new(2, 5, BUY, 100, 5), &mut out);
    a.on_new(&new(3, 6, SELL, 100, 5), &mut out);
    // Already filled.
    a.on_cancel(&cancel(2, 7), &mut out);
    assert_eq!(
        out,
        vec![
            cancel_reject(1, 42),
            order_ack(2, BUY, 1, 100, 5),
            cancel_ack(3, BUY, 1, 100, 5),
            cancel_reject(4, 1),
            order_ack(5, BUY, 2, 100, 5),
            order_ack(6, SELL, 3, 100, 5),
            trade(6, SELL, 100, 5, 2, 3),
            cancel_reject(7, 2),
        ]
    );
}

#[test]
fn a_partial_fill_residual_stays_cancellable_and_modifiable() {
    let mut a = adapter();
    let mut out = Vec::new();
    a.on_new(&new(1, 1, SELL, 100, 10), &mut out);
    a.on_new(&new(2, 2, BUY, 100, 4), &mut out);
    out.clear();
    a.on_modify(&modify(1, 3, SELL, 101, 7), &mut out);
    assert_eq!(a.depth_at(101, SELL), 7);
    a.on_cancel(&cancel(1, 4), &mut out);
    assert_eq!(
        out,
        vec![
            modify_ack(3, SELL, 1, 101, 7),
            cancel_ack(4, SELL, 1, 101, 7)
        ]
    );
    assert_eq!(a.best_ask(), i64::MAX);
}

#[test]
fn modifies_of_orders_that_do_not_rest_are_rejected() {
    let mut a = adapter();
    let mut out = Vec::new();
    a.on_modify(&modify(9, 1, BUY, 100, 1), &mut out);
    a.on_new(&new(1, 2, BUY, 100, 5), &mut out);
    a.on_new(&new(2, 3, SELL, 100, 5), &mut out);
    a.on_modify(&modify(1, 4, BUY, 100, 6), &mut out);
    a.on_new(&new(3, 5, BUY, 99, 5), &mut out);
    a.on_cancel(&cancel(3, 6), &mut out);
    a.on_modify(&modify(3, 7, BUY, 99, 6), &mut out);
    assert_eq!(
        out,
        vec![
            modify_reject(1, 9),
            order_ack(2, BUY, 1, 100, 5),
            order_ack(3, SELL, 2, 100, 5),
            trade(3, SELL, 100, 5, 1, 2),
            modify_reject(4, 1),
            order_ack(5, BUY, 3, 99, 5),
            cancel_ack(6, BUY, 3, 99, 5),
            modify_reject(7, 3),
        ]
    );
}

/// Peregrine's own `Replace` keeps priority on a same-price, no-larger modify; the
/// challenge's modify is cancel + reinsert, so the order goes behind its sibling.
#[test]
fn a_modify_always_loses_priority_even_where_peregrine_would_keep_it() {
    let mut a = adapter();
    let mut out = Vec::new();
    a.on_new(&new(1, 1, BUY, 100, 5), &mut out);
    a.on_new(&new(2, 2, BUY, 100, 5), &mut out);
    a.on_modify(&modify(1, 3, BUY, 100, 4), &mut out);
    out.clear();
    a.on_new(&new(3, 4, SELL, 100, 6), &mut out);
    assert_eq!(
        out,
        vec![
            order_ack(4, SELL, 3, 100, 6),
            trade(4, SELL, 100, 5, 2, 3),
            trade(4, SELL, 100, 1, 1, 3),
        ]
    );
    assert_eq!(a.depth_at(100, BUY), 3);
}

#[test]
fn a_modify_into_the_cross_trades_at_the_makers_price_with_the_modifys_sequence() {
    let mut a = adapter();
    let mut out = Vec::new();
    a.on_new(&new(1, 1, SELL, 100, 3), &mut out);
    a.on_new(&new(2, 2, SELL, 100, 3), &mut out);
    a.on_new(&new(3, 3, BUY, 95, 4), &mut out);
    a.on_new(&new(4, 4, BUY, 95, 1), &mut out);
    out.clear();
    // Reprices past the maker: fills at 100, the rest rests at 102.
    a.on_modify(&modify(3, 5, BUY, 102, 8), &mut out);
    assert_eq!(
        out,
        vec![
            trade(5, BUY, 100, 3, 1, 3),
            trade(5, BUY, 100, 3, 2, 3),
            modify_ack(5, BUY, 3, 102, 8),
        ]
    );
    assert_eq!((a.best_bid(), a.best_ask()), (102, i64::MAX));
    assert_eq!(a.depth_at(102, BUY), 2);
    // The untouched sibling at 95 survived.
    assert_eq!(a.depth_at(95, BUY), 1);
}

#[test]
fn ids_are_reusable_after_a_cancel_and_after_a_full_fill() {
    let mut a = adapter();
    let mut out = Vec::new();
    a.on_new(&new(1, 1, BUY, 100, 5), &mut out);
    a.on_cancel(&cancel(1, 2), &mut out);
    a.on_new(&new(1, 3, SELL, 110, 2), &mut out);
    a.on_new(&new(2, 4, BUY, 110, 2), &mut out);
    a.on_new(&new(1, 5, BUY, 90, 1), &mut out);
    assert_eq!(
        out,
        vec![
            order_ack(1, BUY, 1, 100, 5),
            cancel_ack(2, BUY, 1, 100, 5),
            order_ack(3, SELL, 1, 110, 2),
            order_ack(4, BUY, 2, 110, 2),
            trade(4, BUY, 110, 2, 1, 2),
            order_ack(5, BUY, 1, 90, 1),
        ]
    );
    assert_eq!(a.stats().refused_new, 0);
}

#[test]
fn a_wide_in_domain_price_and_a_deep_single_price_sweep() {
    let mut a = adapter();
    let mut out = Vec::new();
    a.on_new(&new(1, 1, SELL, 200_000, 10), &mut out);
    a.on_new(&ioc(2, 2, BUY, 200_000, 10), &mut out);
    assert_eq!(out[2], trade(2, BUY, 200_000, 10, 1, 2));
    assert_eq!(out.len(), 3);
    out.clear();
    for i in 0..1000u64 {
        a.on_new(&new(10 + i, 10 + i, SELL, MAX_PRICE_TICKS, 1), &mut out);
    }
    out.clear();
    a.on_new(&new(5000, 5000, BUY, MAX_PRICE_TICKS, 1000), &mut out);
    assert_eq!(out.len(), 1001);
    assert!(out[1..]
        .iter()
        .enumerate()
        .all(|(i, r)| *r == trade(5000, BUY, MAX_PRICE_TICKS, 1, 10 + i as u64, 5000)));
    assert_eq!(a.best_ask(), i64::MAX);
}

/// Inputs the ABI has no report for are refused and counted; a modify outside the
/// domain is rejected and leaves the order where it was.
#[test]
fn input_outside_the_domain_is_refused_without_touching_the_book() {
    let mut a = adapter();
    let mut out: Vec<Report> = Vec::new();
    a.on_new(&new(1, 1, BUY, 0, 5), &mut out);
    a.on_new(&new(2, 2, BUY, -3, 5), &mut out);
    a.on_new(&new(3, 3, SELL, MAX_PRICE_TICKS + 1, 5), &mut out);
    a.on_new(&new(4, 4, BUY, 100, 0), &mut out);
    a.on_new(&new(5, 5, 2, 100, 1), &mut out);
    assert!(out.is_empty());
    assert_eq!(a.stats().refused_new, 5);
    a.on_new(&new(6, 6, BUY, 100, 5), &mut out);
    // A duplicate of a live id.
    a.on_new(&new(6, 7, BUY, 101, 5), &mut out);
    assert_eq!(out, vec![order_ack(6, BUY, 6, 100, 5)]);
    assert_eq!(a.stats().refused_new, 6);
    out.clear();
    a.on_modify(&modify(6, 8, BUY, 0, 5), &mut out);
    a.on_modify(&modify(6, 9, BUY, 100, 0), &mut out);
    a.on_modify(&modify(6, 10, 7, 100, 1), &mut out);
    assert_eq!(
        out,
        vec![
            modify_reject(8, 6),
            modify_reject(9, 6),
            modify_reject(10, 6)
        ]
    );
    assert_eq!(a.stats().refused_modify, 3);
    assert_eq!(a.depth_at(100, BUY), 5);
}
