//! The market-data side of a run: the serving venue's feed packets fanned out to the
//! subscribers over a lossy network (loss, duplication, reordering), their recovery
//! requests carried to a node and answered by the venue's recovery code, and the
//! invariant: a subscriber whose books are trusted at feed position (session, seq)
//! has exactly the venue's books at that position (every level, price and
//! quantity, both instruments).

use std::collections::{BTreeMap, VecDeque};

use peregrine_types::{Rng, Side};

use crate::md::{Levels, Subscriber};
use crate::run::Sim;
use crate::venue;
use crate::world::Ev;

const US: u64 = 1_000;
const MS: u64 = 1_000_000;

/// The invariant the subscribers check.
pub(crate) const FEED: &str = "feed recovery rebuilds the venue's book";

/// Feed positions whose books are kept for the comparison, at most.
const POINTS: usize = 4096;

/// The subscribers and what the run keeps for them.
pub(crate) struct Md {
    pub(crate) subs: Vec<Subscriber>,
    rng: Rng,
    /// The venue's books at each feed position recorded, per instrument.
    points: BTreeMap<(u64, u64), Vec<Levels>>,
    order: VecDeque<(u64, u64)>,
    /// Per subscriber: the latest delivery scheduled (packets keep their order
    /// unless reordered), the request generation in flight, the node it asks.
    last: Vec<u64>,
    pub(crate) asked: Vec<u64>,
    node: Vec<usize>,
    /// Comparisons made (books equal at the same position).
    pub(crate) compared: u64,
    /// Feed packets carrying a level update (the sabotage drops one in so many).
    #[cfg_attr(not(feature = "sabotage"), allow(dead_code))]
    updates: u64,
}

impl Md {
    pub(crate) fn new(seed: u64, subscribers: usize) -> Self {
        let ids: Vec<_> = venue::instruments().iter().map(|s| s.id).collect();
        Md {
            subs: (0..subscribers)
                .map(|i| Subscriber::new(i, ids.clone()))
                .collect(),
            // Apart from the run's own generator: subscribers move no other choice.
            rng: Rng::new(seed ^ 0x3D5B_5C81_BE00_0003),
            points: BTreeMap::new(),
            order: VecDeque::new(),
            last: vec![0; subscribers],
            asked: vec![0; subscribers],
            node: vec![0; subscribers],
            compared: 0,
            updates: 0,
        }
    }
}

/// The venue's books as levels, per instrument of the run.
fn venue_levels(v: &peregrine_exchange::stepped::SteppedVenue) -> Vec<Levels> {
    venue::instruments()
        .iter()
        .map(|spec| {
            let mut l: Levels = Vec::new();
            if let Some(b) = v.engine().book(spec.id) {
                for side in [Side::Buy, Side::Sell] {
                    b.visit_depth(side, usize::MAX, &mut |p, q, _| {
                        l.push((side, p.units(), q.lots()))
                    });
                }
            }
            l
        })
        .collect()
}

impl Sim {
    /// Schedules the subscribers' joins: the first at the start, the others at a
    /// time drawn within the faults' window (late joiners).
    pub(crate) fn md_start(&mut self) {
        for i in 0..self.md.subs.len() {
            let at = if i == 0 {
                MS
            } else {
                self.md.rng.range(MS, self.cfg.duration_ms.max(2) * MS)
            };
            self.md.node[i] = self.md.rng.below(self.nodes.len() as u64) as usize;
            self.queue.push(at, Ev::MdJoin(i));
        }
    }

    /// After a step of node `n`: its feed packets go out, its books are recorded at
    /// the feed position.
    pub(crate) fn feed_out(&mut self, n: usize) {
        if self.md.subs.is_empty() {
            return;
        }
        let Some(v) = self.nodes[n].venue() else {
            return;
        };
        let packets = v.take_packets();
        let v = self.nodes[n].venue_ref().expect("serving");
        if let Some((session, seq, true)) = v.feed_position() {
            if let std::collections::btree_map::Entry::Vacant(e) =
                self.md.points.entry((session, seq))
            {
                e.insert(venue_levels(v));
                self.md.order.push_back((session, seq));
                if self.md.order.len() > POINTS {
                    if let Some(k) = self.md.order.pop_front() {
                        self.md.points.remove(&k);
                    }
                }
            }
        }
        for p in packets {
            #[cfg(feature = "sabotage")]
            let p = self.sabotage_feed(p);
            self.fan_out(&p);
        }
    }

