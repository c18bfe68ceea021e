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
    /// Measure the engine journal: cost per order (write-ahead append + write) and
    /// recovery time for a journal of N events.
    BenchJournal {
        /// Journal records to write (3 per order).
        #[arg(long, default_value_t = 1_000_000)]
        events: u64,
        /// fdatasync every commit.
        #[arg(long)]
        fsync: bool,
        /// Directory for the journal (a fresh subdirectory is used and removed).
        #[arg(long, default_value = "/tmp")]
        dir: PathBuf,
    },
    /// Measure UDP loopback one-way latency (the floor under feed-to-strategy).
    BenchUdp {
        /// Datagrams.
        #[arg(long, default_value_t = 20_000)]
        count: u64,
        /// Gap between sends, µs.
        #[arg(long, default_value_t = 50)]
        gap_us: u64,
    },
    /// Measure the two shared-memory submit candidates (per-strategy SPSC + scan vs
    /// one MPSC ring): round trip and one-producer throughput.
    BenchSubmit {
        /// Connected strategies (rings).
        #[arg(long, default_value_t = 4)]
        rings: usize,
        /// Round trips (and pushes in the throughput phase).
        #[arg(long, default_value_t = 200_000)]
        rounds: u64,
        /// busy-spin (needs 2 free cores), spin-yield or park.
        #[arg(long, default_value = "busy-spin")]
        wait: peregrine_queue::WaitStrategy,
        /// Directory for the ring files.
        #[arg(long, default_value = "/dev/shm")]
        ring_dir: PathBuf,
    },
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
        Some(EngineAction::BenchSubmit {
            rings,
            rounds,
            wait,
            ref ring_dir,
        }) => bench_submit(rings, rounds, wait, ring_dir),
        Some(EngineAction::BenchJournal {
            events,
            fsync,
            ref dir,
        }) => bench_journal(events, fsync, dir),
        Some(EngineAction::BenchUdp { count, gap_us }) => {
            let h = peregrine_engine::bench_udp::run(count, gap_us)?;
            println!(
                "udp loopback one-way, {} datagrams, {gap_us} µs apart",
                h.len()
            );
            println!("{}", percentiles(&h));
            Ok(())
        }
    }
}

fn percentiles(h: &hdrhistogram::Histogram<u64>) -> String {
    use peregrine_engine::units::fmt_ns;
    format!(
        "p50 {}  p90 {}  p99 {}  p99.9 {}  max {}\n{{\"n\":{},\"p50\":{},\"p90\":{},\"p99\":{},\"p999\":{},\"max\":{}}}",
        fmt_ns(h.value_at_quantile(0.5)),
        fmt_ns(h.value_at_quantile(0.9)),
        fmt_ns(h.value_at_quantile(0.99)),
        fmt_ns(h.value_at_quantile(0.999)),
        fmt_ns(h.max()),
        h.len(),
        h.value_at_quantile(0.5),
        h.value_at_quantile(0.9),
        h.value_at_quantile(0.99),
        h.value_at_quantile(0.999),
        h.max()
    )
}

fn bench_journal(events: u64, fsync: bool, dir: &std::path::Path) -> anyhow::Result<()> {
    let dir = dir.join(format!("peregrine-bench-journal-{}", std::process::id()));
    let result = peregrine_engine::bench_durable::run(&dir, events, fsync);
    let _ = std::fs::remove_dir_all(&dir);
    let b = result.map_err(anyhow::Error::msg)?;
    println!(
        "engine journal, {} events ({} orders), fsync {}",
        b.events,
        b.per_order.len(),
        if fsync {
            "every commit"
        } else {
            "none (page cache)"
        }
    );
    println!(
        "per order (Sent append + write): {}",
        percentiles(&b.per_order)
    );
    println!(
        "append phase {:.2} s ({:.0} events/s); recovery (open + replay {} records) {:.3} s ({:.0} records/s)",
        b.append_s,
        b.events as f64 / b.append_s,
        b.replayed,
        b.recovery_s,
        b.replayed as f64 / b.recovery_s
    );
    Ok(())
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

fn bench_submit(
    rings: usize,
    rounds: u64,
    wait: peregrine_queue::WaitStrategy,
    ring_dir: &std::path::Path,
) -> anyhow::Result<()> {
    let cores = peregrine_queue::available_cores(); // once, before pinning
    let dir = ring_dir.join(format!("peregrine-bench-submit-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let result = peregrine_engine::bench_submit::run(&dir, rings, rounds, wait, &cores);
    let _ = std::fs::remove_dir_all(&dir);
    println!(
        "submit hand-off, {rings} strategies connected, 1 active, {rounds} rounds, wait {}, {} cores",
        wait.name(),
        cores.len()
    );
    println!(
        "{:<26}{:>10}{:>10}{:>10}{:>14}",
        "candidate", "rt p50", "rt p99", "rt p99.9", "pushes/s"
    );
    for r in result? {
        println!(
            "{:<26}{:>8}ns{:>8}ns{:>8}ns{:>14.0}",
            r.name, r.rt[0], r.rt[1], r.rt[2], r.throughput
        );
    }
    Ok(())
}
