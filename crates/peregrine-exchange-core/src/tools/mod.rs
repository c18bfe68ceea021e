//! The offline tools' logic: `peregrine verify` ([`verify`]) and `peregrine journal
//! replay` ([`offline_replay`]). Their command lines live in the `peregrine` binary.

pub mod offline_replay;
pub mod verify;
