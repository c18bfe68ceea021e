//! The journal's record decoder (`peregrine_journal::record::decode`), what recovery
//! runs on every byte of a segment read back from disk: never panics; a record it
//! accepts re-encodes to exactly the bytes it came from (header, CRC and payload).
//! Also the whole-segment scan recovery runs (`peregrine_journal::scan::scan`: the
//! tail-versus-middle rule and the all-zero end of a prepared segment) over the bytes
//! behind a valid segment header, as last and as non-last segment: never panics, and
//! what it keeps ends inside the input.
#![no_main]
use libfuzzer_sys::fuzz_target;
use peregrine_journal::{record, scan, segment};
fuzz_target!(|data: &[u8]| {
    if let Ok(rec) = record::decode(data) {
        let mut out = vec![0u8; rec.encoded_len()];
        let n = record::encode_into(&mut out, rec.seq, rec.ts, rec.kind, rec.payload);
        if rec.commit {
            record::mark_commit(&mut out);
        }
        assert_eq!(&out[..n], &data[..n]);
    }
    let mut seg = segment::header_bytes().to_vec();
    seg.extend_from_slice(data);
    for is_last in [true, false] {
        if let Ok(s) = scan::scan(&seg, std::path::Path::new("fuzz"), 1, is_last) {
            assert!(s.valid_end as usize <= seg.len());
            assert!(s.tail.is_none() || is_last, "only the last segment has a tail");
        }
    }
});
