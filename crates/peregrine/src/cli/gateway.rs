//! `peregrine gateway fix --config gateway-fix.toml`: the FIX 4.4 gateway.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use anyhow::Context;
use clap::{Args, Subcommand};

/// `peregrine gateway <protocol>`.
#[derive(Debug, Subcommand)]
pub enum GatewayCommand {
    /// FIX 4.4 acceptor in front of the exchange (docs/fix.md).
    Fix(FixArgs),
}

/// `peregrine gateway fix`.
#[derive(Debug, Args)]
pub struct FixArgs {
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

pub fn run(cmd: GatewayCommand) -> anyhow::Result<()> {
    let GatewayCommand::Fix(args) = cmd;
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
