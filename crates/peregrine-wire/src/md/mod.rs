//! Market data: the multicast feed messages and their packet framing
//! ([`packet`]), gap detection ([`sequencer`]), and the TCP recovery channel
//! ([`recovery`]).
//!
//! The feed is modelled on MoldUDP64: each UDP datagram is a packet header (session,
//! sequence number of the first message, message count) followed by whole messages.
//! Market-data messages use the same 8-byte header as order entry, whose first field is
//! the message length, so that field is the per-message length prefix. Sequence numbers
//! belong to the feed session and start at 1; a subscriber that sees a gap asks the
//! recovery server for a replay, or for a per-instrument snapshot.

pub mod packet;
pub mod recovery;
pub mod sequencer;

include!(concat!(env!("OUT_DIR"), "/msg_md.rs"));
include!(concat!(env!("OUT_DIR"), "/family_md.rs"));

#[cfg(test)]
mod tests {
    use super::*;
    use crate::WireMessage;

    #[test]
    fn md_messages_round_trip() {
        for i in 0..MdMessage::MESSAGES.len() {
            let m = MdMessage::sample(i, &[1, 2, 3, 4, 5, 6]);
            let mut buf = [0u8; 128];
            let n = m.encode(&mut buf).unwrap();
            assert_eq!(MdMessage::decode(&buf), Ok((m, n)));
        }
        assert_eq!(Trade::SIZE, 45);
        assert_eq!(L2Update::SIZE, 41);
        assert_eq!(Commitment::SIZE, 104);
    }
}
