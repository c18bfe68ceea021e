//! The cluster peer protocol as a receiver reads it: a hello, then CRC-framed raft-rs
//! messages in our own layout (crates/peregrine-cluster/src/wire). Contract: never
//! panics; a body that decodes re-encodes to exactly the same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use peregrine_cluster::wire::{codec, decode_stream};

fuzz_target!(|data: &[u8]| {
    let _ = decode_stream(data, 1 << 20);
    let body = bytes::Bytes::copy_from_slice(data);
    if let Ok(m) = codec::decode(&body) {
        let mut out = Vec::new();
        codec::encode(&m, &mut out);
        assert_eq!(out, data);
    }
});
