//! Order lists from a strategy (issue 31): how the core gathers a list's legs, when it
//! refuses them all, how risk counts a list, and the list's status event.

use peregrine_orchestrator::{Completion, CompletionKind, GatewayCmd, Input, Output, Rec};
use peregrine_risk::{Limits, RiskReject};
use peregrine_strategy::msg::{reason, EventKind, NewOrder, Request};
use peregrine_types::{InstrumentId, ListKind, Price, Qty, Side, TriggerKind};
use peregrine_venues::{ListState, Report, VenueOrder};

use super::{events, Core};

fn sell(id: u64, price: i64, qty: i64) -> NewOrder {
    let mut o = NewOrder::limit(
        0,
        InstrumentId(1),
        Side::Sell,
        Price::from_raw(price),
        Qty::from_raw(qty),
    );
    o.client_id = id;
    o
}

/// A take-profit at 105 and a stop-loss at 96 (limit 95), ids 1 and 2.
fn oco(qty: i64) -> [NewOrder; 2] {
    [
        sell(1, 105, qty),
        sell(2, 95, qty).stop(Price::from_raw(96)),
    ]
}

/// The records of leg `leg` of a list of `kind`, as `Api::send_list` pushes them.
fn leg(c: &mut Core, kind: ListKind, leg: u8, o: &NewOrder) -> Vec<Output> {
    let t = c.now;
    let mut out = c.at(
        0,
        Input::Request {
            strategy: 0,
            req: Request::list_leg(o, kind, leg, t),
        },
    );
    out.extend(c.at(
        0,
        Input::Request {
            strategy: 0,
            req: Request::new_order(o, t),
        },
    ));
    out
}

fn send_list(c: &mut Core, kind: ListKind, legs: &[NewOrder]) -> Vec<Output> {
    let mut out = Vec::new();
    for (i, o) in legs.iter().enumerate() {
        out.extend(leg(c, kind, i as u8, o));
    }
    out
}

fn core(limits: Limits) -> Core {
    let mut c = Core::new(|cfg| {
        cfg.venues[0].conditional = true;
        cfg.venues[0].lists = true;
        cfg.strategies[0].limits = limits;
    });
    c.heartbeat(1, 0);
    c
}

fn gateway_list(out: &[Output]) -> Option<(ListKind, [VenueOrder; 3])> {
    // A list goes out as its legs, consecutively, in leg order.
    let at = out.iter().position(|o| {
        matches!(
            o,
            Output::Gateway {
                cmd: GatewayCmd::ListLeg { .. },
                ..
            }
        )
    })?;
    let mut legs =
        [VenueOrder::limit(0, InstrumentId(0), Side::Buy, Price::from_raw(0), Qty::ZERO); 3];
    let mut kind = None;
    for (i, o) in out[at..].iter().enumerate() {
        let Output::Gateway {
            cmd:
                GatewayCmd::ListLeg {
                    kind: k,
                    index,
                    order,
                },
            ..
        } = o
        else {
            break;
        };
        assert_eq!(*index as usize, i, "legs in order: {out:?}");
        assert!(kind.is_none_or(|x| x == *k));
        kind = Some(*k);
        legs[i] = *order;
    }
    let kind = kind.expect("a leg");
    let n = kind.legs();
    assert_eq!(
        legs[n - 1].engine_id,
        legs[0].engine_id + n as u64 - 1,
        "{out:?}"
    );
    for i in n..3 {
        legs[i] = legs[0];
    }
    Some((kind, legs))
}

fn no_order_sent(out: &[Output]) -> bool {
    !out.iter().any(|o| matches!(o, Output::Gateway { .. }))
}

/// Both legs in: every leg's `Sent` is journaled, then one list goes to the gateway
/// with consecutive engine ids and each leg's own terms; nothing is answered yet.
#[test]
fn a_complete_oco_goes_out_as_one_list() {
    let mut c = core(Limits::default());
    let out = send_list(&mut c, ListKind::Oco, &oco(2));
    let (kind, legs) = gateway_list(&out).expect("a list was sent");
    assert_eq!(kind, ListKind::Oco);
    assert_eq!(legs[1].engine_id, legs[0].engine_id + 1);
    assert_eq!(legs[0].price, Price::from_raw(105));
    assert!(legs[0].ext.is_plain());
    assert_eq!(legs[1].ext.trigger, TriggerKind::StopLoss);
    assert_eq!(legs[1].ext.stop_price, Price::from_raw(96));
    let sent: Vec<usize> = out
        .iter()
        .enumerate()
        .filter(|(_, o)| matches!(o, Output::Record(Rec::Sent(_))))
        .map(|(i, _)| i)
        .collect();
    let at = out
        .iter()
        .position(|o| matches!(o, Output::Gateway { .. }))
        .expect("sent");
    assert_eq!(sent.len(), 2);
    assert!(sent.iter().all(|&i| i < at), "write-ahead: {out:?}");
    assert_eq!(events(&out), vec![]);
    assert_eq!(c.core.in_flight(), 2);
    // An OTOCO: three legs.
    let mut three = [sell(3, 99, 1), sell(4, 110, 1), sell(5, 90, 1)];
    three[0].side = Side::Buy;
    three[2] = three[2].stop(Price::from_raw(91));
    let (kind, legs) =
        gateway_list(&send_list(&mut c, ListKind::Otoco, &three)).expect("a list was sent");
    assert_eq!(kind, ListKind::Otoco);
    assert_eq!(legs.map(|l| l.qty.lots()), [1, 1, 1]);
    assert_eq!(legs[2].engine_id, legs[0].engine_id + 2);
}

