//! The cluster's Raft entry payload, one group-commit batch of journaled records
//! (`peregrine_exchange::fuzz_decode_batch`, crates/peregrine-exchange/src/cluster/
//! batch.rs), what every node applies from its log and from its peers. Contract:
//! never panics; a batch it accepts holds as many records as its header says, and
//! each record re-encodes to exactly the bytes it came from.
#![no_main]

use libfuzzer_sys::fuzz_target;
use peregrine_exchange_core::codec::command::{decode_record, encode_record, MAX_ENCODED};

/// Bytes before the first record (version, reserved, count, node, term).
const HEADER: usize = 24;

fuzz_target!(|data: &[u8]| {
    let Ok(n) = peregrine_exchange::fuzz_decode_batch(data) else {
        return;
    };
    let count = u32::from_le_bytes([data[4], data[5], data[6], data[7]]) as usize;
    assert_eq!(n, count);
    // Accepted: walk the framing (seq u64, length u8, record) and re-encode each record.
    let mut at = HEADER;
    for _ in 0..n {
        let len = data[at + 8] as usize;
        let body = &data[at + 9..at + 9 + len];
        let rec = decode_record(body).expect("an accepted batch holds records that decode");
        let mut buf = [0u8; MAX_ENCODED];
        let m = encode_record(&rec, &mut buf);
        assert_eq!(&buf[..m], body);
        at += 9 + len;
    }
    assert_eq!(at, data.len());
});
