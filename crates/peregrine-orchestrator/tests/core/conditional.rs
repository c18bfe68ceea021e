//! Stops, trailing stops and icebergs from a strategy (issue 31): how the core joins an
//! order's extension record, where it refuses one, and how risk counts it.

use peregrine_orchestrator::{Completion, CompletionKind, GatewayCmd, Input, Output};
use peregrine_risk::{Limits, RiskReject};
use peregrine_strategy::msg::{reason, EventKind, NewOrder, Request};
use peregrine_types::{InstrumentId, OrderExt, Price, Qty, Side, TrailUnit, TriggerKind};
use peregrine_venues::Report;

use super::{events, Core};

fn sell_stop(id: u64, qty: i64) -> NewOrder {
    let mut o = NewOrder::limit(
        0,
        InstrumentId(1),
        Side::Sell,
        Price::from_raw(95),
        Qty::from_raw(qty),
    )
    .stop(Price::from_raw(96));
    o.client_id = id;
    o
}

/// A strategy's two records for `o`, as `Api::send` pushes them.
fn send(c: &mut Core, s: u16, o: &NewOrder) -> Vec<Output> {
    let t = c.now;
    let mut out = c.at(
        0,
        Input::Request {
            strategy: s,
            req: Request::ext(o, t),
        },
    );
    out.extend(c.at(
        0,
        Input::Request {
            strategy: s,
            req: Request::new_order(o, t),
        },
    ));
    out
}

fn conditional_venue(c: &mut Core) {
    c.heartbeat(1, 0);
}

fn core(limits: Limits) -> Core {
    Core::new(|cfg| {
        cfg.venues[0].conditional = true;
        cfg.strategies[0].limits = limits;
    })
}

fn gateway_new(out: &[Output]) -> Option<peregrine_venues::VenueOrder> {
    out.iter().find_map(|o| match o {
        Output::Gateway {
            cmd: GatewayCmd::New(v),
            ..
        } => Some(*v),
        _ => None,
    })
}

/// The extension record and its order become one venue order carrying the trigger.
#[test]
fn a_stop_reaches_its_gateway_with_its_trigger() {
    let mut c = core(Limits::default());
    conditional_venue(&mut c);
    let o = sell_stop(1, 2).iceberg(Qty::from_raw(1));
    let v = gateway_new(&send(&mut c, 0, &o)).expect("sent");
    assert_eq!(v.ext.trigger, TriggerKind::StopLoss);
    assert_eq!(v.ext.stop_price, Price::from_raw(96));
    assert_eq!(v.ext.display_qty, Qty::from_raw(1));
    assert_eq!(v.price, Price::from_raw(95));
    // A trailing stop: offset and unit, no fixed price.
    let mut t = sell_stop(2, 1).trailing_bps(50);
    t.client_id = 2;
    let v = gateway_new(&send(&mut c, 0, &t)).expect("sent");
    assert_eq!(
        v.ext,
        OrderExt {
            trigger: TriggerKind::StopLoss,
            stop_price: Price::from_raw(0),
            trail: 50,
            trail_unit: TrailUnit::Bps,
            display_qty: Qty::ZERO,
        }
    );
    // A plain order after them is plain: nothing carries over.
    let v = gateway_new(&c.order(0, 3, 1)).expect("sent");
    assert!(v.ext.is_plain());
}

/// A venue whose adapter has no conditional orders (the simulated one, FIX) gets none:
/// the core refuses the order with `UNSUPPORTED` before it leaves the engine.
#[test]
fn a_stop_for_a_venue_without_stops_is_refused_not_downgraded() {
    let mut c = Core::new(|_| {});
    c.heartbeat(1, 0);
    let out = send(&mut c, 0, &sell_stop(1, 2));
    assert!(gateway_new(&out).is_none(), "{out:?}");
    assert_eq!(
        events(&out),
        vec![(0, Some(EventKind::Reject), reason::UNSUPPORTED)]
    );
    assert_eq!(c.core.in_flight(), 0);
}

