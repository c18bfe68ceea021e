//! `peregrine sim`: the deterministic simulator of the venue (`peregrine-sim`).
//! `--seed S` replays one run exactly; `--seeds N` runs N seeds from `--from` (a
//! random start by default) and reports seeds per second; `--regressions` runs every
//! seed kept in the repository. A failing run prints its seed, the commit, the first
//! broken invariant and the events that led to it, and the command exits 1.

use std::time::Instant;

use anyhow::{bail, Context};
use clap::{Args, ValueEnum};
use peregrine_sim::{Faults, Outcome, SimConfig};

/// Fault profiles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Profile {
    /// The default mix: crashes and power losses, disconnects, slow readers, disk
    /// faults, and for a cluster partitions, leader transfers and disk losses.
    Standard,
    /// No faults (a run that must simply work).
    None,
    /// Ten times the standard rates of crashes and disk faults.
    Heavy,
}

/// Balances on or off (`--balances`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Balances {
    /// As the seed draws it.
    Seed,
    /// Always on.
    On,
    /// Always off.
    Off,
}

/// `peregrine sim` arguments.
#[derive(Debug, Args)]
pub(crate) struct SimArgs {
    /// Replay this seed (prints the run's summary; with --verbose every event).
    #[arg(long, conflicts_with_all = ["seeds", "regressions"])]
    seed: Option<u64>,
    /// Run this many seeds.
    #[arg(long)]
    seeds: Option<u64>,
    /// The first seed of --seeds (default: drawn at random, and printed).
    #[arg(long)]
    from: Option<u64>,
    /// Run every regression seed kept in the repository.
    #[arg(long)]
    regressions: bool,
    /// Exchange nodes: 1 (a single venue) or 3 (a Raft cluster).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=3))]
    nodes: u64,
    /// Simulated milliseconds of traffic and faults per run (then the faults stop and
    /// everything must settle within --settle).
    #[arg(long)]
    duration: Option<u64>,
    /// Simulated milliseconds allowed to settle once the faults stop.
    #[arg(long)]
    settle: Option<u64>,
    /// Balances (funded traders, fills settled through the ledger with fees, the
    /// conservation invariant): drawn from the seed (3 seeds in 4), or forced on or off
    /// (a regression seed marked `balances=off` replays with `--balances off`).
    #[arg(long, value_enum, default_value_t = Balances::Seed)]
    balances: Balances,
    /// Fault profile.
    #[arg(long, value_enum, default_value_t = Profile::Standard)]
    faults: Profile,
    /// Override one fault rate (per thousand per fault tick, or per thousand
    /// operations for the disk and network rates): NAME=VALUE, repeatable. Names:
    /// crash, power, disconnect, slow_reader, audit, sync_eio, read_flip, disk_full,
    /// writeback, torn, partition, transfer, wipe, readd, loss, dup, reorder.
    #[arg(long = "fault", value_name = "NAME=VALUE")]
    fault: Vec<String>,
    /// Market-data subscribers (0: the feed off): the first joins at the start, the
    /// others late; each rebuilds the books from the feed and its recovery.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(0..=8))]
    subscribers: u64,
    /// Print every event as it happens (with --seed).
    #[arg(long)]
    verbose: bool,
    /// Stop at the first failing seed (with --seeds).
    #[arg(long)]
    fail_fast: bool,
}

pub(crate) fn run(args: SimArgs) -> anyhow::Result<()> {
    peregrine_sim::trace::capture_logs();
    let nodes = usize::try_from(args.nodes).context("--nodes")?;
    if nodes == 2 {
        bail!("--nodes: 1 or 3");
    }
    let shape = |seed: u64| -> anyhow::Result<SimConfig> {
        let mut cfg = SimConfig::for_seed(seed, nodes);
        if let Some(d) = args.duration {
            cfg.duration_ms = d;
        }
        if let Some(s) = args.settle {
            cfg.settle_ms = s;
        }
        match args.balances {
            Balances::Seed => {}
            Balances::On => cfg.ledger = true,
            Balances::Off => cfg.ledger = false,
        }
        cfg.faults = faults(args.faults, &args.fault)?;
        cfg.subscribers = usize::try_from(args.subscribers).context("--subscribers")?;
        cfg.verbose = args.verbose;
        Ok(cfg)
    };
    if let Some(seed) = args.seed {
        let out = peregrine_sim::run(shape(seed)?);
        print_outcome(&out, true);
        if out.violation.is_some() {
            std::process::exit(1);
        }
        return Ok(());
    }
    let runs: Vec<SimConfig> = if args.regressions {
        let all = peregrine_sim::regressions::all().map_err(anyhow::Error::msg)?;
        println!("{} regression seed(s)", all.len());
        all.iter().map(|r| r.config()).collect()
    } else {
        let n = args.seeds.unwrap_or(100);
        let from = match args.from {
            Some(f) => f,
            None => random_seed()?,
        };
        println!("seeds {from}..{} ({nodes} node(s))", from + n - 1);
        (from..from + n).map(shape).collect::<anyhow::Result<_>>()?
    };
    let started = Instant::now();
    let mut failed = Vec::new();
    let mut sim_ms = 0u64;
    for cfg in runs.iter().cloned() {
        let out = peregrine_sim::run(cfg);
        sim_ms += out.stats.sim_ms;
        if out.violation.is_some() {
            print_outcome(&out, false);
            failed.push(out.config.seed);
            if args.fail_fast {
                break;
            }
        }
    }
    let secs = started.elapsed().as_secs_f64();
    println!(
        "{} run(s) in {secs:.1} s: {:.1} seeds/s, {:.0}x real time; {} failed{}",
        runs.len(),
        runs.len() as f64 / secs.max(1e-9),
        sim_ms as f64 / 1e3 / secs.max(1e-9),
        failed.len(),
        if failed.is_empty() {
            String::new()
        } else {
            format!(": seeds {failed:?}")
        }
    );
    if !failed.is_empty() {
        std::process::exit(1);
    }
    Ok(())
}

