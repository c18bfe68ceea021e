//! `peregrine bench book`: per-operation latency and throughput of the order book, with
//! published crates as baselines in the same run.
//!
//! What the numbers are: single-thread **service time** of one book operation (the
//! call into the book, event emission into a counting sink included), measured per
//! operation with the TSC; not queueing latency, not wire-to-wire. Throughput is an
//! untimed replay of the whole step list. See `docs/performance.md`.

mod candidates;
pub(crate) mod measure;
pub mod phase7;
mod venue;
mod workload;

use std::io::Write;
use std::path::PathBuf;

use candidates::{Lobster, OrderbookRs, Peregrine, Pipelined};
use measure::{measure, timer_overhead_ns, Stats};
use peregrine_book::{BTreeLevels, HashIds, Ladder, OpenIds};
use workload::Scenario;

/// Arguments of `peregrine bench book`.
#[derive(Debug, clap::Args)]
pub struct BookArgs {
    /// Write the results as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Fewer operations per scenario (a smoke run of a few seconds).
    #[arg(long)]
    pub quick: bool,
    /// Only scenarios whose name contains this text.
    #[arg(long)]
    pub only: Option<String>,
    /// Skip the baseline crates (Peregrine layouts only).
    #[arg(long)]
    pub no_baselines: bool,
}

#[derive(Debug, serde::Serialize)]
struct Report<'a> {
    date: String,
    machine: Machine,
    timer_overhead_ns: u64,
    results: &'a [Stats],
    /// Seed 003's phase-7 workload (`ferrox_phase7`).
    phase7: &'a [phase7::Phase7Stats],
}

#[derive(Debug, serde::Serialize)]
struct Machine {
    nproc: usize,
    cpu: String,
}

fn machine() -> Machine {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into());
    Machine {
        nproc: std::thread::available_parallelism().map_or(1, |n| n.get()),
        cpu,
    }
}

/// A scenario to build (only if its name passes `--only`) and its throughput repeats.
type Planned = (String, Box<dyn Fn() -> Scenario>, usize);

fn scenarios(quick: bool) -> Vec<Planned> {
    let n = if quick { 5_000 } else { 100_000 };
    let mut v: Vec<Planned> = vec![
        (
            "insert_resting".into(),
            Box::new(move || workload::insert_resting(n)),
            3,
        ),
        (
            "cancel_middle_1k".into(),
            Box::new(move || workload::cancel_middle_1k(n)),
            3,
        ),
        (
            "cross_1_fill".into(),
            Box::new(move || workload::cross_one(n)),
            3,
        ),
    ];
    for levels in [1, 5, 10, 25, 50] {
        let k = (n / levels as usize).max(1_000);
        v.push((
            format!("sweep_{levels}"),
            Box::new(move || workload::sweep(levels, k)),
            3,
        ));
    }
    v.push(("replace".into(), Box::new(move || workload::replace(n)), 3));
    let steps_1k = if quick { 20_000 } else { 500_000 };
    v.push((
        "market_mix_1k".into(),
        Box::new(move || workload::market_mix("market_mix_1k", 1_000, 700, steps_1k)),
        3,
    ));
    let (resting, steps_1m) = if quick {
        (50_000, 20_000)
    } else {
        (1_000_000, 200_000)
    };
    v.push((
        "market_mix_1m".into(),
        Box::new(move || workload::market_mix("market_mix_1m", resting, 50_000, steps_1m)),
        3,
    ));
    v.push((
        "venue_mix_1k".into(),
        Box::new(move || venue::venue_mix("venue_mix_1k", 1_000, 700, steps_1k)),
        3,
    ));
    v.push((
        "ferrox_mixed_10k".into(),
        Box::new(workload::ferrox_mixed),
        21,
    ));
    v
}

/// Runs the book bench.
pub fn run(args: BookArgs) -> anyhow::Result<()> {
    let clock = quanta::Clock::new();
    let overhead = timer_overhead_ns(&clock);
    let m = machine();
    println!("peregrine bench book: {} CPUs ({}), TSC via quanta, timer overhead {overhead} ns per read pair (included in every per-op number)", m.nproc, m.cpu);
    println!("per-op numbers are single-thread service time in ns; ops/s is an untimed replay of every step\n");
    let mut all = Vec::new();
    for (name, build, repeats) in scenarios(args.quick) {
        if args.only.as_deref().is_some_and(|f| !name.contains(f)) {
            continue;
        }
        let s = build();
        let mut rows = vec![
            measure::<Peregrine<Ladder>>(&s, &clock, repeats),
            measure::<Pipelined>(&s, &clock, repeats),
            measure::<Peregrine<Ladder, HashIds>>(&s, &clock, repeats),
            measure::<Peregrine<Ladder, OpenIds>>(&s, &clock, repeats),
            measure::<Peregrine<BTreeLevels>>(&s, &clock, repeats),
        ];
        // The baseline crates have no stops or icebergs.
        if !args.no_baselines && !s.has_venue_orders() {
            rows.push(measure::<Lobster>(&s, &clock, repeats));
            rows.push(measure::<OrderbookRs>(&s, &clock, repeats.min(3)));
        }
        print_table(&s, &rows);
        all.extend(rows);
    }
    let mut p7 = Vec::new();
    if args.only.as_deref().is_none_or(|f| PHASE7.contains(f)) {
        let n = if args.quick { 100_000 } else { phase7::ORDERS };
        for d in [
            phase7::Driver::OneByOne,
            phase7::Driver::Pipelined,
            phase7::Driver::WithFeed,
        ] {
            p7.push(phase7::measure(n, d, &clock, 3));
        }
        print_phase7(n, &p7);
    }
    if let Some(path) = args.json {
        let report = Report {
            date: today(),
            machine: m,
            timer_overhead_ns: overhead,
            results: &all,
            phase7: &p7,
        };
        let mut f = std::fs::File::create(&path)?;
        serde_json::to_writer_pretty(&mut f, &report)?;
        f.write_all(b"\n")?;
        println!("wrote {}", path.display());
    }
    Ok(())
}

