//! The feed subscriber as a library: binds the UDP feed, keeps an L2 book per
//! subscribed instrument, detects sequence gaps and heals them through the recovery
//! service, and reports what happened as [`MdEvent`]s (`peregrine md` prints them;
//! the order engine's exchange venue turns them into its market data).
//!
//! **It never blocks.** The UDP socket is non-blocking and the recovery requests are
//! [`Fetch`] state machines: [`Subscriber::poll`] reads the packets that arrived,
//! advances a recovery in progress by whatever its socket allows, and returns.
//! While a recovery is in progress, arriving packets are held (in order, at most
//! [`MAX_HELD`]; beyond that the oldest are dropped, which the sequencer sees as
//! one more gap) and applied once it completes. A caller with nothing else to do
//! sleeps in [`Subscriber::wait`].
//!
//! [`Subscriber::start`] asks the recovery service for a book snapshot of every
//! instrument and resumes the feed after the snapshots (the UDP socket is bound
//! first, so nothing between the two is missed; an instrument's messages up to its
//! own snapshot's `as_of_seq` are skipped). On a gap it asks for a replay of the
//! missing range; if the range is no longer retained (or the replay fails) it falls
//! back to fresh snapshots. A new feed session (an exchange restart) clears the
//! books and fetches snapshots. Without a recovery service a gap is only reported
//! and the book heals as levels are next updated.
//!
//! **A failed recovery is tried again.** A snapshot the service refused, reset,
//! closed (an eviction) or did not answer in time is asked for again after a
//! [`Backoff`] (50 ms doubling to 2 s, jittered), for as long as it takes: the
//! books are trusted only once every snapshot arrived, and until then packets are
//! held as during any recovery. The failure is reported once per streak
//! ([`MdEvent::RecoveryFailed`]); the snapshots that end it are reported as usual.
//!
//! **A cluster.** Only the leader serves recovery. The recovery addresses are walked
//! as order entry walks a cluster's nodes ([`LeaderWalk`]): a node that does not
//! lead answers with the leader's recovery address, which the subscriber follows at
//! once (a bounded number of times per round, reported as [`MdEvent::Redirected`]);
//! a node that is down, or knows no leader, passes the next try (after the backoff)
//! to the next address; the node that last served is tried first.
//! After a failover the new leader's feed is a new session: the books are reset and
//! rebuilt from the new leader's snapshots, never silently continued.
//!
//! **Timestamps.** Every book change carries the exchange's time of the change (the
//! `L2Update`'s `engine_time`) and the packet's `send_time` (the exchange clock when
//! the packet was handed to its socket; 0 for messages that came by replay or
//! snapshot), both ns since the Unix epoch on the exchange's clock.

use std::collections::VecDeque;
use std::io::ErrorKind;
use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::time::{Duration, Instant, SystemTime};

use peregrine_types::Rng;

use peregrine_types::InstrumentId;
use peregrine_wire::md::packet::{PacketKind, PacketReader};
use peregrine_wire::md::sequencer::{FeedSequencer, SeqCheck};
use peregrine_wire::md::{AuctionIndicative, Commitment, L2Update, MarketStatus, MdMessage, Trade};

use crate::error::{ClientError, IoContext};
use crate::md::backoff::Backoff;
use crate::md::book::L2Book;
use crate::md::fetch::{Fetch, Fetched};
use crate::order_entry::{LeaderWalk, Next};

/// Packets held while a recovery is in progress, at most.
pub const MAX_HELD: usize = 16_384;

/// Instruments one subscriber follows, at most.
pub const MAX_INSTRUMENTS: usize = 64;

/// Datagrams read per [`Subscriber::poll`], at most (so a flood cannot starve the
/// caller's other work).
const PACKETS_PER_POLL: usize = 64;

/// Where to subscribe.
#[derive(Debug, Clone)]
pub struct SubscriberConfig {
    /// The feed's target address (unicast, or a multicast group).
    pub feed: SocketAddr,
    /// The recovery service: its address for a single exchange; for a cluster, the
    /// recovery address of every node (tried in turn; a node that does not lead
    /// redirects to the one that does). Empty: the exchange runs none.
    pub recovery: Vec<SocketAddr>,
    /// The instruments whose books are kept (1..=[`MAX_INSTRUMENTS`]).
    pub instruments: Vec<InstrumentId>,
    /// Testing aid: ignore every Nth data packet, as if the network lost it.
    pub simulate_loss: Option<u64>,
    /// The interface a multicast `feed` is joined on (`0.0.0.0`: the routing
    /// table's choice); ignored for a unicast `feed` ([`super::open_feed`]).
    pub interface: Ipv4Addr,
}

