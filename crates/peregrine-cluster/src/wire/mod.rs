//! The peer protocol: a hello, then CRC-framed raft-rs messages in our own layout
//! (docs/cluster.md, "Wire"). Decoders return typed errors and never panic
//! (`fuzz/fuzz_targets/cluster_frame.rs`, `prop_decode_never_panics`).

pub mod codec;
pub mod frame;

pub use frame::{decode_stream, encode_frame, FrameReader, Hello, HELLO_LEN};
