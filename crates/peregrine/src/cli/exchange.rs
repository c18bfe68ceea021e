//! `peregrine exchange`.

use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use peregrine_exchange::Config;

/// `peregrine exchange` arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct ExchangeArgs {
    /// Config file (TOML); see `exchange.toml` and docs/exchange.md.
    #[arg(long, default_value = "exchange.toml")]
    pub config: PathBuf,
}

/// Loads the config, prints `listening on ADDR` on stdout once the listener is
/// bound, and serves until SIGINT or SIGTERM; then prints the server-side order→ack
/// summary (by stage) on stdout.
pub fn run(args: ExchangeArgs) -> anyhow::Result<()> {
    let config = Config::load(&args.config)?;
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(signal, Arc::clone(&stop))?;
    }
    let summary = peregrine_exchange::run(config, stop, |addr| {
        let mut out = std::io::stdout();
        let _ = writeln!(out, "listening on {addr}");
        let _ = out.flush();
    })?;
    let mut out = std::io::stdout();
    let _ = write!(out, "{}", summary.text());
    let _ = out.flush();
    Ok(())
}
