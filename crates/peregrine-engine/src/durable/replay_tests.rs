//! Replaying journals: exact positions, reservations, limits, kill switches, orphans.

use peregrine_types::{InstrumentId, OrderType, Price, Qty, Side, StpMode, TimeInForce};

use super::record::{Rec, SentOrder, GLOBAL};
use super::replay::replay;
use super::writer::EngineJournal;
use super::ORPHAN;
use crate::config::{EngineConfig, StrategyConfig};
use peregrine_risk::{Fill, Limits, OrderRequest, RiskEngine, StrategyId};

fn cfg(names: &[&str]) -> EngineConfig {
    EngineConfig {
        strategies: names.iter().map(|n| StrategyConfig::new(n)).collect(),
        ..EngineConfig::default()
    }
}

fn sent(engine_id: u64, strategy: u16, client_id: u64, side: Side, qty: i64) -> Rec {
    Rec::Sent(SentOrder {
        engine_id,
        strategy,
        venue: 0,
        client_id,
        instrument: InstrumentId(1),
        side,
        order_type: OrderType::Limit,
        tif: TimeInForce::Gtc,
        stp: StpMode::None,
        price: Price::from_raw(100),
        qty: Qty::from_raw(qty),
        expire_at: 0,
    })
}

fn roster(names: &[&str]) -> Rec {
    Rec::Roster {
        strategies: names.iter().map(|s| s.to_string()).collect(),
        venues: vec!["sim".into()],
    }
}

fn write(dir: &std::path::Path, recs: &[Rec]) {
    let mut j = EngineJournal::new(EngineJournal::open(dir, false).unwrap());
    for r in recs {
        assert!(j.append(r, 1));
    }
    assert!(j.commit());
}

/// The same changes applied live to a risk engine, for comparison.
fn live(names: &[&str]) -> RiskEngine {
    let mut r = RiskEngine::new(Limits::default());
    for i in 0..names.len() {
        r.register(StrategyId(i as u16), Limits::default(), 0);
    }
    r
}

#[test]
fn positions_pnl_and_open_orders_come_back_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let fill = |engine_id, price, qty, leaves| Rec::Fill {
        engine_id,
        price,
        qty,
        leaves,
    };
    write(
        dir.path(),
        &[
            roster(&["a", "b"]),
            sent(1, 0, 1, Side::Buy, 5),
            Rec::Ack {
                engine_id: 1,
                venue_id: 77,
            },
            fill(1, 100, 2, 3),
            sent(2, 1, 1, Side::Sell, 4),
            fill(2, 103, 4, 0),
            sent(3, 0, 2, Side::Sell, 1),
            fill(3, 107, 1, 0),
            Rec::Cancelled {
                engine_id: 1,
                qty: 1,
                leaves: 2,
            },
            sent(4, 1, 2, Side::Buy, 9),
            Rec::Rejected { engine_id: 4 },
            Rec::Limits {
                scope: 1,
                limits: Limits {
                    max_order_qty: Some(3),
                    ..Limits::default()
                },
            },
            Rec::Kill {
                scope: GLOBAL,
                on: true,
            },
        ],
    );
    // Config lists the strategies in another order: they are matched by name.
    let c = cfg(&["b", "a"]);
    let mut j = EngineJournal::open(dir.path(), false).unwrap();
    let rec = replay(&mut j, &c.core(), 0).unwrap();
    assert_eq!(rec.records, 13);
    assert_eq!(rec.next_engine_id, 5);
    // The same fills applied live.
    let mut want = live(&["b", "a"]);
    let f = |side, price, qty| Fill {
        venue: 0,
        instrument: InstrumentId(1),
        side,
        price: Price::from_raw(price),
        qty: Qty::from_raw(qty),
    };
    want.on_fill(StrategyId(1), 1, f(Side::Buy, 100, 2));
    want.on_fill(StrategyId(0), 1, f(Side::Sell, 103, 4));
    want.on_fill(StrategyId(1), 2, f(Side::Sell, 107, 1));
    for s in [0, 1] {
        let (got, exp) = (
            rec.risk.positions().get(StrategyId(s), InstrumentId(1)),
            want.positions().get(StrategyId(s), InstrumentId(1)),
        );
        assert_eq!(got, exp, "strategy {s}");
    }
    let a = rec.risk.positions().get(StrategyId(1), InstrumentId(1));
    assert_eq!((a.net, a.realized()), (1, 7));
    assert_eq!(rec.risk.mark(StrategyId(1), InstrumentId(1)), 107);
    // Order 1 (a's client 1) is still open with 2 lots: an orphan now.
    assert_eq!(rec.orders.len(), 1);
    let o = rec.orders[0];
    assert_eq!(
        (o.engine_id, o.strategy, o.leaves.lots(), o.venue_id),
        (1, 1, 2, 77)
    );
    assert_eq!(o.client_key, 1 | ORPHAN);
    assert_eq!(rec.risk.open_orders(Some(StrategyId(1))), 1);
    assert_eq!(rec.risk.open_client_ids(StrategyId(1)), vec![1 | ORPHAN]);
    // Limits and kill switch.
    // The limit change named roster index 1, "b": config index 0.
    assert_eq!(
        rec.risk.limits(StrategyId(0)).unwrap().max_order_qty,
        Some(3)
    );
    assert!(rec.risk.is_global_killed());
    // A new incarnation's client id 1 does not collide with the orphan.
    let mut risk = rec.risk;
    risk.unkill(None);
    let o = OrderRequest {
        venue: 0,
        instrument: InstrumentId(1),
        client_id: 1,
        side: Side::Buy,
        price: Price::from_raw(100),
        qty: Qty::from_raw(1),
    };
    assert_eq!(risk.check_new(StrategyId(1), &o, 0), Ok(()));
}

#[test]
fn a_second_restart_keeps_orphans_apart_and_unknown_strategies_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        &[
            roster(&["a", "gone"]),
            sent(1, 0, 1, Side::Buy, 2),
            sent(2, 1, 1, Side::Buy, 2),
            // Second run: order 1 is an orphan; client id 1 is used again.
            roster(&["a"]),
            sent(3, 0, 1, Side::Sell, 1),
            Rec::Cancelled {
                engine_id: 1,
                qty: 2,
                leaves: 0,
            },
            Rec::Fill {
                engine_id: 3,
                price: 100,
                qty: 1,
                leaves: 0,
            },
        ],
    );
    let mut j = EngineJournal::open(dir.path(), false).unwrap();
    let rec = replay(&mut j, &cfg(&["a"]).core(), 0).unwrap();
    assert!(rec.orders.is_empty(), "{:?}", rec.orders);
    assert_eq!(rec.risk.open_orders(Some(StrategyId(0))), 0);
    assert_eq!(
        rec.risk.positions().get(StrategyId(0), InstrumentId(1)).net,
        -1
    );
    assert!(
        rec.warnings.iter().any(|w| w.contains("\"gone\"")),
        "{:?}",
        rec.warnings
    );
}

#[test]
fn a_corrupt_record_stops_recovery_with_its_sequence_number() {
    let dir = tempfile::tempdir().unwrap();
    let mut j = EngineJournal::new(EngineJournal::open(dir.path(), false).unwrap());
    assert!(j.append(&roster(&["a"]), 1));
    j.journal_mut()
        .append(2, Default::default(), 200, &[1, 2, 3])
        .unwrap();
    assert!(j.commit());
    drop(j);
    let mut j = EngineJournal::open(dir.path(), false).unwrap();
    let e = replay(&mut j, &cfg(&["a"]).core(), 0).unwrap_err();
    assert!(e.to_string().contains("record 2"), "{e}");
}
