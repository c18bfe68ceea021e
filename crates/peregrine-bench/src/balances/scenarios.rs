//! The scenarios, shaped like Olympus's (seed 004).

use hdrhistogram::Histogram;
use peregrine_book::{Action, Command, Event, Ladder, MatchingEngine, NewOrder};
use peregrine_commit::{commit_tick, TradeRecord};
use peregrine_ledger::{AssetId, InstrumentAssets, Ledger};
use peregrine_types::{
    AccountId, ClientOrderId, InstrumentId, InstrumentSpec, OrderId, OrderType, Price, Qty, Side,
    StpMode, TimeInForce, Timestamp,
};

use super::Row;

type Engine = MatchingEngine<Ladder, Ledger>;

const INST: InstrumentId = InstrumentId(1);
const BASE: AssetId = AssetId(1);
const QUOTE: AssetId = AssetId(2);
const ACCOUNTS: u32 = 10;

/// Published figures from seed 004: (min, p50, p95, p99, p99.9, max) in ns.
const OLY_RESTING: [u64; 6] = [125, 208, 292, 1_208, 2_625, 635_903];
const OLY_CROSSING: [u64; 6] = [208, 541, 750, 917, 1_333, 17_631];
const OLY_SWEEP: [(i64, [u64; 6]); 5] = [
    (1, [416, 541, 1_833, 5_043, 23_295, 84_927]),
    (5, [1_083, 1_250, 1_958, 5_087, 13_671, 44_095]),
    (10, [2_082, 2_251, 2_625, 4_001, 14_543, 45_183]),
    (25, [4_580, 4_959, 5_667, 7_711, 17_711, 24_511]),
    (50, [8_912, 9_503, 10_591, 14_007, 25_967, 65_855]),
];
const OLY_MATCH_TICK: [u64; 6] = [2_374, 2_625, 3_167, 7_503, 13_671, 25_135];
const OLY_COMMIT: [u64; 6] = [4_292, 4_503, 4_875, 5_627, 13_503, 30_383];

fn engine(capacity: usize) -> Engine {
    let spec = InstrumentSpec {
        reference_price: 100_000,
        band: 50_000,
        max_qty: 1 << 40,
        ..InstrumentSpec::example(1)
    };
    let ledger = Ledger::new(&[(
        INST,
        InstrumentAssets {
            base: BASE,
            quote: QUOTE,
        },
    )]);
    let mut e = MatchingEngine::with_pre_match(&[spec], capacity, ledger).expect("valid spec");
    for a in 1..=ACCOUNTS {
        e.pre_match()
            .deposit(AccountId(a), QUOTE, 1 << 100)
            .expect("positive");
        e.pre_match()
            .deposit(AccountId(a), BASE, 1 << 60)
            .expect("positive");
    }
    e
}

fn order(n: u64, side: Side, price: i64, qty: i64, tif: TimeInForce) -> Command {
    Command {
        ts: Timestamp(n),
        action: Action::New(NewOrder {
            instrument: INST,
            id: OrderId(0),
            client_id: ClientOrderId(n),
            account: AccountId((n % ACCOUNTS as u64) as u32 + 1),
            side,
            order_type: OrderType::Limit,
            tif,
            stp: StpMode::CancelNewest,
            price: Price::from_raw(price),
            qty: Qty::from_raw(qty),
            expire_at: Timestamp(0),
        }),
    }
}

/// One command through pre-match, matching and settlement.
#[inline]
fn step(e: &mut Engine, cmd: &Command, ev: &mut Vec<Event>) {
    ev.clear();
    e.execute(cmd, ev);
    e.pre_match().settle(ev);
}

fn hist() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 10_000_000_000, 3).expect("static bounds")
}

fn timed(clock: &quanta::Clock, h: &mut Histogram<u64>, f: impl FnOnce()) {
    let a = clock.raw();
    f();
    let b = clock.raw();
    let _ = h.record(clock.delta_as_nanos(a, b).max(1));
}

