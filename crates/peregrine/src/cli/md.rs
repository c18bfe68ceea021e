//! `peregrine md`: subscribes to the UDP feed, keeps one instrument's L2 book, prints
//! the top of book and trades, and reports sequence gaps and how they were healed
//! (the library: `peregrine_client::md`).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use std::io::Write;

use anyhow::Context;
use peregrine_client::md::{L2Book, Level, MdEvent, Subscriber, SubscriberConfig};
use peregrine_exchange::Config;
use peregrine_exchange_core::tools::verify::hex;
use peregrine_types::{InstrumentSpec, Price, Qty, Utc};

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
    let mut out = Printer {
        spec: spec.clone(),
        stdout: std::io::stdout().lock(),
        closed: false,
    };
    sub.start(&mut |e| out.event(e));
    while !out.closed && deadline.is_none_or(|d| Instant::now() < d) {
        if sub.poll(&mut |e| out.event(e))? == 0 {
            sub.wait(Duration::from_millis(50));
        }
    }
    Ok(())
}

/// Prints events as lines: prices and quantities in the instrument's decimals, the
/// exchange's time of each book change, trade and commitment at the end (`at` UTC,
/// RFC 3339 with milliseconds: the convention of every timestamp Peregrine prints). A closed stdout (`peregrine md | head`) ends the run quietly.
struct Printer<W: Write> {
    spec: InstrumentSpec,
    stdout: W,
    /// Stdout is gone (a broken pipe): stop.
    closed: bool,
}

impl<W: Write> Printer<W> {
    fn event(&mut self, e: MdEvent<'_>) {
        if self.closed {
            return;
        }
        let text = self.text(e);
        if let Some(text) = text {
            if writeln!(self.stdout, "{text}")
                .and_then(|()| self.stdout.flush())
                .is_err()
            {
                self.closed = true;
            }
        }
    }

    fn price(&self, units: i64) -> String {
        self.spec.format_price(Price::from_raw(units))
    }

    fn qty(&self, lots: i64) -> String {
        self.spec.format_qty(Qty::from_raw(lots))
    }

    fn level(&self, l: Option<Level>) -> String {
        l.map_or("-".into(), |(p, q)| {
            format!("{}@{}", self.qty(q), self.price(p))
        })
    }

    fn top(&self, book: &L2Book) -> String {
        let (bid, ask) = book.top();
        format!("BOOK bid {} | ask {}", self.level(bid), self.level(ask))
    }

    fn text(&self, e: MdEvent<'_>) -> Option<String> {
        Some(match e {
            MdEvent::Snapshot {
                as_of_seq, book, ..
            } => format!("snapshot as of #{as_of_seq}\n{}", self.top(book)),
            MdEvent::Book {
                book,
                exchange_time,
                ..
            } => format!("{} at {}", self.top(book), Utc(exchange_time)),
            MdEvent::Level { .. } => return None,
            MdEvent::RecoveryFailed { error, retry_in } => format!(
                "recovery failed: {error}; retrying in {} ms, then with backoff until a snapshot",
                retry_in.as_millis()
            ),
            MdEvent::Trade { seq, trade: t, .. } => format!(
                "#{seq} TRADE {}@{} aggressor {:?} id {} at {}",
                self.qty(t.qty.lots()),
                self.price(t.price.units()),
                t.aggressor_side,
                t.trade_id,
                Utc(t.engine_time.0)
            ),
            MdEvent::Commitment { seq, commitment: c } => format!(
                "#{seq} COMMITMENT tick {} tx {} trades {} state {} root {} at {}",
                c.tick_seq,
                c.tx_count,
                c.trade_count,
                hex(&c.state_hash),
                hex(&c.merkle_root),
                Utc(c.timestamp.0)
            ),
            MdEvent::Phase { seq, status: m } => {
                let ends = if m.ends_at.0 == 0 {
                    "-".to_string()
                } else {
                    Utc(m.ends_at.0).to_string()
                };
                format!("#{seq} PHASE {:?} ends at {ends}", m.phase)
            }
            MdEvent::Indicative { seq, indicative: m } => format!(
                "#{seq} INDICATIVE {}@{} surplus {} {:?}",
                self.qty(m.volume.lots()),
                self.price(m.price.units()),
                self.qty(m.surplus.lots()),
                m.surplus_side
            ),
            MdEvent::Redirected { to } => format!("recovery: the leader's service is at {to}"),
            MdEvent::Gap { from, to } => format!("GAP: messages {from}..{to} lost"),
            MdEvent::RecoveredByReplay { from, to } => format!("recovered {from}..{to} by replay"),
            MdEvent::RecoveredBySnapshot { as_of_seq } => {
                format!("recovered from snapshot as of #{as_of_seq}")
            }
            MdEvent::NewSession { session_id } => {
                format!("new feed session {session_id}: book reset")
            }
            MdEvent::EndOfSession => "end of session".into(),
            MdEvent::Malformed { bytes } => format!("malformed packet ({bytes} bytes) ignored"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A writer whose reader is gone.
    struct Closed;

    impl Write for Closed {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::ErrorKind::BrokenPipe.into())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_closed_stdout_stops_the_printer_without_a_panic() {
        let mut p = Printer {
            spec: InstrumentSpec::example(1),
            stdout: Closed,
            closed: false,
        };
        p.event(MdEvent::EndOfSession);
        assert!(p.closed);
        p.event(MdEvent::EndOfSession);
    }

    #[test]
    fn prices_and_quantities_in_the_instruments_decimals() {
        let p = Printer {
            spec: InstrumentSpec::example(1),
            stdout: Vec::new(),
            closed: false,
        };
        assert_eq!(p.level(Some((10_005, 3))), "3@100.05");
        assert_eq!(p.level(None), "-");
    }
}
