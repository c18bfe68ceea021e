//! The commitment log's payload decoder (`peregrine_commit::commit_log::decode`), run
//! on records read back from disk: never panics; a payload it accepts re-encodes to
//! exactly the same bytes.
#![no_main]
use libfuzzer_sys::fuzz_target;
use peregrine_commit::commit_log::{decode, encode};
fuzz_target!(|data: &[u8]| {
    if let Ok(c) = decode(data) {
        assert_eq!(&encode(&c)[..], data);
    }
});
