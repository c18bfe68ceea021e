//! Market-data subscribers: simulated clients of the venue's feed that keep an L2
//! book per instrument as `peregrine_client::md::Subscriber` does, over the
//! simulator's network instead of sockets.
//!
//! The same rules and the same parts: each packet goes through the wire crate's
//! `PacketReader` and `FeedSequencer` (protocol section 5.3); a gap asks the
//! venue's recovery service for a replay of the missing range, and a replay the
//! ring no longer holds (or any failure) falls back to a snapshot of every book; a
//! new feed session (a restart, a new leader) resets the books and fetches
//! snapshots; a subscriber that joins late starts with snapshots; packets that
//! arrive while a recovery is under way are held and applied after it. The books
//! are the client library's own `L2Book`. The answers come from the venue's own
//! recovery code (`SteppedVenue::recovery_answer`). What is the simulator's: the
//! state machine around them (the client's drives sockets and `Instant`s), and that
//! one request is in flight at a time; a failed or refused request is retried at
//! another node after a backoff the run draws.

use std::collections::VecDeque;

use peregrine_client::md::L2Book;
use peregrine_types::{InstrumentId, Side};
use peregrine_wire::md::packet::PacketReader;
use peregrine_wire::md::recovery::{Recovery, ReplayRequest, SnapshotRequest};
use peregrine_wire::md::sequencer::{FeedSequencer, SeqCheck};
use peregrine_wire::md::MdMessage;
use peregrine_wire::{DecodeError, WireMessage};

/// Packets held while a recovery is under way, at most (as the client library).
const MAX_HELD: usize = 16_384;

/// One instrument's book as levels: (side, price units, quantity lots), bids best
/// first, then asks best first.
pub(crate) type Levels = Vec<(Side, i64, i64)>;

/// Why snapshots are fetched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Why {
    Start,
    Gap,
    NewSession,
}

/// A recovery under way.
#[derive(Debug)]
pub(crate) enum Rec {
    /// Waiting for the replay of `from..to`.
    Replay { from: u64, to: u64 },
    /// Waiting for the snapshot of instrument `index`; earlier ones in `got`
    /// (book, session, as_of_seq).
    Snapshot {
        index: usize,
        got: Vec<(L2Book, u64, u64)>,
        why: Why,
    },
    /// The last request failed: the run asks again later.
    Retry { why: Why },
}

/// One subscriber.
#[derive(Debug)]
pub(crate) struct Subscriber {
    pub(crate) id: usize,
    instruments: Vec<InstrumentId>,
    books: Vec<(L2Book, u64)>,
    seq: Option<FeedSequencer>,
    pub(crate) recovering: Option<Rec>,
    held: VecDeque<Vec<u8>>,
    /// Feed sessions it has left for a newer one: a late packet of one is ignored
    /// (the client library would reset its books for it, and again after every
    /// snapshot round while it is held: see docs/testing.md).
    left: Vec<u64>,
    /// Sessions followed since the last snapshots were installed.
    seen: Vec<u64>,
    next_request: u64,
    /// The request to send (taken by the run).
    pub(crate) outbox: Option<Vec<u8>>,
    /// Joined the feed (a late joiner joins during the run).
    pub(crate) joined: bool,
    /// What it did: notes for the trace.
    pub(crate) notes: Vec<String>,
    /// Counters: gaps seen, replays and snapshot rounds that healed one.
    pub(crate) gaps: u64,
    pub(crate) replays: u64,
    pub(crate) snapshots: u64,
}

impl Subscriber {
    pub(crate) fn new(id: usize, instruments: Vec<InstrumentId>) -> Self {
        Subscriber {
            id,
            books: instruments.iter().map(|_| (L2Book::default(), 0)).collect(),
            instruments,
            seq: None,
            recovering: None,
            held: VecDeque::new(),
            left: Vec::new(),
            seen: Vec::new(),
            next_request: 1,
            outbox: None,
            joined: false,
            notes: Vec::new(),
            gaps: 0,
            replays: 0,
            snapshots: 0,
        }
    }

    /// Joins the feed: packets are held from now, the snapshots are asked for.
    pub(crate) fn join(&mut self) {
        self.joined = true;
        self.begin_snapshots(Why::Start);
    }

    /// Where its books are, when they are trusted and every book is at least as new
    /// as the feed position: (session, last sequence number applied).
    pub(crate) fn position(&self) -> Option<(u64, u64)> {
        if self.recovering.is_some() {
            return None;
        }
        let s = self.seq.as_ref()?;
        let at = s.next_seq() - 1;
        self.books
            .iter()
            .all(|(_, floor)| *floor <= at)
            .then_some((s.session_id(), at))
    }

