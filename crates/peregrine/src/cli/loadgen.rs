//! `peregrine loadgen`: drives an exchange with many sessions and measures it (the
//! library: `peregrine_client::loadgen`).
//!
//! * **Open loop** (`--rate R`): order `k` is due at `start + k / R` and goes to
//!   session `k mod N`. Latency is measured from the *due* time, not the actual send,
//!   so a stalled exchange (or client) shows up in the percentiles instead of silently
//!   slowing the schedule (no coordinated omission).
//! * **Closed loop** (`--closed`): each session keeps `--window` orders outstanding
//!   and sends the next as soon as one is answered: the maximum sustained rate.

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::Context;
use peregrine_client::loadgen::{self, LoadgenParams, Summary};
use peregrine_exchange::Config;
use peregrine_queue::WaitStrategy;

/// Command-line arguments of `peregrine loadgen`.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct LoadgenArgs {
    /// Exchange config to take the address, accounts and instrument from.
    #[arg(long, default_value = "exchange.toml")]
    pub config: PathBuf,
    /// Order-entry address (overrides the config's `listen`, and for a cluster its
    /// peers' `client` addresses); for a cluster, the nodes' addresses separated by
    /// commas: the sessions log in at whichever leads, following its redirects.
    #[arg(long, value_delimiter = ',')]
    pub addr: Vec<SocketAddr>,
    /// Key file with the accounts to log in as (`peregrine keygen --keys-out`); every
    /// account in it is used, session `i` logs in as the `i`-th (mod their number).
    #[arg(long, default_value = "data/keys.toml")]
    pub keys: PathBuf,
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
    /// What the client loop does when idle: busy-spin, spin-yield or park.
    #[arg(long, default_value = "spin-yield")]
    pub wait: WaitStrategy,
    /// Also write the summary as JSON here.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

/// Runs the load generator, prints the summary (and writes it as JSON if asked).
pub(crate) fn run(args: LoadgenArgs) -> anyhow::Result<Summary> {
    let config = Config::load(&args.config)?;
    let spec = config
        .instruments
        .first()
        .context("config has no instrument")?
        .clone();
    let params = LoadgenParams {
        addrs: if args.addr.is_empty() {
            config.order_entry_addresses()
        } else {
            args.addr.clone()
        },
        accounts: {
            let file = peregrine_client::keys::KeyFile::load(&args.keys)?;
            file.keys
                .iter()
                .filter_map(|k| Some((k.account, file.key(k.account)?)))
                .filter(|(a, _)| {
                    config.accounts.is_empty() || config.accounts.iter().any(|c| c.id == *a)
                })
                .collect()
        },
        spec,
        connections: args.connections,
        rate: args.rate,
        closed: args.closed,
        window: args.window,
        duration: args.duration,
        drain: args.drain,
        wait: args.wait,
    };
    let summary = loadgen::run(&params)?;
    print!("{}", summary.text());
    if let Some(path) = &args.json {
        std::fs::write(path, serde_json::to_vec_pretty(&summary)?)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(summary)
}
