//! Market-data packets (MoldUDP64-style framing over UDP).
//!
//! A packet is a packet header followed by `count` whole messages, back to back. Each
//! message starts with the common 8-byte header, whose first field is the message
//! length: that is the length prefix. Message `i` (from 0) of a packet has sequence
//! number `first_seq + i`.
//!
//! Two header layouts ([`PacketFormat`]), told apart by the bytes at offset 18:
//!
//! * **Version 2** ([`PACKET_HEADER_SIZE`], 32 bytes, the default): `session_id`,
//!   `first_seq`, `count`, then a `marker` of 0, a `version` byte (2), 3 reserved
//!   bytes and `send_time`, the exchange's clock when the packet was handed to the
//!   socket ([`stamp_send_time`]), so a subscriber can measure feed latency.
//! * **Version 1** ([`PACKET_HEADER_V1_SIZE`], 18 bytes): `session_id`, `first_seq`,
//!   `count`, and the first message right after (its length, at least 8, where
//!   version 2 has its marker 0). An exchange sends it only when configured to
//!   (`[market_data] packet_version = 1`), for subscribers written against it.
//!
//! [`PacketReader`] reads both. A version-1 reader given a version-2 packet sees a
//! message of length 0 (or trailing bytes after a heartbeat) and drops the packet as
//! malformed: it never misreads one.
//!
//! Two counts are special and carry no messages: [`HEARTBEAT_COUNT`] (0), sent when the
//! feed is idle, whose `first_seq` is the sequence number of the next message; and
//! [`END_OF_SESSION_COUNT`] (0xFFFF), sent when the session ends.

use crate::cursor::{Reader, Writer};
use crate::md::MdMessage;
use crate::message::FieldDesc;
use crate::{DecodeError, EncodeError};

/// Bytes in a version-2 packet header (the default).
pub const PACKET_HEADER_SIZE: usize = 32;

/// Bytes in a version-1 packet header.
pub const PACKET_HEADER_V1_SIZE: usize = 18;

/// Offset of the version-2 header's `marker` (0), where a version-1 packet's first
/// message starts.
pub const MARKER_OFFSET: usize = 18;

/// Offset of the `send_time` field in a version-2 packet header.
pub const SEND_TIME_OFFSET: usize = 24;

/// A conservative payload size that fits an Ethernet MTU with IP/UDP headers and
/// common tunnel overheads.
pub const DEFAULT_MTU: usize = 1400;

/// Message count of a heartbeat packet.
pub const HEARTBEAT_COUNT: u16 = 0;

/// Message count of an end-of-session packet.
pub const END_OF_SESSION_COUNT: u16 = 0xFFFF;

/// The packet header layout a feed sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PacketFormat {
    /// 18 bytes, no send time: for subscribers written against version 1.
    V1,
    /// 32 bytes with a version marker and the send time.
    #[default]
    V2,
}

impl PacketFormat {
    /// The format of a packet header version number (1 or 2).
    pub const fn from_version(version: u8) -> Option<Self> {
        match version {
            1 => Some(PacketFormat::V1),
            2 => Some(PacketFormat::V2),
            _ => None,
        }
    }

    /// The header version number.
    pub const fn version(self) -> u8 {
        match self {
            PacketFormat::V1 => 1,
            PacketFormat::V2 => 2,
        }
    }

    /// Bytes of the header.
    pub const fn header_size(self) -> usize {
        match self {
            PacketFormat::V1 => PACKET_HEADER_V1_SIZE,
            PacketFormat::V2 => PACKET_HEADER_SIZE,
        }
    }
}

/// The version-2 packet header fields, for layout tables and tests.
pub const PACKET_HEADER_FIELDS: [FieldDesc; 7] = [
    FieldDesc::new("session_id", 0, 8, "u64", ""),
    FieldDesc::new("first_seq", 8, 8, "u64", ""),
    FieldDesc::new("count", 16, 2, "u16", ""),
    FieldDesc::new("marker", MARKER_OFFSET, 2, "u16", ""),
    FieldDesc::new("version", 20, 1, "u8", ""),
    FieldDesc::new("reserved", 21, 3, "reserved", ""),
    FieldDesc::new("send_time", SEND_TIME_OFFSET, 8, "u64 Timestamp", ""),
];

