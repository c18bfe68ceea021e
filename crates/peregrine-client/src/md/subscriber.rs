//! The feed subscriber as a library: binds the UDP feed, keeps one instrument's L2
//! book, detects sequence gaps and heals them through the recovery service, and
//! reports what happened as [`MdEvent`]s (`peregrine md` prints them; the order
//! engine can build its market data on it).
//!
//! On [`Subscriber::start`] it asks the recovery service for a book snapshot and
//! resumes the feed after the snapshot's `as_of_seq` (the UDP socket is bound first,
//! so nothing between the two is missed). On a gap it asks for the missing range
//! and applies it in order; if the range is no longer retained it falls back to a
//! fresh snapshot. Without a recovery service a gap is only reported and the book
//! heals as levels are next updated.

use std::io::ErrorKind;
use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::time::Duration;

use peregrine_types::InstrumentId;
use peregrine_wire::md::packet::{PacketKind, PacketReader};
use peregrine_wire::md::sequencer::{FeedSequencer, SeqCheck};
use peregrine_wire::md::{Commitment, MdMessage, Trade};

use crate::error::{ClientError, IoContext};
use crate::md::book::L2Book;
use crate::md::recovery::{replay, snapshot};

/// Where to subscribe.
#[derive(Debug, Clone, Copy)]
pub struct SubscriberConfig {
    /// The feed's target address (unicast, or a multicast group).
    pub feed: SocketAddr,
    /// The recovery service, if the exchange runs one.
    pub recovery: Option<SocketAddr>,
    /// The instrument whose book is kept.
    pub instrument: InstrumentId,
    /// Testing aid: ignore every Nth data packet, as if the network lost it.
    pub simulate_loss: Option<u64>,
}

/// What the subscriber saw.
#[derive(Debug)]
pub enum MdEvent<'a> {
    /// The book from a snapshot on start, as of this feed sequence number.
    Snapshot {
        /// The last sequence number the book reflects.
        as_of_seq: u64,
        /// The book.
        book: &'a L2Book,
    },
    /// The book changed.
    Book(&'a L2Book),
    /// A trade of the instrument.
    Trade {
        /// Feed sequence number.
        seq: u64,
        /// The trade.
        trade: Trade,
    },
    /// A commitment published on the feed.
    Commitment {
        /// Feed sequence number.
        seq: u64,
        /// The commitment.
        commitment: Commitment,
    },
    /// Messages `from..to` were lost.
    Gap {
        /// First missing.
        from: u64,
        /// One past the last missing.
        to: u64,
    },
    /// The gap `from..to` was replayed.
    RecoveredByReplay {
        /// First replayed.
        from: u64,
        /// One past the last replayed.
        to: u64,
    },
    /// The gap was healed with a fresh snapshot as of this sequence number.
    RecoveredBySnapshot {
        /// The snapshot's last sequence number.
        as_of_seq: u64,
    },
    /// The feed started a new session: the book was reset.
    NewSession {
        /// Its id.
        session_id: u64,
    },
    /// The feed session ended.
    EndOfSession,
    /// A packet that does not parse was ignored.
    Malformed {
        /// Its size.
        bytes: usize,
    },
}

/// A subscriber to one instrument.
#[derive(Debug)]
pub struct Subscriber {
    config: SubscriberConfig,
    socket: UdpSocket,
    book: L2Book,
    seq: Option<FeedSequencer>,
    buf: Vec<u8>,
    data_packets: u64,
}

impl Subscriber {
    /// Binds the feed's UDP socket (joining the group for a multicast target);
    /// each [`Subscriber::poll`] waits at most `timeout` for a packet.
    pub fn bind(config: SubscriberConfig, timeout: Duration) -> Result<Self, ClientError> {
        let socket = open(config.feed)?;
        socket
            .set_read_timeout(Some(timeout))
            .doing(|| "setting the feed socket's timeout".into())?;
        Ok(Subscriber {
            config,
            socket,
            book: L2Book::default(),
            seq: None,
            buf: vec![0u8; 65_536],
            data_packets: 0,
        })
    }

