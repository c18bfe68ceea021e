//! Operations: run-time limits, bad input, queue counters, re-attaching a restarted
//! strategy; on the same in-process rig as the parent module.

use super::*;

/// Sends a control command and drives housekeeping until its reply (5 s limit).
fn control(r: &mut Rig, cmd: ControlCmd) -> crate::control::ControlReply {
    let shared = Arc::clone(&r.orch.shared);
    shared.commands.push(cmd).unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        r.orch.poll_once();
        r.orch.housekeeping(now_ns());
        if let Some(reply) = shared.replies.pop() {
            return reply;
        }
        assert!(Instant::now() < deadline, "no control reply");
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn limits_cmd(id: u64, scope: LimitScope, changes: &[&str]) -> ControlCmd {
    ControlCmd::Limits {
        id,
        scope,
        changes: Limits::parse_changes(changes.iter().copied()).unwrap(),
    }
}

#[test]
fn limits_change_at_run_time_between_orders() {
    let mut r = rig(FillModel::Full);
    r.send(1, 8);
    assert_eq!(r.events(2)[1].kind(), Some(EventKind::Fill));
    let s = || LimitScope::Strategy("s".into());
    let reply = control(
        &mut r,
        limits_cmd(1, s(), &["max_order_qty=5", "price_collar=300"]),
    );
    assert!(reply.ok, "{reply:?}");
    assert!(
        reply.text.contains("max_order_qty=5") && reply.text.contains("price_collar=300"),
        "{}",
        reply.text
    );
    r.send(2, 8);
    let ev = r.events(1);
    assert_eq!(ev[0].reason, RiskReject::MaxOrderQty.code());
    r.send(3, 5);
    assert_eq!(r.events(2)[1].kind(), Some(EventKind::Fill), "5 is allowed");
    // Global scope; then showing everything.
    let reply = control(
        &mut r,
        limits_cmd(2, LimitScope::Global, &["max_open_orders=1"]),
    );
    assert!(
        reply.ok && reply.text.contains("global: max_order_qty=off"),
        "{reply:?}"
    );
    let reply = control(&mut r, limits_cmd(3, LimitScope::All, &[]));
    assert!(reply.text.contains("max_open_orders=1"), "{}", reply.text);
    assert!(
        reply.text.contains("\ns: max_order_qty=5"),
        "{}",
        reply.text
    );
    // An unknown strategy changes nothing.
    let reply = control(
        &mut r,
        limits_cmd(4, LimitScope::Strategy("x".into()), &["burst=1"]),
    );
    assert!(
        !reply.ok && reply.text.contains("unknown strategy"),
        "{reply:?}"
    );
    assert_eq!(r.orch.risk().reject_count(RiskReject::MaxOrderQty), 1);
}

#[test]
fn malformed_fields_are_rejected_with_a_reason_and_counted() {
    let mut r = rig(FillModel::Full);
    let mut cases: Vec<(Request, u16)> = Vec::new();
    for qty in [0, -5] {
        cases.push((Request::new_order(&order(10, qty), now_ns()), 101));
    }
    let mut o = order(11, 1);
    o.instrument = InstrumentId(99);
    cases.push((Request::new_order(&o, now_ns()), reason::UNKNOWN_INSTRUMENT));
    let mut o = order(12, 1);
    o.venue = 7;
    cases.push((Request::new_order(&o, now_ns()), reason::UNKNOWN_VENUE));
    let mut o = order(13, 1);
    o.price = Price::from_raw(-1);
    cases.push((Request::new_order(&o, now_ns()), 101));
    let mut bad_side = Request::new_order(&order(14, 1), now_ns());
    bad_side.side = 7;
    cases.push((bad_side, reason::MALFORMED));
    let mut bad_kind = Request::new_order(&order(15, 1), now_ns());
    bad_kind.kind = 0;
    cases.push((bad_kind, reason::MALFORMED));
    cases.push((Request::cancel(999, now_ns()), reason::UNKNOWN_ORDER));
    for (req, code) in &cases {
        r.tx.try_push(*req).unwrap();
        let ev = r.events(1);
        assert_eq!(ev[0].reason, *code, "{req:?} -> {:?}", ev[0]);
    }
    assert_eq!(r.orch.malformed(0), 2);
    assert_eq!(r.orch.risk().reject_count(RiskReject::InvalidOrder), 3);
    assert_eq!(r.orch.in_flight(), 0);
    let text = r.orch.render(now_ns());
    for name in [
        "unknown_instrument(203)=1",
        "unknown_venue(202)=1",
        "malformed(201)=2",
    ] {
        assert!(text.contains(name), "{name} in\n{text}");
    }
    // Still serving: a good order fills.
    r.send(20, 1);
    assert_eq!(r.events(2)[1].kind(), Some(EventKind::Fill));
}

#[test]
fn a_flood_of_garbage_does_not_stall_another_strategy() {
    let mut r = rig(FillModel::Full);
    // `s` fills its submit ring with garbage and never reads its return ring.
    let mut bad = Request::cancel(1, 1);
    bad.kind = 0xEE;
    while r.tx.try_push(bad).is_ok() {}
    let o = order(1, 1);
    r.other
        .0
        .try_push(Request::new_order(&o, now_ns()))
        .unwrap();
    let ev = r.other_events(2);
    assert_eq!(ev[1].kind(), Some(EventKind::Fill), "t is served");
    // Keep going until s's garbage is drained: its return ring overflows (dropped
    // and counted), nothing blocks.
    let deadline = Instant::now() + Duration::from_secs(10);
    while r.orch.malformed(0) < 64 {
        assert!(Instant::now() < deadline, "garbage not drained");
        r.orch.poll_once();
    }
    for _ in 0..10 {
        r.tx.try_push(bad).unwrap();
    }
    while r.orch.malformed(0) < 74 {
        assert!(Instant::now() < deadline, "garbage not drained");
        r.orch.poll_once();
    }
    let rows = r.orch.queue_rows();
    let ret = rows.iter().find(|q| q.name == "return s").unwrap();
    assert_eq!((ret.pushes, ret.full, ret.depth), (64, 10, 64), "{ret:?}");
    let submit = rows.iter().find(|q| q.name == "submit s").unwrap();
    assert_eq!(
        (submit.pushes, submit.pops, submit.full),
        (74, 74, 1),
        "{submit:?}"
    );
    r.other
        .0
        .try_push(Request::new_order(&order(2, 1), now_ns()))
        .unwrap();
    assert_eq!(
        r.other_events(2)[1].kind(),
        Some(EventKind::Fill),
        "t still served"
    );
}

#[test]
fn queue_counters_add_up_after_a_run() {
    let mut r = rig(FillModel::Full);
    for id in 1..=20 {
        r.send(id, 1);
    }
    r.send(21, 50); // a risk reject
    let ev = r.events(41);
    assert_eq!(
        ev.iter()
            .filter(|e| e.kind() == Some(EventKind::Fill))
            .count(),
        20
    );
    let rows = r.orch.queue_rows();
    let names: Vec<&str> = rows.iter().map(|q| q.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "submit s",
            "submit t",
            "inbox sim",
            "completion",
            "return s",
            "return t"
        ]
    );
    for q in &rows {
        assert_eq!(q.pushes, q.pops + q.depth, "{q:?}");
        assert_eq!(q.discarded, 0, "{q:?}");
        assert_eq!(q.full, 0, "{q:?}");
    }
    let get = |n: &str| rows.iter().find(|q| q.name == n).unwrap().clone();
    assert_eq!(get("submit s").pushes, 21);
    assert_eq!(get("inbox sim").pushes, 20);
    assert_eq!(get("completion").pushes, 40, "an ack and a fill per order");
    assert_eq!(get("return s").pushes, 41);
    assert_eq!(get("return s").pops, 41);
    assert_eq!(r.orch.in_flight(), 0);
    // Rendered for `stats`.
    let text = r.orch.render(now_ns());
    assert!(text.contains("return s"), "{text}");
}

