//! What the FIX 4.4 dictionary's validation adds to the receive path of a
//! NewOrderSingle: frame + header view + decode with exact decimals, without and
//! with `dict::validate` in between, alternated round by round in one run.
//!
//!     cargo bench -p peregrine-fix --bench validate
//!
//! Prints the median ns per message of 9 rounds in thread CPU time (robust to a
//! loaded machine) and wall time, the difference, and a JSON line.

use std::hint::black_box;
use std::time::Instant;

use peregrine_fix::app::{decimal_units, NewOrderSingle};
use peregrine_fix::codec::{frame, Encoder, Frame, FrameLimits, Message, Precision};
use peregrine_fix::dict::{validate, Validation};

const T: u64 = 1_700_000_000_123_000_000;
const ROUNDS: usize = 9;
const N: u64 = 200_000;

fn new_order() -> Vec<u8> {
    let mut enc = Encoder::default();
    let mut w = enc.start(b"D");
    w.bytes(49, b"CLIENT1")
        .bytes(56, b"PEREGRINE")
        .uint(34, 7)
        .timestamp(52, T, Precision::Millis)
        .bytes(11, b"order-000123")
        .bytes(55, b"PGN-USD")
        .char(54, b'1')
        .decimal(38, 500, 0)
        .char(40, b'2')
        .decimal(44, 10025, 2)
        .char(59, b'1')
        .timestamp(60, T, Precision::Millis);
    w.seal().to_vec()
}

fn thread_cpu_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// The receive path of one message; `check`: with the dictionary's validation.
fn receive(raw: &[u8], check: bool) -> i64 {
    let Some(Frame::Message { len }) = frame(raw, FrameLimits::default()) else {
        panic!("not a message")
    };
    let m = Message::parse(&raw[..len]).unwrap();
    if check {
        validate(&m, &Validation::default()).unwrap();
    }
    let d = NewOrderSingle::decode(&m).unwrap();
    decimal_units(d.terms.order_qty, 0, 38).unwrap()
        + decimal_units(d.terms.price.unwrap(), 2, 44).unwrap()
}

/// One round of `N` messages: (CPU ns, wall ns) per message.
fn round(raw: &[u8], check: bool) -> (f64, f64) {
    let (c0, w0) = (thread_cpu_ns(), Instant::now());
    let mut sum = 0;
    for _ in 0..N {
        sum += receive(black_box(raw), check);
    }
    black_box(sum);
    let cpu = (thread_cpu_ns() - c0) as f64 / N as f64;
    (cpu, w0.elapsed().as_nanos() as f64 / N as f64)
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let raw = new_order();
    round(&raw, true); // warm
    let (mut off, mut on) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        off.push(round(&raw, false));
        on.push(round(&raw, true));
    }
    let stat = |v: &[(f64, f64)], cpu: bool| {
        let mut x: Vec<f64> = v.iter().map(|&(c, w)| if cpu { c } else { w }).collect();
        median(&mut x)
    };
    let (off_cpu, on_cpu, off_wall, on_wall) = (
        stat(&off, true),
        stat(&on, true),
        stat(&off, false),
        stat(&on, false),
    );
    println!(
        "NewOrderSingle ({} bytes), receive path, median of {ROUNDS} rounds of {N}:",
        raw.len()
    );
    println!("  without validation  {off_cpu:>7.1} ns CPU  {off_wall:>7.1} ns wall");
    println!("  with validation     {on_cpu:>7.1} ns CPU  {on_wall:>7.1} ns wall");
    println!(
        "  validation adds     {:>7.1} ns CPU  {:>7.1} ns wall",
        on_cpu - off_cpu,
        on_wall - off_wall
    );
    println!(
        "JSON {{\"bytes\":{},\"without_cpu_ns\":{off_cpu:.1},\"with_cpu_ns\":{on_cpu:.1},\"without_wall_ns\":{off_wall:.1},\"with_wall_ns\":{on_wall:.1}}}",
        raw.len()
    );
}
