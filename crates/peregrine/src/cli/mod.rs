//! The command lines of the exchange-side tools; each parses its arguments and calls
//! the library that does the work (`peregrine-exchange`, `peregrine-client`,
//! `peregrine-exchange-core`), printing what it returns.

pub(crate) mod admin;
pub(crate) mod bench;
pub(crate) mod cluster_admin;
pub(crate) mod exchange;
#[cfg(feature = "gateways")]
pub(crate) mod gateway;
pub(crate) mod journal;
pub(crate) mod keygen;
pub(crate) mod loadgen;
pub(crate) mod logger;
pub(crate) mod md;
pub(crate) mod order;
pub(crate) mod parent;
#[cfg(feature = "replay")]
pub(crate) mod replay;
#[cfg(feature = "sim")]
pub(crate) mod sim;
pub(crate) mod verify;
