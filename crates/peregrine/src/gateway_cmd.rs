//! `peregrine gateway http`: the HTTP gateway (crates/peregrine-http, docs/http.md).

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use anyhow::Context;
use clap::{Args, Subcommand};

/// `peregrine gateway ...`.
#[derive(Debug, Args)]
pub struct GatewayArgs {
    #[command(subcommand)]
    command: GatewayCommand,
}

#[derive(Debug, Subcommand)]
enum GatewayCommand {
    /// A Binance-style REST and WebSocket API, a history store and a web UI over
    /// the exchange (docs/http.md).
    Http(HttpArgs),
}

/// `peregrine gateway http`.
#[derive(Debug, Args)]
pub struct HttpArgs {
    /// Gateway config (TOML); see gateway-http.toml and docs/http.md.
    #[arg(long, default_value = "gateway-http.toml")]
    pub config: PathBuf,
    /// Override the config's listen address (port 0: any free port).
    #[arg(long)]
    pub listen: Option<std::net::SocketAddr>,
    /// Async worker threads.
    #[arg(long, default_value_t = 2)]
    pub threads: usize,
}

/// Runs the subcommand.
pub fn run(args: GatewayArgs) -> anyhow::Result<()> {
    match args.command {
        GatewayCommand::Http(a) => http(a),
    }
}

fn http(args: HttpArgs) -> anyhow::Result<()> {
    use std::io::Write;
    let mut config = peregrine_http::GatewayConfig::load(&args.config)?;
    if let Some(l) = args.listen {
        config.listen = l;
    }
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(signal, Arc::clone(&stop))
            .context("installing the signal handler")?;
    }
    peregrine_http::run(config, args.threads, stop, |addr| {
        let mut out = std::io::stdout();
        let _ = writeln!(out, "http gateway on http://{addr}");
        let _ = out.flush();
    })?;
    Ok(())
}
