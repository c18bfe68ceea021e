//! Replays one of the challenge's workload files (`orders_<scenario>_s<seed>_n<N>.bin`,
//! written by the benchmark's generator) through the exported `engine_*` symbols, in
//! batches, with a transport that only counts the reports. A development tool: it runs
//! without the harness's threads, so it can run under `valgrind --tool=cachegrind`
//! (whose instruction and simulated-miss counts do not depend on the machine's load).
//!
//! ```sh
//! cargo build --release -p peregrine-capi --example replay
//! valgrind --tool=cachegrind --cache-sim=yes target/release/examples/replay FILE [BATCH]
//! ```
//!
//! The file: a 16-byte header (magic, version, count), then `count` 40-byte records
//! (type, side, ioc, pad, qty u32, seq u64, order id u64, price i64, reserved i64).

#![allow(unsafe_code)] // calls the C entry points with raw pointers, as a C caller does.

use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, Ordering};

use peregrine_capi::ffi::{engine_init, engine_on_batch, engine_shutdown};
use peregrine_capi::{CancelMsg, ModifyMsg, MsgBody, NewOrderMsg, Report, TaggedMsg, Transport};

static REPORTS: AtomicU64 = AtomicU64::new(0);

unsafe extern "C" fn count(_handle: *mut c_void, _report: *const Report) -> i32 {
    REPORTS.fetch_add(1, Ordering::Relaxed);
    1
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

fn message(r: &[u8]) -> TaggedMsg {
    let (kind, side, ioc, qty) = (r[0], r[1], r[2], u32_at(r, 4));
    let (seq, id, price) = (u64_at(r, 8), u64_at(r, 16), u64_at(r, 24) as i64);
    let body = match kind {
        0 => MsgBody {
            new_order: NewOrderMsg {
                order_id: id,
                sequence_number: seq,
                price_ticks: price,
                quantity: qty,
                side,
                ioc,
                reserved: [0; 2],
            },
        },
        1 => MsgBody {
            cancel: CancelMsg {
                order_id: id,
                sequence_number: seq,
            },
        },
        _ => MsgBody {
            modify: ModifyMsg {
                order_id: id,
                sequence_number: seq,
                new_price_ticks: price,
                new_quantity: qty,
                side,
                reserved: [0; 3],
            },
        },
    };
    TaggedMsg {
        kind,
        reserved: [0; 7],
        body,
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: replay FILE [BATCH]");
    let batch: usize = args
        .next()
        .map_or(1000, |b| b.parse().expect("BATCH: a number"));
    let bytes = std::fs::read(&path).expect("read the workload file");
    let n = u32_at(&bytes, 12) as usize;
    let msgs: Vec<TaggedMsg> = bytes[16..16 + 40 * n]
        .chunks_exact(40)
        .map(message)
        .collect();
    let transport = Transport {
        create: None,
        push: Some(count),
        drain: None,
        flush: None,
        destroy: None,
    };
    let t0 = std::time::Instant::now();
    // SAFETY: `transport` outlives the engine (shut down below); the push function
    // ignores its handle, so a null one is fine.
    unsafe { engine_init(0, &transport, std::ptr::null_mut()) };
    for chunk in msgs.chunks(batch) {
        // SAFETY: `chunk` holds `chunk.len()` valid messages.
        unsafe { engine_on_batch(chunk.as_ptr(), chunk.len() as u32) };
    }
    engine_shutdown();
    let dt = t0.elapsed();
    println!(
        "{n} messages, {} reports, {:.3} s, {:.2} M msgs/s",
        REPORTS.load(Ordering::Relaxed),
        dt.as_secs_f64(),
        n as f64 / dt.as_secs_f64() / 1e6
    );
}
