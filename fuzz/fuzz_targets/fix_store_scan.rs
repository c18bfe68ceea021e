//! The FIX message store's file scanner: never panics on any bytes; what it reports
//! stays inside the file.
#![no_main]

use libfuzzer_sys::fuzz_target;
use peregrine_fix::store::scan;

fuzz_target!(|data: &[u8]| {
    if let Ok(s) = scan(data) {
        assert_eq!(s.valid_len + s.torn_bytes, data.len() as u64);
        for &(_, offset, len) in &s.messages {
            assert!(offset + u64::from(len) <= s.valid_len);
        }
    }
});
