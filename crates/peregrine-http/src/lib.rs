//! The Peregrine HTTP gateway: a Binance-spot-style REST and WebSocket API over the
//! exchange's native protocol, a history store, and a web trading and operations
//! UI (docs/http.md).
//!
//! # Design
//!
//! ```text
//!  clients ──HTTP/WS──▶ server (axum on hyper, tokio)          history store (sqlx Any:
//!                       │ rest/ (Binance REST)  ws/ (streams)    SQLite | PostgreSQL)
//!                       ▼                        ▲                   ▲ read     ▲ write
//!                 account/ (orders, waiters) ──changes──▶ hub ───────┘   history::writer
//!                       │ Request ▲ Report           ▲ events                   ▲ trades, orders
//!  ─────────────── link/ (the exchange link: the only code that knows the wire) ──────────
//!                 session (TCP order entry, one per account)   feed (UDP + recovery)
//!                       ▼                                       ▼
//!                    exchange                                 market/ (books, bars)
//! ```
//!
//! * **Off the matching path.** The gateway is its own process and reaches the
//!   exchange only as a client: order entry over TCP and the market-data feed.
//! * **One seam to the exchange.** [`link`] turns the native protocol into gateway
//!   types ([`link::Request`], [`link::Report`], [`link::FeedEvent`]).
//! * **Sans-IO cores.** Order state ([`account::state`]), books with update ids
//!   ([`market::book`]), bars ([`market::kline`]), parameters and signatures
//!   ([`dialect::params`], [`dialect::auth`]) are plain code with unit and property tests.
//! * **Layered modules**, each naming only those below it (checked by
//!   `scripts/check-module-cycles.py`): [`link`], [`config`] and [`telemetry`]
//!   (the order stages' histograms); [`market`] (books,
//!   bars, trades, the stream [`market::hub`]); [`venue`] and [`dialect`] (Binance's
//!   errors, parameters, keys, limits, listen keys); [`account`]; [`history`];
//!   [`app`] (the shared state); [`rest`]; [`ws`]; [`status`] and [`ui`]; [`server`].
//! * **Bounded.** Connections, bodies, request weight, order counts, streams per
//!   connection, incoming WebSocket messages and subscriber lag all have limits; a
//!   client over one is answered or dropped, nobody else notices.
#![deny(unsafe_code)]

pub mod account;
pub mod app;
pub mod config;
pub mod dialect;
pub mod history;
pub mod link;
pub mod market;
pub mod rest;
pub mod server;
pub mod status;
pub mod telemetry;
pub mod ui;
pub mod venue;
pub mod ws;

use std::net::SocketAddr;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

pub use config::GatewayConfig;

/// Why the gateway stopped.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// Start-up failed.
    #[error(transparent)]
    Start(#[from] app::StartError),
    /// Binding the listen address failed.
    #[error("binding {0}: {1}")]
    Bind(SocketAddr, std::io::Error),
    /// The async runtime could not start.
    #[error("starting the runtime: {0}")]
    Runtime(std::io::Error),
}

/// Runs the gateway until `stop` is set: a tokio runtime with `threads` workers,
/// the gateway's background work, the HTTP server. `ready` gets the bound address.
pub fn run(
    config: GatewayConfig,
    threads: usize,
    stop: Arc<AtomicBool>,
    ready: impl FnOnce(SocketAddr),
) -> Result<(), RunError> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads.max(1))
        .thread_name("gateway")
        .enable_all()
        .build()
        .map_err(RunError::Runtime)?;
    rt.block_on(async move {
        let listen = config.listen;
        let listener = server::bind(listen)
            .await
            .map_err(|e| RunError::Bind(listen, e))?;
        let app = app::App::start(config, stop).await?;
        let addr = listener
            .local_addr()
            .map_err(|e| RunError::Bind(listen, e))?;
        ready(addr);
        server::serve(app, listener).await;
        Ok(())
    })
}
