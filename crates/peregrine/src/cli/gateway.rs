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
    /// WebSocket fan-out, history writer lag (docs/performance.md).
    Bench(BenchArgs),
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

/// `peregrine gateway bench`.
#[derive(Debug, Args)]
pub(crate) struct BenchArgs {
    /// REST order rates, orders/s (open loop), comma separated.
    #[arg(long, value_delimiter = ',', default_value = "1000,5000")]
    pub rates: Vec<u64>,
    /// Seconds per measurement.
    #[arg(long, default_value_t = 5.0)]
    pub duration: f64,
    /// WebSocket subscribers in the fan-out test.
    #[arg(long, default_value_t = 1000)]
    pub subscribers: usize,
    /// Feed events per second in the fan-out test.
    #[arg(long, default_value_t = 100)]
    pub fanout_rate: u64,
    /// Orders per second in the writer test.
    #[arg(long, default_value_t = 100_000)]
    pub writer_rate: u64,
    /// HTTP connections of the REST client.
    #[arg(long, default_value_t = 8)]
    pub connections: usize,
    /// The gateway's async worker threads (as `gateway http --threads`).
    #[arg(long, default_value_t = 2)]
    pub gateway_threads: usize,
    /// Only these parts: rest, fanout, writer (comma separated).
    #[arg(long, value_delimiter = ',')]
    pub only: Vec<String>,
    /// Save the tables as JSON.
    #[arg(long)]
    pub json: Option<PathBuf>,
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

fn bench(a: BenchArgs) -> anyhow::Result<()> {
    anyhow::ensure!(
        a.duration > 0.0 && a.duration < 3600.0,
        "--duration: 0..3600 s"
    );
    anyhow::ensure!(
        a.rates.iter().all(|r| *r > 0) && a.fanout_rate > 0 && a.writer_rate > 0,
        "rates must be positive"
    );
    let settings = peregrine_http::bench::BenchSettings {
        exe: std::env::current_exe().context("finding the peregrine executable")?,
        rates: a.rates,
        duration: a.duration,
        subscribers: a.subscribers,
        fanout_rate: a.fanout_rate,
        writer_rate: a.writer_rate,
        only: a.only,
        connections: a.connections,
        gateway_threads: a.gateway_threads.max(1),
    };
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("peregrine gateway bench (load average: {})", load.trim());
    let tables = peregrine_http::bench::run(&settings)?;
    for t in &tables {
        println!("{t}");
    }
    if let Some(path) = a.json {
        std::fs::write(&path, peregrine_http::bench::to_json(load.trim(), &tables))
            .with_context(|| format!("writing {}", path.display()))?;
        println!("saved {}", path.display());
    }
    Ok(())
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
        println!("fix gateway listening on {addr} ({sessions} sessions)");
    })?;
    println!("fix gateway stopped");
    Ok(())
}
