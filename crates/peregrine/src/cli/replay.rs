//! `peregrine replay`: recorded markets through the exchange core in simulated time
//! (`peregrine-replay`; docs/replay.md).
//!
//! ```text
//! peregrine replay itch FILE --symbol SYM [--check] [--strategy joiner | --python my.py] ...
//! peregrine replay lobster MESSAGES [--book ORDERBOOK] ...
//! peregrine replay binance FILE ...            (L2: --queue-model risk-averse|power:N|log)
//! peregrine replay tardis BOOK [--trades TRADES] ...
//! peregrine replay synth --format itch|lobster --events N --seed S --out PATH
//! peregrine replay compare --events N ...      (L2 queue models against exact L3 fills)
//! ```
//!
//! With `--python FILE.py`, the replay runs in the Python package's process
//! (`python3 -m peregrine replay`), which calls the same replay with the strategy
//! class defined in the file: the one that `peregrine up --python FILE.py` runs live.

use std::path::PathBuf;

use anyhow::{bail, Context};
use clap::{Args, Subcommand};
use peregrine_replay::config::{Format, ReplayConfig};
use peregrine_replay::synth::{generate, ItchWriter, LobsterWriter, SynthConfig};
use peregrine_replay::{builtin, compare, session};

/// `peregrine replay ...`.
#[derive(Debug, Args)]
pub(crate) struct ReplayArgs {
    #[command(subcommand)]
    command: ReplayCommand,
}

#[derive(Debug, Subcommand)]
enum ReplayCommand {
    /// A Nasdaq TotalView-ITCH 5.0 file (plain or gzip), one symbol.
    Itch {
        /// The file.
        file: PathBuf,
        /// The symbol to replay.
        #[arg(long)]
        symbol: String,
        #[command(flatten)]
        common: Common,
    },
    /// LOBSTER message file (and order book file).
    Lobster {
        /// `TICKER_DATE_..._message_N.csv`.
        messages: PathBuf,
        /// `TICKER_DATE_..._orderbook_N.csv`: with --check, the core is compared with
        /// it after every message.
        #[arg(long)]
        book: Option<PathBuf>,
        #[command(flatten)]
        common: Common,
    },
    /// Binance raw depth and trade streams as a collector records them.
    Binance {
        /// The file (plain or gzip).
        file: PathBuf,
        #[command(flatten)]
        common: Common,
    },
    /// Tardis `incremental_book_L2` CSV (and `trades` CSV).
    Tardis {
        /// The incremental_book_L2 file.
        book: PathBuf,
        /// The trades file.
        #[arg(long)]
        trades: Option<PathBuf>,
        #[command(flatten)]
        common: Common,
    },
    /// Write a synthetic order-by-order day in the exact ITCH 5.0 or LOBSTER format.
    Synth(SynthArgs),
    /// Replay one synthetic day as L3 (exact fills) and as L2 under each queue model,
    /// with the same strategy; compare the fills.
    Compare(CompareArgs),
}

#[derive(Debug, Args)]
struct Common {
    /// A built-in Rust strategy: joiner, taker, reverter.
    #[arg(long)]
    strategy: Option<String>,
    /// A Python strategy file (needs the `peregrine` Python package: docs/python.md).
    #[arg(long, conflicts_with = "strategy")]
    python: Option<PathBuf>,
    /// The Python interpreter for --python.
    #[arg(long, default_value = "python3")]
    python_bin: String,
    /// Order quantity of a built-in strategy, in the instrument's units.
    #[arg(long, default_value_t = 100)]
    qty: i64,
    /// Strategy → book latency, µs.
    #[arg(long, default_value_t = 0.0)]
    entry_latency_us: f64,
    /// Book → strategy latency, µs.
    #[arg(long, default_value_t = 0.0)]
    response_latency_us: f64,
    /// Recorded order latencies (req_ts,exch_ts,resp_ts rows, ns) to interpolate.
    #[arg(long)]
    latency_file: Option<PathBuf>,
    /// Uniform jitter added to each order latency, µs.
    #[arg(long, default_value_t = 0.0)]
    jitter_us: f64,
    /// Venue → strategy market-data latency, µs.
    #[arg(long, default_value_t = 0.0)]
    feed_latency_us: f64,
    /// Seed of everything random in the replay.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Check the core against the file's own book at every step (L3, no strategy).
    #[arg(long)]
    check: bool,
    /// L2 queue model: risk-averse, power:N, log.
    #[arg(long, default_value = "risk-averse")]
    queue_model: String,
    /// Equity curve sample period, ms of simulated time.
    #[arg(long, default_value_t = 1000.0)]
    sample_ms: f64,
    /// Write the report (and every fill) as JSON to this file.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Write the SVG plots (equity, inventory, fills) into this directory.
    #[arg(long)]
    plots: Option<PathBuf>,
}

