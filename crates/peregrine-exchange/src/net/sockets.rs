//! The socket shell around the sans-IO [`SessionTable`]: the order-entry listener,
//! one non-blocking `TcpStream` per session slot, and the epoll set ([`Poller`]) the
//! loops wait on (the listener, the sessions and the group commit's durability
//! signal). It accepts and reads what is ready and hands it to the table; the table
//! writes and closes through it ([`SessionIo`]). Nothing here knows the protocol.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::OwnedFd;
use std::time::{Duration, Instant};

use peregrine_exchange_core::Request;
use peregrine_queue::poller::{ready, Poller, Ready};
use peregrine_wire::v2::Outbound;

use crate::net::session::conn::SessionIo;
use crate::net::table::SessionTable;

/// Poller token of the order-entry listener (`u64::MAX` is the poller's own timer,
/// `peregrine_queue::poller::TIMER_TOKEN`).
const LISTENER: u64 = u64::MAX - 1;
/// Poller token of the group commit's eventfd (a batch became durable).
const DURABLE: u64 = u64::MAX - 2;

/// What one [`Sockets::poll`] found.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Polled {
    /// Descriptors reported ready (sessions, the listener, the durability signal),
    /// and sessions whose buffered input was handled.
    pub events: usize,
    /// Bytes read from sessions.
    pub bytes: usize,
}

/// The sockets of a session table.
#[derive(Debug)]
pub(crate) struct Sockets {
    listener: TcpListener,
    poller: Poller,
    durable_fd: Option<OwnedFd>,
    ready: Vec<Ready>,
    streams: Vec<Option<TcpStream>>,
    /// Slots watched for room to write (their output was refused).
    writing: Vec<bool>,
}

impl Sockets {
    /// Binds the listener at `addr`, for a table of `slots` session slots.
    pub(crate) fn bind(addr: SocketAddr, slots: usize) -> std::io::Result<Self> {
        let listener = TcpListener::bind(addr)?;
        listener.set_nonblocking(true)?;
        let poller = Poller::new(slots + 4)?;
        poller.add(&listener, LISTENER)?;
        Ok(Sockets {
            listener,
            poller,
            durable_fd: None,
            ready: Vec::with_capacity(slots + 4),
            streams: (0..slots).map(|_| None).collect(),
            writing: vec![false; slots],
        })
    }

