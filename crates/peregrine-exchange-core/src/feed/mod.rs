//! The market-data feed, sans-IO: numbers every feed message of a batch, packs them
//! into MoldUDP64-style packets (`peregrine_wire::md::packet`) of at most `mtu`
//! bytes, keeps the most recent `replay_retain` messages for replay ([`Retained`]),
//! and hands each packet to a [`PacketSink`] (the server's UDP socket).
//!
//! Every message gets the next feed sequence number whether or not its datagram
//! leaves the host: a packet the sink cannot send is the sink's to count, and
//! subscribers see the gap and recover it from the retained messages.

mod retained;

pub use retained::Retained;

use peregrine_wire::md::packet::{
    encode_end_of_session, encode_heartbeat, stamp_send_time, PacketBuilder, PacketFormat,
    PushError,
};
use peregrine_wire::md::{Commitment, L2Update, MdMessage, Trade};
use peregrine_wire::WireMessage;

/// Where finished packets go (the server's UDP socket).
pub trait PacketSink {
    /// Sends one packet (the slice is reused after the call). The feed stamped its
    /// `send_time` with the flush's clock reading; a sink that sends it later may
    /// stamp it again ([`peregrine_wire::md::packet::stamp_send_time`]) just before.
    fn send(&mut self, packet: &mut [u8]);
}

/// Sends nothing (no feed, or a test).
#[derive(Debug, Default, Clone, Copy)]
pub struct NoPackets;

impl PacketSink for NoPackets {
    fn send(&mut self, _: &mut [u8]) {}
}

impl<T: PacketSink> PacketSink for Option<T> {
    fn send(&mut self, packet: &mut [u8]) {
        if let Some(s) = self.as_mut() {
            s.send(packet);
        }
    }
}

/// Keeps every packet, for tests.
#[derive(Debug, Default, Clone)]
pub struct PacketLog(pub Vec<Vec<u8>>);

impl PacketSink for PacketLog {
    fn send(&mut self, packet: &mut [u8]) {
        self.0.push(packet.to_vec());
    }
}

/// What the feed has sent so far (for depth snapshots and the recovery service).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FeedPosition {
    /// Feed session id.
    pub session: u64,
    /// The last sequence number sent.
    pub last_seq: u64,
}

/// The feed's sequencing, packing and retention.
#[derive(Debug)]
pub struct Feed {
    session_id: u64,
    next_seq: u64,
    /// Messages queued and not yet sent, oldest first: numbers `sent..queued`.
    pending: Vec<MdMessage>,
    /// Messages queued so far (a count, not a feed sequence number).
    queued: u64,
    buf: Vec<u8>,
    heartbeat_ns: u64,
    last_send_ns: u64,
    retained: Retained,
    /// Messages wait at most this long for a fuller packet (0: every batch sends).
    max_delay_ns: u64,
    /// When the oldest unsent message was queued (clock nanoseconds).
    oldest_ns: u64,
    /// The packet header layout sent (version 2 unless configured).
    format: PacketFormat,
    /// The end-of-session packet was sent: the session is over.
    ended: bool,
}

impl Feed {
    /// A feed session `session_id` (sequence numbers start at 1 within it) with
    /// packets of at most `mtu` bytes, a heartbeat packet after `heartbeat_ns` without
    /// a send, and the last `replay_retain` messages kept (0 or a power of two).
    /// `now_ns` is the clock now.
    pub fn new(
        session_id: u64,
        mtu: usize,
        heartbeat_ns: u64,
        replay_retain: usize,
        now_ns: u64,
    ) -> Self {
        Feed {
            session_id,
            next_seq: 1,
            pending: Vec::with_capacity(16_384),
            queued: 0,
            buf: vec![0; mtu],
            heartbeat_ns,
            last_send_ns: now_ns,
            retained: Retained::new(replay_retain),
            max_delay_ns: 0,
            oldest_ns: 0,
            format: PacketFormat::V2,
            ended: false,
        }
    }