/// A list whose legs do not all arrive together (another request between them, or a
/// leg without the ones before it) is refused leg by leg, never sent in part.
#[test]
fn a_list_with_a_missing_leg_is_refused() {
    let mut c = core(Limits::default());
    let [a, b] = oco(1);
    let out = leg(&mut c, ListKind::Oco, 0, &a);
    assert_eq!(events(&out), vec![], "waits for leg 1");
    // A plain order comes instead: leg 0 is refused, the order itself goes out.
    let out = c.order(0, 7, 1);
    assert_eq!(
        events(&out),
        vec![(0, Some(EventKind::Reject), reason::BAD_EXTENSION)]
    );
    assert!(gateway_list(&out).is_none());
    assert!(out.iter().any(|o| matches!(
        o,
        Output::Gateway {
            cmd: GatewayCmd::New(_),
            ..
        }
    )));
    // Leg 1 alone: its leg 0 is missing.
    let out = leg(&mut c, ListKind::Oco, 1, &b);
    assert_eq!(
        events(&out),
        vec![(0, Some(EventKind::Reject), reason::BAD_EXTENSION)]
    );
    assert!(no_order_sent(&out));
    // Legs on two instruments are not one list.
    let mut other = b;
    other.instrument = InstrumentId(2);
    let out = send_list(&mut c, ListKind::Oco, &[a, other]);
    assert_eq!(events(&out).len(), 2);
    assert!(events(&out)
        .iter()
        .all(|e| *e == (0, Some(EventKind::Reject), reason::BAD_EXTENSION)));
    assert!(no_order_sent(&out));
    assert_eq!(c.core.in_flight(), 1, "the plain order only");
    assert_eq!(c.core.malformed(0), 3);
}

/// Risk counts a list as the sum of its legs (an OCO's two sells count 2 + 2 on the
/// sell side, although at most one can trade): over a limit, every leg is refused
/// with the failing leg's code and the room the legs before it took is given back.
#[test]
fn risk_counts_a_list_as_the_sum_of_its_legs() {
    let mut c = core(Limits {
        max_position: Some(3),
        ..Limits::default()
    });
    let out = send_list(&mut c, ListKind::Oco, &oco(2));
    assert!(gateway_list(&out).is_none(), "{out:?}");
    let code = RiskReject::MaxPosition.code();
    assert_eq!(
        events(&out),
        vec![
            (0, Some(EventKind::Reject), code),
            (0, Some(EventKind::Reject), code)
        ]
    );
    assert_eq!(c.core.in_flight(), 0);
    // Leg 0's room was given back: a single sell of 3 fits.
    let t = c.now;
    let out = c.at(
        0,
        Input::Request {
            strategy: 0,
            req: Request::new_order(&sell(9, 100, 3), t),
        },
    );
    assert_eq!(events(&out), vec![]);
    assert_eq!(c.core.in_flight(), 1);
    // A limit of 4 takes both legs.
    let mut c = core(Limits {
        max_position: Some(4),
        ..Limits::default()
    });
    assert!(gateway_list(&send_list(&mut c, ListKind::Oco, &oco(2))).is_some());
}

/// A venue whose adapter has no lists (the simulated venue, FIX) gets none: every leg
/// is refused `UNSUPPORTED`, never sent as separate orders.
#[test]
fn a_list_for_a_venue_without_lists_is_refused() {
    let mut c = Core::new(|cfg| cfg.venues[0].conditional = true);
    c.heartbeat(1, 0);
    let out = send_list(&mut c, ListKind::Oco, &oco(1));
    assert!(no_order_sent(&out), "{out:?}");
    assert_eq!(
        events(&out),
        vec![
            (0, Some(EventKind::Reject), reason::UNSUPPORTED),
            (0, Some(EventKind::Reject), reason::UNSUPPORTED)
        ]
    );
    assert_eq!(c.core.in_flight(), 0);
}