/// What the subscriber saw.
#[derive(Debug)]
pub enum MdEvent<'a> {
    /// An instrument's book from a snapshot, as of this feed sequence number.
    Snapshot {
        /// The instrument.
        instrument: InstrumentId,
        /// The last sequence number the book reflects.
        as_of_seq: u64,
        /// The book.
        book: &'a L2Book,
    },
    /// One level of a subscribed instrument changed (a [`MdEvent::Book`] follows
    /// once the packet or replay that carried it is applied).
    Level {
        /// Feed sequence number.
        seq: u64,
        /// The update.
        update: L2Update,
        /// The packet's send time (0: replayed).
        send_time: u64,
    },
    /// An instrument's book changed (after a packet or a replay).
    Book {
        /// The instrument.
        instrument: InstrumentId,
        /// The book.
        book: &'a L2Book,
        /// Exchange time of the last change applied (its `engine_time`).
        exchange_time: u64,
        /// Send time of the packet that carried it (0: replayed).
        send_time: u64,
    },
    /// A trade of a subscribed instrument.
    Trade {
        /// Feed sequence number.
        seq: u64,
        /// The trade.
        trade: Trade,
        /// The packet's send time (0: replayed).
        send_time: u64,
    },
    /// A commitment published on the feed.
    Commitment {
        /// Feed sequence number.
        seq: u64,
        /// The commitment.
        commitment: Commitment,
    },
    /// A subscribed instrument's trading phase changed (halt, call auction, ...).
    Phase {
        /// Feed sequence number.
        seq: u64,
        /// The new phase.
        status: MarketStatus,
    },
    /// A subscribed instrument's indicative uncross changed during a call auction.
    Indicative {
        /// Feed sequence number.
        seq: u64,
        /// The indicative price, volume and surplus.
        indicative: AuctionIndicative,
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
    /// The books were rebuilt from fresh snapshots; the feed resumes after this
    /// sequence number (the smallest of the snapshots').
    RecoveredBySnapshot {
        /// The snapshots' last sequence number.
        as_of_seq: u64,
    },
    /// The feed started a new session: the books were reset (snapshots follow when
    /// there is a recovery service).
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
    /// A cluster node that does not lead sent the recovery request on to the
    /// leader's recovery service at `to` (asked at once).
    Redirected {
        /// The leader's recovery address.
        to: SocketAddr,
    },
    /// A recovery failed, the first time since the last one that succeeded: the
    /// books wait (packets are held) and the snapshots are asked for again after
    /// `retry_in`, then with growing backoff, until they arrive.
    RecoveryFailed {
        /// Why.
        error: &'a ClientError,
        /// When the first retry goes out.
        retry_in: Duration,
    },
}