/// A buy far below the spread rests; one engine for all samples, the book grows.
pub(super) fn resting(clock: &quanta::Clock, n: usize) -> Row {
    let mut e = engine(n + 1_000);
    let mut ev = Vec::with_capacity(64);
    let mut h = hist();
    for i in 0..n as u64 {
        let cmd = order(
            i + 1,
            Side::Buy,
            90_000 - (i % 500) as i64,
            10,
            TimeInForce::Gtc,
        );
        timed(clock, &mut h, || step(&mut e, &cmd, &mut ev));
    }
    Row::from_hist("match_order resting (no trade)", &h, Some(OLY_RESTING))
}

/// A buy that takes one of many resting sells (different accounts).
pub(super) fn crossing(clock: &quanta::Clock, n: usize) -> Row {
    let mut e = engine(n + 20_000);
    let mut ev = Vec::with_capacity(64);
    for i in 0..(n as u64 + 20_000) {
        step(
            &mut e,
            &order(
                i + 1,
                Side::Sell,
                100_000 + (i / 50) as i64,
                10,
                TimeInForce::Gtc,
            ),
            &mut ev,
        );
    }
    let mut h = hist();
    for i in 0..n as u64 {
        let cmd = order(
            1_000_000 + i * ACCOUNTS as u64 + 3,
            Side::Buy,
            150_000,
            10,
            TimeInForce::Ioc,
        );
        timed(clock, &mut h, || step(&mut e, &cmd, &mut ev));
    }
    Row::from_hist("match_order crossing (1 trade)", &h, Some(OLY_CROSSING))
}

/// An IOC buy sweeping `fills` levels of quantity 1 (refilled untimed between samples).
pub(super) fn sweep(clock: &quanta::Clock, fills: i64, n: usize) -> Row {
    let mut e = engine(4_096);
    let mut ev = Vec::with_capacity(256);
    let mut h = hist();
    let mut k = 0u64;
    for _ in 0..n {
        for l in 0..fills {
            k += 1;
            step(
                &mut e,
                &order(
                    k * ACCOUNTS as u64 + 1,
                    Side::Sell,
                    101_000 + l,
                    1,
                    TimeInForce::Gtc,
                ),
                &mut ev,
            );
        }
        k += 1;
        let cmd = order(
            k * ACCOUNTS as u64 + 2,
            Side::Buy,
            101_000 + fills - 1,
            fills,
            TimeInForce::Ioc,
        );
        timed(clock, &mut h, || step(&mut e, &cmd, &mut ev));
    }
    let oly = OLY_SWEEP.iter().find(|(f, _)| *f == fills).map(|(_, o)| *o);
    Row::from_hist(&format!("multi-fill sweep {fills}"), &h, oly)
}

/// Ten resting orders per tick on a book of 200 resting orders (cancelled untimed).
pub(super) fn match_tick(clock: &quanta::Clock, n: usize) -> Row {
    let mut e = engine(4_096);
    let mut ev = Vec::with_capacity(64);
    for i in 0..200u64 {
        let side = if i % 2 == 0 { Side::Buy } else { Side::Sell };
        let price = if side == Side::Buy {
            95_000 - i as i64
        } else {
            105_000 + i as i64
        };
        step(
            &mut e,
            &order(i + 1, side, price, 10, TimeInForce::Gtc),
            &mut ev,
        );
    }
    let mut h = hist();
    let mut next = 1_000u64;
    for _ in 0..n {
        let tick: Vec<Command> = (0..10)
            .map(|j| {
                next += 1;
                order(
                    next,
                    if j % 2 == 0 { Side::Buy } else { Side::Sell },
                    if j % 2 == 0 { 96_000 - j } else { 104_000 + j },
                    10,
                    TimeInForce::Gtc,
                )
            })
            .collect();
        let first_id = e.next_order_id().0;
        timed(clock, &mut h, || {
            for cmd in &tick {
                step(&mut e, cmd, &mut ev);
            }
        });
        // Keep the book at 200 orders: cancel this tick's orders (untimed).
        for (k, cmd) in tick.iter().enumerate() {
            if let Action::New(o) = &cmd.action {
                let cancel = Command {
                    ts: cmd.ts,
                    action: Action::Cancel(peregrine_book::Cancel {
                        instrument: INST,
                        id: OrderId(first_id + k as u64),
                        account: o.account,
                        client_id: ClientOrderId(0),
                    }),
                };
                step(&mut e, &cancel, &mut ev);
            }
        }
    }
    Row::from_hist("match_tick (10 orders)", &h, Some(OLY_MATCH_TICK))
}

