//! Snapshot and recovery time for a book of many resting orders (issue 3's
//! "snapshot and recovery time for 1M resting orders").
//!
//! `cargo bench -p peregrine-exchange-core --bench snapshot [-- ORDERS [REPORTS]]`
//! (default 1,000,000 orders, no retained reports). Builds one book with ORDERS
//! resting orders on 2,000 levels and a report store retaining REPORTS fills over 64
//! accounts, then times, three times each: `snapshot_codec::encode_with` (what the
//! matching thread pays when a snapshot is due), `snapshot_codec::capture` and
//! `Capture::encode` (the copy a cluster node takes on its Raft thread, and the encode
//! of it on its snapshot thread; checked to give the same bytes), `SnapshotStore::write`
//! (temp file, fsync, rename, on the writer thread), `SnapshotStore::latest_valid`
//! (read + CRC), `snapshot_codec::decode`, and `Core::restore_snapshot` into a fresh
//! engine (what start-up pays before the journal tail). Prints a table and one JSON
//! line; checks the restored state hash.

use std::time::{Duration, Instant};

use peregrine_book::{Action, Command, MatchingEngine, NewOrder};
use peregrine_exchange_core::codec::snapshot as snapshot_codec;
use peregrine_exchange_core::reports::{ReportStore, Retention};
use peregrine_exchange_core::NoLog;
use peregrine_exchange_core::{Clock, Core};
use peregrine_journal::{SnapshotConfig, SnapshotStore};
use peregrine_types::{
    AccountId, ClientOrderId, InstrumentId, InstrumentSpec, OrderId, OrderType, Price, Qty, Side,
    StpMode, TimeInForce, Timestamp,
};

const ROUNDS: usize = 3;

fn spec() -> InstrumentSpec {
    InstrumentSpec {
        band: 5_000,
        ..InstrumentSpec::example(1)
    }
}

fn engine(capacity: usize) -> MatchingEngine {
    MatchingEngine::new(&[spec()], capacity).expect("engine")
}

/// ORDERS resting orders: bids on 1,000 levels below 100.00, asks on 1,000 above.
fn fill(engine: &mut MatchingEngine, orders: usize) {
    let mut events = Vec::with_capacity(16);
    for i in 0..orders {
        let buy = i % 2 == 0;
        let level = (i / 2 % 1_000) as i64 + 1;
        let price = if buy { 10_000 - level } else { 10_000 + level };
        let cmd = Command {
            ts: Timestamp(i as u64 + 1),
            action: Action::New(NewOrder {
                instrument: InstrumentId(1),
                id: OrderId(0),
                client_id: ClientOrderId(i as u64 + 1),
                account: AccountId(1 + (i % 64) as u32),
                side: if buy { Side::Buy } else { Side::Sell },
                order_type: OrderType::Limit,
                tif: TimeInForce::Gtc,
                stp: StpMode::None,
                price: Price::from_raw(price),
                qty: Qty::from_raw(1 + (i % 7) as i64),
                expire_at: Timestamp(0),
            }),
        };
        events.clear();
        engine.execute(&cmd, &mut events);
    }
}

