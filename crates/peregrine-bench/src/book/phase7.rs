//! Seed 003's headline workload ("4.7 M orders/s, P99 500 ns"), on Peregrine.
//!
//! Ferrox's phase-7 load generator rests `n` asks (qty 10) over 50 price levels, pushes
//! `n` bids (qty 10, prices cycling over the same 50 levels) into its ingestion ring,
//! then pops and matches them on one thread, encoding an execution report per fill;
//! the first 10,000 are warm-up, the rest are timed one by one. This runs the same
//! shape through Peregrine's pieces, doing at least the same work per order:
//!
//! * the bids are decoded order-entry messages (`peregrine_wire::orders::NewOrder`)
//!   with their session's account, in a `peregrine-queue` SPSC ring of 2^20 slots,
//!   all pushed before matching starts (as Ferrox does);
//! * each one is popped, turned into a command by the exchange's own mapping,
//!   matched by the [`MatchingEngine`] (which assigns the exchange order id), and every
//!   event becomes the execution reports the exchange sends: `Accepted` to the taker
//!   and a `Fill` to each side, each stamped with a session sequence number and
//!   encoded to wire bytes. Ferrox encodes one 48-byte report per fill.
//!
//! Three drivers: `peregrine` pops and runs one order at a time; `peregrine+feed` also
//! encodes the public feed messages (`Trade`, `L2Update`) the exchange publishes,
//! which Ferrox's loop does not; `peregrine-pipelined` pops a batch and runs the
//! book's prefetch stages a few orders ahead ([`peregrine_book::LOOKAHEAD`]). Per-order time is taken with the bench's TSC clock
//! around pop → match → encode, as Ferrox times it; throughput is reported both for
//! that timed loop (Ferrox's figure) and for an untimed run of the same loop.

use hdrhistogram::Histogram;
use peregrine_book::{Command, Event, Ladder, MatchingEngine, LOOKAHEAD};
use peregrine_exchange_core::route::reports::{reports_for, Ctx};
use peregrine_exchange_core::route::{self as mapping};
use peregrine_types::{
    AccountId, ClientOrderId, InstrumentId, InstrumentSpec, OrderType, Price, Qty, Side, StpMode,
    TimeInForce, Timestamp,
};
use peregrine_wire::v2::Inbound;
use peregrine_wire::{orders, MAX_MESSAGE_SIZE};
use serde::Serialize;

/// Orders Ferrox's load generator uses on each side.
pub const ORDERS: usize = 1_000_000;
/// Orders popped before timing starts (Ferrox: 10,000).
pub const WARMUP: usize = 10_000;
/// Price levels the asks and bids cycle over.
const LEVELS: i64 = 50;
/// Lowest price (Ferrox: 10,000 ticks).
const BASE_PRICE: i64 = 10_000;
/// Ring and arena sizes (Ferrox: 2^20 each).
const CAPACITY: usize = 1 << 20;
const INSTRUMENT: InstrumentId = InstrumentId(1);

/// One driver's result.
#[derive(Debug, Clone, Serialize)]
pub struct Phase7Stats {
    /// Driver name.
    pub candidate: &'static str,
    /// Orders timed (after the warm-up).
    pub measured: u64,
    /// Fills over the measured orders.
    pub fills: u64,
    /// Wire messages encoded over the measured orders.
    pub messages: u64,
    /// Orders resting at the end.
    pub resting: usize,
    /// Per-order ns, pop → match → encode, TSC timer included.
    pub min: u64,
    /// Median.
    pub p50: u64,
    /// 90th percentile.
    pub p90: u64,
    /// 99th percentile.
    pub p99: u64,
    /// 99.9th percentile.
    pub p999: u64,
    /// Largest.
    pub max: u64,
    /// Mean.
    pub mean: f64,
    /// Measured orders / wall time of the timed loop (Ferrox's throughput figure).
    pub timed_orders_per_sec: f64,
    /// The same loop without the per-order timer: median of the untimed runs.
    pub orders_per_sec: f64,
}

/// Which driver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Driver {
    /// Pop one order, run it, encode its reports.
    OneByOne,
    /// The same, and encode the feed messages too.
    WithFeed,
    /// Pop a batch; prefetch a few orders ahead of the one running.
    Pipelined,
}

impl Driver {
    fn name(self) -> &'static str {
        match self {
            Driver::OneByOne => "peregrine",
            Driver::WithFeed => "peregrine+feed",
            Driver::Pipelined => "peregrine-pipelined",
        }
    }
}

/// The instrument: tick 1, lot 1, a band wide enough for the 50 levels.
fn spec() -> InstrumentSpec {
    InstrumentSpec {
        reference_price: BASE_PRICE + LEVELS / 2,
        band: 1_000,
        max_qty: 1 << 40,
        ..InstrumentSpec::example(1)
    }
}

