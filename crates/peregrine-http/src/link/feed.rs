//! The market-data feed, protocol v1: a thread that binds the feed's UDP address,
//! keeps the sequence, heals gaps over the recovery service and hands every event,
//! with its feed position, to a [`FeedSink`].
//!
//! * **Start.** The socket is bound first, then every instrument's book is fetched
//!   from the recovery service (a [`FeedEvent::Book`] each); level updates at or
//!   before an instrument's snapshot are skipped, so the books never step back.
//! * **Gap.** The missing range is replayed (in order, with its trades); if the
//!   service no longer holds it, the books are fetched again (trades in the range are
//!   then lost to this gateway, and the history writer notices the jump).
//! * **New feed session** (the exchange restarted): the books are fetched again.
//! * A packet that does not decode completely is treated as lost (gap, replay).
//!
//! The thread also calls [`FeedSink::tick`] at least every 10 ms, for consumers that
//! flush on timers (depth streams at 100 ms and 1 s).

use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use peregrine_types::InstrumentId;
use peregrine_wire::md::packet::{PacketKind, PacketReader};
use peregrine_wire::md::sequencer::{FeedSequencer, SeqCheck};

use super::recovery::{self, Snapshot};
use super::{FeedEvent, FeedPos};

/// Tick period.
const TICK: Duration = Duration::from_millis(10);

/// Who receives the feed. Runs on the feed thread.
pub trait FeedSink: Send + 'static {
    /// One packet's events (or one replay's, or one snapshot's), in feed order.
    fn on_events(&mut self, events: &[(FeedPos, FeedEvent)]);
    /// Called at least every 10 ms, with the time.
    fn tick(&mut self, now: Instant);
    /// A line for the log (gaps, recoveries).
    fn note(&mut self, line: &str) {
        eprintln!("gateway: feed: {line}");
    }
}

/// Feed settings.
#[derive(Debug, Clone)]
pub struct FeedSettings {
    /// Address to bind (unicast) or group to join (multicast).
    pub bind: SocketAddr,
    /// Interface a multicast group is joined on (`0.0.0.0`: the routing table's).
    pub interface: Ipv4Addr,
    /// The recovery service.
    pub recovery: Vec<SocketAddr>,
    /// Instruments to keep books of.
    pub instruments: Vec<InstrumentId>,
}

/// Binds the socket (so nothing sent after this returns is missed) and starts the
/// thread. It runs until `stop`.
pub fn spawn(
    settings: FeedSettings,
    mut sink: impl FeedSink,
    stop: Arc<AtomicBool>,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    let socket = peregrine_client::md::open_feed(settings.bind, settings.interface)?;
    socket.set_read_timeout(Some(TICK))?;
    std::thread::Builder::new()
        .name("feed".into())
        .spawn(move || Feed::new(settings).run(&socket, &mut sink, &stop))
}

struct Feed {
    settings: FeedSettings,
    seq: Option<FeedSequencer>,
    /// Per instrument: level updates at or before this sequence number are already
    /// in the snapshot.
    as_of: Vec<(InstrumentId, u64, u64)>,
    events: Vec<(FeedPos, FeedEvent)>,
    /// The books were fetched (with a recovery service, nothing is applied before).
    synced: bool,
}

impl Feed {
    fn new(settings: FeedSettings) -> Feed {
        Feed {
            settings,
            seq: None,
            as_of: Vec::new(),
            events: Vec::with_capacity(1024),
            synced: false,
        }
    }

