//! ITCH 5.0 decoder (`peregrine_replay::data::itch`), and the symbol stream over it:
//! never panics, errors are typed; a decoded message of a type whose every field is
//! kept (system event, add, executions, cancel, delete, replace, trades, broken
//! trade) re-encodes to exactly its bytes. On stable: `prop_itch_never_panics`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use peregrine_replay::data::itch::{decode, encode};
use peregrine_replay::data::itch_l3::ItchL3;
use peregrine_replay::data::Source;

fuzz_target!(|data: &[u8]| {
    let mut at = 0;
    while at < data.len() {
        let Ok((msg, used)) = decode(&data[at..]) else { break };
        if matches!(data[at + 2], b'S' | b'A' | b'F' | b'E' | b'C' | b'X' | b'D' | b'U' | b'P' | b'Q' | b'B') {
            let mut out = Vec::new();
            encode(&msg, &mut out);
            assert_eq!(&out[..], &data[at..at + used]);
        }
        at += used;
    }
    let mut s = ItchL3::new(data, "AAPL");
    while let Ok(Some(_)) = s.next_msg() {}
});
