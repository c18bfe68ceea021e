//! Zero heap allocation in steady state: after a warm-up, a long random stream of adds,
//! cancels, replaces, mass cancels, expiries and matches performs no allocation at all,
//! counted per thread by `peregrine_testkit::CountingAllocator`.

mod common;

use common::Generator;
use peregrine_book::{Action, Command, Event, MatchingEngine, OrderBook};
use peregrine_testkit::allocations_during;
use peregrine_types::InstrumentSpec;

#[global_allocator]
static GLOBAL: peregrine_testkit::CountingAllocator = peregrine_testkit::CountingAllocator;

fn stream(seed: u64, n: usize) -> Vec<Command> {
    let mut g = Generator::new(seed);
    (0..n).map(|_| g.next_command()).collect()
}

#[test]
fn book_steady_state_allocates_nothing() {
    let mut book: OrderBook = OrderBook::new(common::spec(), 4_096);
    let mut events: Vec<Event> = Vec::with_capacity(4_096);
    let warm = stream(1, 20_000);
    let measured = stream(2, 200_000);
    for cmd in &warm {
        events.clear();
        book.execute(cmd, &mut events);
    }
    let mut produced = 0usize;
    let n = allocations_during(|| {
        for cmd in &measured {
            events.clear();
            book.execute(cmd, &mut events);
            produced += events.len();
        }
    });
    assert!(
        produced > 200_000,
        "the stream did real work ({produced} events)"
    );
    assert_eq!(n, 0, "allocations on the order path");
}

#[test]
fn engine_steady_state_allocates_nothing() {
    let specs = [
        common::spec(),
        InstrumentSpec {
            id: peregrine_types::InstrumentId(2),
            ..common::spec()
        },
    ];
    let mut engine: MatchingEngine = MatchingEngine::new(&specs, 4_096).unwrap();
    let mut events: Vec<Event> = Vec::with_capacity(4_096);
    // Spread the stream over both instruments.
    let mut cmds = stream(3, 100_000);
    for (i, c) in cmds.iter_mut().enumerate() {
        if i % 2 == 0 {
            retarget(c, 2);
        }
    }
    let (warm, measured) = cmds.split_at(20_000);
    for cmd in warm {
        events.clear();
        engine.execute(cmd, &mut events);
    }
    let n = allocations_during(|| {
        for cmd in measured {
            events.clear();
            engine.execute(cmd, &mut events);
        }
    });
    assert_eq!(n, 0, "allocations on the engine's order path");
}

/// A million resting orders (100,000 in debug builds), then a stream whose new ids
/// jump far ahead, so the id window slides past every old order and moves it into its
/// overflow map: still no allocation (everything, overflow included, is reserved for
/// the capacity).
#[test]
fn deep_book_with_a_sliding_id_window_allocates_nothing() {
    use peregrine_book::{Cancel, NewOrder, Replace};
    use peregrine_types::{AccountId, ClientOrderId, InstrumentId, OrderId, Price, Qty, Side};
    const DEPTH: u64 = if cfg!(debug_assertions) {
        100_000
    } else {
        1_000_000
    };
    let spec = InstrumentSpec {
        reference_price: 1_000_000,
        band: 100_000,
        tick_size: 1,
        lot_size: 1,
        min_qty: 1,
        max_qty: 1 << 30,
        ..InstrumentSpec::example(1)
    };
    let mut book: OrderBook = OrderBook::new(spec, DEPTH as usize + 1_024);
    let mut events: Vec<Event> = Vec::with_capacity(1_024);
    let order = |id: u64, n: u64| {
        let side = if n.is_multiple_of(2) {
            Side::Buy
        } else {
            Side::Sell
        };
        let off = 1 + (n * 7_919) % 50_000;
        let price = if side == Side::Buy {
            1_000_000 - off as i64
        } else {
            1_000_000 + off as i64
        };
        Action::New(NewOrder {
            instrument: InstrumentId(1),
            id: OrderId(id),
            client_id: ClientOrderId(id),
            account: AccountId(1 + (n % 1_000) as u32),
            side,
            order_type: peregrine_types::OrderType::Limit,
            tif: peregrine_types::TimeInForce::Gtc,
            stp: peregrine_types::StpMode::None,
            price: Price::from_raw(price),
            qty: Qty::from_raw(10),
            expire_at: peregrine_types::Timestamp(0),
        })
    };
    let mut live: Vec<(u64, u64)> = Vec::with_capacity(DEPTH as usize + 1_024);
    for n in 0..DEPTH {
        book.execute(
            &Command {
                ts: peregrine_types::Timestamp(1),
                action: order(n + 1, n),
            },
            &mut events,
        );
        live.push((n + 1, n));
        events.clear();
    }
    let window = <peregrine_book::IdWindow as peregrine_book::OrderIds>::with_capacity(
        DEPTH as usize + 1_024,
    )
    .window() as u64;
    let mut next_id = DEPTH + 1;
    let mut x = 12_345u64;
    let mut step = |book: &mut OrderBook,
                    events: &mut Vec<Event>,
                    live: &mut Vec<(u64, u64)>,
                    i: u64,
                    jump: u64| {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let pick = ((x >> 33) % live.len() as u64) as usize;
        let (id, n) = live[pick];
        let account = AccountId(1 + (n % 1_000) as u32);
        let action = match i % 10 {
            0..=3 => Action::Replace(Replace {
                instrument: InstrumentId(1),
                id: OrderId(id),
                account,
                client_id: ClientOrderId(id),
                price: match order(id, n + 2 * (x >> 40)) {
                    Action::New(o) => o.price,
                    _ => unreachable!(),
                },
                qty: Qty::from_raw(10),
            }),
            4..=6 => {
                live.swap_remove(pick);
                Action::Cancel(Cancel {
                    instrument: InstrumentId(1),
                    id: OrderId(id),
                    account,
                    client_id: ClientOrderId(id),
                })
            }
            _ => {
                next_id += jump;
                let n = n + 2 * (x >> 40);
                live.push((next_id, n));
                order(next_id, n)
            }
        };
        events.clear();
        book.execute(
            &Command {
                ts: peregrine_types::Timestamp(2),
                action,
            },
            events,
        );
    };
    // Warm-up with dense ids: the window holds every order.
    for i in 0..20_000 {
        step(&mut book, &mut events, &mut live, i, 1);
    }
    // Measured: ids jump by a sixteenth of the window, so it slides past every order
    // resting before, and the overflow map fills up here, not in the warm-up.
    let n = allocations_during(|| {
        for i in 0..DEPTH / 5 {
            step(&mut book, &mut events, &mut live, i, window / 16);
        }
    });
    book.check_invariants().unwrap();
    assert!(
        book.len() as u64 > DEPTH * 9 / 10,
        "the book stayed deep: {}",
        book.len()
    );
    assert_eq!(n, 0, "allocations on the order path at depth");
}

