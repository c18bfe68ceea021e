//! The orchestrator in process: a fake strategy on real shm rings, a real gateway
//! thread with a simulated venue, the orchestrator driven by the test thread.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_queue::ArrayQueue;
use peregrine_queue::clock::now_ns;
use peregrine_queue::shm::{ShmSpsc, ShmSpscConsumer, ShmSpscProducer};
use peregrine_queue::{spsc, WaitStrategy};
use peregrine_strategy::doorbell::Doorbell;
use peregrine_strategy::msg::{reason, Event, EventKind, NewOrder, Request};
use peregrine_types::stamp;
use peregrine_types::{InstrumentId, Price, Qty, Side};

use super::{GatewayLink, Liveness, Orchestrator};
use crate::config::{EngineConfig, StrategyConfig};
use crate::control::{ControlCmd, LimitScope, Shared};
use crate::gateway::{Gateway, GatewayCounters};
use crate::rings::StrategyLink;
use peregrine_risk::{Limits, RiskReject};
use peregrine_venues::sim::{FillModel, SimVenue};
use peregrine_venues::{Report, Venue, VenueError, VenueOrder};

struct Rig {
    orch: Orchestrator,
    tx: ShmSpscProducer<Request>,
    rx: ShmSpscConsumer<Event>,
    /// A second strategy, `t` (no limits).
    other: (ShmSpscProducer<Request>, ShmSpscConsumer<Event>),
    stop: Arc<AtomicBool>,
    gateway: Option<std::thread::JoinHandle<()>>,
    /// The engine's doorbell (the gateway rings it; the orchestrator sleeps on it only
    /// when a test gives it with `with_doorbell`).
    bell: Arc<Doorbell>,
    _dir: tempfile::TempDir,
}

impl Drop for Rig {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(g) = self.gateway.take() {
            let _ = g.join();
        }
    }
}

fn rig(model: FillModel) -> Rig {
    rig_with(model, |_| {})
}

fn rig_with(model: FillModel, tweak: impl FnOnce(&mut EngineConfig)) -> Rig {
    let mut cfg = EngineConfig::default();
    if let Some(sim) = cfg.venues[0].sim.as_mut() {
        sim.model = model;
    }
    tweak(&mut cfg);
    let venue = SimVenue::new(
        cfg.venues[0].sim.expect("the default venue is simulated"),
        &cfg.instruments,
    );
    rig_on(cfg, venue)
}

fn rig_on<V: Venue + Send + 'static>(mut cfg: EngineConfig, venue: V) -> Rig {
    let dir = tempfile::tempdir().unwrap();
    cfg.shm_dir = Some(dir.path().to_owned());
    cfg.ring_capacity = 64;
    cfg.strategies.push(StrategyConfig {
        name: "s".into(),
        limits: Limits {
            max_order_qty: Some(10),
            ..Limits::default()
        },
        subscribe: Vec::new(),
    });
    cfg.strategies.push(StrategyConfig::new("t"));
    let submit = ShmSpsc::<Request>::create(&dir.path().join("s.submit"), 64).unwrap();
    let ret = ShmSpsc::<Event>::create(&dir.path().join("s.return"), 64).unwrap();
    let link = StrategyLink {
        name: "s".into(),
        rx: submit.consumer().unwrap(),
        tx: ret.producer().unwrap(),
        md: None,
    };
    let t = crate::rings::create_link(dir.path(), "t", 64, 64).unwrap();
    let other = attach_to(dir.path(), "t");
    let stop = Arc::new(AtomicBool::new(false));
    let bell =
        Arc::new(Doorbell::create(&peregrine_strategy::paths::doorbell(dir.path())).unwrap());
    let completions = Arc::new(ArrayQueue::new(64));
    let (inbox_tx, inbox_rx) = spsc::ring(64);
    let counters = Arc::new(GatewayCounters::default());
    let gw = Gateway {
        index: 0,
        venue,
        inbox: inbox_rx,
        completions: Arc::clone(&completions),
        counters: Arc::clone(&counters),
        stop: Arc::clone(&stop),
        wait: WaitStrategy::SpinThenYield.into(),
        bell: Some(Arc::clone(&bell)),
        journal: None,
        log: crate::log::EngineLog::stderr_direct(),
    };
    let gateway = Some(std::thread::spawn(move || gw.run()));
    let gws = vec![GatewayLink {
        name: "sim".into(),
        inbox: inbox_tx,
        counters,
        reason_name: V::reason_name,
    }];
    let shared = Arc::new(Shared::new(Arc::clone(&stop)));
    let orch = Orchestrator::new(&cfg, vec![link, t], gws, completions, shared);
    Rig {
        orch,
        tx: submit.producer().unwrap(),
        rx: ret.consumer().unwrap(),
        other,
        stop,
        gateway,
        bell,
        _dir: dir,
    }
}

