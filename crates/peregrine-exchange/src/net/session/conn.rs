//! One order-entry connection's socket I/O: a non-blocking `TcpStream` that reads
//! into and writes out of its [`Session`]. Nothing here knows the protocol's rules.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::fd::{AsFd, BorrowedFd};
use std::time::Instant;

use peregrine_exchange_core::SessionKey;

use super::protocol::{EngineStatus, Session};

/// Outcome of a read.
#[derive(Debug)]
pub(crate) enum ReadOutcome {
    /// Bytes were read (maybe 0 on `WouldBlock`).
    Ok(usize),
    /// The peer closed or the socket failed.
    Closed(String),
}

/// One connection.
#[derive(Debug)]
pub(crate) struct Conn {
    stream: TcpStream,
    /// Its key.
    pub key: SessionKey,
    /// Peer address, for logs and admission.
    pub peer: SocketAddr,
    /// Its protocol state.
    pub proto: Session,
}

impl Conn {
    /// Wraps an accepted stream (made non-blocking, `TCP_NODELAY`); the session
    /// queues its `Challenge` with `nonce`.
    pub(crate) fn new(
        stream: TcpStream,
        peer: SocketAddr,
        key: SessionKey,
        limit: usize,
        nonce: [u8; 32],
        engine: EngineStatus,
    ) -> std::io::Result<Self> {
        stream.set_nonblocking(true)?;
        stream.set_nodelay(true)?;
        Ok(Conn {
            stream,
            key,
            peer,
            proto: Session::new(limit, nonce, engine, Instant::now()),
        })
    }

    /// Reads what the socket has into the receive buffer (one `read` call).
    pub(crate) fn read(&mut self) -> ReadOutcome {
        let spare = self.proto.rx_spare();
        if spare.is_empty() {
            return ReadOutcome::Ok(0);
        }
        match self.stream.read(spare) {
            Ok(0) => ReadOutcome::Closed("peer closed the connection".into()),
            Ok(n) => {
                self.proto.received(n, Instant::now());
                ReadOutcome::Ok(n)
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => ReadOutcome::Ok(0),
            Err(e) if e.kind() == ErrorKind::Interrupted => ReadOutcome::Ok(0),
            Err(e) => ReadOutcome::Closed(format!("read error: {e}")),
        }
    }

    /// The socket, for the poller.
    pub(crate) fn fd(&self) -> BorrowedFd<'_> {
        self.stream.as_fd()
    }

    /// Writes as much queued output as the socket takes.
    pub(crate) fn flush(&mut self) {
        while self.proto.unsent() > 0 {
            match self.stream.write(self.proto.pending_output()) {
                Ok(0) => {
                    self.proto.close = Some("write returned 0".into());
                    return;
                }
                Ok(n) => self.proto.wrote(n),
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => {
                    self.proto.close = Some(format!("write error: {e}"));
                    return;
                }
            }
        }
    }

    /// Shuts the sending side: what was written still arrives, then the end of the
    /// stream.
    pub(crate) fn shutdown_write(&self) {
        let _ = self.stream.shutdown(std::net::Shutdown::Write);
    }

    /// Reads and drops whatever input is waiting; true once the peer has closed
    /// (or the socket failed).
    pub(crate) fn discard_input(&mut self) -> bool {
        let mut sink = [0u8; 4096];
        loop {
            match self.stream.read(&mut sink) {
                Ok(0) => return true,
                Ok(_) => {}
                Err(e) if e.kind() == ErrorKind::WouldBlock => return false,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return true,
            }
        }
    }

    /// Closes the socket.
    pub(crate) fn shutdown(&self) {
        let _ = self.stream.shutdown(std::net::Shutdown::Both);
    }
}
