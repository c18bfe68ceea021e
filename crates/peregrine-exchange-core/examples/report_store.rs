//! The report store's own costs, one command: appending (sequencing + retention) and
//! replaying (read + encode into a session's out buffer) N reports of one account.
//! Prints ns per report, reports/s and JSON.
//!
//! `cargo run --release -p peregrine-exchange-core --example report_store -- [N]`

use std::time::Instant;

use peregrine_exchange_core::reports::{ReportStore, Retention};
use peregrine_types::{
    AccountId, ClientOrderId, InstrumentId, OrderId, Price, Qty, Side, Timestamp,
};
use peregrine_wire::field::Pad;
use peregrine_wire::v2::reports::Fill;
use peregrine_wire::v2::Outbound;
use peregrine_wire::LiquidityRole;

fn fill(i: u64) -> Outbound {
    Fill {
        session_seq: 0,
        engine_seq: i,
        engine_time: Timestamp(i),
        order_id: OrderId(i),
        client_order_id: ClientOrderId(i),
        trade_id: i,
        price: Price::from_raw(10_000),
        qty: Qty::from_raw(1),
        leaves_qty: Qty::from_raw(0),
        instrument: InstrumentId(1),
        side: Side::Buy,
        role: LiquidityRole::Maker,
        reserved: Pad,
        report_seq: 0,
        account: AccountId(1),
        fee_asset: 0,
        fee: 0,
    }
    .into()
}

fn main() {
    let n: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let mut store = ReportStore::new(Retention {
        per_account: n as usize,
    });
    let a = AccountId(1);
    let t0 = Instant::now();
    for i in 1..=n {
        std::hint::black_box(store.append(a, fill(i)));
    }
    let append = t0.elapsed();
    // Steady state: retention full, every append evicts the oldest.
    let t2 = Instant::now();
    for i in n + 1..=2 * n {
        std::hint::black_box(store.append(a, fill(i)));
    }
    let steady = t2.elapsed();
    let mut out = Vec::with_capacity(256 * 1024);
    let mut bytes = 0usize;
    let t1 = Instant::now();
    for seq in n + 1..=2 * n {
        let mut m = *store.get(a, seq).expect("retained");
        m.set_session_seq(seq + 10);
        let at = out.len();
        out.resize(at + m.size(), 0);
        let _ = m.encode(&mut out[at..]);
        if out.len() > 200 * 1024 {
            bytes += out.len();
            out.clear(); // stands in for a write(2) to the socket
        }
    }
    bytes += out.len();
    let replay = t1.elapsed();
    let per = |d: std::time::Duration| d.as_nanos() as f64 / n as f64;
    println!(
        "append  {n} reports: {:.1} ns/report, {:.2} M reports/s",
        per(append),
        n as f64 / append.as_secs_f64() / 1e6
    );
    println!(
        "append  {n} reports, retention full: {:.1} ns/report, {:.2} M reports/s",
        per(steady),
        n as f64 / steady.as_secs_f64() / 1e6
    );
    println!(
        "replay  {n} reports: {:.1} ns/report, {:.2} M reports/s, {:.1} MB encoded",
        per(replay),
        n as f64 / replay.as_secs_f64() / 1e6,
        bytes as f64 / 1e6
    );
    println!(
        "{{\"reports\":{n},\"append_ns\":{:.1},\"append_full_ns\":{:.1},\"replay_ns\":{:.1},\"retained_bytes_est\":{}}}",
        per(append),
        per(steady),
        per(replay),
        n as usize * std::mem::size_of::<Outbound>()
    );
}