#[test]
fn a_dead_strategy_gets_fresh_rings_once_its_orders_are_cancelled() {
    let mut r = rig_with(FillModel::Rest, |c| c.liveness.heartbeat_timeout_ms = 50);
    r.send(1, 1);
    r.send(2, 1);
    assert!(r.events(2).iter().all(|e| e.kind() == Some(EventKind::Ack)));
    // Silence: declared dead, both orders cancelled (venue-confirmed), then re-armed.
    let cancelled = r.events(2);
    assert!(cancelled
        .iter()
        .all(|e| e.kind() == Some(EventKind::Cancelled)));
    let deadline = Instant::now() + Duration::from_secs(5);
    while r.orch.generation(0) != 2 {
        assert!(Instant::now() < deadline, "never re-armed");
        r.orch.poll_once();
        r.orch.housekeeping(now_ns());
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(r.orch.liveness(0), Liveness::Waiting);
    assert!(!r.orch.risk().is_killed(peregrine_risk::StrategyId(0)));
    // The dead incarnation's handles write into the void.
    r.send(1, 1);
    for _ in 0..100 {
        r.orch.poll_once();
    }
    assert_eq!(
        r.orch.in_flight(),
        0,
        "a stale message is never taken as an order"
    );
    assert_eq!(r.rx.try_pop(), None);
    // A restarted process attaches to the new files and trades with client id 1 again.
    let dir = r.orch.dir.clone();
    let (tx, rx) = attach_to(&dir, "s");
    (r.tx, r.rx) = (tx, rx);
    r.tx.try_push(Request::heartbeat(std::process::id(), now_ns()))
        .unwrap();
    r.send(1, 1);
    assert_eq!(r.events(1)[0].kind(), Some(EventKind::Ack));
    assert_eq!(r.orch.liveness(0), Liveness::Alive);
    let submit = r.orch.queue_rows().into_iter().next().unwrap();
    assert_eq!(
        (submit.pushes, submit.pops, submit.discarded),
        (4, 4, 0),
        "two orders before the death, a heartbeat and an order after: totals carry over"
    );
}

#[test]
fn a_dead_strategy_that_keeps_writing_is_answered_strategy_down_and_counted() {
    let mut r = rig_with(FillModel::Rest, |c| {
        c.liveness.heartbeat_timeout_ms = 20;
        c.liveness.on_dead = crate::config::DeadPolicy::Leave;
    });
    r.send(1, 1);
    assert_eq!(r.events(1)[0].kind(), Some(EventKind::Ack));
    let deadline = Instant::now() + Duration::from_secs(5);
    while r.orch.liveness(0) != Liveness::Dead {
        assert!(Instant::now() < deadline, "never declared dead");
        r.orch.housekeeping(now_ns());
        std::thread::sleep(Duration::from_millis(2));
    }
    let dir = r.orch.dir.clone();
    assert!(
        !peregrine_strategy::paths::submit_ring(&dir, "s").exists(),
        "unlinked at once: nobody new attaches to a dead incarnation's rings"
    );
    r.tx.try_push(Request::heartbeat(1, now_ns())).unwrap();
    r.send(2, 1);
    assert_eq!(r.events(1)[0].reason, reason::STRATEGY_DOWN);
    assert_eq!(r.orch.after_dead(0), 2);
    assert_eq!(
        r.orch.liveness(0),
        Liveness::Dead,
        "a heartbeat does not revive it"
    );
    assert_eq!(r.orch.generation(0), 1, "its order is still open (leave)");
    // The other strategy is untouched.
    r.other
        .0
        .try_push(Request::new_order(&order(1, 1), now_ns()))
        .unwrap();
    assert_eq!(r.other_events(1)[0].kind(), Some(EventKind::Ack));
}

#[test]
fn messages_left_in_retired_rings_are_counted_as_discarded() {
    let mut r = rig_with(FillModel::Rest, |c| c.liveness.heartbeat_timeout_ms = 20);
    r.send(1, 1);
    assert_eq!(r.events(1)[0].kind(), Some(EventKind::Ack));
    // Silence: dead, its order cancelled (the Cancelled event is the last one it gets).
    assert_eq!(r.events(1)[0].kind(), Some(EventKind::Cancelled));
    // Three more requests land in the old ring; housekeeping alone (no polling)
    // re-creates the rings before anything reads them.
    for id in 2..=4 {
        r.send(id, 1);
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    while r.orch.generation(0) != 2 {
        assert!(Instant::now() < deadline, "never re-armed");
        r.orch.housekeeping(now_ns());
        std::thread::sleep(Duration::from_millis(1));
    }
    let rows = r.orch.queue_rows();
    let submit = rows.iter().find(|q| q.name == "submit s").unwrap();
    assert_eq!(
        (submit.pushes, submit.pops, submit.depth, submit.discarded),
        (4, 1, 0, 3),
        "{submit:?}"
    );
    for q in &rows {
        assert_eq!(q.pushes, q.pops + q.depth + q.discarded, "{q:?}");
    }
}
