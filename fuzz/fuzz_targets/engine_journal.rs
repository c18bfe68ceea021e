//! The order engine's journal record decoder: never panics on any kind byte and
//! payload; a decoded record re-encodes to exactly the bytes it came from.
#![no_main]

use libfuzzer_sys::fuzz_target;
use peregrine_engine::durable::Rec;

fuzz_target!(|data: &[u8]| {
    let Some((&kind, payload)) = data.split_first() else {
        return;
    };
    if let Ok(rec) = Rec::decode(kind, payload) {
        let mut buf = Vec::new();
        assert_eq!(rec.encode(&mut buf), kind);
        assert_eq!(buf, payload);
    }
});