/// A decoded packet header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PacketHeader {
    /// Feed session id.
    pub session_id: u64,
    /// Sequence number of the first message (of the next message, for a heartbeat).
    pub first_seq: u64,
    /// Raw message count.
    pub count: u16,
    /// When the exchange handed the packet to its socket, ns since the Unix epoch on
    /// the exchange's clock (0: not stamped, and always 0 in a version-1 packet).
    pub send_time: u64,
    /// The header layout.
    pub format: PacketFormat,
}

/// What a packet carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PacketKind {
    /// `n > 0` messages.
    Messages(u16),
    /// No messages; the feed is alive and `first_seq` is the next sequence number.
    Heartbeat,
    /// No messages; the session is over.
    EndOfSession,
}

impl PacketHeader {
    /// What the packet carries.
    pub const fn kind(&self) -> PacketKind {
        match self.count {
            HEARTBEAT_COUNT => PacketKind::Heartbeat,
            END_OF_SESSION_COUNT => PacketKind::EndOfSession,
            n => PacketKind::Messages(n),
        }
    }

    /// Messages in the packet (0 for heartbeat and end of session).
    pub const fn message_count(&self) -> u16 {
        match self.kind() {
            PacketKind::Messages(n) => n,
            PacketKind::Heartbeat | PacketKind::EndOfSession => 0,
        }
    }

    /// The sequence number following this packet's messages.
    pub const fn next_seq(&self) -> u64 {
        self.first_seq.wrapping_add(self.message_count() as u64)
    }

    fn write(&self, out: &mut [u8]) -> Result<(), EncodeError> {
        let available = out.len();
        let mut w = Writer::new(out);
        w.u64(self.session_id);
        w.u64(self.first_seq);
        w.u16(self.count);
        if self.format == PacketFormat::V2 {
            w.u16(0);
            w.u8(PacketFormat::V2.version());
            w.put(&[0; 3]);
            w.u64(self.send_time);
        }
        if w.overflowed() {
            return Err(EncodeError::BufferTooSmall {
                needed: self.format.header_size(),
                available,
            });
        }
        Ok(())
    }

    /// Reads either layout: version 2 when the two bytes at [`MARKER_OFFSET`] are
    /// zero, else version 1 (whose first message, or end, is there).
    fn read(bytes: &[u8]) -> Result<Self, DecodeError> {
        let mut r = Reader::new(bytes);
        let mut header = PacketHeader {
            session_id: r.u64()?,
            first_seq: r.u64()?,
            count: r.u16()?,
            send_time: 0,
            format: PacketFormat::V1,
        };
        if bytes.get(MARKER_OFFSET..MARKER_OFFSET + 2) == Some(&[0, 0][..]) {
            r.u16()?;
            match r.u8()? {
                2 => {}
                version => {
                    return Err(DecodeError::BadVersion {
                        msg_type: 0,
                        version,
                    })
                }
            }
            if let Some(&b) = r.take::<3>()?.iter().find(|&&b| b != 0) {
                return Err(DecodeError::InvalidField {
                    field: "reserved",
                    value: u64::from(b),
                });
            }
            header.send_time = r.u64()?;
            header.format = PacketFormat::V2;
        }
        if header
            .first_seq
            .checked_add(u64::from(header.message_count()))
            .is_none()
        {
            return Err(DecodeError::InvalidField {
                field: "first_seq",
                value: header.first_seq,
            });
        }
        Ok(header)
    }
}

/// Writes a message-less packet (heartbeat or end of session) into `buf`; returns its
/// length.
fn encode_control(buf: &mut [u8], header: PacketHeader) -> Result<usize, EncodeError> {
    let size = header.format.header_size();
    let too_small = EncodeError::BufferTooSmall {
        needed: size,
        available: buf.len(),
    };
    header.write(buf.get_mut(..size).ok_or(too_small)?)?;
    Ok(size)
}

