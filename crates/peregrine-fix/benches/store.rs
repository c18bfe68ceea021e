//! What the message store costs per message: `store_outbound` of a 200-byte
//! ExecutionReport, then `flush` (one `write`), as the session does before bytes may
//! leave; with a flush after every message, after every 16, and with `fdatasync`.
//!
//!     cargo bench -p peregrine-fix --bench store
//!
//! Prints p50/p90/p99/p99.9/max per message and messages/s for each mode, and a
//! JSON line. The directory is a temp dir on the work disk (`TMPDIR` to move it).

use std::time::Instant;

use peregrine_fix::store::{Durability, FileStore, MessageStore};

fn percentile(sorted: &[u64], p: f64) -> u64 {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn run(name: &str, durability: Durability, batch: usize, n: usize) -> String {
    let dir = tempfile::tempdir().unwrap();
    let mut store = FileStore::open(&dir.path().join("bench.fixstore"), durability, 0).unwrap();
    let message = vec![b'x'; 200];
    let mut per_message = Vec::with_capacity(n);
    let start = Instant::now();
    let mut batch_start = Instant::now();
    for i in 0..n {
        let seq = store.next_sender_seq();
        store.store_outbound(seq, Some(&message)).unwrap();
        if (i + 1) % batch == 0 {
            store.flush().unwrap();
            let per = batch_start.elapsed().as_nanos() as u64 / batch as u64;
            per_message.extend(std::iter::repeat_n(per, batch));
            batch_start = Instant::now();
        }
    }
    let total = start.elapsed();
    per_message.sort_unstable();
    let [p50, p90, p99, p999] = [0.5, 0.9, 0.99, 0.999].map(|p| percentile(&per_message, p));
    let max = *per_message.last().unwrap();
    let rate = n as f64 / total.as_secs_f64();
    println!(
        "{name:<28} p50 {p50:>7} ns  p90 {p90:>7}  p99 {p99:>8}  p99.9 {p999:>8}  max {max:>9}  {:>10.0} msg/s",
        rate
    );
    format!("{{\"mode\":\"{name}\",\"p50_ns\":{p50},\"p90_ns\":{p90},\"p99_ns\":{p99},\"p999_ns\":{p999},\"max_ns\":{max},\"msgs_per_s\":{rate:.0}}}")
}

fn main() {
    println!("message store, 200-byte messages, per message (a batch's time / its size):");
    let rows = [
        run("write per message", Durability::OsBuffer, 1, 200_000),
        run("write per 16 messages", Durability::OsBuffer, 16, 200_000),
        run("fdatasync per message", Durability::Fsync, 1, 2_000),
        run("fdatasync per 16 messages", Durability::Fsync, 16, 16_000),
    ];
    println!("JSON [{}]", rows.join(","));
}