fn print_table(s: &Scenario, rows: &[Stats]) {
    println!(
        "== {} — {} ({} timed ops)",
        s.name,
        s.what,
        rows.first().map_or(0, |r| r.ops)
    );
    println!(
        "   ops: {}; book set up with {} orders",
        composition(s),
        s.setup.len()
    );
    if !s.detail.is_empty() {
        println!("   {}", s.detail);
    }
    println!(
        "{:<16} {:>7} {:>7} {:>7} {:>7} {:>8} {:>9} {:>8} {:>12} {:>10}   ratio to peregrine (p50, p99, ops/s)",
        "candidate",
        "min",
        "p50",
        "p90",
        "p99",
        "p99.9",
        "max",
        "mean",
        "ops/s",
        "run µs",
    );
    let base = &rows[0];
    for r in rows {
        let ratio = if std::ptr::eq(r, base) {
            String::new()
        } else {
            format!(
                "{:.1}x, {:.1}x, {:.2}x",
                r.p50 as f64 / base.p50.max(1) as f64,
                r.p99 as f64 / base.p99.max(1) as f64,
                r.ops_per_sec / base.ops_per_sec.max(1.0)
            )
        };
        println!(
            "{:<16} {:>7} {:>7} {:>7} {:>7} {:>8} {:>9} {:>8.1} {:>12.0} {:>10.1}   {}",
            r.candidate,
            r.min,
            r.p50,
            r.p90,
            r.p99,
            r.p999,
            r.max,
            r.mean,
            r.ops_per_sec,
            r.run_us,
            ratio
        );
    }
    println!();
}

/// The name of seed 003's workload in tables and `--only`.
const PHASE7: &str = "ferrox_phase7";

fn print_phase7(n: usize, rows: &[phase7::Phase7Stats]) {
    println!(
        "== {PHASE7} — seed 003's load generator: {n} asks rest on 50 levels, then {n} bids \
         (prices cycling over the levels) are popped from an SPSC ring, matched, and their \
         execution reports encoded (+feed: the feed messages too); the first {} are warm-up",
        phase7::WARMUP.min(n / 10)
    );
    if let Some(r) = rows.first() {
        println!(
            "   measured {} orders: {} fills, {} resting at the end, {} reports encoded",
            r.measured, r.fills, r.resting, r.messages
        );
    }
    println!(
        "{:<20} {:>6} {:>6} {:>6} {:>6} {:>7} {:>9} {:>7} {:>13} {:>13}   ratio to peregrine (p50, p99, orders/s untimed)",
        "candidate", "min", "p50", "p90", "p99", "p99.9", "max", "mean", "orders/s timed", "untimed"
    );
    let base = &rows[0];
    for r in rows {
        let ratio = if std::ptr::eq(r, base) {
            String::new()
        } else {
            format!(
                "{:.1}x, {:.1}x, {:.2}x",
                r.p50 as f64 / base.p50.max(1) as f64,
                r.p99 as f64 / base.p99.max(1) as f64,
                r.orders_per_sec / base.orders_per_sec.max(1.0)
            )
        };
        println!(
            "{:<20} {:>6} {:>6} {:>6} {:>6} {:>7} {:>9} {:>7.1} {:>13.0} {:>13.0}   {}",
            r.candidate,
            r.min,
            r.p50,
            r.p90,
            r.p99,
            r.p999,
            r.max,
            r.mean,
            r.timed_orders_per_sec,
            r.orders_per_sec,
            ratio
        );
    }
    println!("   Ferrox (seed 003) publishes 4.7 M orders/s, P99 500 ns for this loop; scripts/bench-ferrox.sh runs its generator beside this one\n");
}

/// The actual share of each op kind among the timed steps.
fn composition(s: &Scenario) -> String {
    use workload::Op;
    let (mut add, mut ioc, mut cancel, mut replace) = (0usize, 0usize, 0usize, 0usize);
    let (mut stop, mut iceberg) = (0usize, 0usize);
    for (op, timed) in &s.steps {
        if !timed {
            continue;
        }
        match op {
            Op::Add { ioc: true, .. } => ioc += 1,
            Op::Add { .. } => add += 1,
            Op::Cancel { .. } => cancel += 1,
            Op::Replace { .. } => replace += 1,
            Op::Stop { .. } => stop += 1,
            Op::Iceberg { .. } => iceberg += 1,
        }
    }
    let n = (add + ioc + cancel + replace + stop + iceberg).max(1) as f64 / 100.0;
    let mut out = format!(
        "{:.1}% replace, {:.1}% GTC, {:.1}% IOC, {:.1}% cancel",
        replace as f64 / n,
        add as f64 / n,
        ioc as f64 / n,
        cancel as f64 / n
    );
    if stop + iceberg > 0 {
        out += &format!(
            ", {:.1}% stop, {:.1}% iceberg",
            stop as f64 / n,
            iceberg as f64 / n
        );
    }
    out
}

fn today() -> String {
    std::process::Command::new("date")
        .arg("-u")
        .arg("+%Y-%m-%dT%H:%M:%SZ")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests;