/// The venue's `ListStatus` reaches the strategy about leg 0's client id, also once
/// leg 0 is done; a rejected list's legs are rejected one by one by the venue.
#[test]
fn list_status_reaches_the_strategy() {
    let mut c = core(Limits::default());
    let (_, legs) = gateway_list(&send_list(&mut c, ListKind::Oco, &oco(1))).expect("sent");
    let (a, b) = (legs[0].engine_id, legs[1].engine_id);
    let done = |engine_id, r| {
        Input::Completion(Completion {
            venue: 0,
            engine_id,
            kind: CompletionKind::Report(r),
            t3: 1,
            t4: 2,
            t5: 3,
            scheduled_ns: 0,
        })
    };
    let status = |s| Report::ListStatus {
        engine_id: a,
        status: s,
        reason: 0,
    };
    let list_events = |out: &[Output]| -> Vec<(u64, i64, u16)> {
        out.iter()
            .filter_map(|o| match o {
                Output::Event { event, .. } if event.kind() == Some(EventKind::ListStatus) => {
                    Some((event.client_id, event.qty, event.reason))
                }
                _ => None,
            })
            .collect()
    };
    assert_eq!(
        list_events(&c.at(1, done(a, status(ListState::Accepted)))),
        vec![(1, 0, 0)]
    );
    // Leg 0 fills, the venue cancels leg 1, then the list is done.
    c.at(
        1,
        done(
            a,
            Report::Fill {
                engine_id: a,
                price: Price::from_raw(105),
                qty: Qty::from_raw(1),
                leaves: Qty::ZERO,
            },
        ),
    );
    c.at(
        1,
        done(
            b,
            Report::Cancelled {
                engine_id: b,
                qty: Qty::from_raw(1),
                leaves: Qty::ZERO,
            },
        ),
    );
    assert_eq!(c.core.in_flight(), 0);
    assert_eq!(
        list_events(&c.at(1, done(a, status(ListState::Done)))),
        vec![(1, 2, 0)]
    );
    // Resolved: a second status is not one of this run's lists any more.
    assert_eq!(
        list_events(&c.at(1, done(a, status(ListState::Done)))),
        vec![]
    );
    // A rejected list: its status carries the venue's reason.
    let mut three = oco(1);
    three[0].client_id = 11;
    three[1].client_id = 12;
    let (_, legs) = gateway_list(&send_list(&mut c, ListKind::Oco, &three)).expect("sent");
    let out = c.at(
        1,
        done(
            legs[0].engine_id,
            Report::ListStatus {
                engine_id: legs[0].engine_id,
                status: ListState::Rejected,
                reason: 33,
            },
        ),
    );
    assert_eq!(list_events(&out), vec![(11, 1, reason::VENUE + 33)]);
}

/// The first legs of a list its strategy died before finishing never left the engine:
/// a restarted strategy starts clean (nothing refused on its behalf).
#[test]
fn a_half_read_list_dies_with_its_strategy() {
    let mut c = core(Limits::default());
    let [a, _] = oco(1);
    leg(&mut c, ListKind::Oco, 0, &a);
    c.at(0, Input::ProcessGone { strategy: 0 });
    c.at(0, Input::RingsReady { strategy: 0 });
    let mut out = c.heartbeat(1, 0);
    out.extend(c.order(0, 50, 1));
    assert_eq!(events(&out), vec![], "{out:?}");
    assert!(out.iter().any(|o| matches!(
        o,
        Output::Gateway {
            cmd: GatewayCmd::New(_),
            ..
        }
    )));
}

/// A list the shell could not hand to its gateway comes back leg by leg (all of its
/// legs or none went): every leg is refused busy, the room is given back and the list
/// is forgotten (a late status about it reaches nobody).
#[test]
fn an_undelivered_list_refuses_every_leg_busy() {
    let mut c = core(Limits::default());
    let out = send_list(&mut c, ListKind::Oco, &oco(1));
    let cmds: Vec<GatewayCmd> = out
        .iter()
        .filter_map(|o| match o {
            Output::Gateway { cmd, .. } => Some(*cmd),
            _ => None,
        })
        .collect();
    assert_eq!(cmds.len(), 2, "one command per leg: {out:?}");
    let first = cmds[0].engine_id();
    let mut back = Vec::new();
    for cmd in cmds {
        back.extend(c.at(0, Input::Undelivered { venue: 0, cmd }));
    }
    assert_eq!(
        events(&back),
        vec![
            (0, Some(EventKind::Reject), reason::GATEWAY_BUSY),
            (0, Some(EventKind::Reject), reason::GATEWAY_BUSY)
        ]
    );
    assert_eq!(c.core.in_flight(), 0);
    let late = c.at(
        1,
        Input::Completion(Completion {
            venue: 0,
            engine_id: first,
            kind: CompletionKind::Report(Report::ListStatus {
                engine_id: first,
                status: ListState::Accepted,
                reason: 0,
            }),
            t3: 0,
            t4: 0,
            t5: 0,
            scheduled_ns: 0,
        }),
    );
    assert_eq!(events(&late), vec![], "{late:?}");
    // The room is free again: the same list goes out.
    assert!(gateway_list(&send_list(&mut c, ListKind::Oco, &oco(1))).is_some());
}
