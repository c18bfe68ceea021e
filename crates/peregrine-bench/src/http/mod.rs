//! `peregrine bench http` (also `peregrine gateway bench`): the HTTP gateway's numbers
//! for docs/performance.md, in one command. It starts its own exchange and gateway
//! processes (`exchange` and `gateway http` of the `peregrine` executable beside this
//! one, or `--peregrine PATH`), then measures:
//!
//! 1. **REST order → response**, open loop at each rate: signed `POST /api/v3/order`
//!    (an IOC limit that cannot trade: the exchange answers `Accepted` then
//!    `Cancelled`, the gateway answers `EXPIRED`), latency from the *scheduled*
//!    send time to the last byte of the answer (no coordinated omission). In the
//!    same run, at the same rate, the same orders over the **native protocol**
//!    straight to the exchange (to `Accepted`), and a TCP echo **floor**.
//! 2. **WebSocket fan-out**: N subscribers on `@depth@0ms`; the bench plays the
//!    exchange's feed (UDP packets to the gateway's feed port) and measures packet
//!    send → frame received, at every subscriber.
//! 3. **History writer lag** at a given order rate: order changes pushed straight
//!    into a writer on a fresh SQLite file (in process), lag = wall time − engine
//!    time of the newest committed change, sampled every millisecond.
//!
//! Every table prints p50/p90/p99/p99.9/max and throughput; `--json` saves them all.
//! On a shared 2-core machine the client, the gateway and the exchange compete for
//! the same cores: the numbers are an upper bound (see docs/performance.md). So
//! nothing in the bench spins: the exchange runs its shipped idle policy
//! (`wait = "park"`), and the load generators block in `poll(2)` until their next
//! scheduled send or an answer ([`pace`]), the native client exactly as the REST one.

pub mod fanout;
pub mod native;
pub mod pace;
pub mod report;
pub mod rest;
pub mod stack;
pub mod writer;

use std::path::PathBuf;

use anyhow::Context;
pub use report::{Row, Table};

/// `peregrine bench http`.
#[derive(Debug, clap::Args)]
pub struct HttpArgs {
    /// REST order rates, orders/s (open loop), comma separated.
    #[arg(long, value_delimiter = ',', default_value = "1000,5000")]
    pub rates: Vec<u64>,
    /// Seconds per measurement.
    #[arg(long, default_value_t = 5.0)]
    pub duration: f64,
    /// WebSocket subscribers in the fan-out test.
    #[arg(long, default_value_t = 1000)]
    pub subscribers: usize,
    /// Feed events per second in the fan-out test.
    #[arg(long, default_value_t = 100)]
    pub fanout_rate: u64,
    /// Orders per second in the writer test.
    #[arg(long, default_value_t = 100_000)]
    pub writer_rate: u64,
    /// HTTP connections of the REST client.
    #[arg(long, default_value_t = 8)]
    pub connections: usize,
    /// The gateway's async worker threads (as `gateway http --threads`).
    #[arg(long, default_value_t = 2)]
    pub gateway_threads: usize,
    /// Only these parts: rest, fanout, writer (comma separated).
    #[arg(long, value_delimiter = ',')]
    pub only: Vec<String>,
    /// Save the tables as JSON.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// The `peregrine` executable that runs the exchange and the gateway (default:
    /// the one beside this binary).
    #[arg(long)]
    pub peregrine: Option<PathBuf>,
}

/// Runs `peregrine bench http`: the tables on stdout (and in `--json`).
pub fn main(a: HttpArgs) -> anyhow::Result<()> {
    anyhow::ensure!(
        a.duration > 0.0 && a.duration < 3600.0,
        "--duration: 0..3600 s"
    );
    anyhow::ensure!(
        a.rates.iter().all(|r| *r > 0) && a.fanout_rate > 0 && a.writer_rate > 0,
        "rates must be positive"
    );
    let exe = match a.peregrine {
        Some(p) => p,
        None => std::env::current_exe()
            .context("finding this executable")?
            .with_file_name("peregrine"),
    };
    anyhow::ensure!(
        exe.is_file(),
        "no peregrine executable at {} (build it: cargo build --release -p peregrine, or pass --peregrine PATH)",
        exe.display()
    );
    let settings = BenchSettings {
        exe,
        rates: a.rates,
        duration: a.duration,
        subscribers: a.subscribers,
        fanout_rate: a.fanout_rate,
        writer_rate: a.writer_rate,
        only: a.only,
        connections: a.connections,
        gateway_threads: a.gateway_threads.max(1),
    };
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("peregrine bench http (load average: {})", load.trim());
    let tables = run(&settings)?;
    for t in &tables {
        println!("{t}");
    }
    if let Some(path) = a.json {
        std::fs::write(&path, to_json(load.trim(), &tables))
            .with_context(|| format!("writing {}", path.display()))?;
        println!("saved {}", path.display());
    }
    Ok(())
}

/// Settings of a run.
#[derive(Debug, Clone)]
pub struct BenchSettings {
    /// The `peregrine` executable (to start the exchange and the gateway).
    pub exe: PathBuf,
    /// REST order rates, orders per second.
    pub rates: Vec<u64>,
    /// Seconds per measurement.
    pub duration: f64,
    /// WebSocket subscribers.
    pub subscribers: usize,
    /// Feed events per second in the fan-out test.
    pub fanout_rate: u64,
    /// Order rate of the writer test.
    pub writer_rate: u64,
    /// Which parts: `rest`, `fanout`, `writer`.
    pub only: Vec<String>,
    /// Connections of the REST client.
    pub connections: usize,
    /// The gateway's async worker threads (`gateway http --threads`).
    pub gateway_threads: usize,
}

/// Why the bench failed.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// Starting or talking to a process.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// Anything else.
    #[error("{0}")]
    Other(String),
}

/// Runs the selected measurements; the tables.
pub fn run(s: &BenchSettings) -> Result<Vec<Table>, BenchError> {
    let want = |p: &str| s.only.is_empty() || s.only.iter().any(|o| o == p);
    let mut tables = Vec::new();
    if want("rest") {
        let st = stack::Stack::start(&s.exe, true, s.gateway_threads)?;
        tables.push(rest::floor(s.duration.min(3.0))?);
        for &rate in &s.rates {
            tables.push(native::run(st.exchange, &st.keys, rate, s.duration)?);
            let before = rest::stages(st.http)?;
            tables.push(rest::run(st.http, rate, s.duration, s.connections)?);
            let after = rest::stages(st.http)?;
            tables.push(rest::stages_table(rate, s.duration, &before, &after));
        }
    }
    if want("fanout") {
        tables.push(fanout::floor(s.subscribers, s.fanout_rate, s.duration)?);
        let st = stack::Stack::start(&s.exe, false, s.gateway_threads)?;
        tables.push(fanout::run(
            st.http,
            st.feed,
            s.subscribers,
            s.fanout_rate,
            s.duration,
        )?);
    }
    if want("writer") {
        tables.push(writer::run(s.writer_rate, s.duration)?);
    }
    Ok(tables)
}

/// The tables as JSON, with the machine's load average.
pub fn to_json(loadavg: &str, tables: &[Table]) -> String {
    serde_json::to_string_pretty(&serde_json::json!({"loadavg": loadavg, "tables": tables}))
        .unwrap_or_default()
}
