//! One test per matching rule, run against every book implementation (the fast book
//! with each level index, and the reference book).

mod common;

use common::*;
use peregrine_book::{
    BTreeLevels, Book, CancelReason, Event, HashIds, Ladder, OrderBook, ReferenceBook, RejectReason,
};
use peregrine_types::{
    InstrumentId, InstrumentStatus, OrderType, Side, StpMode, TimeInForce, Timestamp,
};

use Side::{Buy, Sell};

fn fills(ev: &[Event]) -> Vec<(u64, u64, i64, i64)> {
    ev.iter()
        .filter_map(|e| match e {
            Event::Fill(f) => Some((f.maker_id.0, f.taker_id.0, f.price.units(), f.qty.lots())),
            _ => None,
        })
        .collect()
}

fn cancels(ev: &[Event]) -> Vec<(u64, i64, i64, CancelReason)> {
    ev.iter()
        .filter_map(|e| match e {
            Event::Cancelled(c) => Some((c.id.0, c.qty.lots(), c.leaves.lots(), c.reason)),
            _ => None,
        })
        .collect()
}

fn reject_reason(ev: &[Event]) -> Option<RejectReason> {
    ev.iter().find_map(|e| match e {
        Event::Rejected(r) => Some(r.reason),
        _ => None,
    })
}

fn resting(book: &impl Book) -> Vec<(u64, i64, i64)> {
    orders(book)
        .iter()
        .map(|o| (o.id.0, o.price.units(), o.qty.lots()))
        .collect()
}

/// Runs `cmd`, expects exactly one `Rejected` with `reason` and an unchanged book.
fn expect_reject<B: Book>(book: &mut B, cmd: common_cmd::C, reason: RejectReason) {
    run(book, tick(cmd.ts.0)); // the clock may move; only the command must change nothing
    let before = (orders(book), book.state_hash());
    let ev = run(book, cmd);
    assert_eq!(ev.len(), 1, "{ev:?}");
    assert_eq!(reject_reason(&ev), Some(reason), "{ev:?}");
    assert_eq!(
        (orders(book), book.state_hash()),
        before,
        "book changed by a reject"
    );
}

mod common_cmd {
    pub(crate) type C = peregrine_book::Command;
}

fn seeded<B: Book>(book: &mut B) {
    // Asks 10010 x2 (ids 1, 2), 10020 (3); bids 9990 (4), 9980 (5).
    run(book, new(1, limit(1, 1, Sell, 10_010, 50)));
    run(book, new(1, limit(2, 2, Sell, 10_010, 30)));
    run(book, new(1, limit(3, 1, Sell, 10_020, 40)));
    run(book, new(1, limit(4, 2, Buy, 9_990, 50)));
    run(book, new(1, limit(5, 3, Buy, 9_980, 60)));
}

fn price_time_priority<B: Book>(mut b: B) {
    seeded(&mut b);
    let ev = run(&mut b, new(2, limit(10, 3, Buy, 10_020, 100)));
    // Best price first, oldest first within it, at the resting price.
    assert_eq!(
        fills(&ev),
        vec![
            (1, 10, 10_010, 50),
            (2, 10, 10_010, 30),
            (3, 10, 10_020, 20)
        ]
    );
    assert_eq!(
        resting(&b),
        vec![(4, 9_990, 50), (5, 9_980, 60), (3, 10_020, 20)]
    );
    assert!(matches!(ev[0], Event::Accepted(_)));
}

fn partial_fill_rests_remainder<B: Book>(mut b: B) {
    seeded(&mut b);
    let ev = run(&mut b, new(2, limit(10, 3, Buy, 10_010, 100)));
    assert_eq!(fills(&ev), vec![(1, 10, 10_010, 50), (2, 10, 10_010, 30)]);
    assert_eq!(resting(&b)[0], (10, 10_010, 20));
}

