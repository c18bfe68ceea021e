//! Recorded order latency rows (`peregrine_replay::data::latency`) and the
//! interpolation over them: never panic. On stable: `prop_latency_never_panics`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use peregrine_replay::data::latency::read_rows;
use peregrine_replay::latency::{Interpolated, Latency, LatencyModel};

fuzz_target!(|data: &[u8]| {
    let Ok(rows) = read_rows(data) else { return };
    if let Some(i) = Interpolated::new(&rows) {
        let mut l = Latency::new(LatencyModel::Interpolated(i), 0, 0);
        for r in rows.iter().take(64) {
            let _ = l.entry(r.req_ts as u64);
            let _ = l.response(r.exch_ts as u64);
        }
        let _ = l.entry(0);
        let _ = l.entry(u64::MAX);
    }
});