    /// Its book of instrument `index`, as levels.
    pub(crate) fn levels(&self, index: usize) -> Levels {
        let b = &self.books[index].0;
        let mut v: Levels = Vec::new();
        for side in [Side::Buy, Side::Sell] {
            v.extend(b.levels(side).into_iter().map(|(p, q)| (side, p, q)));
        }
        v
    }

    /// A feed packet arrives.
    pub(crate) fn on_packet(&mut self, bytes: &[u8]) {
        if !self.joined {
            return;
        }
        if self.recovering.is_some() || self.packet(bytes) {
            self.hold_back(bytes.to_vec());
        }
    }

    fn hold_back(&mut self, p: Vec<u8>) {
        if self.held.len() >= MAX_HELD {
            self.held.pop_front();
        }
        self.held.push_back(p);
    }

    /// Applies one packet; true when it must be held (a recovery started).
    fn packet(&mut self, bytes: &[u8]) -> bool {
        let Ok(reader) = PacketReader::new(bytes) else {
            self.notes.push("a malformed packet dropped".into());
            return false;
        };
        let header = reader.header();
        if self.left.contains(&header.session_id) {
            return false;
        }
        let s = self
            .seq
            .get_or_insert_with(|| FeedSequencer::new(header.session_id, header.first_seq));
        let skip = match s.check(&header) {
            SeqCheck::Apply { skip } => skip,
            SeqCheck::Gap { from, to } => {
                self.gaps += 1;
                self.notes.push(format!("gap {from}..{to}: replay asked"));
                let count = u16::try_from(to - from).unwrap_or(u16::MAX);
                self.ask(Recovery::ReplayRequest(ReplayRequest {
                    session_id: header.session_id,
                    first_seq: from,
                    count,
                }));
                self.recovering = Some(Rec::Replay { from, to });
                return true;
            }
            SeqCheck::OtherSession { session_id } => {
                for b in &mut self.books {
                    *b = (L2Book::default(), 0);
                }
                self.seen.push(s.session_id());
                *s = FeedSequencer::new(session_id, header.first_seq);
                self.notes
                    .push(format!("new feed session {session_id:#x}: snapshots"));
                self.begin_snapshots(Why::NewSession);
                return true;
            }
            SeqCheck::EndOfSession | SeqCheck::InSync | SeqCheck::Duplicate => return false,
        };
        self.apply(reader.skip(usize::from(skip)));
        false
    }

    fn apply(&mut self, msgs: impl Iterator<Item = Result<(u64, MdMessage), DecodeError>>) {
        for item in msgs {
            let Ok((seq, msg)) = item else { break };
            if let MdMessage::L2Update(u) = msg {
                if let Some(i) = self.index(u.instrument, seq) {
                    self.books[i]
                        .0
                        .update(u.side, u.price.units(), u.qty.lots());
                }
            }
        }
    }

    fn index(&self, instrument: InstrumentId, seq: u64) -> Option<usize> {
        self.instruments
            .iter()
            .position(|&i| i == instrument)
            .filter(|&i| seq > self.books[i].1)
    }

    fn ask(&mut self, req: Recovery) {
        let mut buf = vec![0u8; 256];
        let n = match &req {
            Recovery::ReplayRequest(r) => r.encode(&mut buf),
            Recovery::SnapshotRequest(r) => r.encode(&mut buf),
            _ => Ok(0),
        }
        .unwrap_or(0);
        buf.truncate(n);
        self.outbox = Some(buf);
    }

    fn begin_snapshots(&mut self, why: Why) {
        self.snapshot_of(0, Vec::new(), why);
    }

    fn snapshot_of(&mut self, index: usize, got: Vec<(L2Book, u64, u64)>, why: Why) {
        let request_id = self.next_request;
        self.next_request += 1;
        self.ask(Recovery::SnapshotRequest(SnapshotRequest {
            request_id,
            instrument: self.instruments[index],
        }));
        self.recovering = Some(Rec::Snapshot { index, got, why });
    }

    /// The request was refused or lost (the node is down, does not lead, or the
    /// connection dropped): the run asks again later.
    pub(crate) fn failed(&mut self) {
        let why = match self.recovering.take() {
            Some(Rec::Snapshot { why, .. }) | Some(Rec::Retry { why }) => why,
            Some(Rec::Replay { .. }) => Why::Gap,
            None => return,
        };
        self.outbox = None;
        self.recovering = Some(Rec::Retry { why });
    }