/// A strategy's ends of its rings, as the SDK claims them.
fn attach_to(
    dir: &std::path::Path,
    name: &str,
) -> (ShmSpscProducer<Request>, ShmSpscConsumer<Event>) {
    use peregrine_strategy::paths;
    let tx = ShmSpsc::<Request>::attach(&paths::submit_ring(dir, name))
        .unwrap()
        .producer()
        .unwrap();
    let rx = ShmSpsc::<Event>::attach(&paths::return_ring(dir, name))
        .unwrap()
        .consumer()
        .unwrap();
    (tx, rx)
}

fn order(client_id: u64, qty: i64) -> NewOrder {
    NewOrder {
        client_id,
        ..NewOrder::limit(
            0,
            InstrumentId(1),
            Side::Buy,
            Price::from_raw(100),
            Qty::from_raw(qty),
        )
    }
}

impl Rig {
    fn send(&mut self, client_id: u64, qty: i64) {
        let o = order(client_id, qty);
        self.tx.try_push(Request::new_order(&o, now_ns())).unwrap();
    }

    /// Drives the orchestrator until strategy `t` got `n` events (10 s limit).
    fn other_events(&mut self, n: usize) -> Vec<Event> {
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut out = Vec::new();
        while out.len() < n {
            assert!(Instant::now() < deadline, "t: only {} of {n}", out.len());
            if !self.orch.poll_once() {
                self.orch.housekeeping(now_ns());
                std::thread::yield_now();
            }
            while let Some(ev) = self.other.1.try_pop() {
                out.push(ev);
            }
        }
        out
    }

    /// Drives the orchestrator until `n` events arrived (10 s limit).
    fn events(&mut self, n: usize) -> Vec<Event> {
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut out = Vec::new();
        while out.len() < n {
            assert!(
                Instant::now() < deadline,
                "only {} of {n} events",
                out.len()
            );
            if !self.orch.poll_once() {
                self.orch.housekeeping(now_ns());
                std::thread::yield_now();
            }
            while let Some(mut ev) = self.rx.try_pop() {
                ev.ts[stamp::STRATEGY_RECV] = now_ns();
                out.push(ev);
            }
        }
        out
    }
}

#[test]
fn order_ack_fill_with_non_decreasing_stamps() {
    let mut r = rig(FillModel::Full);
    r.send(1, 5);
    let ev = r.events(2);
    assert_eq!(ev[0].kind(), Some(EventKind::Ack));
    assert_eq!(ev[1].kind(), Some(EventKind::Fill));
    assert_eq!((ev[1].qty, ev[1].leaves, ev[1].price), (5, 0, 100));
    for e in &ev {
        assert!(e.ts.iter().all(|&t| t != 0), "{:?}", e.ts);
        assert!(e.ts.windows(2).all(|w| w[0] <= w[1]), "{:?}", e.ts);
        assert!(e.scheduled_delay_ns >= 1_000);
    }
    // The receipt completes the latency record.
    r.tx.try_push(Request::receipt(1, ev[0].ts[stamp::STRATEGY_RECV]))
        .unwrap();
    r.orch.poll_once();
    assert_eq!(r.orch.latency().samples(), 1);
    let pos = r
        .orch
        .risk()
        .positions()
        .get(peregrine_risk::StrategyId(0), InstrumentId(1));
    assert_eq!(pos.net, 5);
    assert_eq!(r.orch.in_flight(), 0);
}

