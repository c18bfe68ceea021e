//! `peregrine gateway fix|http|bench`: the FIX 4.4 gateway (crates/peregrine-fix-gateway,
//! docs/fix.md) and the HTTP gateway (crates/peregrine-http, docs/http.md).

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use anyhow::Context;
use clap::{Args, Subcommand};

/// `peregrine gateway ...`.
#[derive(Debug, Args)]
pub(crate) struct GatewayArgs {
    #[command(subcommand)]
    command: GatewayCommand,
}

#[derive(Debug, Subcommand)]
enum GatewayCommand {
    /// FIX 4.4 acceptor in front of the exchange (docs/fix.md).
    Fix(FixArgs),
    /// A Binance-style REST and WebSocket API, a history store and a web UI over
    /// the exchange (docs/http.md).
    Http(HttpArgs),
    /// Measure the HTTP gateway: REST order latency beside the native protocol,
    /// WebSocket fan-out, history writer lag (docs/performance.md). The same as
    /// `peregrine bench http` (it runs the `peregrine-bench` binary).
    Bench(super::bench::BenchArgs),
}

/// `peregrine gateway fix`.
#[derive(Debug, Args)]
pub(crate) struct FixArgs {
    /// The gateway's TOML configuration.
    #[arg(long, default_value = "gateway-fix.toml")]
    config: PathBuf,
    /// Override the config's `listen` address (port 0: pick a free one).
    #[arg(long)]
    listen: Option<String>,
    /// Override the config's `exchange` address.
    #[arg(long)]
    exchange: Option<String>,
    /// Override the config's `store_dir`.
    #[arg(long)]
    store_dir: Option<PathBuf>,
}

/// `peregrine gateway http`.
#[derive(Debug, Args)]
pub(crate) struct HttpArgs {
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
pub(crate) fn run(args: GatewayArgs) -> anyhow::Result<()> {
    match args.command {
        GatewayCommand::Fix(a) => fix(a),
        GatewayCommand::Http(a) => http(a),
        GatewayCommand::Bench(a) => bench(a),
    }
}

/// `peregrine gateway bench ARGS` is `peregrine bench http ARGS`: the bench lives in
/// the `peregrine-bench` binary (not linked into this one).
fn bench(a: super::bench::BenchArgs) -> anyhow::Result<()> {
    let mut args = vec![std::ffi::OsString::from("http")];
    args.extend(a.args);
    super::bench::run(super::bench::BenchArgs { args })
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
        super::logger::flush();
        let _ = writeln!(out, "http gateway on http://{addr}");
        let _ = out.flush();
    })?;
    Ok(())
}

fn fix(args: FixArgs) -> anyhow::Result<()> {
    let mut config = peregrine_fix_gateway::GatewayConfig::load(&args.config)
        .with_context(|| format!("loading {}", args.config.display()))?;
    if let Some(l) = args.listen {
        config.listen = l;
    }
    if let Some(e) = args.exchange {
        config.exchange = e;
    }
    if let Some(d) = args.store_dir {
        config.store_dir = d;
    }
    config.validate()?;
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
        signal_hook::flag::register(signal, Arc::clone(&stop))
            .context("installing signal handlers")?;
    }
    let sessions = config.sessions.len();
    peregrine_fix_gateway::run(config, &stop, |addr| {
        super::logger::flush();
        println!("fix gateway listening on {addr} ({sessions} sessions)");
    })?;
    println!("fix gateway stopped");
    Ok(())
}
