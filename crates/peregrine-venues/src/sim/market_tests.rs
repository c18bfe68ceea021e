//! The simulated market: determinism, queue position, and the exchange's order rules.

use peregrine_queue::Consumer;
use peregrine_types::{InstrumentId, OrderType, Price, Qty, Side, StpMode, TimeInForce};

use super::market::{MarketConfig, SimMarket};
use crate::feed::MdUpdate;
use crate::{Report, VenueOrder};

const I: InstrumentId = InstrumentId(1);

fn still() -> MarketConfig {
    MarketConfig {
        events_per_step: 0,
        move_per_mille: 0,
        ..MarketConfig::default()
    }
}

fn market(cfg: MarketConfig, seed: u64) -> (SimMarket, Consumer<MdUpdate>) {
    let (tx, rx) = peregrine_queue::spsc::ring(1 << 16);
    (SimMarket::new(cfg, &[1], seed, Some(tx)), rx)
}

fn order(id: u64, side: Side, price: i64, qty: i64) -> VenueOrder {
    VenueOrder::limit(id, I, side, Price::from_raw(price), Qty::from_raw(qty))
}

fn drain(rx: &mut Consumer<MdUpdate>) -> Vec<MdUpdate> {
    let mut v = Vec::new();
    while let Some(u) = rx.try_pop() {
        v.push(u);
    }
    v
}

/// A scripted session: the flow runs for 2 s of simulated time with engine orders
/// arriving, being replaced and cancelled at fixed times.
fn session(seed: u64) -> (Vec<Report>, Vec<MdUpdate>) {
    let (mut m, mut rx) = market(MarketConfig::default(), seed);
    let mut reports = Vec::new();
    let mut out = |r| reports.push(r);
    let t0 = 1_000_000_000;
    for k in 0..200u64 {
        let t = t0 + k * 10_000_000;
        m.advance(t, &mut out);
        let side = if k % 2 == 0 { Side::Buy } else { Side::Sell };
        let px = m.fair(I).unwrap() + if side == Side::Buy { -1 } else { 1 };
        m.submit(&order(k + 1, side, px, 2), t, &mut out);
        if k % 3 == 0 {
            m.replace(
                k + 1,
                Price::from_raw(px),
                Qty::from_raw(1),
                t + 1,
                &mut out,
            );
        }
        if k % 5 == 0 && k > 0 {
            m.cancel(k, t + 2, &mut out);
        }
    }
    (reports, drain(&mut rx))
}

#[test]
fn same_seed_same_market() {
    let (r1, md1) = session(7);
    let (r2, md2) = session(7);
    assert_eq!(r1, r2);
    assert_eq!(md1, md2);
    assert!(
        r1.iter().any(|r| matches!(r, Report::Fill { .. })),
        "the flow fills resting orders"
    );
    assert!(
        md1.iter()
            .filter(|u| matches!(u, MdUpdate::Trade { .. }))
            .count()
            > 100
    );
    let (r3, md3) = session(8);
    assert!(r3 != r1 || md3 != md1, "another seed, another market");
}

#[test]
fn the_fair_value_moves_and_the_book_follows() {
    let (mut m, mut rx) = market(MarketConfig::default(), 3);
    let mut sink = |_| {};
    m.advance(1, &mut sink);
    m.advance(10_000_000_000, &mut sink); // 10 s of flow
    let fair = m.fair(I).unwrap();
    assert_ne!(fair, 10_000, "a random walk of 10,000 steps moved");
    // The levels as the feed leaves them: (side, price) -> qty, 0 removes.
    let mut levels = std::collections::BTreeMap::new();
    for u in drain(&mut rx) {
        if let MdUpdate::Level {
            side, price, qty, ..
        } = u
        {
            if qty.lots() > 0 {
                levels.insert((side as u8, price.units()), qty.lots());
            } else {
                levels.remove(&(side as u8, price.units()));
            }
        }
    }
    let best_bid = levels
        .keys()
        .filter(|(s, _)| *s == Side::Buy as u8)
        .map(|k| k.1)
        .max();
    let best_ask = levels
        .keys()
        .filter(|(s, _)| *s == Side::Sell as u8)
        .map(|k| k.1)
        .min();
    let (bid, ask) = (best_bid.expect("bids"), best_ask.expect("asks"));
    let mid = (bid + ask) / 2;
    assert!(
        (mid - fair).abs() <= 20,
        "book mid {mid} follows fair value {fair}"
    );
    assert!(ask > bid, "never crossed");
}