fn ioc_cancels_remainder<B: Book>(mut b: B) {
    seeded(&mut b);
    let ev = run(
        &mut b,
        new(2, limit(10, 3, Buy, 10_010, 100).with_tif(TimeInForce::Ioc)),
    );
    assert_eq!(fills(&ev).len(), 2);
    assert_eq!(cancels(&ev), vec![(10, 20, 0, CancelReason::Unfilled)]);
    assert!(resting(&b).iter().all(|o| o.0 != 10));
}

fn fok_all_or_nothing<B: Book>(mut b: B) {
    seeded(&mut b);
    let before = orders(&b);
    // 130 asked, 120 available up to 10020: nothing trades, the book is untouched.
    let ev = run(
        &mut b,
        new(2, limit(10, 3, Buy, 10_020, 130).with_tif(TimeInForce::Fok)),
    );
    assert_eq!(fills(&ev), vec![]);
    assert_eq!(
        cancels(&ev),
        vec![(10, 130, 0, CancelReason::FokUnfillable)]
    );
    assert_eq!(orders(&b), before);
    // Exactly what is there fills, across two levels.
    let ev = run(
        &mut b,
        new(3, limit(11, 3, Buy, 10_020, 120).with_tif(TimeInForce::Fok)),
    );
    assert_eq!(fills(&ev).len(), 3);
    assert!(cancels(&ev).is_empty());
}

fn market_respects_protection_price<B: Book>(mut b: B) {
    seeded(&mut b);
    let m = limit(10, 3, Buy, 10_010, 200)
        .with_type(OrderType::Market)
        .with_tif(TimeInForce::Ioc);
    let ev = run(&mut b, new(2, m));
    assert_eq!(fills(&ev), vec![(1, 10, 10_010, 50), (2, 10, 10_010, 30)]);
    assert_eq!(cancels(&ev), vec![(10, 120, 0, CancelReason::Unfilled)]);
    let gtc = limit(11, 3, Buy, 10_010, 20).with_type(OrderType::Market);
    expect_reject(&mut b, new(2, gtc), RejectReason::InvalidTif);
}

fn post_only_never_takes<B: Book>(mut b: B) {
    seeded(&mut b);
    let po = |id, price| limit(id, 3, Buy, price, 20).with_type(OrderType::PostOnly);
    expect_reject(
        &mut b,
        new(2, po(10, 10_010)),
        RejectReason::PostOnlyWouldTake,
    );
    let ev = run(&mut b, new(2, po(11, 10_005)));
    assert!(fills(&ev).is_empty());
    assert_eq!(resting(&b)[0], (11, 10_005, 20));
    expect_reject(
        &mut b,
        new(2, po(12, 9_900).with_tif(TimeInForce::Ioc)),
        RejectReason::InvalidTif,
    );
    // A replace that would take is refused too; the order keeps its place.
    expect_reject(
        &mut b,
        replace(2, 11, 3, 10_010, 20),
        RejectReason::PostOnlyWouldTake,
    );
}

fn gtd_expires_on_injected_clock<B: Book>(mut b: B) {
    let o = limit(1, 1, Buy, 9_990, 20)
        .with_tif(TimeInForce::Gtd)
        .with_expiry(100);
    run(&mut b, new(10, o));
    assert!(cancels(&run(&mut b, tick(99))).is_empty());
    let ev = run(&mut b, tick(100));
    assert_eq!(cancels(&ev), vec![(1, 20, 0, CancelReason::Expired)]);
    assert!(resting(&b).is_empty());
    let past = limit(2, 1, Buy, 9_990, 20)
        .with_tif(TimeInForce::Gtd)
        .with_expiry(100);
    expect_reject(&mut b, new(100, past), RejectReason::InvalidExpiry);
    expect_reject(
        &mut b,
        new(100, limit(3, 1, Buy, 9_990, 20).with_expiry(500)),
        RejectReason::InvalidExpiry,
    );
}