    /// The bound address.
    pub(crate) fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Also wakes [`Sockets::poll`] when the group commit signals `fd` (kept open as
    /// long as the shell).
    pub(crate) fn watch_durable(&mut self, fd: OwnedFd) -> std::io::Result<()> {
        self.poller.add_edge(&fd, DURABLE)?;
        self.durable_fd = Some(fd);
        Ok(())
    }

    /// Waits for readiness (`timeout` zero: just look; `None`: until something is
    /// ready), accepts pending connections into `table` and, if `read`, reads every
    /// ready session once (level-triggered: one left unread is reported again); the
    /// table handles session messages and appends order-entry requests (and the login
    /// snapshots the core must send) to `requests`.
    pub(crate) fn poll(
        &mut self,
        table: &mut SessionTable,
        timeout: Option<Duration>,
        read: bool,
        requests: &mut Vec<Request>,
    ) -> std::io::Result<Polled> {
        let timeout = if table.has_rescan() {
            Some(Duration::ZERO)
        } else {
            timeout
        };
        self.ready.clear();
        self.ready
            .extend(self.poller.wait(timeout)?.iter().map(ready));
        let mut polled = Polled {
            events: self.ready.len(),
            bytes: 0,
        };
        for i in 0..self.ready.len() {
            match self.ready[i].token {
                LISTENER => {
                    self.accept(table);
                }
                DURABLE => {}
                // Readable, or writable again (a reader caught up): the table reads
                // what came and writes what waits.
                token if read => {
                    polled.bytes += table.read_ready(token as usize, self, requests);
                }
                _ => {}
            }
        }
        if read && table.has_rescan() {
            polled.events += table.drain_rescan(requests);
        }
        Ok(polled)
    }

    /// Accepts every pending connection into the table's pending pool. Returns
    /// whether any arrived.
    fn accept(&mut self, table: &mut SessionTable) -> bool {
        let mut any = false;
        loop {
            match self.listener.accept() {
                Ok((stream, peer)) => {
                    any = true;
                    self.admit(table, stream, peer);
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => return any,
                Err(e) => {
                    log::info!("accept failed: {e}");
                    return any;
                }
            }
        }
    }

    fn admit(&mut self, table: &mut SessionTable, stream: TcpStream, peer: SocketAddr) {
        let Some(a) = table.prepare_admit(peer) else {
            return;
        };
        let setup = stream
            .set_nonblocking(true)
            .and_then(|()| stream.set_nodelay(true))
            .and_then(|()| self.poller.add(&stream, a.slot as u64));
        if let Err(e) = setup {
            log::info!("refused {peer}: socket setup failed: {e}");
            return;
        }
        self.streams[a.slot] = Some(stream);
        table.admit(a, peer);
    }

    /// The serving loop stopped because this node no longer leads: every logged-in
    /// session gets `notice` ([`SessionTable::queue_farewell`]), then its sending
    /// side is shut and its input read and dropped until the client closes or
    /// `within` has passed (closing on unread input would reset the connection, and
    /// a reset can overtake the notice). What is left is closed with the shell.
    pub(crate) fn farewell(
        &mut self,
        table: &mut SessionTable,
        notice: Outbound,
        within: Duration,
    ) {
        let told = table.queue_farewell(notice);
        let n = told.len();
        let mut open: Vec<(usize, bool)> = told.into_iter().map(|slot| (slot, false)).collect();
        let end = Instant::now() + within;
        while !open.is_empty() && Instant::now() < end {
            open.retain_mut(|(slot, shut)| {
                if !*shut {
                    if !table.flush_slot(*slot, self) {
                        return true;
                    }
                    if let Ok(s) = self.stream(*slot) {
                        let _ = s.shutdown(std::net::Shutdown::Write);
                    }
                    *shut = true;
                }
                !self.discard_input(*slot)
            });
            std::thread::sleep(Duration::from_millis(1));
        }
        log::info!("{n} session(s) told where the leader is (or that none is known yet)");
    }

    /// Reads and drops what slot `slot` has waiting; true once the peer has closed
    /// (or the socket failed or is gone).
    fn discard_input(&mut self, slot: usize) -> bool {
        let Ok(s) = self.stream(slot) else {
            return true;
        };
        let mut sink = [0u8; 4096];
        loop {
            match s.read(&mut sink) {
                Ok(0) => return true,
                Ok(_) => {}
                Err(e) if e.kind() == ErrorKind::WouldBlock => return false,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return true,
            }
        }
    }

    fn stream(&mut self, slot: usize) -> std::io::Result<&mut TcpStream> {
        self.streams
            .get_mut(slot)
            .and_then(Option::as_mut)
            .ok_or_else(|| std::io::Error::from(ErrorKind::NotConnected))
    }
}

impl SessionIo for Sockets {
    fn read(&mut self, slot: usize, buf: &mut [u8]) -> std::io::Result<usize> {
        self.stream(slot)?.read(buf)
    }

    fn write(&mut self, slot: usize, buf: &[u8]) -> std::io::Result<usize> {
        self.stream(slot)?.write(buf)
    }

    fn close(&mut self, slot: usize) {
        if let Some(s) = self.streams.get_mut(slot).and_then(Option::take) {
            self.poller.remove(&s);
            let _ = s.shutdown(std::net::Shutdown::Both);
        }
        if let Some(w) = self.writing.get_mut(slot) {
            *w = false;
        }
    }

    /// Watches the socket for room to write while its output waits (level-triggered:
    /// reported on every wait until the table has written what waits, or stops).
    fn want_write(&mut self, slot: usize, want: bool) {
        if self.writing.get(slot) == Some(&want) {
            return;
        }
        let Some(s) = self.streams.get(slot).and_then(Option::as_ref) else {
            return;
        };
        match self.poller.modify(s, slot as u64, want) {
            Ok(()) => self.writing[slot] = want,
            Err(e) => log::warn!("session {slot}: cannot watch for room to write: {e}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The socket half of the writability watch, on the kernel's own sockets: a
    /// session socket whose send buffer is full is not reported ready; once the table
    /// asks (`want_write`) and the peer reads, the wait reports it (`EPOLLOUT`), and
    /// once the table no longer asks, room alone does not wake the loop. (With the
    /// `modify` removed the wait after the peer's read times out with nothing ready.)
    #[test]
    fn a_watched_session_socket_is_reported_when_its_peer_makes_room() {
        let mut s = Sockets::bind("127.0.0.1:0".parse().unwrap(), 4).unwrap();
        let mut peer = TcpStream::connect(s.local_addr().unwrap()).unwrap();
        let (stream, _) = loop {
            match s.listener.accept() {
                Ok(a) => break a,
                Err(e) if e.kind() == ErrorKind::WouldBlock => std::thread::yield_now(),
                Err(e) => panic!("{e}"),
            }
        };
        stream.set_nonblocking(true).unwrap();
        s.poller.add(&stream, 2).unwrap();
        s.streams[2] = Some(stream);
        let chunk = [7u8; 64 * 1024];
        let mut sent = 0usize;
        loop {
            match SessionIo::write(&mut s, 2, &chunk) {
                Ok(n) => sent += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) => panic!("{e}"),
            }
        }
        let ready = |s: &mut Sockets, wait: Duration| -> Vec<u64> {
            s.poller
                .wait(Some(wait))
                .unwrap()
                .iter()
                .map(|e| ready(e).token)
                .collect()
        };
        assert!(ready(&mut s, Duration::ZERO).is_empty(), "full: not ready");
        s.want_write(2, true);
        assert!(ready(&mut s, Duration::ZERO).is_empty(), "still full");
        // The peer reads everything the socket holds.
        peer.set_read_timeout(Some(Duration::from_millis(200)))
            .unwrap();
        let mut buf = vec![0u8; 256 * 1024];
        let mut got = 0usize;
        while got < sent {
            match peer.read(&mut buf) {
                Ok(n) if n > 0 => got += n,
                other => panic!("the peer's read: {other:?} after {got} of {sent}"),
            }
        }
        assert_eq!(
            ready(&mut s, Duration::from_secs(10)),
            [2],
            "room reported while watched"
        );
        s.want_write(2, false);
        assert!(
            ready(&mut s, Duration::ZERO).is_empty(),
            "room alone does not wake the loop once the table stops asking"
        );
    }
}
