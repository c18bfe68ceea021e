//! The order engine's benches (`peregrine bench engine ...`), moved out of the engine's
//! library (nothing a user does not run lives in a production crate):
//!
//! * `submit` ([`submit`]): the two shared-memory submit candidates, per-strategy SPSC
//!   rings scanned round-robin against one MPSC ring: round trip and one-producer
//!   throughput (`docs/engine.md`, "Submit hand-off").
//! * `journal` ([`journal`]): the engine journal's cost per order (write-ahead append
//!   plus `write(2)`) and its recovery time.
//! * `udp` ([`udp`]): UDP loopback one-way latency, the floor under feed-to-strategy.
//! * `floor` ([`floor`]): the two-process shared-memory ring round trip with the
//!   engine's own messages, the floor under the strategy ↔ engine round trip (its
//!   echo process is `engine echo`).

pub mod floor;
pub mod journal;
pub mod submit;
pub mod udp;

use std::path::{Path, PathBuf};

use anyhow::Context;
use hdrhistogram::Histogram;
use peregrine_engine::units::fmt_ns;
use peregrine_queue::WaitStrategy;

/// Arguments of `peregrine bench engine`.
#[derive(Debug, clap::Args)]
pub struct EngineArgs {
    #[command(subcommand)]
    bench: EngineBench,
}

#[derive(Debug, clap::Subcommand)]
enum EngineBench {
    /// The two shared-memory submit candidates (per-strategy SPSC + scan vs one MPSC
    /// ring): round trip and one-producer throughput.
    Submit {
        /// Connected strategies (rings).
        #[arg(long, default_value_t = 4)]
        rings: usize,
        /// Round trips (and pushes in the throughput phase).
        #[arg(long, default_value_t = 200_000)]
        rounds: u64,
        /// busy-spin (needs 2 free cores), spin-yield or park.
        #[arg(long, default_value = "busy-spin")]
        wait: WaitStrategy,
        /// Directory for the ring files.
        #[arg(long, default_value = "/dev/shm")]
        ring_dir: PathBuf,
    },
    /// The engine journal: cost per order (write-ahead append + write) and recovery
    /// time for a journal of N events.
    Journal {
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
    /// The two-process shared-memory ring round trip (the floor under the strategy ↔
    /// engine round trip): this process and an echo process, each busy-spinning.
    Floor {
        /// Round trips measured (after a warm-up).
        #[arg(long, default_value_t = 300_000)]
        rounds: u64,
        /// Core of this process (index into the usable cores).
        #[arg(long, default_value_t = 1)]
        core: usize,
        /// Core of the echo process.
        #[arg(long, default_value_t = 0)]
        echo_core: usize,
        /// Directory for the ring files.
        #[arg(long, default_value = "/dev/shm")]
        ring_dir: PathBuf,
    },
    /// The echo side of `floor` (started by it).
    #[command(hide = true)]
    Echo {
        /// Where the rings are.
        #[arg(long)]
        dir: PathBuf,
        /// Core to pin to.
        #[arg(long)]
        core: Option<usize>,
    },
    /// UDP loopback one-way latency (the floor under feed-to-strategy).
    Udp {
        /// Datagrams.
        #[arg(long, default_value_t = 20_000)]
        count: u64,
        /// Gap between sends, µs.
        #[arg(long, default_value_t = 50)]
        gap_us: u64,
    },
}

/// Runs `peregrine bench engine ...`.
pub fn run(args: EngineArgs) -> anyhow::Result<()> {
    match args.bench {
        EngineBench::Submit {
            rings,
            rounds,
            wait,
            ring_dir,
        } => run_submit(rings, rounds, wait, &ring_dir),
        EngineBench::Journal { events, fsync, dir } => run_journal(events, fsync, &dir),
        EngineBench::Floor {
            rounds,
            core,
            echo_core,
            ring_dir,
        } => {
            let cores = peregrine_queue::available_cores(); // once, before pinning
            let dir = ring_dir.join(format!("peregrine-bench-floor-{}", std::process::id()));
            let h = floor::run(&dir, rounds, cores.get(core).copied(), Some(echo_core));
            let _ = std::fs::remove_dir_all(&dir);
            let h = h?;
            println!(
                "two-process shm ring round trip (Request 64 B -> Event 128 B), busy-spin, \
                 cores {core} and {echo_core}, {} round trips",
                h.len()
            );
            println!("{}", percentiles(&h));
            Ok(())
        }
        EngineBench::Echo { dir, core } => {
            let cores = peregrine_queue::available_cores();
            floor::echo(&dir, core.and_then(|c| cores.get(c).copied()))
        }
        EngineBench::Udp { count, gap_us } => {
            let h = udp::run(count, gap_us).context("udp loopback")?;
            println!(
                "udp loopback one-way, {} datagrams, {gap_us} µs apart",
                h.len()
            );
            println!("{}", percentiles(&h));
            Ok(())
        }
    }
}

/// p50 … max in words, then the same as one line of JSON.
pub fn percentiles(h: &Histogram<u64>) -> String {
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

fn run_journal(events: u64, fsync: bool, dir: &Path) -> anyhow::Result<()> {
    let dir = dir.join(format!("peregrine-bench-journal-{}", std::process::id()));
    let result = journal::run(&dir, events, fsync);
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

fn run_submit(
    rings: usize,
    rounds: u64,
    wait: WaitStrategy,
    ring_dir: &Path,
) -> anyhow::Result<()> {
    let cores = peregrine_queue::available_cores(); // once, before pinning
    let dir = ring_dir.join(format!("peregrine-bench-submit-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let result = submit::run(&dir, rings, rounds, wait, &cores);
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
