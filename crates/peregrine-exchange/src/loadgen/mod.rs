//! `peregrine loadgen`: drives an exchange with many sessions and measures it.
//!
//! * **Open loop** (`--rate R`): order `k` is due at `start + k / R` and goes to
//!   session `k mod N`. Latency is measured from the *due* time, not the actual send,
//!   so a stalled exchange (or client) shows up in the percentiles instead of silently
//!   slowing the schedule (no coordinated omission).
//! * **Closed loop** (`--closed`): each session keeps `--window` orders outstanding
//!   and sends the next as soon as one is answered: the maximum sustained rate.
//!
//! The order mix ([`mix::order`]) is deterministic and self-balancing: a bid and an ask
//! rest, then an IOC sell and an IOC buy each take one lot, so the book stays small and
//! half the orders trade. Every order must be answered (`Accepted` or `Rejected`);
//! those that are not by the end of the drain period are counted as lost.

mod conn;
pub mod mix;
pub mod report;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Context;

use crate::config::Config;
use crate::wait::{Idler, WaitStrategy};
use conn::Conn;
use report::{Percentiles, Stats, Summary};

/// Command-line arguments of `peregrine loadgen`.
#[derive(Debug, Clone, clap::Args)]
pub struct LoadgenArgs {
    /// Exchange config to take the address, accounts and instrument from.
    #[arg(long, default_value = "exchange.toml")]
    pub config: PathBuf,
    /// Order-entry address (overrides the config's `listen`).
    #[arg(long)]
    pub addr: Option<SocketAddr>,
    /// Client sessions; session i logs in as the config's account i mod #accounts.
    #[arg(long, default_value_t = 4)]
    pub connections: usize,
    /// Open-loop target rate, orders per second over all sessions.
    #[arg(long, default_value_t = 10_000)]
    pub rate: u64,
    /// Closed loop: ignore --rate and keep --window orders outstanding per session.
    #[arg(long)]
    pub closed: bool,
    /// Outstanding orders per session in closed loop.
    #[arg(long, default_value_t = 1)]
    pub window: usize,
    /// Seconds of sending.
    #[arg(long, default_value_t = 5.0)]
    pub duration: f64,
    /// Seconds to wait for outstanding answers after sending stops.
    #[arg(long, default_value_t = 2.0)]
    pub drain: f64,
    /// What the client loop does when idle.
    #[arg(long, value_enum, default_value = "spin-yield")]
    pub wait: WaitArg,
    /// Also write the summary as JSON here.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

/// `--wait` values.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum WaitArg {
    /// Never yield.
    BusySpin,
    /// Spin, then yield.
    SpinYield,
    /// Spin, then sleep.
    Park,
}

impl From<WaitArg> for WaitStrategy {
    fn from(w: WaitArg) -> Self {
        match w {
            WaitArg::BusySpin => WaitStrategy::BusySpin,
            WaitArg::SpinYield => WaitStrategy::SpinYield,
            WaitArg::Park => WaitStrategy::Park,
        }
    }
}

/// Runs the load generator and prints the summary.
pub fn run(args: LoadgenArgs) -> anyhow::Result<Summary> {
    let config = Config::load(&args.config)?;
    anyhow::ensure!(args.connections > 0, "--connections must be positive");
    anyhow::ensure!(args.closed || args.rate > 0, "--rate must be positive");
    let addr = args.addr.unwrap_or(config.listen);
    let spec = config
        .instruments
        .first()
        .context("config has no instrument")?
        .clone();
    let mut conns = Vec::with_capacity(args.connections);
    for i in 0..args.connections {
        let acct = &config.accounts[i % config.accounts.len()];
        conns.push(
            Conn::open(addr, acct.id, &acct.password)
                .with_context(|| format!("session {i} to {addr}"))?,
        );
    }
    let mut stats = Stats::new();
    let start = Instant::now();
    let sending = Duration::from_secs_f64(args.duration);
    let mut idler = Idler::new(args.wait.into());
    let mut k: u64 = 0;
    let interval_ns = if args.closed {
        0
    } else {
        1_000_000_000 / args.rate.max(1)
    };
    loop {
        let now = start.elapsed();
        let now_ns = now.as_nanos() as u64;
        let mut busy = false;
        if now < sending {
            busy |= if args.closed {
                send_closed(&mut conns, &mut k, args.window, start, &spec)
            } else {
                send_open(&mut conns, &mut k, interval_ns, now_ns, &spec)
            };
            // One write per session per iteration: orders due together share it.
            for c in conns.iter_mut() {
                c.flush();
            }
        }
        for c in conns.iter_mut() {
            busy |= c.poll(start, &mut stats) > 0;
            c.flush();
        }
        let outstanding: usize = conns
            .iter()
            .filter(|c| c.alive)
            .map(|c| c.outstanding)
            .sum();
        if now >= sending
            && (outstanding == 0 || now >= sending + Duration::from_secs_f64(args.drain))
        {
            break;
        }
        if busy {
            idler.reset();
        } else {
            idler.idle();
        }
    }
    let summary = summarize(&args, &conns, &stats);
    print!("{}", summary.text());
    if let Some(path) = &args.json {
        std::fs::write(path, serde_json::to_vec_pretty(&summary)?)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(summary)
}

fn send_open(
    conns: &mut [Conn],
    k: &mut u64,
    interval_ns: u64,
    now_ns: u64,
    spec: &peregrine_types::InstrumentSpec,
) -> bool {
    let n = conns.len() as u64;
    let mut any = false;
    while *k * interval_ns <= now_ns {
        let due = *k * interval_ns;
        let c = &mut conns[(*k % n) as usize];
        let j = c.sent_count() as u64;
        if c.alive {
            c.send_order(mix::order(spec, j), due);
        }
        *k += 1;
        any = true;
    }
    any
}

fn send_closed(
    conns: &mut [Conn],
    k: &mut u64,
    window: usize,
    start: Instant,
    spec: &peregrine_types::InstrumentSpec,
) -> bool {
    let mut any = false;
    for c in conns.iter_mut() {
        while c.alive && c.outstanding < window {
            let j = c.sent_count() as u64;
            c.send_order(mix::order(spec, j), start.elapsed().as_nanos() as u64);
            *k += 1;
            any = true;
        }
    }
    any
}

fn summarize(args: &LoadgenArgs, conns: &[Conn], stats: &Stats) -> Summary {
    let sent: u64 = conns.iter().map(|c| c.sent_count() as u64).sum();
    let lost: u64 = conns.iter().map(|c| c.outstanding as u64).sum();
    let answered = stats.ack.len();
    Summary {
        mode: if args.closed { "closed" } else { "open" }.into(),
        connections: conns.len(),
        target_rate: (!args.closed).then_some(args.rate),
        duration_s: args.duration,
        sent,
        answered,
        throughput_per_s: answered as f64 / args.duration,
        rejects: stats.rejects,
        fills: stats.fills,
        cancels: stats.cancels,
        errors: stats.errors,
        lost,
        ack: Percentiles::of(&stats.ack),
        fill: Percentiles::of(&stats.fill),
    }
}
