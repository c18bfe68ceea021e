//! The core's rules, one test each, driven directly (no thread, no clock).

use peregrine_orchestrator::{
    Completion, CompletionKind, CoreConfig, DeathCause, GatewayCmd, Input, Liveness, Note,
    Orchestrator, Output, Outputs, Rec,
};
use peregrine_risk::Limits;
use peregrine_strategy::msg::{reason, EventKind, NewOrder, Request};
use peregrine_types::{InstrumentId, Price, Qty, Side};
use peregrine_venues::Report;

#[path = "core/conditional.rs"]
mod conditional;
#[path = "core/lists.rs"]
mod lists;

const MS: u64 = 1_000_000;

struct Core {
    core: Orchestrator,
    out: Outputs,
    now: u64,
}

impl Core {
    fn new(tweak: impl FnOnce(&mut CoreConfig)) -> Core {
        let mut cfg = CoreConfig::new(&["a", "b"], 1);
        cfg.journal = true;
        tweak(&mut cfg);
        Core {
            core: Orchestrator::new(cfg, 1_000 * MS),
            out: Outputs::default(),
            now: 1_000 * MS,
        }
    }

    fn at(&mut self, dt_ms: u64, input: Input) -> Vec<Output> {
        self.now += dt_ms * MS;
        self.core.handle(input, self.now, &mut self.out);
        self.out.drain().collect()
    }

    fn heartbeat(&mut self, dt_ms: u64, s: u16) -> Vec<Output> {
        let t = self.now;
        self.at(
            dt_ms,
            Input::Request {
                strategy: s,
                req: Request::heartbeat(10 + u32::from(s), t),
            },
        )
    }

    fn order(&mut self, s: u16, id: u64, qty: i64) -> Vec<Output> {
        let mut o = NewOrder::limit(
            0,
            InstrumentId(1),
            Side::Buy,
            Price::from_raw(100),
            Qty::from_raw(qty),
        );
        o.client_id = id;
        let t = self.now;
        self.at(
            0,
            Input::Request {
                strategy: s,
                req: Request::new_order(&o, t),
            },
        )
    }
}

fn events(out: &[Output]) -> Vec<(u16, Option<EventKind>, u16)> {
    out.iter()
        .filter_map(|o| match o {
            Output::Event { strategy, event } => Some((*strategy, event.kind(), event.reason)),
            _ => None,
        })
        .collect()
}

fn sent_id(out: &[Output]) -> u64 {
    out.iter()
        .find_map(|o| match o {
            Output::Gateway {
                cmd: GatewayCmd::New(v),
                ..
            } => Some(v.engine_id),
            _ => None,
        })
        .expect("an order went to the gateway")
}

/// Write-ahead: the `Sent` record comes before the gateway command in the outputs
/// (the shell hands the command over only once the record is in the journal).
#[test]
fn an_order_is_recorded_before_it_goes_to_its_gateway() {
    let mut c = Core::new(|_| {});
    c.heartbeat(1, 0);
    let out = c.order(0, 1, 2);
    let rec = out
        .iter()
        .position(|o| matches!(o, Output::Record(Rec::Sent(_))));
    let gw = out.iter().position(|o| matches!(o, Output::Gateway { .. }));
    assert!(rec.is_some() && gw.is_some(), "{out:?}");
    assert!(rec < gw, "record first: {out:?}");
}

/// A strategy silent for the heartbeat timeout is dead; a gap in the engine's own
/// loop (it was not scheduled) is not silence: nobody dies for it.
#[test]
fn the_engine_not_running_is_not_a_strategy_being_silent() {
    let mut c = Core::new(|cfg| cfg.heartbeat_timeout_ns = 1_000 * MS);
    c.heartbeat(1, 0);
    c.heartbeat(1, 1);
    // The engine itself does not run for 3 s (ticks stop), then comes back.
    let out = c.at(3_000, Input::Tick);
    assert!(
        out.iter()
            .any(|o| matches!(o, Output::Note(Note::Stalled { gap_ns }) if *gap_ns == 3_000 * MS)),
        "{out:?}"
    );
    assert_eq!(c.core.liveness(0), Liveness::Alive, "{out:?}");
    assert_eq!(c.core.liveness(1), Liveness::Alive);
    // Strategy 0 heartbeats on; strategy 1 stays silent while the engine runs (a tick
    // every 10 ms): dead after its timeout.
    let mut dead_at = None;
    for i in 0..150 {
        if i % 10 == 0 {
            c.heartbeat(0, 0);
        }
        let out = c.at(10, Input::Tick);
        if out.iter().any(|o| {
            matches!(
                o,
                Output::Note(Note::StrategyDead {
                    strategy: 1,
                    cause: DeathCause::Silent,
                    ..
                })
            )
        }) {
            dead_at = Some(i);
            break;
        }
    }
    let dead_at = dead_at.expect("the silent strategy is declared dead");
    assert!(
        (95..=101).contains(&dead_at),
        "after ~1 s of running time: {dead_at}"
    );
    assert_eq!(c.core.liveness(0), Liveness::Alive);
}

