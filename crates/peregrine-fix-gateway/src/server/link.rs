//! A FIX connection: its socket, its receive buffer and its place in the epoll set.
//! The same `Link` waits in the pending pool until its Logon names a session, then
//! moves to that session's slot (its bytes already read go with it).

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, TcpStream};

use peregrine_fix::codec::FrameLimits;
use peregrine_fix::session::Session;
use peregrine_fix::store::FileStore;

use crate::poller::{Poller, Watch};

/// A FIX connection.
#[derive(Debug)]
pub(super) struct Link {
    pub stream: TcpStream,
    /// Bytes read and not yet consumed: `rx[..len]` (a partial frame waits here for
    /// the rest; the loop hands it to the session on every serve, read or not).
    pub rx: Vec<u8>,
    pub len: usize,
    /// When it was accepted (the logon timeout counts from here).
    pub since: u64,
    pub watch: Watch,
}

impl Link {
    pub(super) fn new(stream: TcpStream, limits: FrameLimits, now: u64) -> Link {
        Link {
            stream,
            // Two whole messages: a frame never outgrows it, so a readable socket can
            // always be read (a full buffer with a readable socket would be reported
            // by level-triggered epoll forever).
            rx: vec![0; limits.max_message() * 2],
            len: 0,
            since: now,
            watch: Watch::default(),
        }
    }

    /// Reads what is there: `Err` when the peer closed or the socket failed.
    pub(super) fn read(&mut self) -> Result<bool, ()> {
        if self.len == self.rx.len() {
            return Ok(false);
        }
        match self.stream.read(&mut self.rx[self.len..]) {
            Ok(0) => Err(()),
            Ok(n) => {
                self.len += n;
                Ok(true)
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => Ok(false),
            Err(_) => Err(()),
        }
    }

    /// Drops the first `used` bytes of the buffer (consumed frames).
    pub(super) fn consume(&mut self, used: usize) {
        self.rx.copy_within(used..self.len, 0);
        self.len -= used;
    }

    /// Leaves the epoll set and closes.
    pub(super) fn close(mut self, poller: &Poller) {
        self.watch.remove(poller, &self.stream);
        let _ = self.stream.shutdown(Shutdown::Both);
    }
}

/// Writes the session's output (all of it, briefly retrying, when closing). Returns
/// whether anything was written.
pub(super) fn write_out(
    session: &mut Session<FileStore>,
    mut stream: &TcpStream,
    all: bool,
) -> bool {
    let mut wrote = false;
    let mut spins = 0;
    loop {
        // `outbound` flushes the store first: nothing reaches the peer before it is
        // stored.
        let out = match session.outbound() {
            Ok(out) if !out.is_empty() => out,
            _ => return wrote,
        };
        match stream.write(out) {
            Ok(n) => {
                session.consume_outbound(n);
                wrote = true;
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock && all && spins < 1000 => {
                spins += 1;
                std::thread::yield_now();
            }
            Err(_) => return wrote,
        }
    }
}
