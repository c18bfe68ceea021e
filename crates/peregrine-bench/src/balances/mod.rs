//! `peregrine bench balances`: the matching engine with the balance ledger on and the
//! commitment hashing, on the shapes of Olympus's published benchmark (seed 004), with
//! Olympus's own figures printed beside ours for reference.
//!
//! What each number is: the time of `MatchingEngine::execute` (pre-match reservation,
//! matching, events into a buffer) plus `Ledger::settle` of its events, per call, TSC
//! timed; for `match_tick`, ten such commands; for `compute_commitments`, one
//! `commit_tick` over ten trades. Single thread, service time.

mod exchange_modes;
mod scenarios;

use hdrhistogram::Histogram;

/// Arguments of `peregrine bench balances`.
#[derive(Debug, clap::Args)]
pub struct BalancesArgs {
    /// Fewer samples (a smoke run).
    #[arg(long)]
    pub quick: bool,
    /// Write the results as JSON to this file.
    #[arg(long)]
    pub json: Option<std::path::PathBuf>,
}

/// One row of the report.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Row {
    /// Benchmark name (Olympus's).
    pub name: String,
    /// Samples.
    pub samples: u64,
    /// Nanoseconds.
    pub min: u64,
    /// Median.
    pub p50: u64,
    /// 95th percentile.
    pub p95: u64,
    /// 99th percentile.
    pub p99: u64,
    /// 99.9th percentile.
    pub p999: u64,
    /// Largest.
    pub max: u64,
    /// Mean.
    pub mean: f64,
    /// 1 / mean, or the measured rate for sustained runs.
    pub ops_per_sec: f64,
    /// Olympus's published (min, p50, p95, p99, p99.9, max) in ns, for reference.
    pub olympus: Option<[u64; 6]>,
}

impl Row {
    fn from_hist(name: &str, h: &Histogram<u64>, olympus: Option<[u64; 6]>) -> Row {
        Row {
            name: name.to_string(),
            samples: h.len(),
            min: h.min(),
            p50: h.value_at_quantile(0.50),
            p95: h.value_at_quantile(0.95),
            p99: h.value_at_quantile(0.99),
            p999: h.value_at_quantile(0.999),
            max: h.max(),
            mean: h.mean(),
            ops_per_sec: 1e9 / h.mean().max(1.0),
            olympus,
        }
    }
}

/// Runs the bench.
pub fn run(args: BalancesArgs) -> anyhow::Result<()> {
    let clock = quanta::Clock::new();
    let scale = if args.quick { 10 } else { 1 };
    println!("peregrine bench balances: engine + ledger (+ commitments), TSC timed, ns; Olympus figures (seed 004, Apple M-series) for reference\n");
    let mut rows = vec![
        scenarios::resting(&clock, 50_000 / scale),
        scenarios::crossing(&clock, 50_000 / scale),
    ];
    for fills in [1, 5, 10, 25, 50] {
        rows.push(scenarios::sweep(&clock, fills, 10_000 / scale));
    }
    rows.push(scenarios::match_tick(&clock, 10_000 / scale));
    rows.push(scenarios::commitments(&clock, 10_000 / scale));
    print_rows(&rows);
    let mut sustained = scenarios::sustained(&clock, 1_000 / scale.min(10));
    sustained.extend(exchange_modes::sustained(1_000 / scale.min(10), 9)?);
    println!("\nsustained throughput (1,000 ticks × 10 orders, resting; median of 9 runs):");
    for (name, rate, olympus) in &sustained {
        println!(
            "  {name:<44} {:>10.2} M orders/s   (Olympus: {olympus})",
            rate / 1e6
        );
    }
    if let Some(path) = args.json {
        let v = serde_json::json!({ "rows": rows, "sustained": sustained.iter().map(|(n, r, _)| serde_json::json!({"name": n, "orders_per_sec": r})).collect::<Vec<_>>() });
        std::fs::write(&path, serde_json::to_string_pretty(&v)?)?;
        println!("wrote {}", path.display());
    }
    Ok(())
}

fn print_rows(rows: &[Row]) {
    println!(
        "{:<34} {:>8} {:>7} {:>7} {:>7} {:>7} {:>8} {:>9} {:>8} {:>11}",
        "benchmark", "samples", "min", "p50", "p95", "p99", "p99.9", "max", "mean", "ops/s"
    );
    for r in rows {
        println!(
            "{:<34} {:>8} {:>7} {:>7} {:>7} {:>7} {:>8} {:>9} {:>8.0} {:>11.0}",
            r.name, r.samples, r.min, r.p50, r.p95, r.p99, r.p999, r.max, r.mean, r.ops_per_sec
        );
        if let Some(o) = r.olympus {
            println!(
                "{:<34} {:>8} {:>7} {:>7} {:>7} {:>7} {:>8} {:>9}   p50 ratio {:.1}x",
                "  Olympus (published)",
                "",
                o[0],
                o[1],
                o[2],
                o[3],
                o[4],
                o[5],
                o[1] as f64 / r.p50.max(1) as f64
            );
        }
    }
}
