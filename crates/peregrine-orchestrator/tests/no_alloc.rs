//! The orchestrator core's order path allocates nothing: after a warm-up, 200,000
//! operations (new orders through risk to the venue, acknowledgements, partial and
//! full fills, cancels, replaces, rejects, heartbeats, receipts, housekeeping ticks),
//! with journaling on, perform no heap allocation at all, counted per thread by
//! `peregrine_testkit::CountingAllocator`. (The core makes no system call either: it
//! has no handle to make one with; `handle` takes plain data and a time.)

use std::collections::VecDeque;

use peregrine_orchestrator::{
    Completion, CompletionKind, CoreConfig, GatewayCmd, Input, Orchestrator, Output, Outputs,
};
use peregrine_risk::Limits;
use peregrine_strategy::msg::{EventKind, NewOrder, Request};
use peregrine_testkit::allocations_during;
use peregrine_types::{InstrumentId, Price, Qty, Rng, Side};
use peregrine_venues::Report;

#[global_allocator]
static GLOBAL: peregrine_testkit::CountingAllocator = peregrine_testkit::CountingAllocator;

/// The core, a venue that answers everything, and strategies that keep a few orders
/// open each.
struct Rig {
    core: Orchestrator,
    out: Outputs,
    rng: Rng,
    now: u64,
    /// Venue answers waiting (the venue acts on them one per step).
    venue: VecDeque<(GatewayCmd, u8)>,
    /// Per strategy: its open client ids (fixed capacity), the next id.
    open: Vec<(Vec<u64>, u64)>,
    next_venue_id: u64,
    work: u64,
}

const STRATEGIES: u16 = 4;

impl Rig {
    fn new() -> Rig {
        let mut cfg = CoreConfig::new(&["a", "b", "c", "d"], 2);
        for s in &mut cfg.strategies {
            s.limits = Limits {
                max_order_qty: Some(50),
                max_open_orders: Some(32),
                max_position: Some(1_000_000),
                ..Limits::default()
            };
        }
        cfg.journal = true;
        cfg.max_in_flight = 1_024;
        let now = 1_000_000_000;
        Rig {
            core: Orchestrator::new(cfg, now),
            out: Outputs::with_capacity(1_024),
            rng: Rng::new(7),
            now,
            venue: VecDeque::with_capacity(4_096),
            open: (0..STRATEGIES)
                .map(|_| (Vec::with_capacity(64), 1))
                .collect(),
            next_venue_id: 1,
            work: 0,
        }
    }

    fn handle(&mut self, input: Input) {
        self.core.handle(input, self.now, &mut self.out);
        for o in self.out.drain() {
            match o {
                Output::Gateway { cmd, .. } => {
                    let pick = (self.rng.next_u64() % 4) as u8;
                    self.venue.push_back((cmd, pick));
                }
                Output::Event { strategy, event } => {
                    let (open, _) = &mut self.open[strategy as usize];
                    match event.kind() {
                        Some(EventKind::Ack) if open.len() < open.capacity() => {
                            open.push(event.client_id);
                        }
                        Some(EventKind::Fill | EventKind::Cancelled) if event.leaves == 0 => {
                            open.retain(|c| *c != event.client_id);
                        }
                        _ => {}
                    }
                    self.work += 1;
                }
                _ => {}
            }
        }
    }

    fn step(&mut self) {
        self.now += 10_000;
        let s = (self.rng.next_u64() % u64::from(STRATEGIES)) as u16;
        let t = self.now;
        match self.rng.next_u64() % 10 {
            0..=3 => {
                let (_, next) = &mut self.open[s as usize];
                let id = *next;
                *next += 1;
                let side = if id % 2 == 0 { Side::Buy } else { Side::Sell };
                let venue = (id % 2) as u32;
                let mut o = NewOrder::limit(
                    venue,
                    InstrumentId(1),
                    side,
                    Price::from_raw(10_000 + (id % 7) as i64),
                    Qty::from_raw(1 + (id % 5) as i64),
                );
                o.client_id = id;
                self.handle(Input::Request {
                    strategy: s,
                    req: Request::new_order(&o, t),
                });
            }
            4 => {
                let id = self.open[s as usize].0.first().copied();
                if let Some(id) = id {
                    self.handle(Input::Request {
                        strategy: s,
                        req: Request::cancel(id, t),
                    });
                }
            }
            5 => {
                let id = self.open[s as usize].0.last().copied();
                if let Some(id) = id {
                    self.handle(Input::Request {
                        strategy: s,
                        req: Request::replace(id, Price::from_raw(10_001), Qty::from_raw(2), t),
                    });
                }
            }
            6 => self.handle(Input::Request {
                strategy: s,
                req: Request::heartbeat(100 + u32::from(s), t),
            }),
            7 => self.handle(Input::Request {
                strategy: s,
                req: Request::receipt(1, t),
            }),
            _ => self.handle(Input::Tick),
        }
        // The venue answers one command per step.
        if let Some((cmd, pick)) = self.venue.pop_front() {
            let report = match cmd {
                GatewayCmd::ListLeg { .. } => unreachable!("this workload sends no lists"),
                GatewayCmd::New(o) if pick == 0 => Report::Rejected {
                    engine_id: o.engine_id,
                    reason: 3,
                },
                GatewayCmd::New(o) => {
                    self.next_venue_id += 1;
                    // After the ack, a partial fill, then the rest (queued behind).
                    self.venue.push_back((GatewayCmd::Cancel(o.engine_id), 9));
                    Report::Ack {
                        engine_id: o.engine_id,
                        venue_id: self.next_venue_id,
                    }
                }
                GatewayCmd::Cancel(id) if pick == 9 => Report::Fill {
                    engine_id: id,
                    price: Price::from_raw(10_000),
                    qty: Qty::from_raw(1),
                    leaves: Qty::from_raw(1),
                },
                GatewayCmd::Cancel(id) => Report::Cancelled {
                    engine_id: id,
                    qty: Qty::from_raw(1),
                    leaves: Qty::ZERO,
                },
                GatewayCmd::Replace {
                    engine_id,
                    price,
                    qty,
                } => Report::Replaced {
                    engine_id,
                    price,
                    qty,
                },
            };
            let c = Completion {
                venue: 0,
                engine_id: report.engine_id(),
                kind: CompletionKind::Report(report),
                t3: t,
                t4: t,
                t5: t,
                scheduled_ns: 0,
            };
            self.handle(Input::Completion(c));
        }
    }
}

