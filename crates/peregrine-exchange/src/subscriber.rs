//! `peregrine md`: subscribes to the UDP feed, keeps one instrument's L2 book, prints
//! the top of book and trades, and reports sequence gaps.
//!
//! The exchange has no recovery service yet, so a gap is reported (with the missing
//! range) and the book is kept from what arrives: levels heal as they are next
//! updated. With the recovery channel, the [`SeqCheck::Gap`] branch is where a replay
//! or snapshot request goes.

use std::collections::BTreeMap;
use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Context;
use peregrine_types::{InstrumentId, Side};
use peregrine_wire::md::packet::PacketReader;
use peregrine_wire::md::sequencer::{FeedSequencer, SeqCheck};
use peregrine_wire::md::MdMessage;

use crate::config::Config;

/// `peregrine md` arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct MdArgs {
    /// Exchange config (for the feed address and instrument symbols).
    #[arg(long, default_value = "exchange.toml")]
    pub config: PathBuf,
    /// Instrument symbol or id.
    #[arg(long)]
    pub instrument: String,
    /// Stop after this many seconds (default: run until killed).
    #[arg(long)]
    pub duration: Option<f64>,
}

/// A price level as (price, quantity) in raw units.
pub type Level = (i64, i64);

/// An L2 book built from the feed.
#[derive(Debug, Default)]
pub struct L2Book {
    bids: BTreeMap<i64, i64>,
    asks: BTreeMap<i64, i64>,
}

impl L2Book {
    /// Applies a level update (quantity 0 removes the level).
    pub fn update(&mut self, side: Side, price: i64, qty: i64) {
        let levels = match side {
            Side::Buy => &mut self.bids,
            Side::Sell => &mut self.asks,
        };
        if qty == 0 {
            levels.remove(&price);
        } else {
            levels.insert(price, qty);
        }
    }

    /// Best bid and best ask as (price, qty).
    pub fn top(&self) -> (Option<Level>, Option<Level>) {
        let bid = self.bids.iter().next_back().map(|(p, q)| (*p, *q));
        let ask = self.asks.iter().next().map(|(p, q)| (*p, *q));
        (bid, ask)
    }
}

fn fmt_level(l: Option<Level>) -> String {
    l.map_or("-".into(), |(p, q)| format!("{q}@{p}"))
}

/// Runs the subscriber.
pub fn run(args: MdArgs) -> anyhow::Result<()> {
    let config = Config::load(&args.config)?;
    let spec = config
        .instruments
        .iter()
        .find(|s| s.symbol == args.instrument || s.id.0.to_string() == args.instrument)
        .with_context(|| format!("no instrument {} in the config", args.instrument))?;
    let socket = open(config.market_data.target)?;
    socket.set_read_timeout(Some(Duration::from_millis(200)))?;
    println!(
        "subscribed to {} for {} (id {})",
        config.market_data.target, spec.symbol, spec.id
    );
    let deadline = args
        .duration
        .map(|d| Instant::now() + Duration::from_secs_f64(d));
    let mut book = L2Book::default();
    let mut seq: Option<FeedSequencer> = None;
    let mut buf = vec![0u8; 65_536];
    while deadline.is_none_or(|d| Instant::now() < d) {
        let n = match socket.recv(&mut buf) {
            Ok(n) => n,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                continue
            }
            Err(e) => return Err(e.into()),
        };
        let Ok(reader) = PacketReader::new(&buf[..n]) else {
            println!("malformed packet ({n} bytes) ignored");
            continue;
        };
        let header = reader.header();
        let s = seq.get_or_insert_with(|| FeedSequencer::new(header.session_id, header.first_seq));
        let skip = match s.check(&header) {
            SeqCheck::Apply { skip } => skip,
            SeqCheck::Gap { from, to } => {
                println!("GAP: messages {from}..{to} lost (no recovery service yet; continuing)");
                s.recovered_to(to);
                match s.check(&header) {
                    SeqCheck::Apply { skip } => skip,
                    _ => continue,
                }
            }
            SeqCheck::OtherSession { session_id } => {
                println!("new feed session {session_id}: book reset");
                book = L2Book::default();
                *s = FeedSequencer::new(session_id, header.first_seq);
                continue;
            }
            SeqCheck::EndOfSession => {
                println!("end of session");
                continue;
            }
            SeqCheck::InSync | SeqCheck::Duplicate => continue,
        };
        apply(reader.skip(usize::from(skip)), spec.id, &mut book);
    }
    Ok(())
}

fn apply<'a>(
    msgs: impl Iterator<Item = Result<(u64, MdMessage), peregrine_wire::DecodeError>> + 'a,
    instrument: InstrumentId,
    book: &mut L2Book,
) {
    let mut changed = false;
    for item in msgs {
        let Ok((seq, msg)) = item else { break };
        match msg {
            MdMessage::Trade(t) if t.instrument == instrument => println!(
                "#{seq} TRADE {}@{} aggressor {:?} id {}",
                t.qty.lots(),
                t.price.units(),
                t.aggressor_side,
                t.trade_id
            ),
            MdMessage::L2Update(u) if u.instrument == instrument => {
                book.update(u.side, u.price.units(), u.qty.lots());
                changed = true;
            }
            _ => {}
        }
    }
    if changed {
        let (bid, ask) = book.top();
        println!("BOOK bid {} | ask {}", fmt_level(bid), fmt_level(ask));
    }
}

fn open(target: SocketAddr) -> anyhow::Result<UdpSocket> {
    match target {
        SocketAddr::V4(a) if a.ip().is_multicast() => {
            let socket = UdpSocket::bind((Ipv4Addr::UNSPECIFIED, a.port()))?;
            socket.join_multicast_v4(a.ip(), &Ipv4Addr::UNSPECIFIED)?;
            Ok(socket)
        }
        other => UdpSocket::bind(other).with_context(|| format!("binding {other}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn l2_book_tracks_the_top() {
        let mut b = L2Book::default();
        b.update(Side::Buy, 99, 5);
        b.update(Side::Buy, 100, 2);
        b.update(Side::Sell, 102, 1);
        assert_eq!(b.top(), (Some((100, 2)), Some((102, 1))));
        b.update(Side::Buy, 100, 0);
        assert_eq!(b.top().0, Some((99, 5)));
    }
}