/// State hash + Merkle root over ten trades.
pub(super) fn commitments(clock: &quanta::Clock, n: usize) -> Row {
    let trades: Vec<TradeRecord> = (0..10u64)
        .map(|i| TradeRecord {
            trade_id: i + 1,
            instrument: 1,
            price: 100_000 + i as i64,
            qty: 5,
            maker_order: i,
            taker_order: 100 + i,
            maker_account: 1,
            taker_account: 2,
            taker_side: 0,
            timestamp: 7,
        })
        .collect();
    let (mut leaves, mut scratch) = (Vec::with_capacity(16), Vec::with_capacity(16));
    let mut h = hist();
    for i in 0..n as u64 {
        timed(clock, &mut h, || {
            std::hint::black_box(commit_tick(i, 7, 10, &trades, &mut leaves, &mut scratch));
        });
    }
    Row::from_hist("compute_commitments (10 trades)", &h, Some(OLY_COMMIT))
}

/// Orders/s over `ticks` × 10 resting orders: continuous (each command on arrival) and
/// batch (commands grouped in ticks, commitments computed inline after each tick).
pub(super) fn sustained(clock: &quanta::Clock, ticks: usize) -> Vec<(String, f64, &'static str)> {
    let cmds: Vec<Command> = (0..ticks as u64 * 10)
        .map(|i| {
            let (side, price) = if i % 2 == 0 {
                (Side::Buy, 90_000 - (i % 700) as i64)
            } else {
                (Side::Sell, 110_000 + (i % 700) as i64)
            };
            order(i + 1, side, price, 10, TimeInForce::Gtc)
        })
        .collect();
    // One run lasts milliseconds, so a single preemption would decide it: report the
    // median of several runs, each on a fresh engine.
    let continuous = median_rate(clock, &cmds, run_continuous);
    let batch = median_rate(clock, &cmds, run_batch);
    vec![
        (
            "continuous (match + settle per order)".to_string(),
            continuous,
            "3.83 M/s",
        ),
        (
            "batch (ticks of 10, commitments inline)".to_string(),
            batch,
            "3.5 M/s",
        ),
    ]
}

const SUSTAINED_REPEATS: usize = 9;

fn median_rate(
    clock: &quanta::Clock,
    cmds: &[Command],
    run: fn(&quanta::Clock, &mut Engine, &[Command]) -> u64,
) -> f64 {
    let mut rates: Vec<f64> = (0..SUSTAINED_REPEATS)
        .map(|_| {
            let mut e = engine(cmds.len() + 16);
            let ns = run(clock, &mut e, cmds).max(1);
            cmds.len() as f64 / (ns as f64 / 1e9)
        })
        .collect();
    rates.sort_by(f64::total_cmp);
    rates[rates.len() / 2]
}

fn run_continuous(clock: &quanta::Clock, e: &mut Engine, cmds: &[Command]) -> u64 {
    let mut ev = Vec::with_capacity(64);
    let a = clock.raw();
    for c in cmds {
        step(e, c, &mut ev);
    }
    clock.delta_as_nanos(a, clock.raw())
}

fn run_batch(clock: &quanta::Clock, e: &mut Engine, cmds: &[Command]) -> u64 {
    let mut ev = Vec::with_capacity(64);
    let (mut trades, mut leaves, mut scratch) = (
        Vec::with_capacity(64),
        Vec::with_capacity(64),
        Vec::with_capacity(64),
    );
    let a = clock.raw();
    for (t, tick) in cmds.chunks(10).enumerate() {
        trades.clear();
        for c in tick {
            step(e, c, &mut ev);
            for x in &ev {
                if let Event::Fill(f) = x {
                    trades.push(TradeRecord::from_fill(f, c.ts.0));
                }
            }
        }
        std::hint::black_box(commit_tick(
            t as u64,
            0,
            tick.len() as u64,
            &trades,
            &mut leaves,
            &mut scratch,
        ));
    }
    clock.delta_as_nanos(a, clock.raw())
}
