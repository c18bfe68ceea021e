//! The fuzz targets' contract on stable (`fuzz/fuzz_targets/replay_*.rs` run it under
//! libFuzzer): every decoder of recorded data returns a typed error for any input and
//! never panics; what decodes as a fully kept ITCH message re-encodes exactly.

use peregrine_replay::data::binance::BinanceL2;
use peregrine_replay::data::itch::{decode, encode, Header, Msg};
use peregrine_replay::data::itch_l3::ItchL3;
use peregrine_replay::data::latency::read_rows;
use peregrine_replay::data::lobster::{parse_book_row, LobsterMessages};
use peregrine_replay::data::tardis::TardisL2;
use peregrine_replay::data::{Source, Units};
use peregrine_replay::latency::{Interpolated, Latency, LatencyModel};
use peregrine_types::Side;
use proptest::prelude::*;

fn drain<S: Source>(mut s: S) {
    for _ in 0..10_000 {
        match s.next_msg() {
            Ok(Some(_)) => {}
            _ => return,
        }
    }
}

fn units() -> Units {
    Units {
        price_decimals: 2,
        qty_decimals: 4,
    }
}

/// A valid add order, to mutate.
fn add_bytes() -> Vec<u8> {
    let mut v = Vec::new();
    encode(
        &Msg::AddOrder {
            h: Header {
                locate: 1,
                tracking: 2,
                ts: 3,
            },
            order_ref: 4,
            side: Side::Sell,
            shares: 5,
            stock: *b"AAPL    ",
            price: 6,
            mpid: None,
        },
        &mut v,
    );
    v
}

proptest! {
    #[test]
    fn prop_itch_never_panics(data in proptest::collection::vec(any::<u8>(), 0..256)) {
        let mut at = 0;
        while at < data.len() {
            let Ok((msg, used)) = decode(&data[at..]) else { break };
            if matches!(data[at + 2], b'S' | b'A' | b'F' | b'E' | b'C' | b'X' | b'D' | b'U' | b'P' | b'Q' | b'B') {
                let mut out = Vec::new();
                encode(&msg, &mut out);
                prop_assert_eq!(&out[..], &data[at..at + used]);
            }
            at += used;
        }
        drain(ItchL3::new(&data[..], "AAPL"));
    }

    #[test]
    fn prop_itch_mutated_never_panics(i in 0usize..38, b in any::<u8>()) {
        let mut data = add_bytes();
        data[i] = b;
        let _ = decode(&data);
    }

    #[test]
    fn prop_lobster_never_panics(text in "[-0-9.,\n]{0,200}") {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for line in text.lines() {
            let _ = parse_book_row(line, &mut a, &mut b);
        }
        drain(LobsterMessages::new(text.as_bytes()));
    }

    #[test]
    fn prop_binance_never_panics(ts in any::<u64>(), u in any::<u64>(), big in any::<u64>(), junk in "\\PC{0,40}") {
        let text = format!(
            "{ts} {{\"lastUpdateId\":{u},\"bids\":[[\"1.5\",\"2\"]],\"asks\":[]}}\n\
             {ts} {{\"stream\":\"x\",\"data\":{{\"e\":\"depthUpdate\",\"E\":{big},\"U\":{big},\"u\":{big},\"b\":[[\"{junk}\",\"1\"]],\"a\":[]}}}}\n\
             {ts} {{\"stream\":\"x\",\"data\":{{\"e\":\"trade\",\"T\":{big},\"p\":\"1\",\"q\":\"{junk}\",\"m\":true}}}}\n\
             {junk}\n"
        );
        drain(BinanceL2::new(text.as_bytes(), units()));
    }

    #[test]
    fn prop_tardis_never_panics(rows in proptest::collection::vec("[a-z0-9.,-]{0,60}", 0..8)) {
        let mut book = String::from("exchange,symbol,timestamp,local_timestamp,is_snapshot,side,price,amount\n");
        for r in &rows {
            book += r;
            book.push('\n');
        }
        let trades = format!("exchange,symbol,timestamp,local_timestamp,id,side,price,amount\n{}\n", rows.join("\n"));
        drain(TardisL2::new(book.as_bytes(), Some(trades.as_bytes()), units()));
    }

    #[test]
    fn prop_latency_never_panics(rows in proptest::collection::vec((any::<i64>(), any::<i64>(), any::<i64>()), 0..6), t in any::<u64>()) {
        let text: String = rows.iter().map(|(a, b, c)| format!("{a},{b},{c}\n")).collect();
        if let Ok(rows) = read_rows(text.as_bytes()) {
            if let Some(i) = Interpolated::new(&rows) {
                let mut l = Latency::new(LatencyModel::Interpolated(i), 0, 0);
                let _ = (l.entry(t), l.response(t), l.entry(0), l.response(u64::MAX));
            }
        }
    }
}