/// Encodes a heartbeat packet; `next_seq` is the sequence number of the next message.
pub fn encode_heartbeat(
    buf: &mut [u8],
    format: PacketFormat,
    session_id: u64,
    next_seq: u64,
) -> Result<usize, EncodeError> {
    encode_control(
        buf,
        PacketHeader {
            session_id,
            first_seq: next_seq,
            count: HEARTBEAT_COUNT,
            send_time: 0,
            format,
        },
    )
}

/// Encodes an end-of-session packet; `next_seq` is one past the last message sent.
pub fn encode_end_of_session(
    buf: &mut [u8],
    format: PacketFormat,
    session_id: u64,
    next_seq: u64,
) -> Result<usize, EncodeError> {
    encode_control(
        buf,
        PacketHeader {
            session_id,
            first_seq: next_seq,
            count: END_OF_SESSION_COUNT,
            send_time: 0,
            format,
        },
    )
}

/// Writes `ns` into the `send_time` field of an encoded version-2 packet (the last
/// thing done before the packet is handed to the socket). False if `packet` is not a
/// version-2 packet (a version-1 header has no send time).
pub fn stamp_send_time(packet: &mut [u8], ns: u64) -> bool {
    let v2 = packet.get(MARKER_OFFSET..MARKER_OFFSET + 3) == Some(&[0, 0, 2][..]);
    match packet.get_mut(SEND_TIME_OFFSET..PACKET_HEADER_SIZE) {
        Some(field) if v2 => {
            field.copy_from_slice(&ns.to_le_bytes());
            true
        }
        _ => false,
    }
}

/// Why a message was not added to a packet. Hands the message back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PushError {
    /// The packet would exceed its buffer (the MTU), or already holds the maximum
    /// count; send it and start another.
    Full(MdMessage),
}

/// Appends messages into a caller-provided buffer, up to the buffer's length (slice it
/// to the MTU) and at most `0xFFFE` messages. The packet is valid after every push.
#[derive(Debug)]
pub struct PacketBuilder<'a> {
    buf: &'a mut [u8],
    len: usize,
    header: PacketHeader,
}

impl<'a> PacketBuilder<'a> {
    /// Starts an empty version-2 packet whose first message will get `first_seq`.
    pub fn new(buf: &'a mut [u8], session_id: u64, first_seq: u64) -> Result<Self, EncodeError> {
        Self::with_format(buf, PacketFormat::V2, session_id, first_seq)
    }

    /// Starts an empty packet of `format` whose first message will get `first_seq`.
    pub fn with_format(
        buf: &'a mut [u8],
        format: PacketFormat,
        session_id: u64,
        first_seq: u64,
    ) -> Result<Self, EncodeError> {
        let header = PacketHeader {
            session_id,
            first_seq,
            count: 0,
            send_time: 0,
            format,
        };
        let len = encode_control(buf, header)?;
        Ok(PacketBuilder { buf, len, header })
    }

    /// Appends a message; returns the sequence number it got.
    pub fn push(&mut self, msg: impl Into<MdMessage>) -> Result<u64, PushError> {
        let msg = msg.into();
        let full = PushError::Full(msg);
        if self.header.count >= END_OF_SESSION_COUNT - 1 {
            return Err(full);
        }
        let dst = self.buf.get_mut(self.len..).ok_or(full)?;
        let n = msg.encode(dst).map_err(|_| full)?;
        let seq = self.header.next_seq();
        self.len += n;
        self.header.count += 1;
        // The header fits: `with_format` wrote it into this buffer.
        self.header
            .write(&mut self.buf[..self.header.format.header_size()])
            .map_err(|_| full)?;
        Ok(seq)
    }

    /// Messages so far.
    pub const fn count(&self) -> u16 {
        self.header.count
    }