#[derive(Debug, Args)]
struct SynthArgs {
    /// itch or lobster.
    #[arg(long, default_value = "itch")]
    format: String,
    /// Messages.
    #[arg(long, default_value_t = 1_000_000)]
    events: u64,
    /// Seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Symbol.
    #[arg(long, default_value = "SYNTH")]
    symbol: String,
    /// Output: the ITCH file, or the LOBSTER message file (the order book file is
    /// written beside it, `message` replaced by `orderbook` in its name).
    #[arg(long)]
    out: PathBuf,
    /// LOBSTER: levels per side in the order book file.
    #[arg(long, default_value_t = 10)]
    levels: usize,
}

#[derive(Debug, Args)]
struct CompareArgs {
    /// Messages of the synthetic day.
    #[arg(long, default_value_t = 300_000)]
    events: u64,
    /// Seed of the day.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// The joiner's order quantity (shares).
    #[arg(long, default_value_t = 100)]
    qty: i64,
    /// Strategy → book latency, µs (the same in every replay).
    #[arg(long, default_value_t = 50.0)]
    entry_latency_us: f64,
    /// Write the comparison as JSON to this file.
    #[arg(long)]
    json: Option<PathBuf>,
}

fn ns(us: f64) -> u64 {
    (us.max(0.0) * 1_000.0).round() as u64
}

fn config(format: Format, file: PathBuf, c: &Common) -> ReplayConfig {
    ReplayConfig {
        entry_latency_ns: ns(c.entry_latency_us),
        response_latency_ns: ns(c.response_latency_us),
        latency_file: c.latency_file.clone(),
        jitter_ns: ns(c.jitter_us),
        feed_latency_ns: ns(c.feed_latency_us),
        seed: c.seed,
        check: c.check,
        queue_model: c.queue_model.clone(),
        sample_every_ns: ns(c.sample_ms * 1_000.0).max(1),
        ..ReplayConfig::new(format, file)
    }
}

