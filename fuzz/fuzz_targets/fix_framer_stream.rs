//! FIX framing of a stream of good and garbled messages (built from the input: see
//! crates/peregrine-fix/tests/support/stream.rs, included here), read in chunks of
//! the sizes the input's first bytes give. Contract: every good message is
//! delivered, in order (but the one a too-long BodyLength claims, which FIX loses
//! with it), nothing panics, and no more than one message is ever buffered.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../crates/peregrine-fix/tests/support/stream.rs"]
mod stream;

fuzz_target!(|data: &[u8]| {
    let (sizes, choices) = data.split_at(data.len().min(4));
    let chunks: Vec<usize> = sizes.iter().map(|&c| usize::from(c) + 1).collect();
    let (bytes, expected) = stream::build(choices);
    let (delivered, _) = stream::deliver(&bytes, &chunks);
    assert_eq!(delivered, expected);
});