    /// True if no message was pushed (sending it would read as a heartbeat).
    pub const fn is_empty(&self) -> bool {
        self.header.count == 0
    }

    /// Bytes so far, header included.
    pub const fn len(&self) -> usize {
        self.len
    }

    /// Bytes still free.
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.len
    }

    /// The sequence number the next pushed message will get.
    pub const fn next_seq(&self) -> u64 {
        self.header.next_seq()
    }

    /// The packet bytes so far.
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }

    /// Ends the builder; returns the packet bytes.
    pub fn finish(self) -> &'a [u8] {
        &self.buf[..self.len]
    }
}

/// Reads a packet of either format: the header, then each message with its sequence
/// number, bounds checked. Iteration yields `Ok((seq, msg))` per message and stops after the first
/// error; a packet whose messages do not exactly fill it yields
/// [`DecodeError::Truncated`] or [`DecodeError::TrailingBytes`].
#[derive(Debug, Clone)]
pub struct PacketReader<'a> {
    header: PacketHeader,
    rest: &'a [u8],
    index: u16,
    done: bool,
}

impl<'a> PacketReader<'a> {
    /// Parses the packet header.
    pub fn new(packet: &'a [u8]) -> Result<Self, DecodeError> {
        let header = PacketHeader::read(packet)?;
        let rest = &packet[header.format.header_size()..];
        if header.message_count() == 0 && !rest.is_empty() {
            return Err(DecodeError::TrailingBytes { extra: rest.len() });
        }
        Ok(PacketReader {
            header,
            rest,
            index: 0,
            done: false,
        })
    }

    /// The packet header.
    pub const fn header(&self) -> PacketHeader {
        self.header
    }

    /// What the packet carries.
    pub const fn kind(&self) -> PacketKind {
        self.header.kind()
    }

    fn next_message(&mut self) -> Option<Result<(u64, MdMessage), DecodeError>> {
        if self.index == self.header.message_count() {
            return (!self.rest.is_empty()).then_some(Err(DecodeError::TrailingBytes {
                extra: self.rest.len(),
            }));
        }
        let (msg, n) = match MdMessage::decode(self.rest) {
            Ok(ok) => ok,
            Err(DecodeError::Incomplete { needed, available }) => {
                return Some(Err(DecodeError::Truncated { needed, available }))
            }
            Err(e) => return Some(Err(e)),
        };
        self.rest = &self.rest[n..];
        let seq = self.header.first_seq + u64::from(self.index);
        self.index += 1;
        Some(Ok((seq, msg)))
    }
}

