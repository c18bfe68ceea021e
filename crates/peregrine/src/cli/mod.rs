//! The command lines of the exchange-side tools; each parses its arguments and calls
//! the library that does the work (`peregrine-exchange`, `peregrine-client`,
//! `peregrine-exchange-core`), printing what it returns.

pub mod admin;
pub mod bench;
pub mod cluster_admin;
pub mod exchange;
pub mod gateway;
pub mod journal;
pub mod keygen;
pub mod loadgen;
pub mod logger;
pub mod md;
pub mod verify;
