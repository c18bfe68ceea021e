//! Parse + encode of a NewOrderSingle and an ExecutionReport: peregrine-fix beside
//! QuickFIX (C++, through the `quickfix` crate), same messages, same run.
//!
//!     cargo bench -p peregrine-fix-interop --bench codec_vs_quickfix
//!
//! "parse" = frame + checks + every field the gateway needs, as values (ours:
//! `frame`, `Message::parse`, `NewOrderSingle::decode`, exact decimals; QuickFIX:
//! `Message::try_from_text` then `get_field` of the same tags). "encode" = a whole
//! message with header, BodyLength and CheckSum from typed values (ours:
//! `Encoder`; QuickFIX: `set_field` then `to_fix_string`). QuickFIX's numbers
//! include the binding's cost (a C call and a CString per field), which is what a
//! Rust program using it pays. Prints the median ns per operation of 7 rounds in
//! thread CPU time (robust to a loaded machine) and wall time, the ratio, and a JSON
//! line.

use std::hint::black_box;
use std::time::Instant;

use peregrine_fix::app::{decimal_units, ExecutionReportView, NewOrderSingle};
use peregrine_fix::codec::{frame, Encoder, Frame, FrameLimits, Message, Precision};
use quickfix::FieldMap;

const T: u64 = 1_700_000_000_123_000_000;
const ROUNDS: usize = 7;