    /// One packet to every subscriber: lost, duplicated or delayed out of order
    /// (while faults run), otherwise in order after 20-100 µs.
    fn fan_out(&mut self, packet: &[u8]) {
        let f = self.cfg.faults;
        for s in 0..self.md.subs.len() {
            let faulty = !self.settling;
            if faulty && self.md.rng.chance(f.loss, 1000) {
                continue;
            }
            let copies = if faulty && self.md.rng.chance(f.dup, 1000) {
                2
            } else {
                1
            };
            for _ in 0..copies {
                let mut at = self.now + self.md.rng.range(20 * US, 100 * US);
                if faulty && self.md.rng.chance(f.reorder, 1000) {
                    at += self.md.rng.range(200 * US, 3 * MS);
                } else {
                    at = at.max(self.md.last[s]);
                    self.md.last[s] = at;
                }
                self.queue.push(at, Ev::MdPacket(s, packet.to_vec()));
            }
        }
    }

    pub(crate) fn md_join(&mut self, s: usize) {
        self.note(format!("subscriber {s} joins the feed"));
        self.md.subs[s].join();
        self.md_after(s);
    }

    pub(crate) fn md_packet(&mut self, s: usize, packet: &[u8]) {
        self.md.subs[s].on_packet(packet);
        self.md_after(s);
    }

    /// A request reaches node `n`: the serving venue answers it; a node that does
    /// not serve but knows who does redirects (one more hop); otherwise it fails.
    pub(crate) fn md_ask(&mut self, s: usize, gen: u64, n: usize, request: Vec<u8>) {
        if self.md.asked[s] != gen {
            return;
        }
        let delay = self.md.rng.range(20 * US, 200 * US);
        if let Some(v) = self.nodes[n].venue_ref() {
            match v.recovery_answer(&request) {
                Some(answer) => {
                    self.queue
                        .push(self.now + delay, Ev::MdAnswer(s, gen, Some(answer)));
                }
                // A snapshot waits for the feed to catch up with the book.
                None => self
                    .queue
                    .push(self.now + 100 * US, Ev::MdAsk(s, gen, n, request)),
            }
            return;
        }
        match self.serving() {
            Some(leader) if self.nodes[n].up() => {
                self.md.node[s] = leader;
                self.queue
                    .push(self.now + delay, Ev::MdAsk(s, gen, leader, request));
            }
            _ => self
                .queue
                .push(self.now + delay, Ev::MdAnswer(s, gen, None)),
        }
    }

    pub(crate) fn md_answer(&mut self, s: usize, gen: u64, answer: Option<Vec<u8>>) {
        if self.md.asked[s] != gen {
            return;
        }
        match answer {
            Some(bytes) => {
                if let Err(e) = self.md.subs[s].on_answer(&bytes) {
                    self.fail(FEED, format!("subscriber {s}: {e}"));
                    return;
                }
            }
            None => {
                self.md.subs[s].failed();
                self.md.node[s] = (self.md.node[s] + 1) % self.nodes.len();
                let back = self.md.rng.range(5 * MS, 40 * MS);
                self.queue.push(self.now + back, Ev::MdRetry(s, gen));
            }
        }
        self.md_after(s);
    }

    pub(crate) fn md_retry(&mut self, s: usize, gen: u64) {
        if self.md.asked[s] != gen {
            return;
        }
        self.md.subs[s].retry();
        self.md_after(s);
    }

    /// After a subscriber moved: its trace notes, its request sent, its books
    /// compared with the venue's at its position.
    fn md_after(&mut self, s: usize) {
        for note in std::mem::take(&mut self.md.subs[s].notes) {
            self.note(format!("subscriber {s}: {note}"));
        }
        if let Some(request) = self.md.subs[s].outbox.take() {
            self.md.asked[s] += 1;
            let gen = self.md.asked[s];
            let n = self.md.node[s];
            let at = self.now + self.md.rng.range(20 * US, 200 * US);
            self.queue.push(at, Ev::MdAsk(s, gen, n, request));
        }
        let Some(pos) = self.md.subs[s].position() else {
            return;
        };
        let Some(levels) = self.md.points.get(&pos) else {
            return;
        };
        self.md.compared += 1;
        for (i, want) in levels.iter().enumerate() {
            let got = self.md.subs[s].levels(i);
            if &got != want {
                let detail = format!(
                    "subscriber {s} at feed session {:#x} seq {}, instrument {}: \
                     book {got:?}, the venue's {want:?}",
                    pos.0,
                    pos.1,
                    i + 1
                );
                self.fail(FEED, detail);
                return;
            }
        }
    }