#[test]
fn replace_is_risk_checked_sent_to_the_venue_and_reported() {
    // D = 20 ms: the second of two back-to-back replaces surely finds the first
    // still on its way.
    let mut r = rig_with(FillModel::Rest, |c| {
        if let Some(sim) = c.venues[0].sim.as_mut() {
            (sim.delay_lo_ns, sim.delay_hi_ns) = (20_000_000, 20_000_000);
        }
    });
    r.send(1, 5);
    assert_eq!(r.events(1)[0].kind(), Some(EventKind::Ack));
    let replace =
        |id, price, qty| Request::replace(id, Price::from_raw(price), Qty::from_raw(qty), now_ns());
    // Above max_order_qty (10): refused by risk, the order is unchanged.
    r.tx.try_push(replace(1, 101, 11)).unwrap();
    let ev = r.events(1);
    assert_eq!(ev[0].kind(), Some(EventKind::ReplaceReject));
    assert_eq!(ev[0].reason, RiskReject::MaxOrderQty.code());
    // Unknown order.
    r.tx.try_push(replace(9, 101, 1)).unwrap();
    assert_eq!(r.events(1)[0].reason, reason::UNKNOWN_ORDER);
    // Two back to back: the second is refused while the first is on its way.
    r.tx.try_push(replace(1, 101, 7)).unwrap();
    r.tx.try_push(replace(1, 102, 2)).unwrap();
    let ev = r.events(2);
    assert_eq!(ev[0].kind(), Some(EventKind::ReplaceReject));
    assert_eq!(ev[0].reason, reason::REPLACE_PENDING);
    assert_eq!(ev[1].kind(), Some(EventKind::Replaced));
    assert_eq!(
        (ev[1].client_id, ev[1].price, ev[1].qty, ev[1].leaves),
        (1, 101, 7, 7)
    );
    assert_eq!(r.orch.in_flight(), 1);
    // The cancel removes the new open quantity, and risk releases everything.
    r.tx.try_push(Request::cancel(1, now_ns())).unwrap();
    let ev = r.events(1);
    assert_eq!((ev[0].kind(), ev[0].qty), (Some(EventKind::Cancelled), 7));
    assert_eq!(r.orch.in_flight(), 0);
    assert_eq!(r.orch.risk().open_orders(None), 0);
}

#[test]
fn risk_reject_carries_reason_code() {
    let mut r = rig(FillModel::Full);
    r.send(1, 11);
    let ev = r.events(1);
    assert_eq!(ev[0].kind(), Some(EventKind::Reject));
    assert_eq!(ev[0].reason, RiskReject::MaxOrderQty.code());
    assert_ne!(ev[0].ts[stamp::STRATEGY_SEND], 0);
    assert_ne!(ev[0].ts[stamp::ORCH_RETURN], 0);
    assert_eq!(ev[0].ts[stamp::GATEWAY_RECV], 0, "never reached a gateway");
    assert_eq!(r.orch.risk().reject_count(RiskReject::MaxOrderQty), 1);
}

#[test]
fn malformed_request_is_rejected_counted_and_survived() {
    let mut r = rig(FillModel::Full);
    let mut bad = Request::cancel(9, now_ns());
    bad.kind = 99;
    r.tx.try_push(bad).unwrap();
    let ev = r.events(1);
    assert_eq!(ev[0].kind(), Some(EventKind::Reject));
    assert_eq!(ev[0].reason, reason::MALFORMED);
    assert_eq!(r.orch.malformed(0), 1);
    r.send(2, 1);
    assert_eq!(r.events(2)[1].kind(), Some(EventKind::Fill));
}

