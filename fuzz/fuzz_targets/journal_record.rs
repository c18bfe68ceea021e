//! The journal's record decoder (`peregrine_journal::record::decode`), what recovery
//! runs on every byte of a segment read back from disk: never panics; a record it
//! accepts re-encodes to exactly the bytes it came from (header, CRC and payload).
#![no_main]
use libfuzzer_sys::fuzz_target;
use peregrine_journal::record;
fuzz_target!(|data: &[u8]| {
    if let Ok(rec) = record::decode(data) {
        let mut out = vec![0u8; rec.encoded_len()];
        let n = record::encode_into(&mut out, rec.seq, rec.ts, rec.kind, rec.payload);
        if rec.commit {
            record::mark_commit(&mut out);
        }
        assert_eq!(&out[..n], &data[..n]);
    }
});