impl Iterator for PacketReader<'_> {
    type Item = Result<(u64, MdMessage), DecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let item = self.next_message();
        if !matches!(item, Some(Ok(_))) {
            self.done = true;
        }
        item
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::md::{L2Update, Trade};
    use crate::WireMessage;

    #[test]
    fn builder_and_reader_agree() {
        let mut buf = [0u8; DEFAULT_MTU];
        let mut b = PacketBuilder::new(&mut buf, 7, 100).unwrap();
        assert_eq!(b.push(Trade::sample(&[1])), Ok(100));
        assert_eq!(b.push(L2Update::sample(&[2])), Ok(101));
        assert_eq!(b.len(), PACKET_HEADER_SIZE + Trade::SIZE + L2Update::SIZE);
        let packet = b.finish();
        let r = PacketReader::new(packet).unwrap();
        assert_eq!(r.kind(), PacketKind::Messages(2));
        let got: [_; 2] = [r.clone().next(), r.clone().nth(1)];
        assert_eq!(got[0], Some(Ok((100, Trade::sample(&[1]).into()))));
        assert_eq!(got[1], Some(Ok((101, L2Update::sample(&[2]).into()))));
        assert_eq!(r.count(), 2);
    }

    #[test]
    fn builder_stops_at_the_mtu_and_hands_the_message_back() {
        let mut buf = [0u8; 100];
        let mut b = PacketBuilder::new(&mut buf, 1, 1).unwrap();
        let t = Trade::sample(&[5]);
        assert_eq!(b.push(t), Ok(1));
        assert_eq!(b.push(t), Err(PushError::Full(t.into())));
        assert_eq!(b.count(), 1);
        assert_eq!(b.remaining(), 100 - PACKET_HEADER_SIZE - Trade::SIZE);
    }

    #[test]
    fn control_packets() {
        let mut buf = [0u8; 32];
        let n = encode_heartbeat(&mut buf, PacketFormat::V2, 3, 50).unwrap();
        let r = PacketReader::new(&buf[..n]).unwrap();
        assert_eq!(r.kind(), PacketKind::Heartbeat);
        assert_eq!(r.header().next_seq(), 50);
        assert_eq!(r.count(), 0);
        let n = encode_end_of_session(&mut buf, PacketFormat::V2, 3, 50).unwrap();
        assert_eq!(
            PacketReader::new(&buf[..n]).unwrap().kind(),
            PacketKind::EndOfSession
        );
        assert!(encode_heartbeat(&mut buf[..31], PacketFormat::V2, 3, 50).is_err());
    }

    #[test]
    fn a_stamped_send_time_reads_back_and_changes_nothing_else() {
        let mut buf = [0u8; DEFAULT_MTU];
        let mut b = PacketBuilder::new(&mut buf, 7, 100).unwrap();
        b.push(Trade::sample(&[1])).unwrap();
        let n = b.len();
        assert_eq!(PacketReader::new(&buf[..n]).unwrap().header().send_time, 0);
        assert!(stamp_send_time(&mut buf[..n], 0x0102_0304_0506_0708));
        let r = PacketReader::new(&buf[..n]).unwrap();
        let h = r.header();
        assert_eq!((h.session_id, h.first_seq, h.count), (7, 100, 1));
        assert_eq!(h.send_time, 0x0102_0304_0506_0708);
        assert_eq!(r.count(), 1);
        assert!(!stamp_send_time(&mut buf[..PACKET_HEADER_SIZE - 1], 1));
    }

    #[test]
    fn version_1_packets_read_and_version_1_readers_never_misread_version_2() {
        let mut buf = [0u8; DEFAULT_MTU];
        let mut b = PacketBuilder::with_format(&mut buf, PacketFormat::V1, 7, 100).unwrap();
        b.push(Trade::sample(&[1])).unwrap();
        let n = b.len();
        assert_eq!(n, PACKET_HEADER_V1_SIZE + Trade::SIZE);
        assert!(
            !stamp_send_time(&mut buf[..n], 5),
            "no send time in version 1"
        );
        let r = PacketReader::new(&buf[..n]).unwrap();
        let h = r.header();
        assert_eq!(
            (h.format, h.first_seq, h.count, h.send_time),
            (PacketFormat::V1, 100, 1, 0)
        );
        assert_eq!(
            r.clone().next(),
            Some(Ok((100, Trade::sample(&[1]).into())))
        );
        let mut hb = [0u8; 64];
        let n = encode_heartbeat(&mut hb, PacketFormat::V1, 7, 101).unwrap();
        assert_eq!(n, PACKET_HEADER_V1_SIZE);
        assert_eq!(
            PacketReader::new(&hb[..n]).unwrap().kind(),
            PacketKind::Heartbeat
        );
        // What a version-1 reader sees at offset 18 of a version-2 packet: a message
        // length of 0, which no frame has.
        let mut b = PacketBuilder::new(&mut buf, 7, 100).unwrap();
        b.push(Trade::sample(&[1])).unwrap();
        let n = b.len();
        assert_eq!(&buf[MARKER_OFFSET..MARKER_OFFSET + 3], &[0, 0, 2]);
        assert!(MdMessage::decode(&buf[PACKET_HEADER_V1_SIZE..n]).is_err());
        // A version-2 header naming another version is refused.
        buf[20] = 3;
        assert_eq!(
            PacketReader::new(&buf[..n]).err(),
            Some(DecodeError::BadVersion {
                msg_type: 0,
                version: 3
            })
        );
    }
}