fn our_new_order(enc: &mut Encoder, seq: u64) -> Vec<u8> {
    let mut w = enc.start(b"D");
    w.bytes(49, b"CLIENT1")
        .bytes(56, b"PEREGRINE")
        .uint(34, seq)
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

fn our_exec_report(enc: &mut Encoder, seq: u64) -> usize {
    let mut w = enc.start(b"8");
    w.bytes(49, b"PEREGRINE")
        .bytes(56, b"CLIENT1")
        .uint(34, seq)
        .timestamp(52, T, Precision::Millis)
        .uint(37, 4_000_123)
        .bytes(11, b"order-000123")
        .uint(17, 9_000_456)
        .char(150, b'F')
        .char(39, b'1')
        .bytes(55, b"PGN-USD")
        .char(54, b'1')
        .decimal(38, 500, 0)
        .decimal(44, 10025, 2)
        .decimal(32, 200, 0)
        .decimal(31, 10025, 2)
        .decimal(151, 300, 0)
        .decimal(14, 200, 0)
        .ratio(6, 10025 * 200, 200, 2, 4)
        .timestamp(60, T, Precision::Millis);
    w.seal().len()
}

fn qf_message(msg_type: &str, fields: &[(i32, &str)]) -> quickfix::Message {
    let mut m = quickfix::Message::new();
    m.with_header_mut(|h| {
        for (tag, v) in [
            (35, msg_type),
            (49, "CLIENT1"),
            (56, "PEREGRINE"),
            (34, "7"),
            (52, "20231114-22:13:20.123"),
        ] {
            h.set_field(tag, v).unwrap();
        }
    });
    for &(tag, v) in fields {
        m.set_field(tag, v).unwrap();
    }
    m
}

const ORDER_FIELDS: &[(i32, &str)] = &[
    (11, "order-000123"),
    (55, "PGN-USD"),
    (54, "1"),
    (38, "500"),
    (40, "2"),
    (44, "100.25"),
    (59, "1"),
    (60, "20231114-22:13:20.123"),
];

const REPORT_FIELDS: &[(i32, &str)] = &[
    (37, "4000123"),
    (11, "order-000123"),
    (17, "9000456"),
    (150, "F"),
    (39, "1"),
    (55, "PGN-USD"),
    (54, "1"),
    (38, "500"),
    (44, "100.25"),
    (32, "200"),
    (31, "100.25"),
    (151, "300"),
    (14, "200"),
    (6, "100.25"),
    (60, "20231114-22:13:20.123"),
];

/// This thread's CPU time in ns: unlike the wall clock, it does not count the time
/// the thread waits for a core, so a loaded machine inflates it far less.
fn thread_cpu_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// Median ns per call of `f` over `ROUNDS` rounds of `n` calls: (thread CPU time,
/// wall time).
fn time(n: u64, mut f: impl FnMut(u64)) -> (f64, f64) {
    let mut cpu = Vec::with_capacity(ROUNDS);
    let mut wall = Vec::with_capacity(ROUNDS);
    for _ in 0..ROUNDS {
        let (c0, w0) = (thread_cpu_ns(), Instant::now());
        for i in 0..n {
            f(i);
        }
        wall.push(w0.elapsed().as_nanos() as f64 / n as f64);
        cpu.push((thread_cpu_ns() - c0) as f64 / n as f64);
    }
    cpu.sort_by(f64::total_cmp);
    wall.sort_by(f64::total_cmp);
    (cpu[ROUNDS / 2], wall[ROUNDS / 2])
}

fn main() {
    let n_ours = 200_000;
    let n_qf = 20_000;
    let mut enc = Encoder::default();
    let order = our_new_order(&mut enc, 7);
    let report = {
        our_exec_report(&mut enc, 7);
        enc.message().to_vec()
    };
    let order_text = String::from_utf8(order.clone()).unwrap();
    let report_text = String::from_utf8(report.clone()).unwrap();

    let parse_order_ours = time(n_ours, |_| {
        let Some(Frame::Message { len }) = frame(black_box(&order), FrameLimits::default()) else {
            panic!()
        };
        let m = Message::parse(&order[..len]).unwrap();
        let d = NewOrderSingle::decode(&m).unwrap();
        black_box((
            decimal_units(d.terms.order_qty, 0, 38).unwrap(),
            decimal_units(d.terms.price.unwrap(), 2, 44).unwrap(),
            d,
        ));
    });
    let parse_order_qf = time(n_qf, |_| {
        let m = quickfix::Message::try_from_text(black_box(&order_text)).unwrap();
        for &(tag, _) in ORDER_FIELDS {
            black_box(m.get_field(tag));
        }
    });
    let parse_report_ours = time(n_ours, |_| {
        let Some(Frame::Message { len }) = frame(black_box(&report), FrameLimits::default()) else {
            panic!()
        };
        let m = Message::parse(&report[..len]).unwrap();
        let v = ExecutionReportView::decode(&m).unwrap();
        black_box((
            decimal_units(v.cum_qty, 0, 14).unwrap(),
            decimal_units(v.last_px.unwrap(), 2, 31).unwrap(),
            v,
        ));
    });
    let parse_report_qf = time(n_qf, |_| {
        let m = quickfix::Message::try_from_text(black_box(&report_text)).unwrap();
        for &(tag, _) in REPORT_FIELDS {
            black_box(m.get_field(tag));
        }
    });
    let encode_order_ours = time(n_ours, |i| {
        black_box(our_new_order(&mut enc, i).len());
    });
    let mut enc2 = Encoder::default();
    let encode_report_ours = time(n_ours, |i| {
        black_box(our_exec_report(&mut enc2, i));
    });
    let encode_order_qf = time(n_qf, |_| {
        black_box(qf_message("D", ORDER_FIELDS).to_fix_string().unwrap());
    });
    let encode_report_qf = time(n_qf, |_| {
        black_box(qf_message("8", REPORT_FIELDS).to_fix_string().unwrap());
    });

    let rows = [
        ("parse NewOrderSingle", parse_order_ours, parse_order_qf),
        ("parse ExecutionReport", parse_report_ours, parse_report_qf),
        ("encode NewOrderSingle", encode_order_ours, encode_order_qf),
        (
            "encode ExecutionReport",
            encode_report_ours,
            encode_report_qf,
        ),
    ];
    println!(
        "{:<24} {:>14} {:>14} {:>7}   {:>14} {:>14}",
        "operation (median ns)",
        "peregrine cpu",
        "QuickFIX cpu",
        "ratio",
        "peregrine wall",
        "QuickFIX wall"
    );
    for (name, ours, qf) in rows {
        println!(
            "{name:<24} {:>14.0} {:>14.0} {:>6.1}x   {:>14.0} {:>14.0}",
            ours.0,
            qf.0,
            qf.0 / ours.0,
            ours.1,
            qf.1
        );
    }
    let json: Vec<String> = rows
        .iter()
        .map(|(name, ours, qf)| {
            format!(
                "{{\"op\":\"{name}\",\"peregrine_fix_cpu_ns\":{:.1},\"quickfix_cpu_ns\":{:.1},\"peregrine_fix_wall_ns\":{:.1},\"quickfix_wall_ns\":{:.1}}}",
                ours.0, qf.0, ours.1, qf.1
            )
        })
        .collect();
    println!("JSON [{}]", json.join(","));
    println!(
        "(messages: NewOrderSingle {} bytes, ExecutionReport {} bytes)",
        order.len(),
        report.len()
    );
}