#[derive(Debug)]
struct Book {
    id: InstrumentId,
    book: L2Book,
    /// Messages up to this sequence number are in the book already (its snapshot).
    floor: u64,
    exchange_time: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Why {
    Start,
    Gap,
    NewSession,
}

#[derive(Debug)]
enum Recovering {
    Replay {
        fetch: Fetch,
        from: u64,
        to: u64,
    },
    /// Fetching the snapshot of `books[index]`; earlier ones are in `got`.
    Snapshot {
        fetch: Fetch,
        index: usize,
        got: Vec<(L2Book, u64, u64)>,
        why: Why,
    },
    /// The last try failed: the snapshots are asked for again at `at`.
    Retry {
        at: Instant,
        why: Why,
    },
}

impl Recovering {
    fn fetch(&self) -> Option<&Fetch> {
        match self {
            Recovering::Replay { fetch, .. } | Recovering::Snapshot { fetch, .. } => Some(fetch),
            Recovering::Retry { .. } => None,
        }
    }
}

/// A subscriber to the feed.
#[derive(Debug)]
pub struct Subscriber {
    config: SubscriberConfig,
    socket: UdpSocket,
    books: Vec<Book>,
    seq: Option<FeedSequencer>,
    buf: Vec<u8>,
    data_packets: u64,
    recovering: Option<Recovering>,
    held: VecDeque<Vec<u8>>,
    held_dropped: u64,
    /// When to try a failed recovery again.
    backoff: Backoff,
    /// The order in which the recovery addresses are tried.
    walk: LeaderWalk,
    /// Where recovery requests go now (a configured address, or the leader one
    /// redirected to); `None`: no recovery service.
    recovery_at: Option<SocketAddr>,
}

impl Subscriber {
    /// Binds the feed's UDP socket (joining the group for a multicast target),
    /// non-blocking.
    pub fn bind(config: SubscriberConfig) -> Result<Self, ClientError> {
        if config.instruments.is_empty() || config.instruments.len() > MAX_INSTRUMENTS {
            return Err(ClientError::Invalid(format!(
                "a subscriber follows 1..={MAX_INSTRUMENTS} instruments, not {}",
                config.instruments.len()
            )));
        }
        let socket = open(config.feed, config.interface)?;
        socket
            .set_nonblocking(true)
            .doing(|| "making the feed socket non-blocking".into())?;
        let mut walk = LeaderWalk::new(config.recovery.clone());
        let recovery_at = match walk.next() {
            Next::Try(a) => Some(a),
            Next::Wait(_) => None, // no address: no recovery service
        };
        Ok(Subscriber {
            books: config
                .instruments
                .iter()
                .map(|&id| Book {
                    id,
                    book: L2Book::default(),
                    floor: 0,
                    exchange_time: 0,
                })
                .collect(),
            config,
            socket,
            seq: None,
            buf: vec![0u8; 65_536],
            data_packets: 0,
            recovering: None,
            held: VecDeque::new(),
            held_dropped: 0,
            backoff: Backoff::new(Rng::new(seed())),
            walk,
            recovery_at,
        })
    }

    /// The feed socket's local address.
    pub fn local_addr(&self) -> Result<SocketAddr, ClientError> {
        self.socket
            .local_addr()
            .doing(|| "reading the feed socket's address".into())
    }