fn wire_order(id: u64, side: Side, price: i64) -> orders::NewOrder {
    orders::NewOrder {
        client_order_id: ClientOrderId(id),
        price: Price::from_raw(price),
        qty: Qty::from_raw(10),
        expire_at: Timestamp(0),
        instrument: INSTRUMENT,
        side,
        order_type: OrderType::Limit,
        tif: TimeInForce::Gtc,
        stp: StpMode::None,
    }
}

/// What the matching thread holds: the engine, its event buffer, and the encoder state.
struct Matcher {
    engine: MatchingEngine<Ladder>,
    events: Vec<Event>,
    engine_seq: u64,
    session_seq: u64,
    ts: u64,
    frame: [u8; MAX_MESSAGE_SIZE],
    /// Sum of encoded lengths: keeps the encoding observable.
    bytes: u64,
    messages: u64,
    fills: u64,
    /// Whether feed messages are encoded too.
    feed: bool,
}

impl Matcher {
    fn new(n: usize, feed: bool) -> Matcher {
        let mut engine =
            MatchingEngine::<Ladder>::new(&[spec()], CAPACITY).expect("valid static spec");
        let mut events = Vec::with_capacity(1_024);
        for i in 0..n {
            let o = wire_order(i as u64 + 1, Side::Sell, BASE_PRICE + i as i64 % LEVELS);
            let account = AccountId(i as u32 + 1);
            if let Some(cmd) = mapping::to_command(&Inbound::NewOrder(o), account, Timestamp(0)) {
                events.clear();
                engine.execute(&cmd, &mut events);
            }
        }
        Matcher {
            engine,
            events,
            engine_seq: 0,
            session_seq: 0,
            ts: 0,
            frame: [0; MAX_MESSAGE_SIZE],
            bytes: 0,
            messages: 0,
            fills: 0,
            feed,
        }
    }

    /// The command for a popped order, as the exchange's core builds it.
    #[inline]
    fn command(&mut self, (account, o): &(AccountId, orders::NewOrder)) -> Option<Command> {
        self.ts += 1;
        mapping::to_command(&Inbound::NewOrder(*o), *account, Timestamp(self.ts))
    }

    /// Matches one command and encodes every report and feed message it produces.
    #[inline]
    fn run(&mut self, cmd: &Command, order: &orders::NewOrder) {
        self.engine_seq += 1;
        self.events.clear();
        self.engine.execute(cmd, &mut self.events);
        // The order's fields come from the command (as the exchange's core does).
        let _ = order;
        let ctx = Ctx::of(cmd, self.engine_seq, ClientOrderId(0));
        for ev in &self.events {
            if matches!(ev, Event::Fill(_)) {
                self.fills += 1;
            }
            for (_, mut msg) in reports_for(ev, &ctx).into_iter().flatten() {
                self.session_seq += 1;
                msg.set_session_seq(self.session_seq);
                if let Ok(n) = msg.encode(&mut self.frame) {
                    self.bytes += n as u64;
                    self.messages += 1;
                }
            }
            if !self.feed {
                continue;
            }
            if let Some(m) = mapping::feed_for(ev, cmd.ts) {
                if let Ok(n) = m.encode(&mut self.frame) {
                    self.bytes += n as u64;
                    self.messages += 1;
                }
            }
        }
    }
}

/// The bids, in the ring, as Ferrox's generator leaves them before matching starts.
fn fill_ring(n: usize) -> peregrine_queue::spsc::Consumer<(AccountId, orders::NewOrder)> {
    let (mut tx, rx) = peregrine_queue::spsc::ring(CAPACITY);
    for i in 0..n {
        let id = (n + i) as u64 + 1;
        let o = wire_order(id, Side::Buy, BASE_PRICE + i as i64 % LEVELS);
        // n <= CAPACITY (checked by the caller), so the ring never fills.
        let _ = tx.try_push((AccountId(id as u32), o));
    }
    rx
}

/// One run: setup, ring, warm-up, then the measured orders (timed per order if
/// `timed`). Returns the stats and the measured loop's wall time in ns.
fn one_run(
    n: usize,
    driver: Driver,
    clock: &quanta::Clock,
    hist: Option<&mut Histogram<u64>>,
) -> (Matcher, u64, u64) {
    let mut m = Matcher::new(n, driver == Driver::WithFeed);
    let mut rx = fill_ring(n);
    let warm = WARMUP.min(n / 10);
    for _ in 0..warm {
        if let Some(item) = rx.try_pop() {
            if let Some(cmd) = m.command(&item) {
                m.run(&cmd, &item.1);
            }
        }
    }
    let (fills0, msgs0) = (m.fills, m.messages);
    let start = clock.raw();
    let measured = match driver {
        Driver::OneByOne | Driver::WithFeed => one_by_one(&mut m, &mut rx, clock, hist),
        Driver::Pipelined => pipelined(&mut m, &mut rx, clock, hist),
    };
    let elapsed = clock.delta_as_nanos(start, clock.raw());
    m.fills -= fills0;
    m.messages -= msgs0;
    std::hint::black_box(m.bytes);
    (m, measured, elapsed)
}

