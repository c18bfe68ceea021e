//! Framing of the peer stream: a 40-byte hello, then frames of
//! `[len u32][crc32c u32][body: len bytes]`, each body one message (`codec`).

use bytes::Bytes;
use raft::eraftpb::Message;

use crate::error::FrameError;
use crate::wire::codec;

/// First bytes of every peer connection.
pub const HELLO_MAGIC: [u8; 8] = *b"PGRAFT\0\0";
/// Version of the hello and frame layout.
pub const HELLO_VERSION: u32 = 1;
/// Bytes of the hello: magic, version, reserved, cluster id, from, to.
pub const HELLO_LEN: usize = 40;
/// Bytes before a frame's body.
pub const FRAME_HEADER_LEN: usize = 8;

/// Who opened a connection, to whom, in which cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hello {
    /// Must match the receiver's `cluster_id`.
    pub cluster_id: u64,
    /// The sending node.
    pub from: u64,
    /// The node the sender means to reach.
    pub to: u64,
}

impl Hello {
    /// The 40 bytes on the wire.
    pub fn encode(&self) -> [u8; HELLO_LEN] {
        let mut b = [0u8; HELLO_LEN];
        b[..8].copy_from_slice(&HELLO_MAGIC);
        b[8..12].copy_from_slice(&HELLO_VERSION.to_le_bytes());
        b[16..24].copy_from_slice(&self.cluster_id.to_le_bytes());
        b[24..32].copy_from_slice(&self.from.to_le_bytes());
        b[32..40].copy_from_slice(&self.to.to_le_bytes());
        b
    }

    /// Parses and checks the fixed fields (magic, version, reserved, non-zero ids).
    pub fn decode(b: &[u8; HELLO_LEN]) -> Result<Self, FrameError> {
        if b[..8] != HELLO_MAGIC {
            return Err(FrameError::Hello("magic"));
        }
        if u32::from_le_bytes([b[8], b[9], b[10], b[11]]) != HELLO_VERSION {
            return Err(FrameError::Hello("version"));
        }
        if b[12..16] != [0; 4] {
            return Err(FrameError::Hello("reserved"));
        }
        let u = |r: std::ops::Range<usize>| {
            let mut a = [0u8; 8];
            a.copy_from_slice(&b[r]);
            u64::from_le_bytes(a)
        };
        let h = Hello {
            cluster_id: u(16..24),
            from: u(24..32),
            to: u(32..40),
        };
        if h.from == 0 || h.to == 0 {
            return Err(FrameError::Hello("node id 0"));
        }
        Ok(h)
    }
}

/// Appends one framed message to `out`.
pub fn encode_frame(m: &Message, out: &mut Vec<u8>) {
    let start = out.len();
    out.extend_from_slice(&[0; FRAME_HEADER_LEN]);
    codec::encode(m, out);
    let body_len = out.len() - start - FRAME_HEADER_LEN;
    let crc = crc32c::crc32c(&out[start + FRAME_HEADER_LEN..]);
    let len = u32::try_from(body_len).unwrap_or(u32::MAX);
    out[start..start + 4].copy_from_slice(&len.to_le_bytes());
    out[start + 4..start + 8].copy_from_slice(&crc.to_le_bytes());
}

/// Reassembles frames from a byte stream (a non-blocking socket delivers them in
/// arbitrary pieces). Holds at most one frame plus one read's worth of bytes.
#[derive(Debug)]
pub struct FrameReader {
    buf: Vec<u8>,
    start: usize,
    max_frame: usize,
}

impl FrameReader {
    /// A reader refusing frames longer than `max_frame` bytes.
    pub fn new(max_frame: usize) -> Self {
        Self {
            buf: Vec::with_capacity(64 * 1024),
            start: 0,
            max_frame,
        }
    }

    /// Adds bytes read from the stream.
    pub fn extend(&mut self, bytes: &[u8]) {
        if self.start > 0 && self.start == self.buf.len() {
            self.buf.clear();
            self.start = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// Bytes buffered but not yet returned.
    pub fn pending(&self) -> usize {
        self.buf.len() - self.start
    }

    /// Takes exactly `n` raw bytes (the hello) if buffered.
    pub fn take_raw<const N: usize>(&mut self) -> Option<[u8; N]> {
        if self.pending() < N {
            return None;
        }
        let mut a = [0u8; N];
        a.copy_from_slice(&self.buf[self.start..self.start + N]);
        self.start += N;
        Some(a)
    }

    /// The next whole frame's body, checked against the cap and the CRC, or `None`
    /// until more bytes arrive.
    pub fn next_body(&mut self) -> Result<Option<Bytes>, FrameError> {
        let avail = &self.buf[self.start..];
        if avail.len() < FRAME_HEADER_LEN {
            self.compact();
            return Ok(None);
        }
        let len = u32::from_le_bytes([avail[0], avail[1], avail[2], avail[3]]) as usize;
        if len > self.max_frame {
            return Err(FrameError::TooLarge {
                len,
                max: self.max_frame,
            });
        }
        if avail.len() < FRAME_HEADER_LEN + len {
            self.compact();
            return Ok(None);
        }
        let crc = u32::from_le_bytes([avail[4], avail[5], avail[6], avail[7]]);
        let body = &avail[FRAME_HEADER_LEN..FRAME_HEADER_LEN + len];
        if crc32c::crc32c(body) != crc {
            return Err(FrameError::Checksum);
        }
        let body = Bytes::copy_from_slice(body);
        self.start += FRAME_HEADER_LEN + len;
        Ok(Some(body))
    }

    /// The next whole message, decoded.
    pub fn next_message(&mut self) -> Result<Option<Message>, FrameError> {
        match self.next_body()? {
            Some(body) => Ok(Some(codec::decode(&body)?)),
            None => Ok(None),
        }
    }

    /// Moves the unread bytes to the front once half the buffer is consumed, so the
    /// buffer never grows past one frame plus one read.
    fn compact(&mut self) {
        if self.start > 0 && self.start * 2 >= self.buf.len() {
            self.buf.drain(..self.start);
            self.start = 0;
        }
    }
}

/// Decodes a whole recorded stream (hello, then frames) as a receiver would, stopping
/// at the first error. For the fuzz target and tests: never panics.
pub fn decode_stream(bytes: &[u8], max_frame: usize) -> Result<(Hello, Vec<Message>), FrameError> {
    let mut r = FrameReader::new(max_frame);
    r.extend(bytes);
    let hello = r
        .take_raw::<HELLO_LEN>()
        .ok_or(FrameError::Hello("short"))?;
    let hello = Hello::decode(&hello)?;
    let mut out = Vec::new();
    while let Some(m) = r.next_message()? {
        out.push(m);
    }
    Ok((hello, out))
}
