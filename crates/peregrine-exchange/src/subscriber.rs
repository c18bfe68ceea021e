//! `peregrine md`: subscribes to the UDP feed, keeps one instrument's L2 book, prints
//! the top of book and trades, and reports sequence gaps.
//!
//! On start it asks the exchange's recovery service for a book snapshot
//! (`SnapshotRequest`) and resumes the feed after the snapshot's `as_of_seq` (the UDP
//! socket is bound first, so nothing between the two is missed). On a gap it asks for
//! the missing range (`ReplayRequest`) and applies it in order; if the range is no
//! longer retained it falls back to a fresh snapshot. Without a recovery service
//! (`recovery_enabled = false`) a gap is only reported and the book heals as levels
//! are next updated.

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
    /// Testing aid: ignore every Nth data packet, as if the network lost it, to
    /// exercise gap recovery.
    #[arg(long, hide = true)]
    pub simulate_loss: Option<u64>,
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
    let recovery = config.recovery_enabled.then_some(config.recovery_listen);
    let mut book = L2Book::default();
    let mut seq: Option<FeedSequencer> = None;
    if let Some(addr) = recovery {
        let (b, session_id, as_of) = snapshot(addr, spec.id)?;
        println!("snapshot as of #{as_of}");
        book = b;
        seq = Some(FeedSequencer::new(session_id, as_of + 1));
        print_top(&book);
    }
    let mut buf = vec![0u8; 65_536];
    let mut data_packets = 0u64;
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
        if matches!(
            header.kind(),
            peregrine_wire::md::packet::PacketKind::Messages(_)
        ) {
            data_packets += 1;
            if args
                .simulate_loss
                .is_some_and(|n| n > 0 && data_packets.is_multiple_of(n))
            {
                continue;
            }
        }
        let s = seq.get_or_insert_with(|| FeedSequencer::new(header.session_id, header.first_seq));
        let skip = match s.check(&header) {
            SeqCheck::Apply { skip } => skip,
            SeqCheck::Gap { from, to } => {
                println!("GAP: messages {from}..{to} lost");
                let resume = match recovery {
                    Some(addr) => match replay(addr, header.session_id, from, to - from) {
                        Ok(Some(msgs)) => {
                            println!("recovered {from}..{to} by replay");
                            apply(msgs.into_iter().map(Ok), spec.id, &mut book);
                            to
                        }
                        Ok(None) | Err(_) => {
                            let (b, _, as_of) = snapshot(addr, spec.id)?;
                            println!("recovered from snapshot as of #{as_of}");
                            book = b;
                            as_of + 1
                        }
                    },
                    None => to,
                };
                s.recovered_to(resume);
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
            MdMessage::Commitment(c) => println!(
                "#{seq} COMMITMENT tick {} ts {} tx {} trades {} state {} root {}",
                c.tick_seq,
                c.timestamp.0,
                c.tx_count,
                c.trade_count,
                crate::verify::hex(&c.state_hash),
                crate::verify::hex(&c.merkle_root)
            ),
            _ => {}
        }
    }
    if changed {
        print_top(book);
    }
}

fn print_top(book: &L2Book) {
    let (bid, ask) = book.top();
    println!("BOOK bid {} | ask {}", fmt_level(bid), fmt_level(ask));
}

/// Fetches one instrument's book from the recovery service: (book, feed session,
/// as-of sequence number).
pub fn snapshot(addr: SocketAddr, instrument: InstrumentId) -> anyhow::Result<(L2Book, u64, u64)> {
    use peregrine_wire::md::recovery::{Recovery, SnapshotRequest};
    use peregrine_wire::WireMessage;
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(5))
        .with_context(|| format!("connecting to the recovery service {addr}"))?;
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    let mut buf = [0u8; SnapshotRequest::SIZE];
    SnapshotRequest {
        request_id: 1,
        instrument,
    }
    .encode(&mut buf)?;
    stream.write_all(&buf)?;
    let mut rx = Box::new(peregrine_wire::stream::RecvBuffer::<65536>::new());
    let (mut book, mut session_id) = (L2Book::default(), 0);
    loop {
        while let Some(m) = rx.next(Recovery::decode)? {
            match m {
                Recovery::SnapshotHeader(h) => {
                    anyhow::ensure!(h.reason.0 == 0, "snapshot refused, reason {}", h.reason.0);
                    session_id = h.session_id;
                }
                Recovery::SnapshotLevel(l) => book.update(l.side, l.price.units(), l.qty.lots()),
                Recovery::SnapshotEnd(e) => return Ok((book, session_id, e.as_of_seq)),
                other => anyhow::bail!("unexpected recovery message {other:?}"),
            }
        }
        let n = stream.read(rx.spare())?;
        anyhow::ensure!(n > 0, "recovery service closed the connection mid-snapshot");
        rx.commit(n);
    }
}

/// Fetches feed messages `first..first + count` from the recovery service, in
/// order, asking again while each answer is partial. `Ok(None)` when the service no
/// longer retains (part of) the range.
pub fn replay(
    addr: SocketAddr,
    session_id: u64,
    first: u64,
    count: u64,
) -> anyhow::Result<Option<Vec<(u64, MdMessage)>>> {
    use peregrine_wire::md::recovery::{Recovery, ReplayRequest};
    use peregrine_wire::WireMessage;
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(5))
        .with_context(|| format!("connecting to the recovery service {addr}"))?;
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    let mut rx = Box::new(peregrine_wire::stream::RecvBuffer::<65536>::new());
    let mut got: Vec<(u64, MdMessage)> = Vec::with_capacity(count.min(1 << 16) as usize);
    let end = first + count;
    while first + (got.len() as u64) < end {
        let next = first + got.len() as u64;
        let mut buf = [0u8; ReplayRequest::SIZE];
        ReplayRequest {
            session_id,
            first_seq: next,
            count: u16::try_from(end - next).unwrap_or(u16::MAX),
        }
        .encode(&mut buf)?;
        stream.write_all(&buf)?;
        // The answer: a response, then exactly `count` feed messages.
        let mut expected: Option<u64> = None;
        let mut received = 0u64;
        loop {
            while let Some(m) = rx.next(Recovery::decode)? {
                let seq = next + received;
                match m {
                    Recovery::ReplayResponse(r) => {
                        anyhow::ensure!(expected.is_none(), "two replay responses");
                        anyhow::ensure!(r.first_seq == next, "replay of the wrong range");
                        if r.count == 0 {
                            return Ok(None);
                        }
                        expected = Some(u64::from(r.count));
                    }
                    Recovery::Trade(t) if expected.is_some() => {
                        got.push((seq, MdMessage::Trade(t)));
                        received += 1;
                    }
                    Recovery::L2Update(u) if expected.is_some() => {
                        got.push((seq, MdMessage::L2Update(u)));
                        received += 1;
                    }
                    Recovery::Commitment(c) if expected.is_some() => {
                        got.push((seq, MdMessage::Commitment(c)));
                        received += 1;
                    }
                    other => anyhow::bail!("unexpected recovery message {other:?}"),
                }
            }
            if expected == Some(received) {
                break;
            }
            let n = stream.read(rx.spare())?;
            anyhow::ensure!(n > 0, "recovery service closed the connection mid-replay");
            rx.commit(n);
        }
    }
    Ok(Some(got))
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
