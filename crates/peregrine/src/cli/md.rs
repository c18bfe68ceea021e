//! `peregrine md`: subscribes to the UDP feed, keeps one instrument's L2 book, prints
//! the top of book and trades, and reports sequence gaps and how they were healed
//! (the library: `peregrine_client::md`).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Context;
use peregrine_client::md::{L2Book, Level, MdEvent, Subscriber, SubscriberConfig};
use peregrine_exchange::Config;
use peregrine_exchange_core::tools::verify::hex;

/// `peregrine md` arguments.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct MdArgs {
    /// Exchange config (for the feed address and instrument symbols).
    #[arg(long, default_value = "exchange.toml")]
    pub config: PathBuf,
    /// Instrument symbol or id.
    #[arg(long)]
    pub instrument: String,
    /// Stop after this many seconds (default: run until killed).
    #[arg(long)]
    pub duration: Option<f64>,
    /// Recovery service addresses, comma-separated (default: the config's
    /// `recovery_listen`, then for a cluster every peer's `recovery` address; a node
    /// that does not lead redirects to the one that does).
    #[arg(long, value_delimiter = ',')]
    pub recovery: Vec<SocketAddr>,
    /// Testing aid: ignore every Nth data packet, as if the network lost it, to
    /// exercise gap recovery.
    #[arg(long, hide = true)]
    pub simulate_loss: Option<u64>,
}

/// Runs the subscriber.
pub(crate) fn run(args: MdArgs) -> anyhow::Result<()> {
    let config = Config::load(&args.config)?;
    let spec = config
        .instruments
        .iter()
        .find(|s| s.symbol == args.instrument || s.id.0.to_string() == args.instrument)
        .with_context(|| format!("no instrument {} in the config", args.instrument))?;
    let target = config.market_data.target;
    let mut sub = Subscriber::bind(SubscriberConfig {
        feed: target,
        recovery: if args.recovery.is_empty() {
            config.recovery_addresses()
        } else {
            args.recovery.clone()
        },
        instruments: vec![spec.id],
        simulate_loss: args.simulate_loss,
        interface: config.market_data.multicast_interface,
    })?;
    println!(
        "subscribed to {target} for {} (id {})",
        spec.symbol, spec.id
    );
    let deadline = args
        .duration
        .map(|d| Instant::now() + Duration::from_secs_f64(d));
    sub.start(&mut print);
    while deadline.is_none_or(|d| Instant::now() < d) {
        if sub.poll(&mut print)? == 0 {
            sub.wait(Duration::from_millis(50));
        }
    }
    Ok(())
}

fn print(e: MdEvent<'_>) {
    match e {
        MdEvent::Snapshot {
            as_of_seq, book, ..
        } => {
            println!("snapshot as of #{as_of_seq}");
            print_top(book);
        }
        MdEvent::Book { book, .. } => print_top(book),
        MdEvent::Level { .. } => {}
        MdEvent::RecoveryFailed { error, retry_in } => println!(
            "recovery failed: {error}; retrying in {} ms, then with backoff until a snapshot",
            retry_in.as_millis()
        ),
        MdEvent::Trade { seq, trade: t, .. } => println!(
            "#{seq} TRADE {}@{} aggressor {:?} id {}",
            t.qty.lots(),
            t.price.units(),
            t.aggressor_side,
            t.trade_id
        ),
        MdEvent::Commitment { seq, commitment: c } => println!(
            "#{seq} COMMITMENT tick {} ts {} tx {} trades {} state {} root {}",
            c.tick_seq,
            c.timestamp.0,
            c.tx_count,
            c.trade_count,
            hex(&c.state_hash),
            hex(&c.merkle_root)
        ),
        MdEvent::Phase { seq, status: m } => {
            println!("#{seq} PHASE {:?} ends at {}", m.phase, m.ends_at.0)
        }
        MdEvent::Indicative { seq, indicative: m } => println!(
            "#{seq} INDICATIVE {}@{} surplus {} {:?}",
            m.volume.lots(),
            m.price.units(),
            m.surplus.lots(),
            m.surplus_side
        ),
        MdEvent::Redirected { to } => println!("recovery: the leader's service is at {to}"),
        MdEvent::Gap { from, to } => println!("GAP: messages {from}..{to} lost"),
        MdEvent::RecoveredByReplay { from, to } => println!("recovered {from}..{to} by replay"),
        MdEvent::RecoveredBySnapshot { as_of_seq } => {
            println!("recovered from snapshot as of #{as_of_seq}")
        }
        MdEvent::NewSession { session_id } => {
            println!("new feed session {session_id}: book reset")
        }
        MdEvent::EndOfSession => println!("end of session"),
        MdEvent::Malformed { bytes } => println!("malformed packet ({bytes} bytes) ignored"),
    }
}

fn fmt_level(l: Option<Level>) -> String {
    l.map_or("-".into(), |(p, q)| format!("{q}@{p}"))
}

fn print_top(book: &L2Book) {
    let (bid, ask) = book.top();
    println!("BOOK bid {} | ask {}", fmt_level(bid), fmt_level(ask));
}