#[inline(never)] // a frame of its own, for profilers
fn one_by_one(
    m: &mut Matcher,
    rx: &mut peregrine_queue::spsc::Consumer<(AccountId, orders::NewOrder)>,
    clock: &quanta::Clock,
    mut hist: Option<&mut Histogram<u64>>,
) -> u64 {
    let mut count = 0;
    loop {
        let a = clock.raw();
        let Some(item) = rx.try_pop() else { break };
        if let Some(cmd) = m.command(&item) {
            m.run(&cmd, &item.1);
        }
        if let Some(h) = hist.as_deref_mut() {
            let _ = h.record(clock.delta_as_nanos(a, clock.raw()).max(1));
        }
        count += 1;
    }
    count
}

/// Orders popped per refill of the pipeline's window.
const BATCH: usize = 64;

#[inline(never)] // a frame of its own, for profilers
fn pipelined(
    m: &mut Matcher,
    rx: &mut peregrine_queue::spsc::Consumer<(AccountId, orders::NewOrder)>,
    clock: &quanta::Clock,
    mut hist: Option<&mut Histogram<u64>>,
) -> u64 {
    let reach = LOOKAHEAD.iter().map(|(d, _)| *d).max().unwrap_or(0);
    let mut window: Vec<(Command, orders::NewOrder)> = Vec::with_capacity(BATCH + reach + 1);
    let mut pos = 0;
    let mut count = 0;
    loop {
        let a = clock.raw();
        if window.len() - pos <= reach {
            window.drain(..pos);
            pos = 0;
            rx.pop_batch(BATCH, |item| {
                if let Some(cmd) = m.command(&item) {
                    window.push((cmd, item.1));
                }
            });
        }
        let Some(&(cmd, order)) = window.get(pos) else {
            break;
        };
        for (d, stage) in LOOKAHEAD {
            if let Some((later, _)) = window.get(pos + d) {
                m.engine.prefetch(later, stage);
            }
        }
        m.run(&cmd, &order);
        pos += 1;
        if let Some(h) = hist.as_deref_mut() {
            let _ = h.record(clock.delta_as_nanos(a, clock.raw()).max(1));
        }
        count += 1;
    }
    count
}

/// Runs the workload with `n` orders a side: one timed run, then `repeats` untimed
/// runs for throughput.
pub fn measure(n: usize, driver: Driver, clock: &quanta::Clock, repeats: usize) -> Phase7Stats {
    let n = n.min(CAPACITY);
    let mut hist = Histogram::<u64>::new_with_bounds(1, 100_000_000_000, 3).expect("static bounds");
    let (m, measured, elapsed) = one_run(n, driver, clock, Some(&mut hist));
    let resting = m.engine.books().map(|b| b.len()).sum();
    let (fills, messages) = (m.fills, m.messages);
    drop(m);
    let mut untimed: Vec<f64> = (0..repeats.max(1))
        .map(|_| {
            let (_, count, ns) = one_run(n, driver, clock, None);
            count as f64 / (ns.max(1) as f64 / 1e9)
        })
        .collect();
    untimed.sort_by(f64::total_cmp);
    Phase7Stats {
        candidate: driver.name(),
        measured,
        fills,
        messages,
        resting,
        min: hist.min(),
        p50: hist.value_at_quantile(0.50),
        p90: hist.value_at_quantile(0.90),
        p99: hist.value_at_quantile(0.99),
        p999: hist.value_at_quantile(0.999),
        max: hist.max(),
        mean: hist.mean(),
        timed_orders_per_sec: measured as f64 / (elapsed.max(1) as f64 / 1e9),
        orders_per_sec: untimed[untimed.len() / 2],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shape is Ferrox's: every measured order is matched, the asks are taken
    /// level by level, and both drivers produce the same fills and messages.
    #[test]
    fn both_drivers_do_the_same_work() {
        let clock = quanta::Clock::new();
        let n = 20_000;
        let a = measure(n, Driver::OneByOne, &clock, 1);
        let b = measure(n, Driver::Pipelined, &clock, 1);
        let f = measure(n, Driver::WithFeed, &clock, 1);
        let warm = (WARMUP.min(n / 10)) as u64;
        assert_eq!(a.measured, n as u64 - warm);
        let work = |s: &Phase7Stats| (s.measured, s.fills, s.resting);
        assert_eq!(work(&a), work(&b));
        assert_eq!(work(&a), work(&f));
        assert!(
            a.fills > 0 && a.fills < a.measured,
            "some bids fill, some rest: {a:?}"
        );
        // Every bid is accepted (one report); a filled one gets two fill reports (one
        // a side), and with the feed a trade and an L2 update; a resting one an L2
        // update.
        let rested = a.measured - a.fills;
        assert_eq!(a.messages, a.measured + a.fills * 2);
        assert_eq!(b.messages, a.messages);
        assert_eq!(f.messages, a.measured + a.fills * 4 + rested);
    }
}
