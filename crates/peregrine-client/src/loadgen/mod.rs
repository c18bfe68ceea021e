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
//! those that are not by the end of the drain period are counted as lost. A
//! `Rejected` with reason `busy` (the exchange at capacity) is an answer, counted
//! and timed apart from the acknowledgements.

mod conn;
mod report;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use peregrine_exchange_core::mix;
use peregrine_queue::WaitStrategy;
use peregrine_types::{AccountId, InstrumentSpec};

use crate::error::ClientError;
use conn::Conn;
use report::Stats;
pub use report::{Percentiles, Summary};

/// What to run.
#[derive(Debug, Clone)]
pub struct LoadgenParams {
    /// Order-entry addresses: one, or a cluster's nodes (the sessions log in at the
    /// leader through [`crate::order_entry::Connection::connect_any`]).
    pub addrs: Vec<SocketAddr>,
    /// Accounts and their keys; session `i` logs in as account `i mod len`.
    pub accounts: Vec<(AccountId, peregrine_wire::auth::AccountKey)>,
    /// The instrument traded.
    pub spec: InstrumentSpec,
    /// Client sessions.
    pub connections: usize,
    /// Open-loop target rate, orders per second over all sessions.
    pub rate: u64,
    /// Closed loop: ignore `rate` and keep `window` orders outstanding per session.
    pub closed: bool,
    /// Outstanding orders per session in closed loop.
    pub window: usize,
    /// Seconds of sending.
    pub duration: f64,
    /// Seconds to wait for outstanding answers after sending stops.
    pub drain: f64,
    /// What the client loop does when idle.
    pub wait: WaitStrategy,
}

/// Runs the load generator; returns the summary (the caller prints or saves it).
pub fn run(params: &LoadgenParams) -> Result<Summary, ClientError> {
    if params.connections == 0 {
        return Err(ClientError::Invalid(
            "--connections must be positive".into(),
        ));
    }
    if !params.closed && params.rate == 0 {
        return Err(ClientError::Invalid("--rate must be positive".into()));
    }
    if params.accounts.is_empty() {
        return Err(ClientError::Invalid("no account to log in as".into()));
    }
    let Some(&first) = params.addrs.first() else {
        return Err(ClientError::Invalid("no order-entry address".into()));
    };
    let spec = &params.spec;
    let mut conns = Vec::with_capacity(params.connections);
    let mut logged_in_at: Vec<SocketAddr> = Vec::new();
    for i in 0..params.connections {
        let (account, key) = &params.accounts[i % params.accounts.len()];
        let (conn, at) =
            Conn::open(&params.addrs, *account, key, i).map_err(|e| ClientError::Session {
                index: i,
                addr: first,
                source: Box::new(e),
            })?;
        if !logged_in_at.contains(&at) {
            eprintln!("loadgen: session {i} logged in at {at}");
            logged_in_at.push(at);
        }
        conns.push(conn);
    }
    let mut stats = Stats::new();
    let start = Instant::now();
    let sending = Duration::from_secs_f64(params.duration);
    let mut idler = params.wait.idler();
    let mut k: u64 = 0;
    let interval_ns = if params.closed {
        0
    } else {
        1_000_000_000 / params.rate.max(1)
    };
    loop {
        let now = start.elapsed();
        let now_ns = now.as_nanos() as u64;
        let mut busy = false;
        if now < sending {
            busy |= if params.closed {
                send_closed(&mut conns, &mut k, params.window, start, spec)
            } else {
                send_open(&mut conns, &mut k, interval_ns, now_ns, spec, &mut stats)
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
            && (outstanding == 0 || now >= sending + Duration::from_secs_f64(params.drain))
        {
            break;
        }
        if busy {
            idler.reset();
        } else {
            idler.idle();
        }
    }
    Ok(summarize(params, &conns, &stats))
}

fn send_open(
    conns: &mut [Conn],
    k: &mut u64,
    interval_ns: u64,
    now_ns: u64,
    spec: &peregrine_types::InstrumentSpec,
    stats: &mut Stats,
) -> bool {
    let n = conns.len() as u64;
    let mut any = false;
    while *k * interval_ns <= now_ns {
        let due = *k * interval_ns;
        let c = &mut conns[(*k % n) as usize];
        let j = c.sent_count() as u64;
        if c.alive {
            c.send_order(mix::order(spec, j), due);
            stats.send_lag.saturating_record((now_ns - due).max(1));
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

fn summarize(args: &LoadgenParams, conns: &[Conn], stats: &Stats) -> Summary {
    let sent: u64 = conns.iter().map(|c| c.sent_count() as u64).sum();
    let lost: u64 = conns.iter().map(|c| c.outstanding as u64).sum();
    let unsent: u64 = conns
        .iter()
        .filter(|c| c.alive)
        .map(|c| c.unwritten() as u64)
        .sum();
    let decided = stats.ack.len();
    Summary {
        mode: if args.closed { "closed" } else { "open" }.into(),
        connections: conns.len(),
        target_rate: (!args.closed).then_some(args.rate),
        duration_s: args.duration,
        sent,
        answered: decided + stats.busy,
        throughput_per_s: decided as f64 / args.duration,
        rejects: stats.rejects,
        busy: stats.busy,
        redirected: stats.redirected,
        fills: stats.fills,
        cancels: stats.cancels,
        errors: stats.errors + conns.iter().filter(|c| c.write_failed).count() as u64,
        lost,
        unsent,
        ack: Percentiles::of(&stats.ack),
        busy_ack: Percentiles::of(&stats.busy_ack),
        fill: Percentiles::of(&stats.fill),
        send_lag: Percentiles::of(&stats.send_lag),
    }
}