    /// With a recovery service: fetches the book and resumes the feed after it.
    pub fn start(&mut self, on: &mut impl FnMut(MdEvent<'_>)) -> Result<(), ClientError> {
        if let Some(addr) = self.config.recovery {
            let s = snapshot(addr, self.config.instrument)?;
            self.book = s.book;
            self.seq = Some(FeedSequencer::new(s.session_id, s.as_of_seq + 1));
            on(MdEvent::Snapshot {
                as_of_seq: s.as_of_seq,
                book: &self.book,
            });
        }
        Ok(())
    }

    /// The book so far.
    pub fn book(&self) -> &L2Book {
        &self.book
    }

    /// Waits for one packet (up to the timeout) and applies it.
    pub fn poll(&mut self, on: &mut impl FnMut(MdEvent<'_>)) -> Result<(), ClientError> {
        let n = match self.socket.recv(&mut self.buf) {
            Ok(n) => n,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return Ok(())
            }
            Err(e) => {
                return Err(ClientError::Io {
                    what: "reading the feed".into(),
                    source: e,
                })
            }
        };
        let buf = std::mem::take(&mut self.buf);
        let result = self.packet(&buf[..n], on);
        self.buf = buf;
        result
    }

    fn packet(
        &mut self,
        bytes: &[u8],
        on: &mut impl FnMut(MdEvent<'_>),
    ) -> Result<(), ClientError> {
        let Ok(reader) = PacketReader::new(bytes) else {
            on(MdEvent::Malformed { bytes: bytes.len() });
            return Ok(());
        };
        let header = reader.header();
        if matches!(header.kind(), PacketKind::Messages(_)) {
            self.data_packets += 1;
            let lost = self
                .config
                .simulate_loss
                .is_some_and(|n| n > 0 && self.data_packets.is_multiple_of(n));
            if lost {
                return Ok(());
            }
        }
        let s = self
            .seq
            .get_or_insert_with(|| FeedSequencer::new(header.session_id, header.first_seq));
        let skip = match s.check(&header) {
            SeqCheck::Apply { skip } => skip,
            SeqCheck::Gap { from, to } => {
                on(MdEvent::Gap { from, to });
                let resume = self.recover(header.session_id, from, to, on)?;
                let Some(s) = self.seq.as_mut() else {
                    return Ok(());
                };
                s.recovered_to(resume);
                match s.check(&header) {
                    SeqCheck::Apply { skip } => skip,
                    _ => return Ok(()),
                }
            }
            SeqCheck::OtherSession { session_id } => {
                self.book = L2Book::default();
                *s = FeedSequencer::new(session_id, header.first_seq);
                on(MdEvent::NewSession { session_id });
                return Ok(());
            }
            SeqCheck::EndOfSession => {
                on(MdEvent::EndOfSession);
                return Ok(());
            }
            SeqCheck::InSync | SeqCheck::Duplicate => return Ok(()),
        };
        self.apply(reader.skip(usize::from(skip)), on);
        Ok(())
    }

    /// Heals the gap `from..to`; returns the sequence number the feed resumes at.
    fn recover(
        &mut self,
        session_id: u64,
        from: u64,
        to: u64,
        on: &mut impl FnMut(MdEvent<'_>),
    ) -> Result<u64, ClientError> {
        let Some(addr) = self.config.recovery else {
            return Ok(to);
        };
        match replay(addr, session_id, from, to - from) {
            Ok(Some(msgs)) => {
                on(MdEvent::RecoveredByReplay { from, to });
                self.apply(msgs.into_iter().map(Ok), on);
                Ok(to)
            }
            Ok(None) | Err(_) => {
                let s = snapshot(addr, self.config.instrument)?;
                self.book = s.book;
                on(MdEvent::RecoveredBySnapshot {
                    as_of_seq: s.as_of_seq,
                });
                Ok(s.as_of_seq + 1)
            }
        }
    }

    fn apply(
        &mut self,
        msgs: impl Iterator<Item = Result<(u64, MdMessage), peregrine_wire::DecodeError>>,
        on: &mut impl FnMut(MdEvent<'_>),
    ) {
        let instrument = self.config.instrument;
        let mut changed = false;
        for item in msgs {
            let Ok((seq, msg)) = item else { break };
            match msg {
                MdMessage::Trade(t) if t.instrument == instrument => {
                    on(MdEvent::Trade { seq, trade: t });
                }
                MdMessage::L2Update(u) if u.instrument == instrument => {
                    self.book.update(u.side, u.price.units(), u.qty.lots());
                    changed = true;
                }
                MdMessage::Commitment(c) => on(MdEvent::Commitment { seq, commitment: c }),
                _ => {}
            }
        }
        if changed {
            on(MdEvent::Book(&self.book));
        }
    }
}

fn open(target: SocketAddr) -> Result<UdpSocket, ClientError> {
    match target {
        SocketAddr::V4(a) if a.ip().is_multicast() => {
            let socket = UdpSocket::bind((Ipv4Addr::UNSPECIFIED, a.port()))
                .doing(|| format!("binding port {}", a.port()))?;
            socket
                .join_multicast_v4(a.ip(), &Ipv4Addr::UNSPECIFIED)
                .doing(|| format!("joining {}", a.ip()))?;
            Ok(socket)
        }
        other => UdpSocket::bind(other).doing(|| format!("binding {other}")),
    }
}
