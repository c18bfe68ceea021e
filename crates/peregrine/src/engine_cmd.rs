//! `peregrine engine`: run the order engine, or talk to a running one.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context};
use clap::{Args, Subcommand};
use peregrine_engine::config::EngineConfig;
use peregrine_engine::{control, runtime, Limits};
use peregrine_strategy::paths;

/// `peregrine engine [--config F] [--duration S] [stats | kill | limits | shutdown]`.
#[derive(Debug, Args)]
pub(crate) struct EngineArgs {
    /// The engine config (TOML).
    #[arg(long, default_value = "engine.toml", global = true)]
    config: PathBuf,
    /// The engine's shm directory (default: from the config).
    #[arg(long, global = true)]
    dir: Option<PathBuf>,
    /// Stop after this many seconds (default: until `peregrine engine shutdown`).
    #[arg(long)]
    duration: Option<f64>,
    #[command(subcommand)]
    action: Option<EngineAction>,
}

#[derive(Debug, Subcommand)]
enum EngineAction {
    /// Print latency, positions, rejects and queue counters of the running engine.
    Stats,
    /// Kill switch on and cancel every open order; returns when the venues confirmed.
    Kill {
        /// Only this strategy.
        #[arg(long)]
        strategy: Option<String>,
        /// Give up after this long.
        #[arg(long, default_value_t = control::KILL_TIMEOUT_MS)]
        timeout_ms: u64,
    },
    /// Print the risk limits, or change them at run time (`--set key=value`, repeated;
    /// `off` switches a limit off). Without `--strategy` the change is global.
    Limits {
        /// Only this strategy.
        #[arg(long)]
        strategy: Option<String>,
        /// A change, e.g. `--set max_order_qty=5 --set price_collar=300`.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
    },
    /// Stop the running engine.
    Shutdown,
}

/// Runs the subcommand.
pub(crate) fn run(args: EngineArgs) -> anyhow::Result<()> {
    match args.action {
        None => serve(&args),
        Some(EngineAction::Stats) => talk(&args, "stats".into(), 5_000),
        Some(EngineAction::Kill {
            ref strategy,
            timeout_ms,
        }) => {
            let who = strategy.as_deref().unwrap_or("*");
            talk(
                &args,
                format!("kill {who} {timeout_ms}"),
                timeout_ms + 5_000,
            )
        }
        Some(EngineAction::Limits {
            ref strategy,
            ref set,
        }) => {
            // Checked here too, so a typo fails before the engine is contacted.
            Limits::parse_changes(set.iter().map(String::as_str))?;
            if set.iter().any(|kv| kv.chars().any(char::is_whitespace)) {
                bail!("a --set value may not contain spaces: {set:?}");
            }
            let line = match (strategy, set.is_empty()) {
                (None, true) => "limits".to_owned(),
                (who, _) => format!("limits {} {}", who.as_deref().unwrap_or("*"), set.join(" ")),
            };
            talk(&args, line, 5_000)
        }
        Some(EngineAction::Shutdown) => talk(&args, "shutdown".into(), 5_000),
    }
}

fn serve(args: &EngineArgs) -> anyhow::Result<()> {
    let mut cfg = EngineConfig::load(&args.config)?;
    if let Some(dir) = &args.dir {
        cfg.shm_dir = Some(dir.clone());
    }
    let engine = runtime::start(&cfg).context("starting the engine")?;
    for note in &engine.notes {
        eprintln!("{note}");
    }
    eprintln!(
        "engine {} running: {} strategies, {} venues, shm dir {}",
        cfg.name,
        cfg.strategies.len(),
        cfg.venues.len(),
        engine.dir().display()
    );
    // SIGTERM or SIGINT stops the engine cleanly (threads joined, shm files removed):
    // `peregrine up` relies on it when it dies (its children get SIGTERM).
    for signal in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
        signal_hook::flag::register(signal, engine.stop_flag())
            .context("installing the signal handler")?;
    }
    let duration = args.duration.map(Duration::from_secs_f64);
    let report = engine.wait(duration);
    println!("{report}");
    Ok(())
}

fn talk(args: &EngineArgs, command: String, timeout_ms: u64) -> anyhow::Result<()> {
    let dir = match &args.dir {
        Some(d) => d.clone(),
        None if args.config.exists() => EngineConfig::load(&args.config)?.dir(),
        None => paths::default_dir("main"),
    };
    let socket = paths::control_socket(&dir);
    let reply = control::request(&socket, command.trim(), Duration::from_millis(timeout_ms))
        .with_context(|| format!("talking to the engine at {}", socket.display()))?;
    print!("{reply}");
    if reply.starts_with("error") {
        bail!("the engine refused: {}", reply.trim());
    }
    Ok(())
}
