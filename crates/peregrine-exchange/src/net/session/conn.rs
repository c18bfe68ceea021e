//! One order-entry connection in the session table: its key, peer and protocol
//! state, and the glue between the protocol's buffers and the [`SessionIo`] that
//! owns the connection (the socket shell's `TcpStream`s, or a simulator's
//! connections). Nothing here knows the protocol's rules, nor holds a socket.

use std::io::ErrorKind;
use std::net::SocketAddr;
use std::time::Instant;

use peregrine_exchange_core::SessionKey;

use super::protocol::{EngineStatus, Session};

/// The connections of the session table, by slot: what the table reads, writes and
/// closes through. Socket semantics: a read of `Ok(0)` means the peer closed,
/// `WouldBlock` that nothing is waiting (or no room to write).
pub(crate) trait SessionIo {
    /// One read from slot `slot`'s connection into `buf`.
    fn read(&mut self, slot: usize, buf: &mut [u8]) -> std::io::Result<usize>;
    /// One write of (a prefix of) `buf` to slot `slot`'s connection.
    fn write(&mut self, slot: usize, buf: &[u8]) -> std::io::Result<usize>;
    /// Shuts slot `slot`'s connection down (both directions) and forgets it.
    fn close(&mut self, slot: usize);
    /// Whether the table wants to hear when slot `slot`'s connection can take more
    /// output (it has output the connection refused). A socket shell watches for
    /// writability, so a reader that catches up is written to at once, not at the
    /// next timer; a connection that never refuses (a simulator's) needs nothing.
    fn want_write(&mut self, slot: usize, want: bool) {
        let _ = (slot, want);
    }
}

/// Outcome of a read.
#[derive(Debug)]
pub(crate) enum ReadOutcome {
    /// Bytes were read (maybe 0 on `WouldBlock`).
    Ok(usize),
    /// The peer closed or the connection failed.
    Closed(String),
}

/// One connection.
#[derive(Debug)]
pub(crate) struct Conn {
    /// Its key.
    pub key: SessionKey,
    /// Peer address, for logs and admission.
    pub peer: SocketAddr,
    /// Its protocol state.
    pub proto: Session,
}

impl Conn {
    /// A new connection of slot `key.slot()`; the session queues its `Challenge`
    /// with `nonce`.
    pub(crate) fn new(
        peer: SocketAddr,
        key: SessionKey,
        limit: usize,
        nonce: [u8; 32],
        engine: EngineStatus,
        now: Instant,
    ) -> Self {
        Conn {
            key,
            peer,
            proto: Session::new(limit, nonce, engine, now),
        }
    }

    /// Reads what the connection has into the receive buffer (one `read` call).
    pub(crate) fn read(&mut self, io: &mut impl SessionIo, now: Instant) -> ReadOutcome {
        let spare = self.proto.rx_spare();
        if spare.is_empty() {
            return ReadOutcome::Ok(0);
        }
        match io.read(self.key.slot(), spare) {
            Ok(0) => ReadOutcome::Closed("peer closed the connection".into()),
            Ok(n) => {
                self.proto.received(n, now);
                ReadOutcome::Ok(n)
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => ReadOutcome::Ok(0),
            Err(e) if e.kind() == ErrorKind::Interrupted => ReadOutcome::Ok(0),
            Err(e) => ReadOutcome::Closed(format!("read error: {e}")),
        }
    }

    /// Writes as much queued output as the connection takes, at `now`.
    pub(crate) fn flush(&mut self, io: &mut impl SessionIo, now: Instant) {
        while self.proto.unsent() > 0 {
            match io.write(self.key.slot(), self.proto.pending_output()) {
                Ok(0) => {
                    self.proto.close = Some("write returned 0".into());
                    return;
                }
                Ok(n) => self.proto.wrote(n, now),
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => {
                    self.proto.close = Some(format!("write error: {e}"));
                    return;
                }
            }
        }
    }
}