/// An extension whose order does not follow (another request, or another client id)
/// is never attached to the wrong order.
#[test]
fn a_stray_extension_is_dropped_and_counted() {
    let mut c = core(Limits::default());
    conditional_venue(&mut c);
    let t = c.now;
    c.at(
        0,
        Input::Request {
            strategy: 0,
            req: Request::ext(&sell_stop(7, 1), t),
        },
    );
    // Another order id follows: refused, the extension not applied.
    let out = c.order(0, 8, 1);
    assert!(gateway_new(&out).is_none(), "{out:?}");
    assert_eq!(
        events(&out),
        vec![(0, Some(EventKind::Reject), reason::BAD_EXTENSION)]
    );
    // An extension followed by a heartbeat: dropped, the next order is plain.
    c.at(
        0,
        Input::Request {
            strategy: 0,
            req: Request::ext(&sell_stop(9, 1), t),
        },
    );
    c.heartbeat(0, 0);
    let v = gateway_new(&c.order(0, 9, 1)).expect("sent");
    assert!(v.ext.is_plain());
    assert_eq!(c.core.malformed(0), 2);
}

/// Risk counts a parked stop in full at its limit (or protection) price from the
/// moment it is accepted: the worst case, whether or not it ever triggers.
#[test]
fn risk_counts_a_parked_stop_in_full() {
    let mut c = core(Limits {
        max_position: Some(5),
        max_order_notional: Some(95 * 4),
        ..Limits::default()
    });
    conditional_venue(&mut c);
    // Notional at the limit price 95: 5 × 95 is over.
    let out = send(&mut c, 0, &sell_stop(1, 5));
    assert_eq!(
        events(&out),
        vec![(
            0,
            Some(EventKind::Reject),
            RiskReject::MaxOrderNotional.code()
        )]
    );
    assert!(gateway_new(&send(&mut c, 0, &sell_stop(2, 4))).is_some());
    // The parked stop's 4 count on the sell side: 2 more would pass 5.
    let mut more = NewOrder::limit(
        0,
        InstrumentId(1),
        Side::Sell,
        Price::from_raw(100),
        Qty::from_raw(2),
    );
    more.client_id = 3;
    let t = c.now;
    let out = c.at(
        0,
        Input::Request {
            strategy: 0,
            req: Request::new_order(&more, t),
        },
    );
    assert_eq!(
        events(&out),
        vec![(0, Some(EventKind::Reject), RiskReject::MaxPosition.code())]
    );
}

/// The venue's `Triggered` reaches the strategy with the trigger and last prices; the
/// order stays open with the same client id and its fills follow.
#[test]
fn triggered_reaches_the_strategy_and_the_fills_follow() {
    let mut c = core(Limits::default());
    conditional_venue(&mut c);
    let id = gateway_new(&send(&mut c, 0, &sell_stop(1, 2)))
        .expect("sent")
        .engine_id;
    let done = |kind| {
        Input::Completion(Completion {
            venue: 0,
            engine_id: id,
            kind: CompletionKind::Report(kind),
            t3: 1,
            t4: 2,
            t5: 3,
            scheduled_ns: 0,
        })
    };
    c.at(
        1,
        done(Report::Ack {
            engine_id: id,
            venue_id: 9,
        }),
    );
    let out = c.at(
        1,
        done(Report::Triggered {
            engine_id: id,
            trigger_price: Price::from_raw(96),
            last_price: Price::from_raw(96),
        }),
    );
    let ev = out
        .iter()
        .find_map(|o| match o {
            Output::Event { event, .. } => Some(*event),
            _ => None,
        })
        .expect("an event");
    assert_eq!(ev.kind(), Some(EventKind::Triggered));
    assert_eq!((ev.client_id, ev.price, ev.qty, ev.leaves), (1, 96, 96, 2));
    assert_eq!(c.core.in_flight(), 1, "still open");
    let out = c.at(
        1,
        done(Report::Fill {
            engine_id: id,
            price: Price::from_raw(95),
            qty: Qty::from_raw(2),
            leaves: Qty::ZERO,
        }),
    );
    assert_eq!(events(&out), vec![(0, Some(EventKind::Fill), 0)]);
    assert_eq!(c.core.in_flight(), 0);
}
