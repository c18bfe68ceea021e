//! `peregrine strategy maker|taker`: the example strategies as processes.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{ensure, Context};
use clap::{Args, Subcommand};
use peregrine_queue::{available_cores, pin_current, WaitStrategy};
use peregrine_strategy::examples::maker::{Maker, MakerConfig};
use peregrine_strategy::examples::pinger::{Pinger, PingerConfig};
use peregrine_strategy::examples::reverter::{Reverter, ReverterConfig};
use peregrine_strategy::examples::taker::{Taker, TakerConfig};
use peregrine_strategy::{paths, run as run_strategy, RunnerConfig, Strategy};
use peregrine_types::InstrumentId;

/// `peregrine strategy <kind>`.
#[derive(Debug, Args)]
pub(crate) struct StrategyArgs {
    #[command(subcommand)]
    kind: StrategyKind,
}

#[derive(Debug, Subcommand)]
enum StrategyKind {
    /// Quote both sides around the observed mid, skewed against inventory.
    Maker(MakerArgs),
    /// Take at the touch with IOC orders at random intervals.
    Taker(SizedArgs),
    /// Trade a moving average of the mid with IOC orders (subscribe it to the book).
    Reverter(SizedArgs),
    /// Latency probe: one order in flight at a time (see docs/engine.md).
    Pinger(PingerArgs),
}

#[derive(Debug, Args)]
struct PingerArgs {
    #[command(flatten)]
    common: Common,
    /// Order quantity (above the strategy's max_order_qty: answered by risk).
    #[arg(long, default_value_t = 1)]
    qty: i64,
    /// Orders to send.
    #[arg(long, default_value_t = 1_000_000)]
    count: u64,
}

#[derive(Debug, Args)]
struct MakerArgs {
    #[command(flatten)]
    sized: SizedArgs,
    /// How far the quoted mid leans towards --mid, per mille (0: the book alone sets
    /// it; 1000: --mid alone). A market the maker alone quotes stays near --mid.
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(i64).range(0..=1000))]
    anchor_per_mille: i64,
}

#[derive(Debug, Args)]
struct SizedArgs {
    #[command(flatten)]
    common: Common,
    /// Order (quote) quantity, lots.
    #[arg(long, default_value_t = 1)]
    qty: i64,
}

#[derive(Debug, Args)]
struct Common {
    /// The engine's name (its shm dir is /dev/shm/peregrine-ENGINE).
    #[arg(long, default_value = "main")]
    engine: String,
    /// The engine's shm directory (overrides --engine).
    #[arg(long)]
    dir: Option<PathBuf>,
    /// This strategy's name in the engine config (default: maker / taker).
    #[arg(long)]
    name: Option<String>,
    /// Stop after this many seconds (default: run until killed).
    #[arg(long)]
    duration: Option<f64>,
    /// busy-spin, spin-yield or park.
    #[arg(long, default_value = "spin-yield")]
    wait: WaitStrategy,
    /// Venue index.
    #[arg(long, default_value_t = 0)]
    venue: u32,
    /// Read the book of this venue instead of --venue's (taker): another route to
    /// the same market, as the FIX gateway in front of the exchange is to `px`.
    #[arg(long)]
    book_venue: Option<u32>,
    /// Instrument.
    #[arg(long, default_value_t = 1)]
    instrument: u32,
    /// Starting mid price, price units.
    #[arg(long, default_value_t = 10_000)]
    mid: i64,
    /// Random seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Do not send receipts (t8) back to the engine (its latency table then stays
    /// empty; the strategy's own summary still has the round trip).
    #[arg(long)]
    no_receipts: bool,
    /// Pin the strategy thread to this core (index into the usable cores).
    #[arg(long)]
    core: Option<usize>,
    /// Timer / order gap scale in microseconds (maker re-quote period; taker mean gap;
    /// reverter cool-down).
    #[arg(long, default_value_t = 1_000)]
    interval_us: u64,
}

/// Runs the subcommand.
pub(crate) fn run(args: StrategyArgs) -> anyhow::Result<()> {
    match args.kind {
        StrategyKind::Maker(MakerArgs {
            sized: SizedArgs { common: c, qty },
            anchor_per_mille,
        }) => {
            ensure!(qty > 0, "--qty must be positive");
            let mut s = Maker::new(MakerConfig {
                qty,
                venue: c.venue,
                instrument: InstrumentId(c.instrument),
                mid: c.mid,
                seed: c.seed,
                interval_ns: c.interval_us * 1_000,
                anchor_per_mille,
                ..MakerConfig::default()
            });
            go(&mut s, &c, "maker")
        }
        StrategyKind::Taker(SizedArgs { common: c, qty }) => {
            ensure!(qty > 0, "--qty must be positive");
            let mut s = Taker::new(TakerConfig {
                qty,
                venue: c.venue,
                book_venue: c.book_venue,
                instrument: InstrumentId(c.instrument),
                mid: c.mid,
                seed: c.seed,
                min_gap_ns: c.interval_us * 200,
                max_gap_ns: c.interval_us * 1_800,
                ..TakerConfig::default()
            });
            go(&mut s, &c, "taker")
        }
        StrategyKind::Reverter(SizedArgs { common: c, qty }) => {
            ensure!(qty > 0, "--qty must be positive");
            let mut s = Reverter::new(ReverterConfig {
                qty,
                venue: c.venue,
                instrument: InstrumentId(c.instrument),
                cooldown_ns: c.interval_us * 1_000,
                ..ReverterConfig::default()
            });
            go(&mut s, &c, "reverter")
        }
        StrategyKind::Pinger(p) => {
            let mut s = Pinger::new(PingerConfig {
                venue: p.common.venue,
                instrument: InstrumentId(p.common.instrument),
                qty: p.qty,
                count: p.count,
            });
            go(&mut s, &p.common, "pinger")
        }
    }
}

fn go<S: Strategy>(s: &mut S, c: &Common, default_name: &str) -> anyhow::Result<()> {
    let dir = c
        .dir
        .clone()
        .unwrap_or_else(|| paths::default_dir(&c.engine));
    let name = c.name.as_deref().unwrap_or(default_name);
    let mut cfg = RunnerConfig::new(dir, name);
    cfg.wait = c.wait;
    cfg.receipts = !c.no_receipts;
    cfg.duration = c.duration.map(Duration::from_secs_f64);
    if let Some(i) = c.core {
        let cores = available_cores(); // once, before pinning (FACTS.md trap)
        eprintln!("{}", pin_current(name, cores.get(i).copied()).describe());
    }
    // SIGTERM or SIGINT stops the runner at its next turn, so the summary is still
    // printed (`peregrine up` stops its strategies this way).
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
        signal_hook::flag::register(signal, Arc::clone(&stop))
            .context("installing the signal handler")?;
    }
    let summary = run_strategy(s, &cfg, &stop)?;
    println!("strategy {name}\n{}", summary.render());
    if let Some(pid) = summary.engine_gone {
        anyhow::bail!(
            "strategy {name}: the engine (pid {pid}) is gone; stopped within one heartbeat"
        );
    }
    if summary.detached {
        anyhow::bail!(
            "strategy {name}: detached by the engine: {}",
            summary
                .detached_why
                .as_deref()
                .unwrap_or("it replaced this strategy's rings (declared it dead, or restarted)")
        );
    }
    Ok(())
}