    /// With a recovery service: starts fetching every book (the snapshots arrive
    /// through [`Subscriber::poll`] as [`MdEvent::Snapshot`]s); the feed resumes after
    /// them. Without one, nothing to do.
    pub fn start(&mut self, on: &mut impl FnMut(MdEvent<'_>)) {
        self.begin_snapshots(Why::Start, on);
    }

    /// The book of `instrument`, if subscribed.
    pub fn book(&self, instrument: InstrumentId) -> Option<&L2Book> {
        self.books
            .iter()
            .find(|b| b.id == instrument)
            .map(|b| &b.book)
    }

    /// Whether a recovery (start, gap, new session) is in progress.
    pub fn recovering(&self) -> bool {
        self.recovering.is_some()
    }

    /// Packets dropped from the hold queue so far (recovery too slow for the feed).
    pub fn held_dropped(&self) -> u64 {
        self.held_dropped
    }

    /// Reads what arrived, advances a recovery in progress; never blocks. Returns the
    /// datagrams read.
    pub fn poll(&mut self, on: &mut impl FnMut(MdEvent<'_>)) -> Result<usize, ClientError> {
        self.drive(on);
        let mut n = 0;
        while n < PACKETS_PER_POLL {
            let len = match self.socket.recv(&mut self.buf) {
                Ok(len) => len,
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => {
                    return Err(ClientError::Io {
                        what: "reading the feed".into(),
                        source: e,
                    })
                }
            };
            n += 1;
            if self.simulated_loss(len) {
                continue;
            }
            if self.recovering.is_some() {
                let p = self.buf[..len].to_vec();
                self.hold_back(p);
                continue;
            }
            let buf = std::mem::take(&mut self.buf);
            let held = self.packet(&buf[..len], on);
            if held {
                self.hold_back(buf[..len].to_vec());
            }
            self.buf = buf;
        }
        Ok(n)
    }

    /// Blocks until the feed (or the recovery connection) is readable, at most
    /// `timeout`: for callers with nothing else to do between polls.
    pub fn wait(&self, timeout: Duration) {
        use rustix::event::{poll, PollFd, PollFlags, Timespec};
        use std::os::fd::AsFd;
        let mut fds = vec![PollFd::new(&self.socket, PollFlags::IN)];
        let mut timeout = timeout;
        match &self.recovering {
            Some(Recovering::Retry { at, .. }) => {
                timeout = timeout.min(at.saturating_duration_since(Instant::now()));
            }
            Some(r) => {
                if let Some(fetch) = r.fetch() {
                    fds.push(PollFd::from_borrowed_fd(
                        fetch.as_fd(),
                        PollFlags::IN | PollFlags::OUT,
                    ));
                }
            }
            None => {}
        }
        let t = Timespec {
            tv_sec: timeout.as_secs() as i64,
            tv_nsec: i64::from(timeout.subsec_nanos()),
        };
        let _ = poll(&mut fds, Some(&t));
    }

    fn simulated_loss(&mut self, len: usize) -> bool {
        let Some(every) = self.config.simulate_loss.filter(|n| *n > 0) else {
            return false;
        };
        let data = PacketReader::new(&self.buf[..len])
            .is_ok_and(|r| matches!(r.header().kind(), PacketKind::Messages(_)));
        if !data {
            return false;
        }
        self.data_packets += 1;
        self.data_packets.is_multiple_of(every)
    }

    fn hold_back(&mut self, p: Vec<u8>) {
        if self.held.len() >= MAX_HELD {
            self.held.pop_front(); // the sequencer sees the hole as a gap later
            self.held_dropped += 1;
        }
        self.held.push_back(p);
    }

    /// Applies one packet. True when it must be held (a recovery started and the
    /// packet is to be applied after it).
    fn packet(&mut self, bytes: &[u8], on: &mut impl FnMut(MdEvent<'_>)) -> bool {
        let Ok(reader) = PacketReader::new(bytes) else {
            on(MdEvent::Malformed { bytes: bytes.len() });
            return false;
        };
        let header = reader.header();
        let s = self
            .seq
            .get_or_insert_with(|| FeedSequencer::new(header.session_id, header.first_seq));
        let skip = match s.check(&header) {
            SeqCheck::Apply { skip } => skip,
            SeqCheck::Gap { from, to } => {
                on(MdEvent::Gap { from, to });
                let session_id = header.session_id;
                if let Some(addr) = self.recovery_at {
                    match Fetch::replay(addr, session_id, from, to - from) {
                        Ok(fetch) => self.recovering = Some(Recovering::Replay { fetch, from, to }),
                        Err(_) => self.begin_snapshots(Why::Gap, on),
                    }
                    // A replay, snapshots, or their retry: the packet waits for it.
                    return true;
                }
                // No recovery service: the book heals as levels are updated.
                if let Some(s) = self.seq.as_mut() {
                    s.recovered_to(to);
                }
                return self.packet_again(&reader, on);
            }
            SeqCheck::OtherSession { session_id } => {
                for b in &mut self.books {
                    b.book = L2Book::default();
                    b.floor = 0;
                }
                *s = FeedSequencer::new(session_id, header.first_seq);
                on(MdEvent::NewSession { session_id });
                self.begin_snapshots(Why::NewSession, on);
                return self.recovering.is_some() || self.packet_again(&reader, on);
            }
            SeqCheck::EndOfSession => {
                on(MdEvent::EndOfSession);
                return false;
            }
            SeqCheck::InSync | SeqCheck::Duplicate => return false,
        };
        self.apply(reader.skip(usize::from(skip)), header.send_time, on);
        false
    }

    /// Checks a packet again after the sequencer moved (a gap given up, a new
    /// session without recovery); never holds.
    fn packet_again(
        &mut self,
        reader: &PacketReader<'_>,
        on: &mut impl FnMut(MdEvent<'_>),
    ) -> bool {
        let header = reader.header();
        let Some(s) = self.seq.as_mut() else {
            return false;
        };
        if let SeqCheck::Apply { skip } = s.check(&header) {
            self.apply(reader.clone().skip(usize::from(skip)), header.send_time, on);
        }
        false
    }

    /// Starts fetching every book's snapshot (no-op without a recovery service);
    /// if the connection fails at once, schedules a retry.
    fn begin_snapshots(&mut self, why: Why, on: &mut impl FnMut(MdEvent<'_>)) {
        let Some(addr) = self.recovery_at else {
            return;
        };
        match Fetch::snapshot(addr, self.books[0].id) {
            Ok(fetch) => {
                self.recovering = Some(Recovering::Snapshot {
                    fetch,
                    index: 0,
                    got: Vec::with_capacity(self.books.len()),
                    why,
                })
            }
            Err(error) => self.retry_later(why, &error, on),
        }
    }

    /// The snapshots failed: they are asked for again after the backoff; the first
    /// failure of a streak is reported.
    /// A cluster node's redirect with a leader address is followed at once (within
    /// the hop budget); any other failure moves to the next configured address.
    fn retry_later(&mut self, why: Why, error: &ClientError, on: &mut impl FnMut(MdEvent<'_>)) {
        if let Some(to) = self.walk.failed(error) {
            // The walk names the leader next: take it from there.
            self.next_recovery_address();
            debug_assert_eq!(self.recovery_at, Some(to));
            on(MdEvent::Redirected { to });
            self.begin_snapshots(why, on);
            return;
        }
        self.next_recovery_address();
        let first = self.backoff.failures() == 0;
        let retry_in = self.backoff.fail();
        if first {
            on(MdEvent::RecoveryFailed { error, retry_in });
        }
        self.recovering = Some(Recovering::Retry {
            at: Instant::now() + retry_in,
            why,
        });
    }

    /// The next address of the walk (past the end of a round, the first of the
    /// next: the wait between tries is the subscriber's backoff).
    fn next_recovery_address(&mut self) {
        for _ in 0..2 {
            if let Next::Try(a) = self.walk.next() {
                self.recovery_at = Some(a);
                return;
            }
        }
    }

    /// A recovery at the current address succeeded: later rounds start there.
    fn served(&mut self) {
        self.backoff.succeed();
        if let Some(a) = self.recovery_at {
            self.walk.logged_in(a);
        }
    }

    /// Advances the recovery in progress; when it completes, applies it and then the
    /// held packets (until one of them starts another recovery).
    fn drive(&mut self, on: &mut impl FnMut(MdEvent<'_>)) {
        while let Some(r) = self.recovering.as_mut() {
            let fetch = match r {
                Recovering::Replay { fetch, .. } | Recovering::Snapshot { fetch, .. } => fetch,
                Recovering::Retry { at, why } => {
                    if Instant::now() < *at {
                        return;
                    }
                    let why = *why;
                    self.recovering = None;
                    self.begin_snapshots(why, on);
                    continue;
                }
            };
            let done = match fetch.poll() {
                Ok(None) => return,
                Ok(Some(done)) => Ok(done),
                Err(e) => Err(e),
            };
            let Some(r) = self.recovering.take() else {
                break;
            };
            self.finish(r, done, on);
            if self.recovering.is_none() {
                self.drain_held(on);
            }
        }
    }

    fn finish(
        &mut self,
        r: Recovering,
        done: Result<Fetched, ClientError>,
        on: &mut impl FnMut(MdEvent<'_>),
    ) {
        match (r, done) {
            (Recovering::Replay { from, to, .. }, Ok(Fetched::Replay(Some(msgs)))) => {
                self.served();
                on(MdEvent::RecoveredByReplay { from, to });
                self.apply(msgs.into_iter().map(Ok), 0, on);
                if let Some(s) = self.seq.as_mut() {
                    s.recovered_to(to);
                }
            }
            (Recovering::Replay { .. }, _) => self.begin_snapshots(Why::Gap, on),
            (
                Recovering::Snapshot {
                    index,
                    mut got,
                    why,
                    ..
                },
                Ok(Fetched::Snapshot(s)),
            ) => {
                got.push((s.book, s.session_id, s.as_of_seq));
                let next = index + 1;
                if next < self.books.len() {
                    let addr = self.recovery_at;
                    match addr.map(|a| Fetch::snapshot(a, self.books[next].id)) {
                        Some(Ok(fetch)) => {
                            self.recovering = Some(Recovering::Snapshot {
                                fetch,
                                index: next,
                                got,
                                why,
                            })
                        }
                        Some(Err(error)) => self.retry_later(why, &error, on),
                        None => {}
                    }
                    return;
                }
                self.install(got, why, on);
            }
            (Recovering::Snapshot { why, .. }, Ok(Fetched::Replay(_))) => {
                let error = ClientError::Unexpected("a replay for a snapshot".into());
                self.retry_later(why, &error, on)
            }
            (Recovering::Snapshot { why, .. }, Err(error)) => self.retry_later(why, &error, on),
            // Never stored with a fetch to finish.
            (Recovering::Retry { why, .. }, _) => self.begin_snapshots(why, on),
        }
    }

    /// Installs a complete set of snapshots (one per book, in order).
    fn install(
        &mut self,
        got: Vec<(L2Book, u64, u64)>,
        why: Why,
        on: &mut impl FnMut(MdEvent<'_>),
    ) {
        let session_id = got[0].1;
        if got.iter().any(|g| g.1 != session_id) {
            // The exchange restarted between two snapshots: ask again.
            return self.begin_snapshots(why, on);
        }
        self.served();
        let min_as_of = got.iter().map(|g| g.2).min().unwrap_or(0);
        for (b, (book, _, as_of)) in self.books.iter_mut().zip(got) {
            b.book = book;
            b.floor = as_of;
            on(MdEvent::Snapshot {
                instrument: b.id,
                as_of_seq: as_of,
                book: &b.book,
            });
        }
        self.seq = Some(FeedSequencer::new(session_id, min_as_of + 1));
        if why == Why::Gap {
            on(MdEvent::RecoveredBySnapshot {
                as_of_seq: min_as_of,
            });
        }
    }

    fn drain_held(&mut self, on: &mut impl FnMut(MdEvent<'_>)) {
        while self.recovering.is_none() {
            let Some(p) = self.held.pop_front() else {
                break;
            };
            if self.packet(&p, on) {
                self.held.push_front(p); // it goes first once this recovery is done
            }
        }
    }

    fn apply(
        &mut self,
        msgs: impl Iterator<Item = Result<(u64, MdMessage), peregrine_wire::DecodeError>>,
        send_time: u64,
        on: &mut impl FnMut(MdEvent<'_>),
    ) {
        let mut changed = 0u64;
        for item in msgs {
            let Ok((seq, msg)) = item else { break };
            match msg {
                MdMessage::Trade(t) => {
                    if self.index(t.instrument, seq).is_some() {
                        on(MdEvent::Trade {
                            seq,
                            trade: t,
                            send_time,
                        });
                    }
                }
                MdMessage::L2Update(u) => {
                    if let Some(i) = self.index(u.instrument, seq) {
                        let b = &mut self.books[i];
                        b.book.update(u.side, u.price.units(), u.qty.lots());
                        b.exchange_time = u.engine_time.0;
                        changed |= 1 << i;
                        on(MdEvent::Level {
                            seq,
                            update: u,
                            send_time,
                        });
                    }
                }
                MdMessage::Commitment(c) => on(MdEvent::Commitment { seq, commitment: c }),
                MdMessage::MarketStatus(m) => {
                    if self.index(m.instrument, seq).is_some() {
                        on(MdEvent::Phase { seq, status: m });
                    }
                }
                MdMessage::AuctionIndicative(m) => {
                    if self.index(m.instrument, seq).is_some() {
                        on(MdEvent::Indicative { seq, indicative: m });
                    }
                }
            }
        }
        for (i, b) in self.books.iter().enumerate() {
            if changed & (1 << i) != 0 {
                on(MdEvent::Book {
                    instrument: b.id,
                    book: &b.book,
                    exchange_time: b.exchange_time,
                    send_time,
                });
            }
        }
    }

    /// The book index of `instrument` if subscribed and `seq` is past its snapshot.
    fn index(&self, instrument: InstrumentId, seq: u64) -> Option<usize> {
        self.books
            .iter()
            .position(|b| b.id == instrument)
            .filter(|&i| seq > self.books[i].floor)
    }
}

fn open(target: SocketAddr, interface: Ipv4Addr) -> Result<UdpSocket, ClientError> {
    super::open_feed(target, interface).doing(|| format!("opening the feed socket {target}"))
}

/// A seed for the backoff's jitter that differs between processes and runs (it
/// only spreads retries; nothing depends on its value).
fn seed() -> u64 {
    let nanos = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    nanos ^ u64::from(std::process::id()).rotate_left(32)
}