/// The venue's paths (issue 31) after a warm-up: a random stream of stops, stop-limits,
/// take-profits, trailing stops, icebergs, OCO / OTO / OTOCO lists, list cancels,
/// market-maker protection, halts and auctions (`common::venue`) allocates nothing.
/// The measured part must have elected stops, released list legs, cancelled list
/// siblings and traded icebergs and trailing stops, so the paths were run. Setting a
/// market-maker protection allocates its fill window by design (`mmp.rs`, `Mmp::set`:
/// a configuration command, not the order path; a re-Set reuses it, see
/// `mmp_reset_of_limits_reuses_the_window`): those steps run outside the count.
#[test]
fn venue_paths_allocate_nothing_once_warm() {
    use common::venue::{venue_spec, Op, VenueGenerator};
    use peregrine_book::{CancelReason, TriggerCause};
    let mut book: OrderBook = OrderBook::with_capacities(venue_spec(), 4_096, 1_024);
    let mut events: Vec<Event> = Vec::with_capacity(4_096);
    let mut gen = VenueGenerator::new(31);
    let warm: Vec<Op> = (0..20_000).map(|_| gen.next_op()).collect();
    let measured: Vec<Op> = (0..100_000).map(|_| gen.next_op()).collect();
    for op in &warm {
        events.clear();
        op.apply(&mut book, &mut events);
    }
    // Which orders are icebergs or trailing stops, by id (filled in before measuring).
    let mut special = std::collections::HashMap::new();
    for op in &measured {
        if let Op::Cmd(Command {
            action: Action::NewExt(e),
            ..
        }) = op
        {
            if !e.display.is_zero() {
                special.insert(e.order.id.0, 0usize);
            }
            if e.trigger.trail != 0 {
                special.insert(e.order.id.0, 1usize);
            }
        }
    }
    let (mut elected, mut released, mut siblings) = (0usize, 0usize, 0usize);
    let mut traded = [0usize; 2]; // fills of icebergs, of trailing stops
    let mut n = 0;
    for op in &measured {
        events.clear();
        if let Op::Cmd(Command {
            action:
                Action::Mmp(peregrine_book::MmpCommand {
                    op: peregrine_book::MmpOp::Set(_),
                    ..
                }),
            ..
        }) = op
        {
            op.apply(&mut book, &mut events);
            continue;
        }
        n += allocations_during(|| {
            op.apply(&mut book, &mut events);
            for e in &events {
                match e {
                    Event::Triggered(t) if t.cause == TriggerCause::Price => elected += 1,
                    Event::Triggered(_) => released += 1,
                    Event::Cancelled(c) if c.reason == CancelReason::ListCancelled => siblings += 1,
                    Event::Fill(f) => {
                        for id in [f.maker_id.0, f.taker_id.0] {
                            if let Some(&k) = special.get(&id) {
                                traded[k] += 1;
                            }
                        }
                    }
                    _ => {}
                }
            }
        });
    }
    book.check_invariants().unwrap();
    assert!(
        elected > 50 && released > 10 && siblings > 10 && traded[0] > 10 && traded[1] > 10,
        "the stream ran the venue paths: elected {elected} released {released} \
         siblings cancelled {siblings} iceberg fills {} trailing-stop fills {}",
        traded[0],
        traded[1]
    );
    assert_eq!(n, 0, "allocations on the venue's order paths");
}