/// Runs the subcommand.
pub(crate) fn run(args: ReplayArgs) -> anyhow::Result<()> {
    let (cfg, common) = match args.command {
        ReplayCommand::Itch {
            file,
            symbol,
            common,
        } => (
            ReplayConfig {
                symbol: Some(symbol),
                ..config(Format::Itch, file, &common)
            },
            common,
        ),
        ReplayCommand::Lobster {
            messages,
            book,
            common,
        } => (
            ReplayConfig {
                book,
                ..config(Format::Lobster, messages, &common)
            },
            common,
        ),
        ReplayCommand::Binance { file, common } => (config(Format::Binance, file, &common), common),
        ReplayCommand::Tardis {
            book,
            trades,
            common,
        } => (
            ReplayConfig {
                trades,
                ..config(Format::Tardis, book, &common)
            },
            common,
        ),
        ReplayCommand::Synth(s) => return synth(s),
        ReplayCommand::Compare(c) => return compare_models(c),
    };
    if let Some(py) = &common.python {
        return python(py, &cfg, &common);
    }
    let plan = session::plan(cfg.options()?)?;
    let mut strategy = match &common.strategy {
        None => None,
        Some(name) => Some(
            builtin::attach(name, &plan.spec, common.qty, cfg.seed).with_context(|| {
                format!("unknown strategy {name:?} (one of {:?})", builtin::NAMES)
            })??,
        ),
    };
    let attached = strategy
        .as_mut()
        .map(|s| s.as_mut() as &mut dyn peregrine_replay::attach::Attached);
    let report = session::run(&plan, attached)?;
    print!("{}", report.render());
    if let Some(j) = &common.json {
        std::fs::write(j, serde_json::to_string_pretty(&report)?)
            .with_context(|| format!("writing {}", j.display()))?;
        println!("report: {}", j.display());
    }
    if let Some(dir) = &common.plots {
        if report.strategy.is_none() {
            bail!("--plots needs a strategy (--strategy or --python)");
        }
        for p in peregrine_replay::report::plot::write_all(&report, dir)? {
            println!("plot: {}", p.display());
        }
    }
    if let Some(c) = &report.check {
        if c.mismatches > 0 {
            bail!(
                "the replay differs from the recorded book at {} steps",
                c.mismatches
            );
        }
    }
    Ok(())
}

/// Runs the replay in the Python package's process with the strategy of `file`.
fn python(file: &std::path::Path, cfg: &ReplayConfig, c: &Common) -> anyhow::Result<()> {
    let mut cmd = std::process::Command::new(&c.python_bin);
    cmd.args(["-m", "peregrine", "replay"])
        .arg(file)
        .arg("--config-json")
        .arg(serde_json::to_string(cfg)?);
    if let Some(j) = &c.json {
        cmd.arg("--json").arg(j);
    }
    if let Some(p) = &c.plots {
        cmd.arg("--plots").arg(p);
    }
    let status = cmd.status().with_context(|| {
        format!(
            "running {} (is the peregrine Python package installed? docs/python.md)",
            c.python_bin
        )
    })?;
    anyhow::ensure!(status.success(), "the Python replay failed ({status})");
    Ok(())
}

fn synth(s: SynthArgs) -> anyhow::Result<()> {
    let cfg = SynthConfig {
        seed: s.seed,
        events: s.events,
        symbol: s.symbol,
        ..SynthConfig::default()
    };
    let create = |p: &std::path::Path| {
        std::fs::File::create(p)
            .map(std::io::BufWriter::new)
            .with_context(|| format!("creating {}", p.display()))
    };
    match s.format.as_str() {
        "itch" => {
            generate(&cfg, &mut ItchWriter::new(create(&s.out)?))?;
            println!(
                "{}: {} ITCH 5.0 messages of {} (seed {})",
                s.out.display(),
                s.events,
                cfg.symbol,
                s.seed
            );
        }
        "lobster" => {
            let name = s.out.file_name().and_then(|n| n.to_str()).unwrap_or("");
            anyhow::ensure!(
                name.contains("message"),
                "--out must name the message file (…_message_N.csv)"
            );
            let book = s
                .out
                .with_file_name(name.replacen("message", "orderbook", 1));
            generate(
                &cfg,
                &mut LobsterWriter::new(create(&s.out)?, create(&book)?, s.levels),
            )?;
            println!(
                "{} and {}: LOBSTER, {} levels (seed {})",
                s.out.display(),
                book.display(),
                s.levels,
                s.seed
            );
        }
        other => bail!("--format {other:?}: itch or lobster"),
    }
    Ok(())
}

fn compare_models(c: CompareArgs) -> anyhow::Result<()> {
    let cmp = compare::run(&compare::CompareConfig {
        events: c.events,
        seed: c.seed,
        qty: c.qty,
        entry_latency_ns: ns(c.entry_latency_us),
        models: compare::default_models(),
    })?;
    print!("{}", cmp.render());
    if let Some(j) = &c.json {
        std::fs::write(j, serde_json::to_string_pretty(&cmp)?)?;
    }
    Ok(())
}