    fn run(mut self, socket: &UdpSocket, sink: &mut impl FeedSink, stop: &AtomicBool) {
        let mut buf = vec![0u8; 65_536];
        let mut last_tick = Instant::now();
        let mut last_try: Option<Instant> = None;
        // Relaxed: a stop flag.
        while !stop.load(Ordering::Relaxed) {
            // Until the books are in, ask for them (again every half second).
            if !self.settings.recovery.is_empty()
                && !self.synced
                && last_try.is_none_or(|t| t.elapsed() >= Duration::from_millis(500))
            {
                last_try = Some(Instant::now());
                self.synced = self.resync(None, sink);
            }
            match socket.recv(&mut buf) {
                Ok(n) => self.packet(&buf[..n], sink),
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock
                            | std::io::ErrorKind::TimedOut
                            | std::io::ErrorKind::Interrupted
                    ) => {}
                Err(e) => {
                    sink.note(&format!("receive failed: {e}"));
                    std::thread::sleep(TICK);
                }
            }
            let now = Instant::now();
            if now.duration_since(last_tick) >= TICK {
                last_tick = now;
                sink.tick(now);
            }
        }
    }

    /// Fetches every book; `session`: the feed session expected (None: take the
    /// service's).
    fn resync(&mut self, session: Option<u64>, sink: &mut impl FeedSink) -> bool {
        let addrs = &self.settings.recovery;
        if addrs.is_empty() {
            return false;
        }
        let mut books: Vec<(InstrumentId, Snapshot)> = Vec::new();
        for &id in &self.settings.instruments {
            match recovery::snapshot(addrs, id) {
                Ok(s) => books.push((id, s)),
                Err(e) => {
                    sink.note(&format!("snapshot of instrument {id} failed: {e}"));
                    return false;
                }
            }
        }
        let Some(first) = books.first().map(|(_, s)| s.session) else {
            return false;
        };
        if books.iter().any(|(_, s)| s.session != first) || session.is_some_and(|s| s != first) {
            sink.note("snapshots from different feed sessions; will retry");
            return false;
        }
        let min_as_of = books.iter().map(|(_, s)| s.as_of).min().unwrap_or(0);
        self.as_of = books
            .iter()
            .map(|(id, s)| (*id, s.session, s.as_of))
            .collect();
        self.events.clear();
        for (id, s) in books {
            self.events.push((
                FeedPos {
                    session: s.session,
                    seq: s.as_of,
                },
                FeedEvent::Book {
                    instrument: id,
                    bids: s.bids,
                    asks: s.asks,
                },
            ));
        }
        sink.on_events(&self.events);
        self.events.clear();
        match &mut self.seq {
            Some(seq) if seq.session_id() == first => seq.recovered_to(min_as_of + 1),
            _ => self.seq = Some(FeedSequencer::new(first, min_as_of + 1)),
        }
        true
    }

    fn covered(&self, instrument: InstrumentId, pos: FeedPos) -> bool {
        self.as_of
            .iter()
            .any(|&(id, s, a)| id == instrument && s == pos.session && pos.seq <= a)
    }

    fn packet(&mut self, bytes: &[u8], sink: &mut impl FeedSink) {
        if !self.settings.recovery.is_empty() && !self.synced {
            return; // the books come first; these messages are in them or replayed
        }
        let Ok(reader) = PacketReader::new(bytes) else {
            return;
        };
        // Decode it whole first: a packet with a bad message counts as lost.
        let mut msgs = Vec::new();
        for m in reader.clone() {
            match m {
                Ok(m) => msgs.push(m),
                Err(_) => return,
            }
        }
        let header = reader.header();
        let seq = self
            .seq
            .get_or_insert_with(|| FeedSequencer::new(header.session_id, header.first_seq));
        let skip = match seq.check(&header) {
            SeqCheck::Apply { skip } => usize::from(skip),
            SeqCheck::Gap { from, to } => {
                if !self.heal(header.session_id, from, to, sink) {
                    return;
                }
                let seq = self.seq.as_mut().expect("set above");
                match seq.check(&header) {
                    SeqCheck::Apply { skip } => usize::from(skip),
                    _ => return,
                }
            }
            SeqCheck::OtherSession { session_id } => {
                sink.note(&format!(
                    "new feed session {session_id}: fetching the books again"
                ));
                self.seq = None;
                self.synced = self.resync(Some(session_id), sink);
                return;
            }
            SeqCheck::EndOfSession => {
                sink.note("the exchange ended the feed session");
                return;
            }
            SeqCheck::InSync | SeqCheck::Duplicate => return,
        };
        if !matches!(header.kind(), PacketKind::Messages(_)) {
            return;
        }
        self.events.clear();
        for (seq_no, msg) in msgs.into_iter().skip(skip) {
            let pos = FeedPos {
                session: header.session_id,
                seq: seq_no,
            };
            if let Some(ev) = recovery::to_event(&msg) {
                if let FeedEvent::Level { instrument, .. } = ev {
                    if self.covered(instrument, pos) {
                        continue;
                    }
                }
                self.events.push((pos, ev));
            }
        }
        if !self.events.is_empty() {
            sink.on_events(&self.events);
        }
    }

    /// Recovers `from..to`: replay, else books.
    fn heal(&mut self, session: u64, from: u64, to: u64, sink: &mut impl FeedSink) -> bool {
        if self.settings.recovery.is_empty() {
            sink.note(&format!("messages {from}..{to} lost (no recovery service)"));
            self.seq.as_mut().expect("set").recovered_to(to);
            return true;
        }
        match recovery::replay(&self.settings.recovery, session, from, to) {
            Ok(Some(events)) => {
                let events: Vec<_> = events
                    .into_iter()
                    .filter(|(pos, ev)| match ev {
                        FeedEvent::Level { instrument, .. } => !self.covered(*instrument, *pos),
                        _ => true,
                    })
                    .collect();
                if !events.is_empty() {
                    sink.on_events(&events);
                }
                self.seq.as_mut().expect("set").recovered_to(to);
                true
            }
            Ok(None) | Err(_) => {
                sink.note(&format!(
                    "messages {from}..{to} no longer replayable: fetching the books"
                ));
                self.resync(Some(session), sink)
            }
        }
    }
}
