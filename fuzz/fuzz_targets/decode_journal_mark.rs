//! The journal's high-water mark decoder (disk input): never panics; a decoded mark
//! re-encodes to exactly the bytes it came from.
#![no_main]

use libfuzzer_sys::fuzz_target;
use peregrine_journal::hwm;

fuzz_target!(|data: &[u8]| {
    if let Ok(mark) = hwm::decode(data) {
        assert_eq!(&hwm::encode(mark)[..], data);
    }
});
