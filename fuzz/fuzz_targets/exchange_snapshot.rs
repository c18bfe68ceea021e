//! The exchange's engine snapshot decoder (`peregrine_exchange_core::codec::snapshot::
//! decode`), what a restart reads from the snapshot file before replaying the
//! journal: never panics on any bytes, whatever the version byte says.
#![no_main]

use libfuzzer_sys::fuzz_target;
use peregrine_exchange_core::codec::snapshot::decode;

fuzz_target!(|data: &[u8]| {
    let _ = decode(data);
});
