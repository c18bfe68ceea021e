//! Replay of recorded markets through Peregrine's exchange core.
#![deny(unsafe_code)]

pub mod data;
pub mod recorded;
pub mod synth;
