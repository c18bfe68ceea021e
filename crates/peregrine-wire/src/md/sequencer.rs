//! Feed gap detection: what a subscriber should do with each packet, given the
//! sequence numbers it has already applied (`docs/protocol.md`, section 5.3).

use crate::md::packet::{PacketHeader, PacketKind};

/// The verdict on one packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeqCheck {
    /// Apply the packet's messages, skipping the first `skip` (already applied from an
    /// overlapping packet). The sequencer has advanced past the packet.
    Apply {
        /// Messages at the front of the packet to skip.
        skip: u16,
    },
    /// A heartbeat that agrees with the sequencer: nothing lost, nothing to apply.
    InSync,
    /// Everything in the packet was already applied (a late or redundant copy).
    Duplicate,
    /// Messages `from..to` (end exclusive) were lost. Recover them (replay or
    /// snapshot), call [`FeedSequencer::recovered_to`], then check the packet again.
    Gap {
        /// First missing sequence number.
        from: u64,
        /// One past the last missing sequence number (the packet's `first_seq`).
        to: u64,
    },
    /// The session ended after the last applied message.
    EndOfSession,
    /// The packet belongs to a different feed session.
    OtherSession {
        /// The packet's session id.
        session_id: u64,
    },
}

/// Tracks the next expected sequence number of one feed session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FeedSequencer {
    session_id: u64,
    next_seq: u64,
}

impl FeedSequencer {
    /// A sequencer expecting `next_seq` next (1 for a subscriber that starts with the
    /// session; `as_of_seq + 1` after a snapshot).
    pub const fn new(session_id: u64, next_seq: u64) -> Self {
        FeedSequencer {
            session_id,
            next_seq,
        }
    }

    /// The session being tracked.
    pub const fn session_id(&self) -> u64 {
        self.session_id
    }

    /// The sequence number of the next message to apply.
    pub const fn next_seq(&self) -> u64 {
        self.next_seq
    }

    /// Records that every message before `next_seq` has been applied by other means
    /// (replay, snapshot). Never moves backwards.
    pub fn recovered_to(&mut self, next_seq: u64) {
        self.next_seq = self.next_seq.max(next_seq);
    }

    /// Classifies a packet; advances past it when the verdict is [`SeqCheck::Apply`].
    pub fn check(&mut self, header: &PacketHeader) -> SeqCheck {
        if header.session_id != self.session_id {
            return SeqCheck::OtherSession {
                session_id: header.session_id,
            };
        }
        if header.first_seq > self.next_seq {
            return SeqCheck::Gap {
                from: self.next_seq,
                to: header.first_seq,
            };
        }
        match header.kind() {
            PacketKind::Heartbeat if header.first_seq == self.next_seq => SeqCheck::InSync,
            PacketKind::EndOfSession if header.first_seq == self.next_seq => SeqCheck::EndOfSession,
            PacketKind::Heartbeat | PacketKind::EndOfSession => SeqCheck::Duplicate,
            PacketKind::Messages(_) => self.apply(header),
        }
    }

    fn apply(&mut self, header: &PacketHeader) -> SeqCheck {
        let end = header.next_seq();
        if end <= self.next_seq {
            return SeqCheck::Duplicate;
        }
        // first_seq <= next_seq < end = first_seq + count, so skip < count <= u16::MAX.
        let skip = (self.next_seq - header.first_seq) as u16;
        self.next_seq = end;
        SeqCheck::Apply { skip }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::md::packet::{PacketFormat, END_OF_SESSION_COUNT};

    fn packet(first_seq: u64, count: u16) -> PacketHeader {
        PacketHeader {
            session_id: 7,
            first_seq,
            count,
            send_time: 0,
            format: PacketFormat::V2,
        }
    }

    #[test]
    fn in_order_packets_apply_and_advance() {
        let mut s = FeedSequencer::new(7, 1);
        assert_eq!(s.check(&packet(1, 3)), SeqCheck::Apply { skip: 0 });
        assert_eq!(s.check(&packet(4, 1)), SeqCheck::Apply { skip: 0 });
        assert_eq!(s.next_seq(), 5);
        assert_eq!(s.check(&packet(5, 0)), SeqCheck::InSync);
    }

    #[test]
    fn duplicates_and_overlaps() {
        let mut s = FeedSequencer::new(7, 1);
        s.check(&packet(1, 3));
        assert_eq!(s.check(&packet(1, 3)), SeqCheck::Duplicate);
        assert_eq!(s.check(&packet(2, 4)), SeqCheck::Apply { skip: 2 });
        assert_eq!(s.next_seq(), 6);
        assert_eq!(
            s.check(&packet(3, 0)),
            SeqCheck::Duplicate,
            "stale heartbeat"
        );
    }

    #[test]
    fn gaps_are_reported_until_recovered() {
        let mut s = FeedSequencer::new(7, 1);
        s.check(&packet(1, 2));
        assert_eq!(s.check(&packet(6, 2)), SeqCheck::Gap { from: 3, to: 6 });
        assert_eq!(s.next_seq(), 3, "a gap does not advance");
        assert_eq!(
            s.check(&packet(9, 0)),
            SeqCheck::Gap { from: 3, to: 9 },
            "heartbeat"
        );
        s.recovered_to(6);
        assert_eq!(s.check(&packet(6, 2)), SeqCheck::Apply { skip: 0 });
        s.recovered_to(2);
        assert_eq!(s.next_seq(), 8, "never backwards");
    }

    #[test]
    fn end_of_session_and_other_sessions() {
        let mut s = FeedSequencer::new(7, 1);
        s.check(&packet(1, 2));
        assert_eq!(
            s.check(&packet(3, END_OF_SESSION_COUNT)),
            SeqCheck::EndOfSession
        );
        assert_eq!(
            s.check(&packet(5, END_OF_SESSION_COUNT)),
            SeqCheck::Gap { from: 3, to: 5 }
        );
        let other = PacketHeader {
            session_id: 8,
            first_seq: 1,
            count: 1,
            send_time: 0,
            format: PacketFormat::V2,
        };
        assert_eq!(s.check(&other), SeqCheck::OtherSession { session_id: 8 });
    }
}