/// Re-setting an account's market-maker protection reuses its fill window: after the
/// first Set (which allocates the window), Sets with the same or a smaller fill limit,
/// with fills in the window and while frozen, allocate nothing, and each leaves a
/// fresh, empty window with the new limits.
#[test]
fn mmp_reset_of_limits_reuses_the_window() {
    use peregrine_book::{MmpCommand, MmpOp, MmpParams, NewOrder};
    use peregrine_types::{
        AccountId, ClientOrderId, OrderId, OrderType, Price, Qty, Side, StpMode, TimeInForce,
        Timestamp,
    };
    let mut book: OrderBook = OrderBook::new(common::spec(), 1_024);
    let mut events: Vec<Event> = Vec::with_capacity(1_024);
    let maker = AccountId(7);
    let params = |max_fills| MmpParams {
        window_ns: 1_000_000,
        max_qty: 1_000_000,
        max_fills,
        freeze_ns: 0,
    };
    let set = |p: MmpParams, ts: u64| Command {
        ts: Timestamp(ts),
        action: Action::Mmp(MmpCommand {
            instrument: common::INST,
            account: maker,
            op: MmpOp::Set(p),
            request_id: ts,
        }),
    };
    let order = |id: u64, account: AccountId, side: Side, ts: u64| Command {
        ts: Timestamp(ts),
        action: Action::New(NewOrder {
            instrument: common::INST,
            id: OrderId(id),
            client_id: ClientOrderId(id),
            account,
            side,
            order_type: OrderType::Limit,
            tif: TimeInForce::Gtc,
            stp: StpMode::None,
            price: Price::from_raw(10_000),
            qty: Qty::from_raw(20),
            expire_at: Timestamp(0),
        }),
    };
    book.execute(&set(params(64), 1), &mut events);
    let mut ts = 10;
    let mut id = 100;
    // A maker fill of `maker` (its quote taken by another account).
    let mut fill = |book: &mut OrderBook, events: &mut Vec<Event>| {
        for (acct, side) in [(maker, Side::Sell), (AccountId(8), Side::Buy)] {
            ts += 1;
            id += 1;
            events.clear();
            book.execute(&order(id, acct, side, ts), events);
        }
        ts
    };
    let mut allocs = 0;
    let mut frozen_seen = false;
    // Each round: a maker fill under the previous round's limits (the round after the
    // limit of 1 trips and freezes the account), then a Set.
    for (round, max_fills) in [64, 3, 64, 1, 2, 64].into_iter().enumerate() {
        let now = fill(&mut book, &mut events);
        assert!(
            events.iter().any(|e| matches!(e, Event::Fill(_))),
            "round {round}: the maker's quote traded"
        );
        frozen_seen |= book
            .venue_state()
            .mmp
            .iter()
            .any(|m| m.account == maker && m.frozen);
        events.clear();
        allocs +=
            allocations_during(|| book.execute(&set(params(max_fills), now + 1), &mut events));
        let view = book.venue_state().mmp;
        let m = view.iter().find(|m| m.account == maker).unwrap();
        assert_eq!(
            (m.params.max_fills, m.fills.len(), m.frozen),
            (max_fills, 0, false),
            "round {round}: a Set leaves a fresh window"
        );
    }
    assert!(frozen_seen, "a Set also lifted a freeze");
    assert_eq!(allocs, 0, "allocations when re-setting a protection");
}

/// The counter itself works: a Vec growing under measurement is seen.
#[test]
fn counter_sees_allocations() {
    let n = allocations_during(|| {
        let v: Vec<u64> = Vec::with_capacity(10);
        std::hint::black_box(v);
    });
    assert_eq!(n, 1);
}

fn retarget(c: &mut Command, inst: u32) {
    let id = peregrine_types::InstrumentId(inst);
    match &mut c.action {
        Action::New(o) => o.instrument = id,
        Action::NewExt(e) => e.order.instrument = id,
        Action::CancelList(x) => x.instrument = id,
        Action::Mmp(x) => x.instrument = id,
        Action::Market(x) => x.instrument = id,
        Action::Cancel(x) => x.instrument = id,
        Action::Replace(x) => x.instrument = id,
        Action::MassCancel(x) => x.instrument = id,
        Action::SetStatus(x) => x.instrument = id,
        Action::Tick => {}
    }
}