#[test]
fn kill_cancels_resting_orders_and_blocks_new_ones() {
    let mut r = rig(FillModel::Rest);
    for id in 1..=3 {
        r.send(id, 1);
    }
    assert!(r.events(3).iter().all(|e| e.kind() == Some(EventKind::Ack)));
    let shared = Arc::clone(&r.orch.shared);
    shared
        .commands
        .push(ControlCmd::Kill {
            id: 7,
            strategy: None,
            timeout_ms: 5_000,
        })
        .unwrap();
    let cancelled = r.events(3);
    assert!(cancelled
        .iter()
        .all(|e| e.kind() == Some(EventKind::Cancelled)));
    let deadline = Instant::now() + Duration::from_secs(5);
    let reply = loop {
        r.orch.housekeeping(now_ns());
        if let Some(reply) = shared.replies.pop() {
            break reply;
        }
        assert!(Instant::now() < deadline, "no kill reply");
        std::thread::sleep(Duration::from_millis(1));
    };
    assert!(reply.ok && reply.id == 7, "{reply:?}");
    r.send(4, 1);
    assert_eq!(r.events(1)[0].reason, RiskReject::KillSwitch.code());
    // Released: orders are accepted again.
    shared
        .commands
        .push(ControlCmd::Release {
            id: 8,
            strategy: None,
        })
        .unwrap();
    r.orch.housekeeping(now_ns());
    let reply = shared.replies.pop().expect("a release reply");
    assert!(reply.ok && reply.id == 8, "{reply:?}");
    r.send(5, 1);
    assert_ne!(r.events(1)[0].reason, RiskReject::KillSwitch.code());
}

#[test]
fn silent_strategy_is_declared_dead_and_its_orders_cancelled() {
    let mut r = rig_with(FillModel::Rest, |c| c.liveness.heartbeat_timeout_ms = 50);
    r.tx.try_push(Request::heartbeat(std::process::id(), now_ns()))
        .unwrap();
    r.send(1, 1);
    assert_eq!(r.events(1)[0].kind(), Some(EventKind::Ack));
    assert_eq!(r.orch.liveness(0), Liveness::Alive);
    // No more heartbeats: after 50 ms the orchestrator cancels the resting order.
    let ev = r.events(1);
    assert_eq!(ev[0].kind(), Some(EventKind::Cancelled));
    assert_eq!(r.orch.liveness(0), Liveness::Dead);
    assert_eq!(r.orch.in_flight(), 0);
}

#[test]
fn dead_policy_leave_keeps_orders_working() {
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
    assert_eq!(r.orch.in_flight(), 1, "orders left working");
    r.send(2, 1);
    assert_eq!(r.events(1)[0].reason, reason::STRATEGY_DOWN);
}

/// A scripted venue: every new order gets `answer` (an ack, or a reject with a
/// reason code); a cancel is taken and never confirmed (a hung venue); a replace
/// names an unknown order.
#[derive(Debug)]
struct Scripted {
    answer: Option<u16>,
    submitted: Vec<u64>,
}

impl Scripted {
    /// Acknowledges every order and never answers a cancel.
    fn hung() -> Scripted {
        Scripted {
            answer: None,
            submitted: Vec::new(),
        }
    }

    /// Rejects every new order as out of band.
    fn refusing() -> Scripted {
        Scripted {
            answer: Some(peregrine_book::RejectReason::PriceOutOfBand.code()),
            submitted: Vec::new(),
        }
    }
}

impl Venue for Scripted {
    fn submit(&mut self, order: VenueOrder, _now_ns: u64) -> Result<(), VenueError> {
        self.submitted.push(order.engine_id);
        Ok(())
    }

    fn cancel(&mut self, _engine_id: u64, _now_ns: u64) -> Result<(), VenueError> {
        Ok(()) // taken, never confirmed
    }

    fn replace(
        &mut self,
        engine_id: u64,
        _price: Price,
        _qty: Qty,
        _now_ns: u64,
    ) -> Result<(), VenueError> {
        Err(VenueError::UnknownOrder(engine_id))
    }

