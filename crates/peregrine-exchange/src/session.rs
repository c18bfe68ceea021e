//! One order-entry connection: a non-blocking socket, a fixed receive buffer, a bounded
//! outbound buffer, the login state and the session sequence number.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Instant;

use peregrine_types::AccountId;
use peregrine_wire::stream::RecvBuffer;
use peregrine_wire::{Inbound, Outbound, MAX_MESSAGE_SIZE};

use crate::core::SessionKey;

/// `LoginRejected.reason`: unknown account or wrong credential.
pub const LOGIN_BAD_CREDENTIALS: u16 = 1;

/// Bytes of the per-session receive buffer (any number of whole frames).
pub const RECV_BUFFER: usize = 8192;

/// Login state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Connected; only `Login` is allowed.
    AwaitLogin,
    /// Logged in as this account.
    Active(AccountId),
}

/// Outcome of a read.
#[derive(Debug)]
pub enum ReadOutcome {
    /// Bytes were read (maybe 0 on `WouldBlock`).
    Ok(usize),
    /// The peer closed or the socket failed.
    Closed(String),
}

/// One connection.
#[derive(Debug)]
pub struct Session {
    stream: TcpStream,
    /// Its key.
    pub key: SessionKey,
    /// Peer address, for logs.
    pub peer: SocketAddr,
    rx: Box<RecvBuffer<RECV_BUFFER>>,
    out: Vec<u8>,
    out_sent: usize,
    limit: usize,
    /// Login state.
    pub state: State,
    seq: u64,
    /// Last time bytes arrived.
    pub last_rx: Instant,
    /// Last time a message was queued.
    pub last_tx: Instant,
    /// Set when the session must close; the reason is logged.
    pub close: Option<String>,
    /// Close only after the outbound buffer drained (logout, login reject).
    pub close_after_flush: bool,
}

impl Session {
    /// Wraps an accepted stream (made non-blocking, `TCP_NODELAY`).
    pub fn new(stream: TcpStream, key: SessionKey, limit: usize) -> std::io::Result<Self> {
        stream.set_nonblocking(true)?;
        stream.set_nodelay(true)?;
        let peer = stream.peer_addr()?;
        let now = Instant::now();
        Ok(Session {
            stream,
            key,
            peer,
            rx: Box::new(RecvBuffer::new()),
            out: Vec::with_capacity(limit),
            out_sent: 0,
            limit,
            state: State::AwaitLogin,
            seq: 0,
            last_rx: now,
            last_tx: now,
            close: None,
            close_after_flush: false,
        })
    }

    /// The account, once logged in.
    pub fn account(&self) -> Option<AccountId> {
        match self.state {
            State::Active(a) => Some(a),
            State::AwaitLogin => None,
        }
    }

    /// Reads what the socket has into the receive buffer (one `read` call).
    pub fn read(&mut self) -> ReadOutcome {
        let spare = self.rx.spare();
        if spare.is_empty() {
            return ReadOutcome::Ok(0);
        }
        match self.stream.read(spare) {
            Ok(0) => ReadOutcome::Closed("peer closed the connection".into()),
            Ok(n) => {
                self.rx.commit(n);
                self.last_rx = Instant::now();
                ReadOutcome::Ok(n)
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => ReadOutcome::Ok(0),
            Err(e) if e.kind() == ErrorKind::Interrupted => ReadOutcome::Ok(0),
            Err(e) => ReadOutcome::Closed(format!("read error: {e}")),
        }
    }

    /// The next complete inbound frame, `None` if only part of one is buffered, or
    /// the protocol error as text.
    pub fn next_message(&mut self) -> Result<Option<Inbound>, String> {
        self.rx
            .next(Inbound::decode)
            .map_err(|e| format!("malformed input: {e}"))
    }

    /// Stamps the next session sequence number and queues the message. A full
    /// buffer marks the session for closing (slow reader) and drops the message.
    pub fn enqueue(&mut self, mut msg: Outbound, now: Instant) {
        if self.close.is_some() {
            return;
        }
        let mut frame = [0u8; MAX_MESSAGE_SIZE];
        self.seq += 1;
        msg.set_session_seq(self.seq);
        let Ok(n) = msg.encode(&mut frame) else {
            self.close = Some("internal: outbound encode failed".into());
            return;
        };
        if self.out_sent > 0 && self.out.len() + n > self.limit {
            self.out.drain(..self.out_sent);
            self.out_sent = 0;
        }
        if self.out.len() + n > self.limit {
            self.close = Some(format!(
                "slow reader: {} unsent bytes exceed the {}-byte outbound buffer",
                self.out.len() - self.out_sent,
                self.limit
            ));
            return;
        }
        self.out.extend_from_slice(&frame[..n]);
        self.last_tx = now;
    }

    /// Bytes queued and not yet written.
    pub fn unsent(&self) -> usize {
        self.out.len() - self.out_sent
    }

    /// Writes as much queued output as the socket takes.
    pub fn flush(&mut self) {
        while self.out_sent < self.out.len() {
            match self.stream.write(&self.out[self.out_sent..]) {
                Ok(0) => {
                    self.close = Some("write returned 0".into());
                    return;
                }
                Ok(n) => self.out_sent += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => {
                    self.close = Some(format!("write error: {e}"));
                    return;
                }
            }
        }
        self.out.clear();
        self.out_sent = 0;
    }

    /// Closes the socket.
    pub fn shutdown(&self) {
        let _ = self.stream.shutdown(std::net::Shutdown::Both);
    }
}
