//! One test per risk rule.

use peregrine_types::{InstrumentId, Price, Qty, Side};

use super::*;

const S1: StrategyId = StrategyId(1);
const S2: StrategyId = StrategyId(2);
const I: InstrumentId = InstrumentId(7);

fn order(client_id: u64, side: Side, price: i64, qty: i64) -> OrderRequest {
    OrderRequest {
        venue: 0,
        instrument: I,
        client_id,
        side,
        price: Price::from_raw(price),
        qty: Qty::from_raw(qty),
    }
}

fn fill(side: Side, price: i64, qty: i64) -> Fill {
    Fill {
        venue: 0,
        instrument: I,
        side,
        price: Price::from_raw(price),
        qty: Qty::from_raw(qty),
    }
}

fn engine(limits: Limits) -> RiskEngine {
    let mut e = RiskEngine::new(Limits::default());
    e.register(S1, limits, 0);
    e.register(S2, Limits::default(), 0);
    e
}

#[test]
fn unknown_strategy_and_invalid_fields() {
    let mut e = engine(Limits::default());
    assert_eq!(
        e.check_new(StrategyId(9), &order(1, Side::Buy, 100, 1), 0),
        Err(RiskReject::UnknownStrategy)
    );
    assert_eq!(
        e.check_new(S1, &order(1, Side::Buy, 100, 0), 0),
        Err(RiskReject::InvalidOrder)
    );
    assert_eq!(
        e.check_new(S1, &order(1, Side::Buy, -1, 5), 0),
        Err(RiskReject::InvalidOrder)
    );
    assert_eq!(e.reject_count(RiskReject::InvalidOrder), 2);
}

#[test]
fn max_order_qty_and_notional() {
    let mut e = engine(Limits {
        max_order_qty: Some(10),
        max_order_notional: Some(900),
        ..Limits::default()
    });
    assert_eq!(
        e.check_new(S1, &order(1, Side::Buy, 10, 11), 0),
        Err(RiskReject::MaxOrderQty)
    );
    assert_eq!(
        e.check_new(S1, &order(2, Side::Buy, 100, 10), 0),
        Err(RiskReject::MaxOrderNotional)
    );
    assert_eq!(e.check_new(S1, &order(3, Side::Buy, 90, 10), 0), Ok(()));
    // Other strategies are not bound by S1's limits.
    assert_eq!(e.check_new(S2, &order(1, Side::Buy, 100, 100), 0), Ok(()));
}

#[test]
fn price_collar_uses_the_reference_once_known() {
    let mut e = engine(Limits {
        price_collar: Some(50),
        ..Limits::default()
    });
    assert_eq!(
        e.check_new(S1, &order(1, Side::Buy, 10_000, 1), 0),
        Ok(()),
        "no reference yet"
    );
    e.set_reference(0, I, 1_000);
    assert_eq!(
        e.check_new(S1, &order(2, Side::Buy, 1_051, 1), 0),
        Err(RiskReject::PriceCollar)
    );
    assert_eq!(
        e.check_new(S1, &order(3, Side::Sell, 949, 1), 0),
        Err(RiskReject::PriceCollar)
    );
    assert_eq!(e.check_new(S1, &order(4, Side::Sell, 950, 1), 0), Ok(()));
    // A fill moves the reference (last trade).
    e.on_fill(S1, 4, fill(Side::Sell, 2_000, 1));
    assert_eq!(e.reference(0, I), Some(2_000));
}

#[test]
fn the_collar_is_per_venue() {
    // One instrument trading at 100.00 on venue 0 and 94.00 on venue 1: each venue's
    // orders are collared around that venue's last trade, not the other's.
    let mut e = engine(Limits {
        price_collar: Some(500),
        ..Limits::default()
    });
    e.on_fill(
        S1,
        90,
        Fill {
            venue: 0,
            ..fill(Side::Buy, 10_000, 1)
        },
    );
    e.on_fill(
        S2,
        91,
        Fill {
            venue: 1,
            ..fill(Side::Buy, 9_400, 1)
        },
    );
    let at = |venue, id, price| OrderRequest {
        venue,
        ..order(id, Side::Sell, price, 1)
    };
    assert_eq!(e.check_new(S1, &at(0, 1, 10_100), 0), Ok(()));
    assert_eq!(e.check_new(S1, &at(1, 2, 9_300), 0), Ok(()));
    assert_eq!(
        e.check_new(S1, &at(1, 3, 10_100), 0),
        Err(RiskReject::PriceCollar)
    );
    assert_eq!(
        e.check_new(S1, &at(0, 4, 9_300), 0),
        Err(RiskReject::PriceCollar)
    );
    // A venue with no trade yet is not collared.
    assert_eq!(e.check_new(S1, &at(2, 5, 50_000), 0), Ok(()));
    // Positions are marked at the venue they last traded on.
    assert_eq!(e.mark(S1, I), 10_000);
    assert_eq!(e.mark(S2, I), 9_400);
}

