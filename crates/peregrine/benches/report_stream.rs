//! What protocol v2's per-account report stream adds to order→ack (issue 12):
//!
//!     cargo bench -p peregrine --bench report_stream [-- --reports N] [--orders K]
//!
//! Protocol v1 no longer exists to compare with, so the stream's own work is timed
//! apart, in this process, beside what delivery costs without it, and both are set
//! against the exchange's order→ack measured in the same run:
//!
//! * **direct**: encode each report into a session's outbound buffer (what v1 did
//!   per report, and what v2 still does).
//! * **stream**: `ReportStore::append` (stamp `report_seq`, copy into the account's
//!   retention ring), then `ReportStore::get` at the session's cursor and the same
//!   encode: the path every v2 report takes.
//! * **order→ack**: the release exchange over loopback TCP, one session, K resting
//!   orders one at a time (closed loop, `fsync = "none"`, no journal), each answered
//!   by one `Accepted`, which went through the stream.
//! * **floor**: the same client and K orders against `scripts/floor.c`'s bare
//!   order-entry echo (v2's messages and sizes, one thread spinning on non-blocking
//!   sockets, no matching): the loopback round trip alone. Needs gcc.
//!
//! The reports go to 4 accounts whose retention rings (100,000 reports each) are
//! filled once before timing, so the rings wrap as in a long run. N reports are
//! timed in batches of 1,024 (per-report ns of each batch:
//! p50/p90/p99/p99.9/max), then the stream's added ns per report (stream − direct,
//! p50) as a share of the order→ack p50. Prints one JSON line. Defaults N 2,000,000,
//! K 20,000; `--reports 200000 --orders 5000` is the reduced run.

mod support;

use std::hint::black_box;
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use peregrine_exchange_core::reports::{ReportStore, Retention};
use peregrine_types::{
    AccountId, ClientOrderId, InstrumentId, OrderType, Price, Qty, Side, StpMode, TimeInForce,
    Timestamp,
};
use peregrine_wire::orders::NewOrder;
use peregrine_wire::v2::{Outbound, RequestRef};
use peregrine_wire::MAX_MESSAGE_SIZE;

use support::{arg, first_line, keygen, load, login, percentiles, start_exchange, Kid};

const BATCH: usize = 1_024;
/// A session's outbound buffer (the exchange's default `session_out_buffer`).
const OUT: usize = 262_144;
/// Accounts the reports are spread over (as 4 loadgen sessions).
const ACCOUNTS: u32 = 4;
/// Reports each account's stream retains (the ring wraps in steady state).
const RETAIN: usize = 100_000;

/// A `Fill` (the largest common report).
fn fill() -> Outbound {
    (0..64)
        .map(|i| Outbound::sample(i, &[7, 3, 42]))
        .find(|m| matches!(m, Outbound::Fill(_)))
        .expect("a Fill sample")
}

fn encode(out: &mut Vec<u8>, msg: &Outbound) {
    let mut frame = [0u8; MAX_MESSAGE_SIZE];
    let n = msg.encode(&mut frame).expect("encode");
    if out.len() + n > OUT {
        out.clear(); // the socket took it
    }
    out.extend_from_slice(&frame[..n]);
}

/// Per-report ns of each batch of `n` reports run through `one`.
fn timed(n: usize, mut one: impl FnMut(usize)) -> Vec<u64> {
    let mut per = Vec::with_capacity(n / BATCH);
    for b in 0..n / BATCH {
        let t = Instant::now();
        for i in 0..BATCH {
            one(b * BATCH + i);
        }
        per.push(t.elapsed().as_nanos() as u64 / BATCH as u64);
    }
    per
}

fn order(id: u64) -> NewOrder {
    NewOrder {
        client_order_id: ClientOrderId(id),
        price: Price::from_raw(9_000 + (id % 500) as i64),
        qty: Qty::from_raw(1),
        expire_at: Timestamp(0),
        instrument: InstrumentId(1),
        side: Side::Buy,
        order_type: OrderType::Limit,
        tif: TimeInForce::Gtc,
        stp: StpMode::None,
    }
}

/// Closed loop: `k` resting orders one at a time from account 1 at `addr`; the
/// order→ack of each, ns, and the orders per second.
fn closed_loop(addr: SocketAddr, keys: &Path, k: u64) -> (Vec<u64>, f64) {
    let mut c = login(addr, keys, 1, 0);
    c.recover(|_| {}).expect("recovery");
    let mut acks = Vec::with_capacity(k as usize);
    let t_all = Instant::now();
    for id in 1..=k {
        let t = Instant::now();
        match c.request(&order(id), RequestRef::NewOrder(ClientOrderId(id)), |_| {}) {
            Ok(Outbound::Accepted(_)) => acks.push(t.elapsed().as_nanos() as u64),
            other => panic!("order {id}: {other:?}"),
        }
    }
    (acks, k as f64 / t_all.elapsed().as_secs_f64())
}

