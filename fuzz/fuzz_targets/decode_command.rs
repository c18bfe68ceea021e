//! Journal command payload decoder (`peregrine_exchange_core::codec::command`): never
//! panics; a decoded command re-encodes to exactly the bytes it came from. On stable
//! the same contract runs as `prop_decode_never_panics` and
//! `prop_decode_of_mutated_never_panics`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use peregrine_exchange_core::codec::command::{decode, encode, MAX_ENCODED};

fuzz_target!(|data: &[u8]| {
    if let Ok(cmd) = decode(data) {
        let mut buf = [0u8; MAX_ENCODED];
        let n = encode(&cmd, &mut buf);
        assert_eq!(&buf[..n], data);
    }
});