    /// What keeps the subscribers from having settled: each must be trusted at the
    /// serving venue's feed position.
    pub(crate) fn md_unsettled(&self, why: &mut Vec<String>) {
        let Some(n) = self.serving() else { return };
        let Some(v) = self.nodes[n].venue_ref() else {
            return;
        };
        let Some((session, seq, consistent)) = v.feed_position() else {
            return;
        };
        if !consistent {
            // A feed message waits (its batch's sync, or the packet's delay): the
            // book is ahead of the feed (seed 1066 once ended here).
            why.push("a feed message is pending".into());
            return;
        }
        for sub in &self.md.subs {
            let pos = sub.position();
            if pos != Some((session, seq)) {
                why.push(format!(
                    "subscriber {} at {pos:?}, the feed at ({session:#x}, {seq}) ({:?})",
                    sub.id, sub.recovering
                ));
            }
        }
    }

    /// Once settled: every subscriber's books equal the venue's live books.
    pub(crate) fn md_final(&mut self) {
        let Some(n) = self.serving() else { return };
        let Some(v) = self.nodes[n].venue_ref() else {
            return;
        };
        let live = venue_levels(v);
        for s in 0..self.md.subs.len() {
            for (i, want) in live.iter().enumerate() {
                let got = self.md.subs[s].levels(i);
                if &got != want {
                    self.fail(
                        FEED,
                        format!(
                            "settled: subscriber {s}, instrument {}: book {got:?}, \
                             the venue's {want:?}",
                            i + 1
                        ),
                    );
                    return;
                }
            }
        }
        let (gaps, replays, snaps) = self.md.subs.iter().fold((0, 0, 0), |a, s| {
            (a.0 + s.gaps, a.1 + s.replays, a.2 + s.snapshots)
        });
        let compared = self.md.compared;
        self.note(format!(
            "subscribers settled: {gaps} gap(s), {replays} replay(s), {snaps} snapshot \
             round(s), {compared} comparison(s) with the venue's books"
        ));
    }

    /// The feed's negative control (a build with the `sabotage` feature): one level
    /// update in so many never reaches the subscribers, and no sequence number
    /// says so (it is rewritten to an instrument nobody follows, as a publisher
    /// that dropped it but numbered the rest the same would look).
    #[cfg(feature = "sabotage")]
    fn sabotage_feed(&mut self, packet: Vec<u8>) -> Vec<u8> {
        use peregrine_types::InstrumentId;
        use peregrine_wire::md::packet::{stamp_send_time, PacketBuilder, PacketReader};
        use peregrine_wire::md::MdMessage;
        if !self.cfg.sabotage_feed {
            return packet;
        }
        let Ok(reader) = PacketReader::new(&packet) else {
            return packet;
        };
        let h = reader.header();
        let msgs: Vec<MdMessage> = reader.filter_map(Result::ok).map(|(_, m)| m).collect();
        let Some(at) = msgs
            .iter()
            .position(|m| matches!(m, MdMessage::L2Update(_)))
        else {
            return packet;
        };
        self.md.updates += 1;
        if !self.md.updates.is_multiple_of(25) {
            return packet;
        }
        let mut buf = vec![0u8; packet.len() + 64];
        let Ok(mut b) = PacketBuilder::with_format(&mut buf, h.format, h.session_id, h.first_seq)
        else {
            return packet;
        };
        for (i, m) in msgs.into_iter().enumerate() {
            let m = match m {
                MdMessage::L2Update(mut u) if i == at => {
                    u.instrument = InstrumentId(0xFFFF);
                    MdMessage::L2Update(u)
                }
                m => m,
            };
            if b.push(m).is_err() {
                return packet;
            }
        }
        let mut out = b.finish().to_vec();
        stamp_send_time(&mut out, h.send_time);
        self.note(format!(
            "sabotage: a level update of packet {} dropped",
            h.first_seq
        ));
        out
    }
}