    /// Sends packets with the `format` header (`[market_data] packet_version`).
    pub fn with_format(mut self, format: PacketFormat) -> Self {
        self.format = format;
        self
    }

    /// Coalesces: a message waits up to `max_delay_ns` for its packet to fill
    /// ([`Feed::due`]); 0 (the default) sends every batch's messages at its end.
    pub fn with_max_delay(mut self, max_delay_ns: u64) -> Self {
        self.max_delay_ns = max_delay_ns;
        self
    }

    /// Whether the first `count` unsent messages should leave now (at `now_ns`): a
    /// full packet's worth, or the oldest has waited the maximum delay.
    pub fn due(&self, count: usize, now_ns: u64) -> bool {
        if count == 0 {
            return false;
        }
        if self.max_delay_ns == 0 || now_ns.saturating_sub(self.oldest_ns) >= self.max_delay_ns {
            return true;
        }
        let room = self.buf.len().saturating_sub(self.format.header_size());
        let mut bytes = 0;
        for m in &self.pending[..count.min(self.pending.len())] {
            bytes += size_of(m);
            if bytes >= room {
                return true;
            }
        }
        false
    }

    /// Queues a message for the current batch, at `now_ns` (the command's time).
    #[inline]
    pub fn push(&mut self, msg: MdMessage, now_ns: u64) {
        if self.pending.is_empty() {
            self.oldest_ns = now_ns;
        }
        self.pending.push(msg);
        self.queued += 1;
    }

    /// Messages queued and not yet flushed.
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// Messages queued so far (what [`Feed::flush_until`] counts in).
    pub fn queued(&self) -> u64 {
        self.queued
    }

    /// Sends every queued message in as few packets as fit the MTU.
    pub fn flush(&mut self, now_ns: u64, out: &mut impl PacketSink) {
        self.flush_until(self.queued, now_ns, out);
    }

    /// Sends the queued messages up to the `queued`-th (a value [`Feed::queued`]
    /// returned earlier: the end of a batch whose commands are durable); later ones
    /// wait.
    pub fn flush_until(&mut self, queued: u64, now_ns: u64, out: &mut impl PacketSink) {
        let sent = self.queued - self.pending.len() as u64;
        let upto = usize::try_from(queued.saturating_sub(sent))
            .unwrap_or(usize::MAX)
            .min(self.pending.len());
        let mut i = 0;
        while i < upto {
            let Ok(mut packet) = PacketBuilder::with_format(
                &mut self.buf,
                self.format,
                self.session_id,
                self.next_seq,
            ) else {
                break; // the buffer holds no header: cannot happen (validated mtu >= 64)
            };
            while i < upto {
                match packet.push(self.pending[i]) {
                    Ok(seq) => {
                        self.retained.store(seq, self.pending[i]);
                        i += 1;
                    }
                    Err(PushError::Full(_)) => break,
                }
            }
            if packet.is_empty() {
                // A single message larger than the MTU cannot happen (validated mtu >= 64).
                break;
            }
            self.next_seq = packet.next_seq();
            let len = packet.len();
            self.last_send_ns = now_ns;
            stamp_send_time(&mut self.buf[..len], now_ns);
            out.send(&mut self.buf[..len]);
        }
        self.pending.drain(..i);
        self.oldest_ns = now_ns;
    }

    /// Sends a heartbeat packet if nothing was sent for one heartbeat interval (and
    /// the session has not ended).
    pub fn heartbeat_if_due(&mut self, now_ns: u64, out: &mut impl PacketSink) {
        if self.ended {
            return;
        }
        if now_ns.saturating_sub(self.last_send_ns) >= self.heartbeat_ns {
            let (session, next) = (self.session_id, self.next_seq);
            if let Ok(len) = encode_heartbeat(&mut self.buf, self.format, session, next) {
                self.last_send_ns = now_ns;
                stamp_send_time(&mut self.buf[..len], now_ns);
                out.send(&mut self.buf[..len]);
            }
        }
    }