    /// The backoff after a failure is over: the snapshots are asked for again.
    pub(crate) fn retry(&mut self) {
        if let Some(Rec::Retry { why }) = self.recovering {
            self.begin_snapshots(why);
        }
    }

    /// The recovery service's answer arrives. Err: what the subscriber could not
    /// make sense of (an invariant: the service's answers are well formed).
    pub(crate) fn on_answer(&mut self, bytes: &[u8]) -> Result<(), String> {
        let msgs = decode_all(bytes)?;
        match self.recovering.take() {
            Some(Rec::Replay { from, to }) => {
                let mut it = msgs.into_iter();
                let whole = match it.next() {
                    Some(Recovery::ReplayResponse(r)) => {
                        r.first_seq == from && u64::from(r.count) == to - from
                    }
                    other => return Err(format!("a replay answered with {other:?}")),
                };
                if !whole {
                    self.notes
                        .push(format!("replay {from}..{to} not retained: snapshots"));
                    self.begin_snapshots(Why::Gap);
                    return Ok(());
                }
                let replayed = it.enumerate().map(|(i, m)| {
                    let seq = from + i as u64;
                    match m {
                        Recovery::Trade(t) => Ok((seq, MdMessage::Trade(t))),
                        Recovery::L2Update(u) => Ok((seq, MdMessage::L2Update(u))),
                        Recovery::Commitment(c) => Ok((seq, MdMessage::Commitment(c))),
                        _ => Err(DecodeError::UnknownType(0)),
                    }
                });
                let replayed: Vec<_> = replayed.collect();
                self.apply(replayed.into_iter());
                if let Some(s) = self.seq.as_mut() {
                    s.recovered_to(to);
                }
                self.replays += 1;
                self.notes.push(format!("replay {from}..{to} applied"));
            }
            Some(Rec::Snapshot {
                index,
                mut got,
                why,
            }) => {
                let mut book = L2Book::default();
                let mut session = 0;
                let mut end = None;
                for m in msgs {
                    match m {
                        Recovery::SnapshotHeader(h) if h.reason.0 != 0 => {
                            self.recovering = Some(Rec::Snapshot { index, got, why });
                            self.failed();
                            return Ok(());
                        }
                        Recovery::SnapshotHeader(h) => session = h.session_id,
                        Recovery::SnapshotLevel(l) => {
                            book.update(l.side, l.price.units(), l.qty.lots())
                        }
                        Recovery::SnapshotEnd(e) => end = Some(e.as_of_seq),
                        other => return Err(format!("a snapshot answered with {other:?}")),
                    }
                }
                let Some(as_of) = end else {
                    return Err("a snapshot without its SnapshotEnd".into());
                };
                got.push((book, session, as_of));
                if index + 1 < self.instruments.len() {
                    self.snapshot_of(index + 1, got, why);
                    return Ok(());
                }
                self.install(got, why);
            }
            other => {
                self.recovering = other;
                return Err("an answer nobody asked for".into());
            }
        }
        self.drain_held();
        Ok(())
    }

    fn install(&mut self, got: Vec<(L2Book, u64, u64)>, why: Why) {
        let session = got[0].1;
        if got.iter().any(|g| g.1 != session) {
            // The venue restarted between two snapshots: ask again.
            return self.begin_snapshots(why);
        }
        let min_as_of = got.iter().map(|g| g.2).min().unwrap_or(0);
        self.seen.extend(self.seq.map(|s| s.session_id()));
        for old in std::mem::take(&mut self.seen) {
            if old != session && !self.left.contains(&old) {
                self.left.push(old);
            }
        }
        for (b, (book, _, as_of)) in self.books.iter_mut().zip(got) {
            *b = (book, as_of);
        }
        self.seq = Some(FeedSequencer::new(session, min_as_of + 1));
        self.snapshots += 1;
        self.notes.push(format!(
            "snapshots ({why:?}) installed: session {session:#x} as of {min_as_of}"
        ));
    }

    fn drain_held(&mut self) {
        while self.recovering.is_none() {
            let Some(p) = self.held.pop_front() else {
                break;
            };
            if self.packet(&p) {
                self.held.push_front(p);
            }
        }
    }
}

fn decode_all(bytes: &[u8]) -> Result<Vec<Recovery>, String> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let (m, n) = Recovery::decode(&bytes[at..])
            .map_err(|e| format!("a recovery answer that does not decode: {e:?}"))?;
        out.push(m);
        at += n;
    }
    Ok(out)
}