#[test]
fn max_open_orders_counts_until_done() {
    let mut e = engine(Limits {
        max_open_orders: Some(2),
        ..Limits::default()
    });
    assert!(e.check_new(S1, &order(1, Side::Buy, 100, 1), 0).is_ok());
    assert!(e.check_new(S1, &order(2, Side::Buy, 100, 1), 0).is_ok());
    assert_eq!(
        e.check_new(S1, &order(3, Side::Buy, 100, 1), 0),
        Err(RiskReject::MaxOpenOrders)
    );
    e.on_done(S1, 1);
    assert!(e.check_new(S1, &order(3, Side::Buy, 100, 1), 0).is_ok());
    e.on_fill(S1, 2, fill(Side::Buy, 100, 1));
    assert_eq!(e.open_orders(Some(S1)), 1);
}

#[test]
fn max_position_counts_open_orders_on_the_same_side() {
    let mut e = engine(Limits {
        max_position: Some(10),
        ..Limits::default()
    });
    assert!(e.check_new(S1, &order(1, Side::Buy, 100, 6), 0).is_ok());
    assert_eq!(
        e.check_new(S1, &order(2, Side::Buy, 100, 5), 0),
        Err(RiskReject::MaxPosition)
    );
    assert!(
        e.check_new(S1, &order(3, Side::Sell, 100, 10), 0).is_ok(),
        "sells do not add to buys"
    );
    e.on_fill(S1, 1, fill(Side::Buy, 100, 6)); // long 6
    assert!(e.check_new(S1, &order(4, Side::Buy, 100, 4), 0).is_ok());
    assert_eq!(
        e.check_new(S1, &order(5, Side::Buy, 100, 1), 0),
        Err(RiskReject::MaxPosition)
    );
    // Selling 10 open + 7 more from +6 would reach −11.
    assert_eq!(
        e.check_new(S1, &order(6, Side::Sell, 100, 7), 0),
        Err(RiskReject::MaxPosition)
    );
}

#[test]
fn rate_limit_token_bucket_and_no_token_spent_on_reject() {
    let mut e = engine(Limits {
        max_orders_per_sec: Some(2),
        burst: Some(2),
        max_order_qty: Some(5),
        ..Limits::default()
    });
    assert!(e.check_new(S1, &order(1, Side::Buy, 100, 1), 0).is_ok());
    assert_eq!(
        e.check_new(S1, &order(2, Side::Buy, 100, 9), 0),
        Err(RiskReject::MaxOrderQty)
    );
    assert!(
        e.check_new(S1, &order(3, Side::Buy, 100, 1), 0).is_ok(),
        "the reject spent no token"
    );
    assert_eq!(
        e.check_new(S1, &order(4, Side::Buy, 100, 1), 0),
        Err(RiskReject::RateLimited)
    );
    assert!(e
        .check_new(S1, &order(4, Side::Buy, 100, 1), 500_000_000)
        .is_ok());
}

#[test]
fn duplicate_client_order_id_among_open_orders() {
    let mut e = engine(Limits::default());
    assert!(e.check_new(S1, &order(1, Side::Buy, 100, 1), 0).is_ok());
    assert_eq!(
        e.check_new(S1, &order(1, Side::Sell, 100, 1), 0),
        Err(RiskReject::DuplicateClientOrderId)
    );
    assert!(
        e.check_new(S2, &order(1, Side::Buy, 100, 1), 0).is_ok(),
        "ids are per strategy"
    );
    e.on_done(S1, 1);
    assert!(e.check_new(S1, &order(1, Side::Buy, 100, 1), 0).is_ok());
}

#[test]
fn global_limits_bind_all_strategies_together() {
    let mut e = engine(Limits::default());
    e.set_global_limits(Limits {
        max_open_orders: Some(2),
        max_position: Some(10),
        ..Limits::default()
    });
    assert!(e.check_new(S1, &order(1, Side::Buy, 100, 6), 0).is_ok());
    assert_eq!(
        e.check_new(S2, &order(1, Side::Buy, 100, 5), 0),
        Err(RiskReject::MaxPosition)
    );
    assert!(e.check_new(S2, &order(2, Side::Buy, 100, 4), 0).is_ok());
    assert_eq!(
        e.check_new(S2, &order(3, Side::Sell, 100, 1), 0),
        Err(RiskReject::MaxOpenOrders)
    );
}

#[test]
fn kill_switch_global_and_per_strategy() {
    let mut e = engine(Limits::default());
    e.kill(Some(S1));
    assert_eq!(
        e.check_new(S1, &order(1, Side::Buy, 100, 1), 0),
        Err(RiskReject::KillSwitch)
    );
    assert!(e.check_new(S2, &order(1, Side::Buy, 100, 1), 0).is_ok());
    e.kill(None);
    assert_eq!(
        e.check_new(S2, &order(2, Side::Buy, 100, 1), 0),
        Err(RiskReject::KillSwitch)
    );
    e.unkill(None);
    e.unkill(Some(S1));
    assert!(e.check_new(S1, &order(1, Side::Buy, 100, 1), 0).is_ok());
}