    /// Ends the feed session: sends the end-of-session packet (`first_seq` one past
    /// the last message sent), once; nothing is sent after it. Messages still queued
    /// are not sent (flush what is durable first): a subscriber that needs them asks
    /// the recovery service of the next session for a snapshot.
    pub fn end_session(&mut self, now_ns: u64, out: &mut impl PacketSink) {
        if self.ended {
            return;
        }
        let (session, next) = (self.session_id, self.next_seq);
        if let Ok(len) = encode_end_of_session(&mut self.buf, self.format, session, next) {
            self.ended = true;
            self.last_send_ns = now_ns;
            stamp_send_time(&mut self.buf[..len], now_ns);
            out.send(&mut self.buf[..len]);
        }
    }

    /// True once [`Feed::end_session`] sent the end-of-session packet.
    pub fn ended(&self) -> bool {
        self.ended
    }

    /// The sequence number the next message will get.
    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }

    /// The feed session id.
    pub fn session_id(&self) -> u64 {
        self.session_id
    }

    /// The session and the last sequence number sent.
    pub fn position(&self) -> FeedPosition {
        FeedPosition {
            session: self.session_id,
            last_seq: self.next_seq - 1,
        }
    }

    /// The session and the sequence number the last queued message will have once
    /// sent: the position that matches the engine's book (depth snapshots).
    pub fn position_with_pending(&self) -> FeedPosition {
        FeedPosition {
            session: self.session_id,
            last_seq: self.next_seq - 1 + self.pending.len() as u64,
        }
    }

    /// The retained messages (for replay).
    pub fn retained(&self) -> &Retained {
        &self.retained
    }
}

