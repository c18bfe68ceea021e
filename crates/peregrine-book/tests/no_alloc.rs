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
        Action::Cancel(x) => x.instrument = id,
        Action::Replace(x) => x.instrument = id,
        Action::MassCancel(x) => x.instrument = id,
        Action::SetStatus(x) => x.instrument = id,
        Action::Tick => {}
    }
}
