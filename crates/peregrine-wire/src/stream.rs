//! A fixed receive buffer for framing a TCP byte stream, without allocation.
//!
//! ```
//! use peregrine_wire::stream::RecvBuffer;
//! use peregrine_wire::v2::{ClientHeartbeat, Inbound};
//! use peregrine_wire::WireMessage;
//!
//! let mut rx = RecvBuffer::<1024>::new();
//! let mut wire = [0u8; 16];
//! ClientHeartbeat {}.encode(&mut wire[..8]).unwrap();
//! ClientHeartbeat {}.encode(&mut wire[8..]).unwrap();
//! // Bytes arrive in arbitrary pieces: here 5, then 11.
//! for piece in [&wire[..5], &wire[5..]] {
//!     let spare = rx.spare();
//!     spare[..piece.len()].copy_from_slice(piece); // stands in for `socket.read(spare)`
//!     rx.commit(piece.len());
//!     while let Some(msg) = rx.next(Inbound::decode).unwrap() {
//!         assert_eq!(msg, Inbound::ClientHeartbeat(ClientHeartbeat {}));
//!     }
//! }
//! assert_eq!(rx.buffered(), 0);
//! ```

use crate::{DecodeError, MAX_MESSAGE_SIZE};

/// A stream decoder function: one of the families' `decode`.
pub type DecodeFn<M> = fn(&[u8]) -> Result<(M, usize), DecodeError>;

/// Bytes received but not yet decoded, in a fixed array of `N` bytes (at least
/// [`MAX_MESSAGE_SIZE`], so a whole frame always fits once earlier frames are drained).
///
/// Loop: read into [`RecvBuffer::spare`], [`RecvBuffer::commit`] the count, then call
/// [`RecvBuffer::next`] until it returns `Ok(None)`.
pub struct RecvBuffer<const N: usize> {
    buf: [u8; N],
    start: usize,
    end: usize,
}

impl<const N: usize> RecvBuffer<N> {
    const FITS_A_FRAME: () = assert!(N >= MAX_MESSAGE_SIZE, "RecvBuffer smaller than a frame");

    /// An empty buffer.
    pub const fn new() -> Self {
        let () = Self::FITS_A_FRAME;
        RecvBuffer {
            buf: [0; N],
            start: 0,
            end: 0,
        }
    }

    /// Bytes buffered and not yet decoded.
    pub const fn buffered(&self) -> usize {
        self.end - self.start
    }

    /// The free space to read into. Moves undecoded bytes to the front first, so after
    /// draining [`RecvBuffer::next`] at least `N - MAX_MESSAGE_SIZE + 1` bytes are free.
    pub fn spare(&mut self) -> &mut [u8] {
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        &mut self.buf[self.end..]
    }

    /// Records that `n` bytes were written into [`RecvBuffer::spare`] (clamped to the
    /// free space).
    pub fn commit(&mut self, n: usize) {
        self.end = (self.end + n).min(N);
    }

    /// True when the buffered bytes hold a whole frame by its length prefix, or bytes
    /// that can never start one: the next [`RecvBuffer::next`] returns a message or a
    /// protocol error, not `Ok(None)`. Part of a frame alone is not one (a session
    /// that sent half a message and stopped is silent).
    pub fn frame_ready(&self) -> bool {
        match crate::header::Header::peek(&self.buf[self.start..self.end]) {
            Ok(h) => self.buffered() >= usize::from(h.length),
            Err(e) => !e.is_incomplete(),
        }
    }

    /// Decodes the next buffered message: `Ok(Some(msg))`, or `Ok(None)` if only part of
    /// a frame is buffered (read more), or the protocol error (close the connection).
    pub fn next<M>(&mut self, decode: DecodeFn<M>) -> Result<Option<M>, DecodeError> {
        match decode(&self.buf[self.start..self.end]) {
            Ok((msg, used)) => {
                self.start += used;
                if self.start == self.end {
                    (self.start, self.end) = (0, 0);
                }
                Ok(Some(msg))
            }
            Err(e) if e.is_incomplete() => Ok(None),
            Err(e) => Err(e),
        }
    }
}

impl<const N: usize> Default for RecvBuffer<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> core::fmt::Debug for RecvBuffer<N> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("RecvBuffer")
            .field("capacity", &N)
            .field("buffered", &self.buffered())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::v2::Message;

    #[test]
    fn frames_split_across_reads_are_reassembled() {
        let mut wire = [0u8; 8192];
        let mut len = 0;
        for i in 0..Message::MESSAGES.len() {
            len += Message::sample(i, &[i as u64 + 1])
                .encode(&mut wire[len..])
                .unwrap();
        }
        let mut rx = RecvBuffer::<512>::new();
        let (mut sent, mut got) = (0, 0);
        while sent < len {
            let spare = rx.spare();
            let n = spare.len().min(7).min(len - sent);
            spare[..n].copy_from_slice(&wire[sent..sent + n]);
            rx.commit(n);
            sent += n;
            while let Some(m) = rx.next(Message::decode).unwrap() {
                assert_eq!(m, Message::sample(got, &[got as u64 + 1]));
                got += 1;
            }
        }
        assert_eq!((got, rx.buffered()), (Message::MESSAGES.len(), 0));
    }

    #[test]
    fn protocol_errors_surface() {
        let mut rx = RecvBuffer::<512>::new();
        rx.spare()[..2].copy_from_slice(&[1, 0]);
        rx.commit(2);
        assert_eq!(
            rx.next(Message::decode),
            Err(DecodeError::BadLength { length: 1 })
        );
        assert_eq!(
            format!("{rx:?}"),
            "RecvBuffer { capacity: 512, buffered: 2 }"
        );
    }

    #[test]
    fn a_frame_is_ready_only_when_whole_or_hopeless() {
        let mut wire = [0u8; 64];
        let n = Message::sample(0, &[1]).encode(&mut wire).unwrap();
        let mut rx = RecvBuffer::<512>::new();
        assert!(!rx.frame_ready(), "empty");
        rx.spare()[..n - 1].copy_from_slice(&wire[..n - 1]);
        rx.commit(n - 1);
        assert!(!rx.frame_ready(), "all but one byte");
        rx.spare()[..1].copy_from_slice(&wire[n - 1..n]);
        rx.commit(1);
        assert!(rx.frame_ready(), "whole");
        assert!(rx.next(Message::decode).unwrap().is_some());
        rx.spare()[..2].copy_from_slice(&[3, 0]);
        rx.commit(2);
        assert!(
            rx.frame_ready(),
            "a length that no frame has: an error is ready"
        );
    }

    #[test]
    fn commit_is_clamped() {
        let mut rx = RecvBuffer::<512>::new();
        rx.commit(10_000);
        assert_eq!(rx.buffered(), 512);
        assert!(rx.spare().is_empty());
    }
}
