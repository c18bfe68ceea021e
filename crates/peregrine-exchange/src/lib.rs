//! The Peregrine venue server: the I/O around the sans-IO
//! [`peregrine_exchange_core`].
//!
//! Clients speak the binary order-entry protocol of `peregrine-wire` over TCP; the
//! server hands their requests to the core, which sequences them into one stream of
//! commands, journals them, matches them and routes each private report to the
//! session owning the order; trades and L2 updates leave on a UDP feed.
//!
//! ```text
//!  sockets ──▶ net::table ──Request──▶ core (peregrine-exchange-core) ──▶ Outbox (reports)
//!             net::session: framing,     seq, clock, CommandLog,           └▶ sessions' bounded
//!             login, heartbeats          engine, owner map                    outbound buffers
//!                                                                  ──▶ feed::udp (packets)
//! ```
//!
//! # Parts
//!
//! * [`config`]: the validated TOML config.
//! * `net/`: the session table (listener, sessions, routing of reports), each
//!   session's protocol state machine (sans-IO) and socket, and the polling loops of
//!   both topologies: `compact` (one thread; the default: on a 2-core machine one
//!   polling thread leaves the other core to the clients and puts no thread hand-off
//!   or wake-up on the order path) and `split` (ingestion and matching threads joined
//!   by SPSC rings).
//! * `durability/`: start-up recovery from the journal and the newest snapshot, the
//!   snapshot thread ([`Snapshotter`]) and the hasher thread's commitment log.
//! * `feed/`: the UDP socket of the market-data feed and the TCP recovery service
//!   (snapshots and replays).
//! * `metrics/`: the hub the threads publish into, Prometheus rendering and the
//!   `/metrics` endpoint.
//!
//! * **Sequenced and journaled.** Every command gets the next engine sequence number
//!   and a timestamp from the injected clock, goes to the journal before it executes,
//!   and its results leave only after the batch's commit.
//! * **Bounded everything.** Fixed receive buffers, outbound buffers capped at
//!   `session_out_buffer` (a slow reader is disconnected), `max_sessions` slots,
//!   preallocated event and feed buffers. Bad input closes only the offending session.
//! * **Metrics off the order path.** The matching and session threads count in plain
//!   fields and copy them to the hub at most once per interval.
#![deny(unsafe_code)]

mod cluster;
pub mod config;
mod durability;
mod error;
mod feed;
mod metrics;
mod net;
mod start;
pub mod stepped;

pub use cluster::{fuzz_decode_batch, replay_cluster_log, run_cluster, BatchError, ClusterReplay};
pub use config::{Config, ConfigError, Topology};
pub use durability::snapshots::{ReplicaFactory, Snapshotter};
pub use error::ExchangeError;
pub use metrics::ack::{AckSummary, StageSummary};
pub use start::{run, run_opts, run_with_log, RunSummary, StartOptions};
