//! Snapshot and recovery time for a book of many resting orders (issue 3's
//! "snapshot and recovery time for 1M resting orders").
//!
//! `cargo bench -p peregrine-exchange --bench snapshot [-- ORDERS]` (default
//! 1,000,000). Builds one book with ORDERS resting orders on 2,000 levels, then times,
//! three times each: `snapshot_codec::encode` (what the matching thread pays when a
//! snapshot is due), `SnapshotStore::write` (temp file, fsync, rename, on the writer
//! thread), `SnapshotStore::latest_valid` (read + CRC), `snapshot_codec::decode`, and
//! `Core::restore_snapshot` into a fresh engine (what start-up pays before the journal
//! tail). Prints a table and one JSON line; checks the restored state hash.

use std::time::{Duration, Instant};

use peregrine_book::{Action, Command, MatchingEngine, NewOrder};
use peregrine_exchange_core::codec::snapshot as snapshot_codec;
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

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let orders: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(1_000_000);
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
    let mut rows: Vec<[f64; 5]> = Vec::new();
    let mut bytes = 0;
    for round in 0..ROUNDS {
        let seq = orders as u64 + round as u64;
        let t = Instant::now();
        let blob = snapshot_codec::encode(&live, seq, Timestamp(orders as u64), &[]);
        let encode = t.elapsed();
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
        rows.push([ms(encode), ms(write), ms(read), ms(decode), ms(restore)]);
    }
    println!(
        "snapshot of {orders} resting orders: {:.1} MB; times in ms (3 rounds)",
        bytes as f64 / 1e6
    );
    println!(
        "{:>6} {:>10} {:>12} {:>10} {:>10} {:>10} {:>14}",
        "round", "encode", "write+fsync", "read+crc", "decode", "restore", "load total"
    );
    for (i, r) in rows.iter().enumerate() {
        println!(
            "{:>6} {:>10.1} {:>12.1} {:>10.1} {:>10.1} {:>10.1} {:>14.1}",
            i + 1,
            r[0],
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
                "{{\"encode_ms\":{:.3},\"write_ms\":{:.3},\"read_ms\":{:.3},\"decode_ms\":{:.3},\"restore_ms\":{:.3}}}",
                r[0], r[1], r[2], r[3], r[4]
            )
        })
        .collect();
    println!(
        "{{\"bench\":\"snapshot\",\"orders\":{orders},\"bytes\":{bytes},\"rounds\":[{}]}}",
        json.join(",")
    );
}
