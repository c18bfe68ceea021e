//! The Peregrine venue server.
//!
//! Clients speak the binary order-entry protocol of `peregrine-wire` over TCP; the
//! exchange sequences their requests into one stream of commands for the
//! `peregrine-book` [`peregrine_book::MatchingEngine`], sends each private report to the
//! session owning the order, and publishes trades and L2 updates on a UDP feed.
//!
//! # Design
//!
//! ```text
//!  sockets ──▶ SessionTable ──Request──▶ Core ─────────────▶ Outbox (reports)
//!  (table.rs)   framing, login,          (core.rs) seq, clock,   └▶ sessions' bounded
//!               heartbeats               CommandLog, engine,        outbound buffers
//!                                        owner map          ───▶ MdPublisher (UDP)
//! ```
//!
//! * **Two layers, two topologies.** [`table::SessionTable`] knows sockets and
//!   sessions; [`core::Core`] knows commands and events. [`compact`] runs both on one
//!   thread (the default: on a 2-core machine one polling thread leaves the other core
//!   to the clients and puts no thread hand-off or wake-up on the order path);
//!   [`split`] runs them on two threads joined by SPSC rings ([`ring`]).
//! * **Sequenced and journaled.** Every command gets the next engine sequence number
//!   and a timestamp from a monotonic [`clock::Clock`], goes to the
//!   [`journal::CommandLog`] seam before it executes, and its results leave only after
//!   the batch's `commit`.
//! * **Routing by ownership.** The core remembers, per live order, the session and
//!   account that entered it; maker fills and unsolicited cancels go there. If that
//!   session has closed, the report goes to the account's current session (a
//!   reconnect of the same account), else it is dropped and counted.
//! * **Bounded everything.** Fixed receive buffers, outbound buffers capped at
//!   `session_out_buffer` (a slow reader is disconnected), `max_sessions` slots,
//!   preallocated event and feed buffers. Bad input closes only the offending session.
//! * **Seams.** [`journal::CommandLog`] (the journal crate), [`wait::WaitStrategy`] and
//!   [`ring`] (the queue crate).
//! * **Metrics off the order path.** The matching and session threads count in plain
//!   fields and copy them to a [`metrics::MetricsHub`] at most once per interval; a
//!   [`depth::DepthPublisher`] copies the books' top levels likewise; a `metrics`
//!   thread serves them as Prometheus text ([`http`], [`metrics_render`]).
//!
//! [`loadgen`] is the matching client: many sessions, open or closed loop, HdrHistogram
//! latencies.
#![deny(unsafe_code)]

pub mod admin_cli;
pub mod admission;
pub mod balances;
pub mod batch;
pub mod client_v2;
pub mod clock;
pub mod command_codec;
pub mod commit_config;
pub mod commit_log;
pub mod compact;
pub mod config;
pub mod core;
pub mod credentials;
pub mod depth;
pub mod hasher;
pub mod http;
pub mod journal;
pub mod journal_cli;
pub mod journal_log;
pub mod journal_replay;
pub mod loadgen;
pub mod log;
pub mod mapping;
pub mod md;
pub mod metrics;
pub mod metrics_hist;
pub mod metrics_render;
pub mod metrics_text;
pub mod queries;
pub mod recovery;
pub mod reports;
pub mod ring;
pub mod sequencer;
pub mod server;
pub mod session;
pub mod session_v2;
pub mod snapshot_codec;
pub mod snapshotter;
pub mod split;
pub mod subscriber;
pub mod table;
pub mod verify;
pub mod wait;
pub mod window;

pub use config::{Config, Topology};
pub use server::{run, run_with_log};
pub use wait::WaitStrategy;

/// `peregrine exchange` arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct ExchangeArgs {
    /// Config file (TOML); see `exchange.toml` and docs/exchange.md.
    #[arg(long, default_value = "exchange.toml")]
    pub config: std::path::PathBuf,
}

/// Runs `peregrine exchange`: loads the config, prints `listening on ADDR` on stdout
/// once the listener is bound, and serves until killed.
pub fn run_cli(args: ExchangeArgs) -> anyhow::Result<()> {
    use std::io::Write;
    let config = Config::load(&args.config)?;
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    run(config, stop, |addr| {
        let mut out = std::io::stdout();
        let _ = writeln!(out, "listening on {addr}");
        let _ = out.flush();
    })
}