    fn poll(&mut self, _now_ns: u64, out: &mut dyn FnMut(Report)) -> usize {
        let n = self.submitted.len();
        for engine_id in self.submitted.drain(..) {
            out(match self.answer {
                None => Report::Ack {
                    engine_id,
                    venue_id: engine_id,
                },
                Some(reason) => Report::Rejected { engine_id, reason },
            });
        }
        n
    }
}

#[test]
fn the_summary_counts_venue_rejects_by_venue_and_reason() {
    let mut r = rig_on(EngineConfig::default(), Scripted::refusing());
    r.send(1, 1);
    r.send(2, 1);
    assert!(r
        .events(2)
        .iter()
        .all(|e| e.kind() == Some(EventKind::Reject)));
    let s = r.orch.summary(now_ns());
    assert_eq!(s.venues[0].tally.rejects, 2);
    assert_eq!(s.venue_rejects.len(), 1, "{:?}", s.venue_rejects);
    let v = &s.venue_rejects[0];
    assert_eq!(
        (v.venue.as_str(), v.name.as_str(), v.count),
        ("sim", "price_out_of_band", 2)
    );
}

#[test]
fn kill_against_a_hung_venue_times_out_with_a_clear_error() {
    let mut r = rig_on(EngineConfig::default(), Scripted::hung());
    r.send(1, 1);
    assert_eq!(r.events(1)[0].kind(), Some(EventKind::Ack));
    let shared = Arc::clone(&r.orch.shared);
    shared
        .commands
        .push(ControlCmd::Kill {
            id: 1,
            strategy: Some("s".into()),
            timeout_ms: 100,
        })
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    let reply = loop {
        r.orch.poll_once();
        r.orch.housekeeping(now_ns());
        if let Some(reply) = shared.replies.pop() {
            break reply;
        }
        assert!(Instant::now() < deadline, "no kill reply");
        std::thread::sleep(Duration::from_millis(1));
    };
    assert!(!reply.ok, "{reply:?}");
    assert!(reply.text.contains("1 orders still open"), "{}", reply.text);
}

mod idle;
mod lists;
mod ops;
#[test]
fn summary_counts_what_strategies_were_told() {
    let mut r = rig(FillModel::Rest);
    r.send(1, 1);
    r.send(2, 1);
    assert!(r.events(2).iter().all(|e| e.kind() == Some(EventKind::Ack)));
    let s = r.orch.summary(now_ns());
    assert_eq!((s.orders, s.acks, s.open_orders), (2, 2, 2));
    assert_eq!((s.venues[0].name.as_str(), s.venues[0].open), ("sim", 2));
    let shared = Arc::clone(&r.orch.shared);
    shared
        .commands
        .push(ControlCmd::Kill {
            id: 1,
            strategy: None,
            timeout_ms: 5_000,
        })
        .unwrap();
    r.orch.housekeeping(now_ns());
    assert_eq!(r.events(2)[1].kind(), Some(EventKind::Cancelled));
    r.send(3, 1); // the kill switch
    r.send(4, 11); // above max_order_qty (checked after the kill switch: still 103)
    r.events(2);
    let s = r.orch.summary(now_ns());
    assert_eq!(
        (s.orders, s.cancels, s.rejects, s.open_orders),
        (4, 2, 2, 0)
    );
    assert_eq!(s.kill_switch_rejects(), 2);
    assert_eq!(s.venues[0].tally.routed, 2);
    assert_eq!(s.venues[0].tally.cancels, 2);
    assert_eq!(
        s.venues[0].tally.rejects, 0,
        "risk rejects are not the venue's"
    );
    assert_eq!(s.strategies[0].name, "s");
    assert!(s.strategies[0].killed);
    assert_eq!(s.latency.len(), crate::latency::ROWS.len());
    // What the control command returns parses back to the same summary.
    r.orch.publish(s.at_ns);
    let json = shared.summary.lock().unwrap().clone();
    assert_eq!(crate::summary::parse(&json).unwrap(), s);
}