#[test]
fn loss_breach_kills_the_strategy() {
    let mut e = engine(Limits {
        max_loss: Some(500),
        ..Limits::default()
    });
    assert!(e.check_new(S1, &order(1, Side::Buy, 1_000, 10), 0).is_ok());
    assert_eq!(e.on_fill(S1, 1, fill(Side::Buy, 1_000, 10)), None);
    // The market trades lower: marked at 940 the strategy is down 600.
    assert!(e.check_new(S1, &order(2, Side::Sell, 940, 1), 0).is_ok());
    assert_eq!(
        e.on_fill(S1, 2, fill(Side::Sell, 940, 1)),
        Some(Breach::Loss(S1))
    );
    assert!(e.is_killed(S1));
    assert!(!e.is_killed(S2));
}

#[test]
fn position_breach_after_limits_are_lowered_kills() {
    let mut e = engine(Limits {
        max_position: Some(100),
        ..Limits::default()
    });
    assert!(e.check_new(S1, &order(1, Side::Buy, 10, 50), 0).is_ok());
    e.set_limits(
        S1,
        Limits {
            max_position: Some(20),
            ..Limits::default()
        },
    )
    .unwrap();
    assert_eq!(
        e.on_fill(S1, 1, fill(Side::Buy, 10, 30)),
        Some(Breach::Position(S1))
    );
    assert_eq!(
        e.open_client_ids(S1),
        vec![1],
        "the rest is still open: a kill must cancel it"
    );
}

#[test]
fn partial_fills_then_cancel_release_exactly_what_is_left() {
    let mut e = engine(Limits {
        max_position: Some(10),
        ..Limits::default()
    });
    assert!(e.check_new(S1, &order(1, Side::Buy, 100, 10), 0).is_ok());
    e.on_fill(S1, 1, fill(Side::Buy, 100, 3));
    e.on_done(S1, 1); // cancel races: the venue cancelled the remaining 7
    assert_eq!(e.open_orders(Some(S1)), 0);
    assert!(e.check_new(S1, &order(2, Side::Buy, 100, 7), 0).is_ok());
    assert_eq!(
        e.check_new(S1, &order(3, Side::Buy, 100, 1), 0),
        Err(RiskReject::MaxPosition)
    );
    // A fill arriving after the cancel (the race the other way) is still booked.
    e.on_done(S1, 2);
    assert_eq!(e.on_fill(S1, 2, fill(Side::Buy, 100, 7)), None);
    assert_eq!(
        e.positions().get(S1, I).net,
        10,
        "the late fill still moves the position"
    );
    assert_eq!(e.open_orders(Some(S1)), 0, "and releases nothing twice");
}

#[test]
fn reject_codes_are_unique() {
    let mut codes: Vec<u16> = RiskReject::ALL.iter().map(|r| r.code()).collect();
    codes.dedup();
    assert_eq!(codes.len(), RiskReject::ALL.len());
    for (i, r) in RiskReject::ALL.iter().enumerate() {
        assert_eq!(r.index(), i);
    }
}

#[test]
fn absurd_quantity_or_price_is_an_invalid_order() {
    let mut e = engine(Limits::default());
    for (price, qty) in [(100, MAX_SANE + 1), (MAX_SANE + 1, 1), (100, i64::MAX)] {
        assert_eq!(
            e.check_new(S1, &order(1, Side::Buy, price, qty), 0),
            Err(RiskReject::InvalidOrder)
        );
    }
    assert!(e
        .check_new(S1, &order(1, Side::Buy, MAX_SANE, MAX_SANE), 0)
        .is_ok());
}

#[test]
fn limits_changed_at_run_time_apply_to_the_next_order() {
    let mut e = engine(Limits::default());
    assert!(e.check_new(S1, &order(1, Side::Buy, 100, 8), 0).is_ok());
    let changes = Limits::parse_changes(["max_order_qty=5", "price_collar=300"]).unwrap();
    let next = e.limits(S1).unwrap().with_changes(&changes).unwrap();
    e.set_limits(S1, next).unwrap();
    assert_eq!(e.limits(S1).unwrap().max_order_qty, Some(5));
    assert_eq!(e.limits(S1).unwrap().price_collar, Some(300));
    assert_eq!(
        e.check_new(S1, &order(2, Side::Buy, 100, 8), 0),
        Err(RiskReject::MaxOrderQty)
    );
    assert!(
        e.check_new(S2, &order(2, Side::Buy, 100, 8), 0).is_ok(),
        "S2 unchanged"
    );
    assert_eq!(
        e.open_client_ids(S1),
        vec![1],
        "the open order is not touched"
    );
    // Global limits the same way, and back off again.
    let g = Limits::default()
        .with_changes(&Limits::parse_changes(["max_open_orders=1"]).unwrap())
        .unwrap();
    e.set_global_limits(g);
    assert_eq!(
        e.check_new(S2, &order(3, Side::Buy, 100, 1), 0),
        Err(RiskReject::MaxOpenOrders)
    );
    e.set_global_limits(Limits::default());
    assert!(e.check_new(S2, &order(3, Side::Buy, 100, 1), 0).is_ok());
    assert!(e.set_limits(StrategyId(99), Limits::default()).is_err());
}