/// A full gateway inbox: the shell gives the order back, the core refuses it as busy
/// and releases its risk reservation.
#[test]
fn an_undeliverable_order_is_refused_busy_and_its_risk_released() {
    let mut c = Core::new(|cfg| {
        cfg.strategies[0].limits = Limits {
            max_open_orders: Some(1),
            ..Limits::default()
        }
    });
    c.heartbeat(1, 0);
    let out = c.order(0, 1, 1);
    let cmd = out
        .iter()
        .find_map(|o| match o {
            Output::Gateway { cmd, .. } => Some(*cmd),
            _ => None,
        })
        .unwrap();
    let out = c.at(0, Input::Undelivered { venue: 0, cmd });
    assert_eq!(
        events(&out),
        vec![(0, Some(EventKind::Reject), reason::GATEWAY_BUSY)]
    );
    assert!(out
        .iter()
        .any(|o| matches!(o, Output::Record(Rec::Rejected { .. }))));
    assert_eq!(c.core.in_flight(), 0);
    // The reservation is free again: the next order passes max_open_orders = 1.
    let out = c.order(0, 2, 1);
    assert!(
        out.iter().any(|o| matches!(o, Output::Gateway { .. })),
        "{out:?}"
    );
}

/// The order table is reserved up front; beyond it, new orders are refused busy.
#[test]
fn a_full_order_table_refuses_busy() {
    let mut c = Core::new(|cfg| cfg.max_in_flight = 2);
    c.heartbeat(1, 0);
    c.order(0, 1, 1);
    c.order(0, 2, 1);
    let out = c.order(0, 3, 1);
    assert_eq!(
        events(&out),
        vec![(0, Some(EventKind::Reject), reason::GATEWAY_BUSY)]
    );
    assert!(out
        .iter()
        .any(|o| matches!(o, Output::Note(Note::OrderTableFull))));
}

/// A venue's report-stream position is journaled after the reports it covers.
#[test]
fn a_venue_cursor_is_journaled() {
    let mut c = Core::new(|_| {});
    let out = c.at(
        1,
        Input::Completion(Completion {
            venue: 0,
            engine_id: 0,
            kind: CompletionKind::Cursor(42),
            t3: 0,
            t4: 0,
            t5: 0,
            scheduled_ns: 0,
        }),
    );
    assert_eq!(out, vec![Output::Record(Rec::Cursor { venue: 0, seq: 42 })]);
}

/// A fill moves the position; the strategy hears of it.
#[test]
fn fills_move_positions_and_reach_the_strategy() {
    let mut c = Core::new(|_| {});
    c.heartbeat(1, 0);
    let id = sent_id(&c.order(0, 1, 3));
    let done = |kind| {
        Input::Completion(Completion {
            venue: 0,
            engine_id: id,
            kind,
            t3: 1,
            t4: 2,
            t5: 3,
            scheduled_ns: 0,
        })
    };
    c.at(
        1,
        done(CompletionKind::Report(Report::Ack {
            engine_id: id,
            venue_id: 9,
        })),
    );
    let out = c.at(
        1,
        done(CompletionKind::Report(Report::Fill {
            engine_id: id,
            price: Price::from_raw(100),
            qty: Qty::from_raw(3),
            leaves: Qty::ZERO,
        })),
    );
    assert_eq!(events(&out), vec![(0, Some(EventKind::Fill), 0)]);
    let p = c
        .core
        .risk()
        .positions()
        .get(peregrine_risk::StrategyId(0), InstrumentId(1));
    assert_eq!(p.net, 3);
    assert_eq!(c.core.in_flight(), 0);
}

/// The operator's kill switch blocks new orders; `release` turns it off again
/// (journaled as the kill is, so a restart keeps it off) and orders go out.
#[test]
fn release_turns_the_kill_switch_off() {
    use peregrine_orchestrator::ControlCmd;
    let mut c = Core::new(|_| {});
    c.heartbeat(1, 0);
    c.at(
        0,
        Input::Control(ControlCmd::Kill {
            id: 1,
            strategy: None,
            timeout_ms: 1_000,
        }),
    );
    let out = c.order(0, 1, 2);
    assert!(
        !out.iter().any(|o| matches!(o, Output::Gateway { .. })),
        "{out:?}"
    );
    assert!(
        matches!(events(&out)[..], [(0, Some(EventKind::Reject), _)]),
        "refused while killed: {out:?}"
    );
    let out = c.at(
        1,
        Input::Control(ControlCmd::Release {
            id: 2,
            strategy: None,
        }),
    );
    assert!(
        out.iter()
            .any(|o| matches!(o, Output::Reply(r) if r.id == 2 && r.ok)),
        "{out:?}"
    );
    let offs = out
        .iter()
        .filter(|o| matches!(o, Output::Record(Rec::Kill { on: false, .. })))
        .count();
    assert_eq!(
        offs, 3,
        "the global switch and both strategies', journaled: {out:?}"
    );
    c.heartbeat(1, 0);
    let out = c.order(0, 2, 2);
    sent_id(&out);
}