/// An order fills only once everything ahead of it at its price has traded.
#[test]
fn fills_come_by_queue_position() {
    let (mut m, _rx) = market(still(), 1);
    let r = std::cell::RefCell::new(Vec::new());
    let mut out = |x| r.borrow_mut().push(x);
    m.market_order(0, 10, Side::Buy, OrderType::Limit, 9_999, 3, &mut out);
    m.submit(&order(1, Side::Buy, 9_999, 2), 20, &mut out);
    m.market_order(0, 30, Side::Buy, OrderType::Limit, 9_999, 5, &mut out); // behind us
    m.market_order(0, 40, Side::Sell, OrderType::Market, 9_900, 3, &mut out);
    assert_eq!(
        r.borrow().len(),
        1,
        "three lots ahead of us traded, not ours: {:?}",
        r.borrow()
    );
    assert!(matches!(r.borrow()[0], Report::Ack { engine_id: 1, .. }));
    m.market_order(0, 50, Side::Sell, OrderType::Market, 9_900, 1, &mut out);
    assert_eq!(
        r.borrow()[1],
        Report::Fill {
            engine_id: 1,
            price: Price::from_raw(9_999),
            qty: Qty::from_raw(1),
            leaves: Qty::from_raw(1)
        }
    );
    m.market_order(0, 60, Side::Sell, OrderType::Market, 9_900, 4, &mut out);
    assert!(matches!(r.borrow()[2], Report::Fill { leaves, .. } if leaves.is_zero()));
    assert_eq!(r.borrow().len(), 3, "then the orders behind us");
    assert_eq!(m.open_orders(), 0);
}

#[test]
fn order_types_follow_the_exchange_rules() {
    let (mut m, _rx) = market(still(), 1);
    let r = std::cell::RefCell::new(Vec::new());
    let mut out = |x| r.borrow_mut().push(x);
    m.market_order(0, 10, Side::Sell, OrderType::Limit, 10_001, 2, &mut out);
    // Post-only that would take: rejected (14).
    let po = VenueOrder {
        order_type: OrderType::PostOnly,
        ..order(1, Side::Buy, 10_001, 1)
    };
    m.submit(&po, 20, &mut out);
    assert_eq!(
        r.borrow_mut().pop(),
        Some(Report::Rejected {
            engine_id: 1,
            reason: 14
        })
    );
    // IOC for more than there is: fills 2, the rest cancelled.
    let ioc = VenueOrder {
        tif: TimeInForce::Ioc,
        ..order(2, Side::Buy, 10_001, 3)
    };
    m.submit(&ioc, 30, &mut out);
    assert!(
        matches!(r.borrow()[..], [Report::Ack { .. }, Report::Fill { .. }, Report::Cancelled { qty, leaves, .. }] if qty.lots() == 1 && leaves.is_zero()),
        "{:?}",
        r.borrow()
    );
    r.borrow_mut().clear();
    // FOK that cannot fill: cancelled, nothing traded.
    m.market_order(0, 40, Side::Sell, OrderType::Limit, 10_002, 1, &mut out);
    let fok = VenueOrder {
        tif: TimeInForce::Fok,
        ..order(3, Side::Buy, 10_002, 2)
    };
    m.submit(&fok, 50, &mut out);
    assert!(
        matches!(
            r.borrow()[..],
            [Report::Ack { .. }, Report::Cancelled { .. }]
        ),
        "{:?}",
        r.borrow()
    );
    r.borrow_mut().clear();
    // Market order: trades up to its protection price, never beyond.
    m.market_order(0, 60, Side::Sell, OrderType::Limit, 10_010, 1, &mut out);
    let mkt = VenueOrder {
        order_type: OrderType::Market,
        tif: TimeInForce::Ioc,
        ..order(4, Side::Buy, 10_005, 5)
    };
    m.submit(&mkt, 70, &mut out);
    let filled: i64 = r
        .borrow()
        .iter()
        .map(|x| match x {
            Report::Fill { qty, .. } => qty.lots(),
            _ => 0,
        })
        .sum();
    assert_eq!(
        filled,
        1,
        "only the level at 10_002 is within the protection: {:?}",
        r.borrow()
    );
    r.borrow_mut().clear();
    // Market with GTC: refused (invalid TIF, 15).
    m.submit(
        &VenueOrder {
            tif: TimeInForce::Gtc,
            ..mkt
        },
        80,
        &mut out,
    );
    assert_eq!(
        r.borrow_mut().pop(),
        Some(Report::Rejected {
            engine_id: 4,
            reason: 15
        })
    );
    // GTD: rests, then expires when the market's clock passes its expiry.
    let gtd = VenueOrder {
        tif: TimeInForce::Gtd,
        expire_at: 1_000,
        ..order(5, Side::Buy, 9_000, 1)
    };
    m.submit(&gtd, 90, &mut out);
    m.market_order(0, 2_000, Side::Buy, OrderType::Limit, 8_000, 1, &mut out);
    assert!(
        matches!(
            r.borrow()[..],
            [Report::Ack { .. }, Report::Cancelled { engine_id: 5, .. }]
        ),
        "{:?}",
        r.borrow()
    );
    r.borrow_mut().clear();
    // STP between two engine orders: cancel-newest stops the taker.
    m.submit(&order(6, Side::Sell, 10_005, 1), 3_000, &mut out);
    let taker = VenueOrder {
        stp: StpMode::CancelNewest,
        ..order(7, Side::Buy, 10_005, 1)
    };
    m.submit(&taker, 3_001, &mut out);
    assert!(
        !r.borrow().iter().any(|x| matches!(x, Report::Fill { .. })),
        "{:?}",
        r.borrow()
    );
    assert!(r
        .borrow()
        .iter()
        .any(|x| matches!(x, Report::Cancelled { engine_id: 7, .. })));
}