fn expiry_happens_before_the_command<B: Book>(mut b: B) {
    let o = limit(1, 1, Sell, 10_010, 20)
        .with_tif(TimeInForce::Gtd)
        .with_expiry(50);
    run(&mut b, new(10, o));
    let ev = run(&mut b, new(60, limit(2, 2, Buy, 10_010, 20)));
    assert_eq!(cancels(&ev), vec![(1, 20, 0, CancelReason::Expired)]);
    assert!(fills(&ev).is_empty());
}

fn stp_none_allows_self_trade<B: Book>(mut b: B) {
    seeded(&mut b);
    let ev = run(&mut b, new(2, limit(10, 1, Buy, 10_010, 20)));
    assert_eq!(fills(&ev), vec![(1, 10, 10_010, 20)]);
}

fn stp_cancel_newest<B: Book>(mut b: B) {
    seeded(&mut b);
    let ev = run(
        &mut b,
        new(
            2,
            limit(10, 1, Buy, 10_010, 20).with_stp(StpMode::CancelNewest),
        ),
    );
    assert!(fills(&ev).is_empty());
    assert_eq!(cancels(&ev), vec![(10, 20, 0, CancelReason::SelfTrade)]);
    assert_eq!(
        resting(&b).iter().find(|o| o.0 == 1),
        Some(&(1, 10_010, 50))
    );
}

fn stp_cancel_oldest<B: Book>(mut b: B) {
    seeded(&mut b);
    let ev = run(
        &mut b,
        new(
            2,
            limit(10, 1, Buy, 10_010, 20).with_stp(StpMode::CancelOldest),
        ),
    );
    assert_eq!(cancels(&ev), vec![(1, 50, 0, CancelReason::SelfTrade)]);
    assert_eq!(fills(&ev), vec![(2, 10, 10_010, 20)]);
}

fn stp_cancel_both<B: Book>(mut b: B) {
    seeded(&mut b);
    let ev = run(
        &mut b,
        new(
            2,
            limit(10, 1, Buy, 10_010, 20).with_stp(StpMode::CancelBoth),
        ),
    );
    assert!(fills(&ev).is_empty());
    assert_eq!(
        cancels(&ev),
        vec![
            (1, 50, 0, CancelReason::SelfTrade),
            (10, 20, 0, CancelReason::SelfTrade)
        ]
    );
}

fn stp_decrement_and_cancel<B: Book>(mut b: B) {
    seeded(&mut b);
    // Taker larger: resting 50 cancelled, taker 70 → 20, then trades with order 2.
    let ev = run(
        &mut b,
        new(
            2,
            limit(10, 1, Buy, 10_010, 70).with_stp(StpMode::DecrementAndCancel),
        ),
    );
    assert_eq!(
        cancels(&ev),
        vec![
            (1, 50, 0, CancelReason::SelfTrade),
            (10, 50, 20, CancelReason::SelfTrade)
        ]
    );
    assert_eq!(fills(&ev), vec![(2, 10, 10_010, 20)]);
    // Order 11 first trades 10 with what is left of order 2, then meets its own order 3:
    // the smaller (10 left of the taker) is cancelled and order 3 decremented 40 → 30.
    let ev = run(
        &mut b,
        new(
            3,
            limit(11, 1, Buy, 10_020, 20).with_stp(StpMode::DecrementAndCancel),
        ),
    );
    assert_eq!(
        cancels(&ev),
        vec![
            (3, 10, 30, CancelReason::SelfTrade),
            (11, 10, 0, CancelReason::SelfTrade)
        ]
    );
    assert_eq!(fills(&ev), vec![(2, 11, 10_010, 10)]);
    assert_eq!(
        resting(&b).iter().find(|o| o.0 == 3),
        Some(&(3, 10_020, 30))
    );
}

fn replace_size_down_keeps_priority<B: Book>(mut b: B) {
    seeded(&mut b);
    let ev = run(&mut b, replace(2, 1, 1, 10_010, 20));
    assert!(matches!(ev[0], Event::Replaced(r) if r.priority_kept));
    let ev = run(&mut b, new(3, limit(10, 3, Buy, 10_010, 20)));
    assert_eq!(fills(&ev), vec![(1, 10, 10_010, 20)]);
}