/// The floor: `scripts/floor.c`'s bare order-entry echo (protocol v2's shapes and
/// sizes, no matching, no journal; built with gcc as the bench scripts do), as a
/// process: (the child, its address).
fn start_floor() -> (Kid, SocketAddr) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let bin = root.join("target/release/peregrine-floor");
    let built = Command::new("gcc")
        .args(["-O2", "-Wall", "-o"])
        .arg(&bin)
        .arg(root.join("scripts/floor.c"))
        .status()
        .expect("gcc (the floor is scripts/floor.c)");
    assert!(built.success(), "building scripts/floor.c");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let mut child = Command::new(&bin)
        .args(["echo", &port.to_string()])
        .stdout(Stdio::piped())
        .spawn()
        .expect("starting the floor");
    let line = first_line(&mut child);
    assert!(line.starts_with("listening"), "floor said {line:?}");
    (Kid(child), SocketAddr::from(([127, 0, 0, 1], port)))
}

fn row(name: &str, unit: &str, p: [u64; 5], scale: f64) {
    println!(
        "{name:<40} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {unit}",
        p[0] as f64 / scale,
        p[1] as f64 / scale,
        p[2] as f64 / scale,
        p[3] as f64 / scale,
        p[4] as f64 / scale
    );
}

fn main() {
    let n = arg("--reports", 2_000_000) as usize;
    let k = arg("--orders", 20_000);
    println!("report stream cost; load average before: {}", load());

    // In process: the same reports, without and with the stream, alternated twice.
    let msg = fill();
    let mut out = Vec::with_capacity(OUT);
    let mut store = ReportStore::new(Retention {
        per_account: RETAIN,
    });
    // Steady state: every ring full (its memory touched) before timing.
    for i in 0..RETAIN * ACCOUNTS as usize {
        store.append(AccountId(1 + i as u32 % ACCOUNTS), msg);
    }
    let mut direct = Vec::new();
    let mut stream = Vec::new();
    for _ in 0..2 {
        direct.extend(timed(n / 2, |_| encode(&mut out, black_box(&msg))));
        stream.extend(timed(n / 2, |i| {
            let account = AccountId(1 + i as u32 % ACCOUNTS);
            let seq = store.append(account, black_box(msg));
            let got = *store.get(account, seq).expect("retained");
            encode(&mut out, &got);
        }));
    }
    black_box(&out);
    let d = percentiles(direct);
    let s = percentiles(stream);
    let added = s[0].saturating_sub(d[0]);

    // Over the wire: order→ack of the release exchange, same run.
    let dir = tempfile::tempdir().expect("tempdir");
    let (keys, accounts) = keygen(dir.path(), "1");
    let cfg = dir.path().join("exchange.toml");
    std::fs::write(
        &cfg,
        format!(
            "listen = \"127.0.0.1:0\"\nrecovery_listen = \"127.0.0.1:0\"\naccounts_file = \"{}\"\n\
             wait = \"park\"\n[market_data]\nenabled = false\n",
            accounts.display()
        ),
    )
    .expect("config");
    let (x, addr) = start_exchange(&cfg);
    let (acks, rate) = closed_loop(addr, &keys, k);
    x.terminate();
    let a = percentiles(acks);
    let (floor, floor_addr) = start_floor();
    let e = percentiles(closed_loop(floor_addr, &keys, k).0);
    drop(floor);

    println!(
        "{:<40} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "", "p50", "p90", "p99", "p99.9", "max"
    );
    row(
        "direct: encode into the session buffer",
        "ns/report",
        d,
        1.0,
    );
    row("stream: append + get + encode", "ns/report", s, 1.0);
    row(
        "order→ack over TCP (closed loop, 1 session)",
        "µs",
        a,
        1000.0,
    );
    row("floor: floor.c echo, same client (µs)", "µs", e, 1000.0);
    println!(
        "order→ack p50 = {:.1}x the echo floor",
        a[0] as f64 / e[0].max(1) as f64
    );
    println!(
        "stream adds {added} ns per report (p50; {:.2}x direct); one report per order: \
         {:.3}% of the order→ack p50 ({k} orders, {rate:.0} orders/s); load average after: {}",
        s[0] as f64 / d[0].max(1) as f64,
        added as f64 * 100.0 / a[0].max(1) as f64,
        load()
    );
    println!(
        "{{\"bench\":\"report_stream\",\"reports\":{n},\"orders\":{k},\"direct_ns\":{:?},\
         \"stream_ns\":{:?},\"added_p50_ns\":{added},\"order_ack_ns\":{:?},\
         \"echo_floor_ns\":{:?},\"share_of_ack_p50\":{:.6}}}",
        d,
        s,
        a,
        e,
        added as f64 / a[0].max(1) as f64
    );
}
