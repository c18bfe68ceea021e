//! `peregrine exchange`.

use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use anyhow::Context;
use peregrine_exchange::Config;

/// `peregrine exchange` arguments.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct ExchangeArgs {
    /// Config file (TOML); see `exchange.toml` and docs/exchange.md.
    #[arg(long, default_value = "exchange.toml")]
    pub config: PathBuf,
    /// Start even though the journal lost committed records (its end was truncated,
    /// damaged or deleted): truncate to what it holds and go on. Without it the
    /// exchange refuses to start and says how many committed records are missing.
    #[arg(long)]
    pub accept_loss: bool,
    /// Run as a node of the replicated exchange described by the config's
    /// `[cluster]` section (docs/cluster.md): the leader serves, followers replicate
    /// and redirect clients to it.
    #[arg(long)]
    pub cluster: bool,
}

/// Loads the config, prints `listening on ADDR` on stdout once the listener is
/// bound, and serves until SIGTERM or SIGINT, then stops gracefully: the loops end
/// their batch, the journal is committed and closed, and the feed sends its
/// end-of-session packet; then prints the server-side order→ack summary (by stage)
/// on stdout.
pub(crate) fn run(args: ExchangeArgs) -> anyhow::Result<()> {
    let config = Config::load(&args.config)?;
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
        signal_hook::flag::register(signal, Arc::clone(&stop))
            .with_context(|| format!("installing the handler of signal {signal}"))?;
    }
    let options = peregrine_exchange::StartOptions {
        accept_loss: args.accept_loss,
    };
    let ready = |addr| {
        // What start-up logged is on stderr before the ready line is on stdout (a
        // supervisor reading both in that order finds it).
        super::logger::flush();
        let mut out = std::io::stdout();
        let _ = writeln!(out, "listening on {addr}");
        let _ = out.flush();
    };
    let summary = if args.cluster {
        peregrine_exchange::run_cluster(config, Arc::clone(&stop), ready)?
    } else {
        peregrine_exchange::run_opts(config, options, Arc::clone(&stop), ready)?
    };
    log::info!("exchange stopped");
    let mut out = std::io::stdout();
    let _ = write!(out, "{}", summary.text());
    let _ = out.flush();
    Ok(())
}
