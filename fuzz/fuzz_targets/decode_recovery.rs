//! Recovery-channel stream decoder: never panics; decoded messages re-encode exactly.
#![no_main]

use libfuzzer_sys::fuzz_target;
use peregrine_wire::md::recovery::Recovery;

fuzz_target!(|data: &[u8]| {
    if let Ok((msg, used)) = Recovery::decode(data) {
        let mut buf = [0u8; peregrine_wire::MAX_MESSAGE_SIZE];
        let n = msg.encode(&mut buf).expect("a decoded message fits the size cap");
        assert_eq!(&buf[..n], &data[..used]);
    }
});