#[test]
fn the_order_path_allocates_nothing() {
    let mut rig = Rig::new();
    // Warm-up: every path once, every (strategy, instrument) position and every
    // venue's reference price made, the output buffer at its working size.
    for _ in 0..50_000 {
        rig.step();
    }
    let before = rig.work;
    let n = allocations_during(|| {
        for _ in 0..200_000 {
            rig.step();
        }
    });
    let done = rig.work - before;
    assert!(done > 100_000, "the run did real work ({done} events)");
    assert!(rig.core.tally().fills > 1_000, "fills happened");
    assert_eq!(n, 0, "{n} allocations on the order path");
}

/// Order lists once warm: the legs gathered, the list checked and sent, its status,
/// acks, a fill and the sibling's cancel; and lists left incomplete (refused).
#[test]
fn the_list_path_allocates_nothing() {
    use peregrine_types::ListKind;
    use peregrine_venues::ListState;
    let mut cfg = CoreConfig::new(&["a"], 1);
    cfg.venues[0].conditional = true;
    cfg.venues[0].lists = true;
    cfg.journal = true;
    cfg.max_in_flight = 1_024;
    let mut now = 1_000_000_000;
    let mut core = Orchestrator::new(cfg, now);
    let mut out = Outputs::with_capacity(1_024);
    let mut next_id = 1;
    let mut lists = 0u64;
    let mut round = |i: u64, core: &mut Orchestrator, out: &mut Outputs| {
        now += 10_000;
        let leg = |id: u64, price: i64| {
            let mut o = NewOrder::limit(
                0,
                InstrumentId(1),
                Side::Sell,
                Price::from_raw(price),
                Qty::from_raw(1),
            );
            o.client_id = id;
            o
        };
        let legs = [
            leg(next_id, 10_100),
            leg(next_id + 1, 9_700).stop(Price::from_raw(9_800)),
        ];
        next_id += 2;
        let n = if i.is_multiple_of(3) { 1 } else { 2 }; // every third list misses its leg 1
        for (k, o) in legs[..n].iter().enumerate() {
            for req in [
                Request::list_leg(o, ListKind::Oco, k as u8, now),
                Request::new_order(o, now),
            ] {
                core.handle(Input::Request { strategy: 0, req }, now, out);
            }
        }
        if n == 1 {
            let req = Request::heartbeat(100, now);
            core.handle(Input::Request { strategy: 0, req }, now, out);
        }
        let mut sent = [0; 2];
        let mut n_sent = 0;
        for o in out.drain() {
            if let Output::Gateway {
                cmd: GatewayCmd::ListLeg { index, order, .. },
                ..
            } = o
            {
                sent[index as usize] = order.engine_id;
                n_sent += 1;
            }
        }
        if n_sent != 2 {
            return;
        }
        let [a, b] = sent;
        lists += 1;
        let status = |s| Report::ListStatus {
            engine_id: a,
            status: s,
            reason: 0,
        };
        for (id, r) in [
            (a, status(ListState::Accepted)),
            (
                a,
                Report::Ack {
                    engine_id: a,
                    venue_id: a,
                },
            ),
            (
                b,
                Report::Ack {
                    engine_id: b,
                    venue_id: b,
                },
            ),
            (
                a,
                Report::Fill {
                    engine_id: a,
                    price: Price::from_raw(10_100),
                    qty: Qty::from_raw(1),
                    leaves: Qty::ZERO,
                },
            ),
            (
                b,
                Report::Cancelled {
                    engine_id: b,
                    qty: Qty::from_raw(1),
                    leaves: Qty::ZERO,
                },
            ),
            (a, status(ListState::Done)),
        ] {
            let c = Completion {
                venue: 0,
                engine_id: id,
                kind: CompletionKind::Report(r),
                t3: now,
                t4: now,
                t5: now,
                scheduled_ns: 0,
            };
            core.handle(Input::Completion(c), now, out);
            out.drain().for_each(drop);
        }
    };
    for i in 0..3_000 {
        round(i, &mut core, &mut out);
    }
    let n = allocations_during(|| {
        for i in 0..20_000 {
            round(i, &mut core, &mut out);
        }
    });
    assert!(lists > 10_000, "lists were sent ({lists})");
    assert_eq!(core.in_flight(), 0, "every leg resolved");
    assert_eq!(n, 0, "{n} allocations on the list path");
}