/// The encoded size of a feed message.
fn size_of(m: &MdMessage) -> usize {
    match m {
        MdMessage::Trade(_) => Trade::SIZE,
        MdMessage::L2Update(_) => L2Update::SIZE,
        MdMessage::Commitment(_) => Commitment::SIZE,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use peregrine_types::{InstrumentId, Price, Qty, Side, Timestamp};
    use peregrine_wire::md::packet::PacketReader;
    use peregrine_wire::md::L2Update;

    fn update(n: i64) -> MdMessage {
        MdMessage::L2Update(L2Update {
            price: Price::from_raw(n),
            qty: Qty::from_raw(n),
            engine_time: Timestamp(n as u64),
            instrument: InstrumentId(1),
            order_count: 1,
            side: Side::Buy,
        })
    }

    #[test]
    fn flush_numbers_packs_and_retains() {
        let mut feed = Feed::new(7, 128, 1_000, 64, 0);
        for n in 1..=10 {
            feed.push(update(n), 0);
        }
        let mut out = PacketLog::default();
        feed.flush(5, &mut out);
        assert!(out.0.len() > 1, "10 updates do not fit 128 bytes");
        let mut seqs = Vec::new();
        for p in &out.0 {
            let r = PacketReader::new(p).unwrap();
            assert_eq!(r.header().session_id, 7);
            for m in r {
                seqs.push(m.unwrap().0);
            }
        }
        assert_eq!(seqs, (1..=10).collect::<Vec<u64>>());
        assert_eq!(feed.next_seq(), 11);
        assert_eq!(
            feed.position(),
            FeedPosition {
                session: 7,
                last_seq: 10
            }
        );
        assert_eq!(feed.retained().get(4), Some(update(4)));
        assert_eq!(feed.pending(), 0);
    }

    #[test]
    fn flush_until_holds_what_is_not_released() {
        let mut feed = Feed::new(7, 1400, 1_000, 64, 0);
        for n in 1..=3 {
            feed.push(update(n), 0);
        }
        let released = feed.queued();
        feed.push(update(4), 0);
        let mut out = PacketLog::default();
        feed.flush_until(released, 1, &mut out);
        assert_eq!((out.0.len(), feed.pending(), feed.next_seq()), (1, 1, 4));
        feed.flush_until(released, 2, &mut out);
        assert_eq!(out.0.len(), 1, "nothing more released");
        feed.flush(3, &mut out);
        assert_eq!((out.0.len(), feed.pending(), feed.next_seq()), (2, 0, 5));
        assert_eq!(feed.retained().get(4), Some(update(4)));
    }

    #[test]
    fn coalescing_waits_for_a_full_packet_or_the_delay() {
        let feed = |n| {
            let mut f = Feed::new(1, 200, 1_000_000, 0, 0).with_max_delay(50_000);
            for i in 0..n {
                f.push(update(i), 1_000);
            }
            f
        };
        let f = feed(2);
        assert!(!f.due(2, 2_000), "82 bytes of 168 and 1 µs old: wait");
        assert!(f.due(2, 51_000), "50 µs old: send");
        assert!(!f.due(0, 99_000), "nothing releasable");
        let f = feed(5);
        assert!(f.due(5, 2_000), "205 bytes fill a 200-byte packet");
        assert!(!f.due(2, 2_000), "only 2 releasable");
        let mut f = Feed::new(1, 200, 1_000_000, 0, 0);
        f.push(update(1), 1_000);
        assert!(f.due(1, 1_000), "no delay configured: every batch sends");
    }

    #[test]
    fn heartbeat_only_after_a_quiet_interval() {
        let mut feed = Feed::new(1, 1400, 1_000, 0, 0);
        let mut out = PacketLog::default();
        feed.heartbeat_if_due(999, &mut out);
        assert!(out.0.is_empty());
        feed.heartbeat_if_due(1_000, &mut out);
        assert_eq!(out.0.len(), 1);
        feed.push(update(1), 0);
        feed.flush(1_500, &mut out);
        feed.heartbeat_if_due(2_000, &mut out);
        assert_eq!(out.0.len(), 2, "a data packet at 1500 resets the interval");
    }

    #[test]
    fn end_of_session_is_sent_once_with_the_next_sequence_number_and_ends_heartbeats() {
        use peregrine_wire::md::packet::PacketKind;
        let mut feed = Feed::new(9, 1400, 1_000, 0, 0);
        let mut out = PacketLog::default();
        feed.push(update(1), 0);
        feed.flush(10, &mut out);
        feed.end_session(20, &mut out);
        feed.end_session(30, &mut out);
        assert_eq!(out.0.len(), 2, "one data packet, one end of session");
        let end = PacketReader::new(&out.0[1]).unwrap();
        let h = end.header();
        assert_eq!(end.kind(), PacketKind::EndOfSession);
        assert_eq!((h.session_id, h.first_seq, h.send_time), (9, 2, 20));
        assert!(feed.ended());
        feed.heartbeat_if_due(10_000, &mut out);
        assert_eq!(out.0.len(), 2, "no heartbeat after the end");
    }

    #[test]
    fn a_version_1_feed_sends_version_1_packets() {
        use peregrine_wire::md::packet::{PacketFormat, PACKET_HEADER_V1_SIZE};
        let mut feed = Feed::new(3, 1400, 1_000, 0, 0).with_format(PacketFormat::V1);
        let mut out = PacketLog::default();
        feed.push(update(1), 0);
        feed.flush(10, &mut out);
        feed.heartbeat_if_due(5_000, &mut out);
        feed.end_session(6_000, &mut out);
        let formats: Vec<_> = out
            .0
            .iter()
            .map(|p| PacketReader::new(p).unwrap().header().format)
            .collect();
        assert_eq!(formats, [PacketFormat::V1; 3]);
        assert_eq!(out.0[1].len(), PACKET_HEADER_V1_SIZE);
    }
}