fn replace_size_up_or_price_loses_priority<B: Book>(mut b: B) {
    seeded(&mut b);
    let ev = run(&mut b, replace(2, 1, 1, 10_010, 60));
    assert!(matches!(ev[0], Event::Replaced(r) if !r.priority_kept));
    let ev = run(&mut b, new(3, limit(10, 3, Buy, 10_010, 20)));
    assert_eq!(fills(&ev), vec![(2, 10, 10_010, 20)]);
    // Moving order 4 (bid 9990) up to 10010 crosses: it trades as a taker.
    let ev = run(&mut b, replace(4, 4, 2, 10_010, 50));
    assert_eq!(fills(&ev), vec![(2, 4, 10_010, 10), (1, 4, 10_010, 40)]);
}

fn cancel_rules<B: Book>(mut b: B) {
    seeded(&mut b);
    expect_reject(&mut b, cancel(2, 1, 2), RejectReason::NotOwner);
    expect_reject(&mut b, cancel(2, 77, 1), RejectReason::UnknownOrder);
    let ev = run(&mut b, cancel(2, 1, 1));
    assert_eq!(cancels(&ev), vec![(1, 50, 0, CancelReason::UserRequested)]);
    expect_reject(&mut b, cancel(2, 1, 1), RejectReason::UnknownOrder);
    expect_reject(&mut b, replace(2, 2, 1, 10_010, 20), RejectReason::NotOwner);
    expect_reject(
        &mut b,
        replace(2, 1, 1, 10_010, 20),
        RejectReason::UnknownOrder,
    );
}

fn mass_cancel_by_account_and_side<B: Book>(mut b: B) {
    seeded(&mut b);
    let ev = run(&mut b, mass_cancel(2, 2, Some(Buy)));
    assert_eq!(cancels(&ev), vec![(4, 50, 0, CancelReason::MassCancel)]);
    let ev = run(&mut b, mass_cancel(2, 1, None));
    assert_eq!(
        cancels(&ev),
        vec![
            (1, 50, 0, CancelReason::MassCancel),
            (3, 40, 0, CancelReason::MassCancel)
        ]
    );
    assert!(matches!(ev.last(), Some(Event::MassCancelled(m)) if m.count == 2));
    assert_eq!(resting(&b), vec![(5, 9_980, 60), (2, 10_010, 30)]);
}

fn bad_input_rejects_and_changes_nothing<B: Book>(mut b: B) {
    seeded(&mut b);
    let cases = [
        (limit(10, 1, Buy, 9_990, 0), RejectReason::InvalidQty),
        (limit(10, 1, Buy, 9_990, -10), RejectReason::InvalidQty),
        (limit(10, 1, Buy, 0, 10), RejectReason::InvalidPrice),
        (limit(10, 1, Buy, -9_990, 10), RejectReason::InvalidPrice),
        (limit(10, 1, Buy, 9_991, 20), RejectReason::PriceOffTick),
        (limit(10, 1, Buy, 10_505, 20), RejectReason::PriceOutOfBand),
        (limit(10, 1, Buy, 9_990, 25), RejectReason::QtyOffLot),
        (limit(10, 1, Buy, 9_990, 10), RejectReason::QtyBelowMin),
        (limit(10, 1, Buy, 9_990, 10_010), RejectReason::QtyAboveMax),
        (limit(1, 1, Buy, 9_990, 20), RejectReason::DuplicateOrderId),
        (
            limit(10, 1, Buy, 9_990, 20).on(InstrumentId(9)),
            RejectReason::UnknownInstrument,
        ),
    ];
    for (o, reason) in cases {
        expect_reject(&mut b, new(1, o), reason);
    }
    expect_reject(
        &mut b,
        replace(1, 1, 1, 10_011, 20),
        RejectReason::PriceOffTick,
    );
    expect_reject(
        &mut b,
        replace(1, 1, 1, 10_010, 0),
        RejectReason::InvalidQty,
    );
}