fn random_seed() -> anyhow::Result<u64> {
    let mut b = [0u8; 8];
    getrandom::fill(&mut b).map_err(|e| anyhow::anyhow!("no random seed: {e}"))?;
    Ok(u64::from_le_bytes(b) >> 16)
}

fn faults(profile: Profile, overrides: &[String]) -> anyhow::Result<Faults> {
    let mut f = match profile {
        Profile::Standard => Faults::standard(),
        Profile::None => Faults::none(),
        Profile::Heavy => {
            let s = Faults::standard();
            Faults {
                crash: s.crash * 10,
                sync_eio: s.sync_eio * 10,
                read_flip: s.read_flip * 10,
                disk_full: s.disk_full * 10,
                ..s
            }
        }
    };
    for o in overrides {
        let Some((name, value)) = o.split_once('=') else {
            bail!("--fault {o}: want NAME=VALUE");
        };
        let v: u64 = value.parse().with_context(|| format!("--fault {o}"))?;
        let slot = match name {
            "crash" => &mut f.crash,
            "power" => &mut f.power,
            "disconnect" => &mut f.disconnect,
            "slow_reader" => &mut f.slow_reader,
            "audit" => &mut f.audit,
            "sync_eio" => &mut f.sync_eio,
            "read_flip" => &mut f.read_flip,
            "disk_full" => &mut f.disk_full,
            "writeback" => &mut f.writeback,
            "torn" => &mut f.torn,
            "partition" => &mut f.partition,
            "transfer" => &mut f.transfer,
            "wipe" => &mut f.wipe,
            "loss" => &mut f.loss,
            "dup" => &mut f.dup,
            "reorder" => &mut f.reorder,
            "readd" => &mut f.readd,
            _ => bail!("--fault {o}: unknown fault {name:?}"),
        };
        *slot = v;
    }
    Ok(f)
}

fn print_outcome(out: &Outcome, summary: bool) {
    let c = &out.config;
    if let Some(v) = &out.violation {
        println!(
            "FAILED seed {} ({} node(s)), commit {}\n  config: {c:?}",
            c.seed,
            c.nodes,
            peregrine_sim::COMMIT
        );
        println!("  events leading to it (simulated time):");
        for line in &out.recent {
            println!("    {line}");
        }
        println!(
            "  first broken invariant at {:.3} ms: {}\n    {}",
            v.at as f64 / 1e6,
            v.invariant,
            v.detail
        );
        println!(
            "  replay: peregrine sim --seed {} --nodes {}{}{}{}",
            c.seed,
            c.nodes,
            if c.subscribers == 2 {
                String::new()
            } else {
                format!(" --subscribers {}", c.subscribers)
            },
            if c.ledger == SimConfig::for_seed(c.seed, c.nodes).ledger {
                ""
            } else if c.ledger {
                " --balances on"
            } else {
                " --balances off"
            },
            if c.faults == Faults::standard() {
                String::new()
            } else {
                " (with the same --faults / --fault options)".into()
            }
        );
    } else if summary {
        let s = &out.stats;
        println!(
            "seed {} ({} node(s)): ok, {} simulated ms, {} events, {} commands, {} reports, \
             {} crash(es) ({} power), {} disconnect(s), {} retention probe(s); trace {}",
            c.seed,
            c.nodes,
            s.sim_ms,
            s.events,
            s.commands,
            s.reports,
            s.crashes,
            s.power_losses,
            s.disconnects,
            s.probes,
            out.trace_hash
        );
    }
}
