//! `peregrine gateway fix`: a FIX 4.4 acceptor in front of the Peregrine exchange.
//!
//! Each configured FIX session (a client's SenderCompID) is bridged to one native
//! order-entry session of its exchange account, kept connected whether or not the
//! client is: reports that arrive while the client is away are numbered and stored
//! in the session's FIX message store and reach the client by resend after its next
//! Logon. The FIX side is `peregrine-fix` (sans-IO); this crate is the mapping
//! (`bridge`), the exchange connection (`native`) and the I/O loop (`server`).
//! See docs/fix.md.
#![deny(unsafe_code)]

mod bridge;
pub mod config;
mod native;
mod poller;
pub mod reasons;
mod server;

pub use bridge::{replay_state_record, Bridge, StateRecordError};
pub use config::{ConfigError, GatewayConfig};
pub use server::{run, GatewayError};