fn halted_rejects_orders_but_allows_cancels<B: Book>(mut b: B) {
    seeded(&mut b);
    run(&mut b, set_status(1, InstrumentStatus::Halted));
    expect_reject(
        &mut b,
        new(1, limit(10, 1, Buy, 9_990, 20)),
        RejectReason::InstrumentHalted,
    );
    expect_reject(
        &mut b,
        replace(1, 1, 1, 10_010, 20),
        RejectReason::InstrumentHalted,
    );
    assert_eq!(cancels(&run(&mut b, cancel(1, 1, 1))).len(), 1);
    run(&mut b, set_status(1, InstrumentStatus::Active));
    assert!(matches!(
        run(&mut b, new(1, limit(10, 1, Buy, 9_990, 20)))[0],
        Event::Accepted(_)
    ));
}

fn full_book_rejects_resting_orders<B: Book>(mut b: B) {
    // Books here hold 8 orders.
    for i in 0..8 {
        run(
            &mut b,
            new(1, limit(i + 1, 1, Buy, 9_500 + 5 * i as i64, 20)),
        );
    }
    expect_reject(
        &mut b,
        new(1, limit(20, 1, Buy, 9_990, 20)),
        RejectReason::BookFull,
    );
    // An IOC needs no slot.
    let ev = run(
        &mut b,
        new(1, limit(21, 2, Sell, 9_535, 20).with_tif(TimeInForce::Ioc)),
    );
    assert_eq!(fills(&ev).len(), 1);
    assert!(matches!(
        run(&mut b, new(1, limit(22, 1, Buy, 9_990, 20)))[0],
        Event::Accepted(_)
    ));
}

fn level_updates_follow_every_change<B: Book>(mut b: B) {
    seeded(&mut b);
    let ev = run(&mut b, new(2, limit(10, 3, Buy, 10_010, 60)));
    let levels: Vec<_> = ev
        .iter()
        .filter_map(|e| match e {
            Event::LevelChanged(l) => Some((l.side, l.price.units(), l.qty.lots(), l.count)),
            _ => None,
        })
        .collect();
    assert_eq!(levels, vec![(Sell, 10_010, 20, 1)]);
    let ev = run(&mut b, cancel(3, 2, 2));
    assert!(matches!(ev[1], Event::LevelChanged(l) if l.qty.lots() == 0 && l.count == 0));
}

macro_rules! conformance {
    ($modname:ident, $make:expr) => {
        mod $modname {
            use super::*;
            conformance!(@tests $make;
                price_time_priority, partial_fill_rests_remainder, ioc_cancels_remainder,
                fok_all_or_nothing, market_respects_protection_price, post_only_never_takes,
                gtd_expires_on_injected_clock, expiry_happens_before_the_command,
                stp_none_allows_self_trade, stp_cancel_newest, stp_cancel_oldest, stp_cancel_both,
                stp_decrement_and_cancel, replace_size_down_keeps_priority,
                replace_size_up_or_price_loses_priority, cancel_rules,
                mass_cancel_by_account_and_side, bad_input_rejects_and_changes_nothing,
                halted_rejects_orders_but_allows_cancels, full_book_rejects_resting_orders,
                level_updates_follow_every_change);
        }
    };
    (@tests $make:expr; $($name:ident),* $(,)?) => {
        $(#[test] fn $name() { super::$name($make); })*
    };
}

conformance!(ladder, OrderBook::<Ladder>::new(spec(), 8));
conformance!(btree, OrderBook::<BTreeLevels>::new(spec(), 8));
conformance!(ladder_hashids, OrderBook::<Ladder, HashIds>::new(spec(), 8));
conformance!(reference, ReferenceBook::new(spec(), 8));

#[test]
fn timestamps_never_go_backwards() {
    let mut b: OrderBook = OrderBook::new(spec(), 8);
    run(&mut b, tick(100));
    run(&mut b, tick(50));
    assert_eq!(Book::now(&b), Timestamp(100));
}
