//! One book, one workload, no harness: the smallest program that runs the book's
//! order path, for instruction counts and cache misses per command under valgrind
//! (`--tool=callgrind --toggle-collect='drive::run'`, where the bench's harness
//! would blur the figures) and for a quick timing. It uses only the public API that
//! has not changed since before issue 31, so the same file runs in an older checkout
//! for an A/B (docs/performance.md, "Session 7"); for that reason it builds its
//! commands itself rather than sharing the bench's workload code, which changed.
//!
//! ```sh
//! cargo run --release -p peregrine-book --example drive -- cross 100000 20
//! valgrind --tool=callgrind --toggle-collect='drive::run' \
//!     target/release/examples/drive mix 200000 1
//! ```
//!
//! Workloads (`steps` commands each, after an untimed setup):
//! * `cancel`: cancel the middle order of a 1,000-order queue, then add one at its back;
//! * `cross`: an IOC taking one resting order, then a resting order to replace it;
//! * `insert`: a resting order at a random price over 500 levels a side, then its cancel;
//! * `mix`: 50,000 resting orders over +-50,000 levels; 82% price moves (replace),
//!   9% new resting orders, 9% cancels, bids below the mid and asks above (no trades).

use std::collections::VecDeque;
use std::time::Instant;

use peregrine_book::{Action, Cancel, Command, CountingSink, NewOrder, OrderBook, Replace};
use peregrine_types::{
    AccountId, ClientOrderId, InstrumentId, InstrumentSpec, OrderId, OrderType, Price, Qty, Rng,
    Side, StpMode, TimeInForce, Timestamp,
};

fn account(id: u64) -> AccountId {
    AccountId((id % 100_000) as u32 + 1)
}

fn add(id: u64, side: Side, price: i64, ioc: bool) -> Command {
    Command {
        ts: Timestamp(0),
        action: Action::New(NewOrder {
            instrument: InstrumentId(1),
            id: OrderId(id),
            client_id: ClientOrderId(id),
            account: account(id),
            side,
            order_type: OrderType::Limit,
            tif: if ioc {
                TimeInForce::Ioc
            } else {
                TimeInForce::Gtc
            },
            stp: StpMode::None,
            price: Price::from_raw(price),
            qty: Qty::from_raw(10),
            expire_at: Timestamp(0),
        }),
    }
}

fn cancel(id: u64) -> Command {
    Command {
        ts: Timestamp(0),
        action: Action::Cancel(Cancel {
            instrument: InstrumentId(1),
            id: OrderId(id),
            account: account(id),
            client_id: ClientOrderId(id),
        }),
    }
}

fn replace(id: u64, price: i64) -> Command {
    Command {
        ts: Timestamp(0),
        action: Action::Replace(Replace {
            instrument: InstrumentId(1),
            id: OrderId(id),
            account: account(id),
            client_id: ClientOrderId(id),
            price: Price::from_raw(price),
            qty: Qty::from_raw(10),
        }),
    }
}

/// A price `1..=levels` ticks away from `mid` on `side`'s own side of the book.
fn away(side: Side, mid: i64, rng: &mut Rng, levels: u64) -> i64 {
    let off = 1 + rng.below(levels) as i64;
    match side {
        Side::Buy => mid - off,
        Side::Sell => mid + off,
    }
}

fn side_of(id: u64) -> Side {
    if id.is_multiple_of(2) {
        Side::Buy
    } else {
        Side::Sell
    }
}

/// (reference price, band, capacity, setup, steps).
type Workload = (i64, i64, usize, Vec<Command>, Vec<Command>);

