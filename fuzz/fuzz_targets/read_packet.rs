//! Market-data packet reader: never panics; sequence numbers are consecutive.
#![no_main]

use libfuzzer_sys::fuzz_target;
use peregrine_wire::md::packet::PacketReader;

fuzz_target!(|data: &[u8]| {
    if let Ok(reader) = PacketReader::new(data) {
        let mut expect = reader.header().first_seq;
        for (seq, _msg) in reader.map_while(Result::ok) {
            assert_eq!(seq, expect);
            expect += 1;
        }
    }
});
