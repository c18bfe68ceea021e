//! The FIX gateway's stored bridge state record (`peregrine_fix_gateway::
//! replay_state_record`), what a restarting gateway applies from its session store:
//! never panics; a record it accepts re-encodes to exactly the bytes it came from.
#![no_main]

use libfuzzer_sys::fuzz_target;
use peregrine_fix_gateway::replay_state_record;

fuzz_target!(|data: &[u8]| {
    // The first byte picks the configured instrument count, so both the accepted and
    // the "instrument not configured" paths are reached.
    let Some((&instruments, record)) = data.split_first() else {
        return;
    };
    if let Ok(out) = replay_state_record(record, usize::from(instruments % 4)) {
        assert_eq!(out, record);
    }
});