/// A report store retaining `n` fills over 64 accounts.
fn reports(n: usize) -> ReportStore {
    let mut store = ReportStore::new(Retention { per_account: n });
    for i in 0..n as u64 {
        let account = AccountId(1 + (i % 64) as u32);
        let fill = peregrine_wire::v2::reports::Fill {
            session_seq: 0,
            engine_seq: i + 1,
            engine_time: Timestamp(i + 1),
            order_id: OrderId(i + 1),
            client_order_id: ClientOrderId(i + 1),
            trade_id: i + 1,
            price: Price::from_raw(10_000),
            qty: Qty::from_raw(1),
            leaves_qty: Qty::from_raw(0),
            instrument: InstrumentId(1),
            side: Side::Buy,
            role: peregrine_wire::LiquidityRole::Maker,
            reserved: peregrine_wire::field::Pad,
            report_seq: i / 64 + 1, // the account's next
            account,
            fee_asset: 0,
            fee: 0,
        };
        store.append(account, fill.into());
    }
    store
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let mut args = std::env::args().skip(1).filter_map(|a| a.parse().ok());
    let orders: usize = args.next().unwrap_or(1_000_000);
    let retained: usize = args.next().unwrap_or(0);
    let store_in = (retained > 0).then(|| reports(retained));
    let counters = store_in
        .as_ref()
        .map(ReportStore::counters)
        .unwrap_or_default();
    let capacity = orders.next_power_of_two();
    let mut live = engine(capacity);
    let t = Instant::now();
    fill(&mut live, orders);
    let resting = live.books().map(|b| b.len()).sum::<usize>();
    assert_eq!(resting, orders, "every order rests");
    println!(
        "built a book of {resting} resting orders in {:.0} ms",
        ms(t.elapsed())
    );
    let hash = live.state_hash();
    let dir = tempfile::tempdir().expect("tempdir");
    let mut store = SnapshotStore::open(dir.path(), SnapshotConfig::default()).expect("store");
    let mut rows: Vec<[f64; 7]> = Vec::new();
    let mut bytes = 0;
    for round in 0..ROUNDS {
        let seq = orders as u64 + round as u64;
        let t = Instant::now();
        let ts = Timestamp(orders as u64);
        let blob = snapshot_codec::encode_with(&live, seq, ts, &counters, store_in.as_ref());
        let encode = t.elapsed();
        let t = Instant::now();
        let copy = snapshot_codec::capture(&live, seq, ts, &counters, store_in.as_ref());
        let capture = t.elapsed();
        let t = Instant::now();
        let again = copy.encode();
        let copy_encode = t.elapsed();
        assert!(again == blob, "the capture encodes to other bytes");
        drop((copy, again));
        bytes = blob.len();
        let t = Instant::now();
        store.write(seq, blob).expect("write");
        let write = t.elapsed();
        let t = Instant::now();
        let snap = store.latest_valid().expect("read").snapshot.expect("one");
        let read = t.elapsed();
        let t = Instant::now();
        let decoded = snapshot_codec::decode(&snap.data).expect("decode");
        let decode = t.elapsed();
        let fresh = engine(capacity);
        let mut core = Core::new(fresh, capacity, NoLog, Clock::monotonic());
        let t = Instant::now();
        core.restore_snapshot(&decoded).expect("restore");
        let restore = t.elapsed();
        assert_eq!(core.engine().state_hash(), hash, "restored state differs");
        rows.push([
            ms(encode),
            ms(write),
            ms(read),
            ms(decode),
            ms(restore),
            ms(capture),
            ms(copy_encode),
        ]);
    }
    println!(
        "snapshot of {orders} resting orders, {retained} retained reports: {:.1} MB; \
         times in ms (3 rounds)",
        bytes as f64 / 1e6
    );
    println!(
        "{:>6} {:>10} {:>10} {:>12} {:>12} {:>10} {:>10} {:>10} {:>14}",
        "round",
        "encode",
        "capture",
        "copy-encode",
        "write+fsync",
        "read+crc",
        "decode",
        "restore",
        "load total"
    );
    for (i, r) in rows.iter().enumerate() {
        println!(
            "{:>6} {:>10.1} {:>10.1} {:>12.1} {:>12.1} {:>10.1} {:>10.1} {:>10.1} {:>14.1}",
            i + 1,
            r[0],
            r[5],
            r[6],
            r[1],
            r[2],
            r[3],
            r[4],
            r[2] + r[3] + r[4]
        );
    }
    let json: Vec<String> = rows
        .iter()
        .map(|r| {
            format!(
                "{{\"encode_ms\":{:.3},\"capture_ms\":{:.3},\"copy_encode_ms\":{:.3},\"write_ms\":{:.3},\"read_ms\":{:.3},\"decode_ms\":{:.3},\"restore_ms\":{:.3}}}",
                r[0], r[5], r[6], r[1], r[2], r[3], r[4]
            )
        })
        .collect();
    println!(
        "{{\"bench\":\"snapshot\",\"orders\":{orders},\"retained\":{retained},\"bytes\":{bytes},\"rounds\":[{}]}}",
        json.join(",")
    );
}