fn workload(name: &str, n: usize) -> Option<Workload> {
    let mut rng = Rng::new(31);
    let mut id = 0;
    let mut setup = Vec::new();
    let mut steps = Vec::with_capacity(2 * n);
    let small = |setup: &mut Vec<Command>, id: &mut u64, rng: &mut Rng| {
        for _ in 0..1_000 {
            *id += 1;
            let side = side_of(*id);
            setup.push(add(*id, side, away(side, 100_000, rng, 500), false));
        }
    };
    match name {
        "cancel" => {
            let mut queue: VecDeque<u64> = (1..=1_000).collect();
            setup.extend(queue.iter().map(|&i| add(i, Side::Buy, 99_990, false)));
            id = 1_000;
            for _ in 0..n {
                let victim = queue.remove(queue.len() / 2)?;
                steps.push(cancel(victim));
                id += 1;
                queue.push_back(id);
                steps.push(add(id, Side::Buy, 99_990, false));
            }
            Some((100_000, 2_000, 4_096, setup, steps))
        }
        "cross" => {
            small(&mut setup, &mut id, &mut rng);
            for _ in 0..4 {
                id += 1;
                setup.push(add(id, Side::Sell, 100_000, false));
            }
            for _ in 0..n {
                steps.push(add(id + 1, Side::Buy, 100_000, true));
                steps.push(add(id + 2, Side::Sell, 100_000, false));
                id += 2;
            }
            Some((100_000, 2_000, 4_096, setup, steps))
        }
        "insert" => {
            small(&mut setup, &mut id, &mut rng);
            for _ in 0..n {
                id += 1;
                let side = if rng.below(2) == 0 {
                    Side::Buy
                } else {
                    Side::Sell
                };
                steps.push(add(id, side, away(side, 100_000, &mut rng, 500), false));
                steps.push(cancel(id));
            }
            Some((100_000, 2_000, 4_096, setup, steps))
        }
        "mix" => {
            let mid = 1_000_000;
            let mut live = Vec::new();
            for _ in 0..50_000 {
                id += 1;
                let side = side_of(id);
                setup.push(add(id, side, away(side, mid, &mut rng, 50_000), false));
                live.push(id);
            }
            for _ in 0..n {
                let roll = rng.below(100);
                if roll < 82 {
                    let who = live[rng.below(live.len() as u64) as usize];
                    steps.push(replace(who, away(side_of(who), mid, &mut rng, 50_000)));
                } else if roll < 91 {
                    id += 1;
                    let side = side_of(id);
                    steps.push(add(id, side, away(side, mid, &mut rng, 50_000), false));
                    live.push(id);
                } else {
                    let at = rng.below(live.len() as u64) as usize;
                    steps.push(cancel(live.swap_remove(at)));
                }
            }
            Some((mid, 201_000, 104_096, setup, steps))
        }
        _ => None,
    }
}

/// The timed part (the symbol callgrind's `--toggle-collect` names).
#[inline(never)]
fn run(book: &mut OrderBook, steps: &[Command], sink: &mut CountingSink) {
    for (i, cmd) in steps.iter().enumerate() {
        let mut cmd = *cmd;
        cmd.ts = Timestamp(i as u64 + 1);
        book.execute(&cmd, sink);
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: drive cancel|cross|insert|mix STEPS REPEATS";
    let (Some(name), Some(n), Some(repeats)) = (
        args.get(1),
        args.get(2).and_then(|s| s.parse::<usize>().ok()),
        args.get(3).and_then(|s| s.parse::<usize>().ok()),
    ) else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    let Some((reference, band, capacity, setup, steps)) = workload(name, n) else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    let spec = InstrumentSpec {
        reference_price: reference,
        band,
        max_qty: i64::MAX / 4,
        ..InstrumentSpec::example(1)
    };
    let mut best = f64::MAX;
    for _ in 0..repeats.max(1) {
        let mut book: OrderBook = OrderBook::new(spec.clone(), capacity);
        let mut sink = CountingSink::default();
        for cmd in &setup {
            book.execute(cmd, &mut sink);
        }
        let start = Instant::now();
        run(&mut book, &steps, &mut sink);
        best = best.min(start.elapsed().as_nanos() as f64 / steps.len() as f64);
        std::hint::black_box(&sink);
    }
    println!("{name}: {best:.2} ns per command (best of {repeats})");
}
