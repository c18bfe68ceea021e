//! The connections of a stepped venue: in-memory byte pipes with socket semantics,
//! which the caller (a simulated network) fills and drains between steps.

use std::collections::{BTreeMap, VecDeque};
use std::io::ErrorKind;
use std::net::SocketAddr;
use std::time::Duration;

use peregrine_exchange_core::Request;

use crate::net::compact::Shell;
use crate::net::session::conn::SessionIo;
use crate::net::sockets::Polled;
use crate::net::table::SessionTable;

/// A connection's id, chosen by the caller.
pub type ConnId = u64;

/// One accepted connection.
#[derive(Debug)]
struct Pipe {
    conn: ConnId,
    /// Bytes the peer sent, not yet read.
    rx: VecDeque<u8>,
    /// The peer closed its side: reads return 0 once `rx` is empty.
    peer_closed: bool,
    /// The end of input was reported (a closed connection is not reported ready
    /// again).
    eof_seen: bool,
    /// Bytes written, not yet taken by the caller.
    tx: VecDeque<u8>,
    /// The send buffer's size: a write with no room is `WouldBlock`.
    tx_capacity: usize,
    /// The table asked to hear when `tx` has room ([`SessionIo::want_write`]):
    /// reported ready while it has, as a level-triggered `EPOLLOUT` is.
    watch_write: bool,
}

/// Connections waiting to be accepted, and those of the table's slots.
#[derive(Debug, Default)]
pub(crate) struct MemShell {
    incoming: VecDeque<(ConnId, SocketAddr)>,
    slots: Vec<Option<Pipe>>,
    /// Which slot holds a connection.
    by_conn: BTreeMap<ConnId, usize>,
    /// Output of connections the table closed, still to be taken, then EOF.
    closed: BTreeMap<ConnId, VecDeque<u8>>,
    /// Input that arrived before the connection was accepted.
    early: BTreeMap<ConnId, (Vec<u8>, bool)>,
    /// Send buffer of new connections, bytes.
    pub(crate) tx_capacity: usize,
    /// Parked polls (a non-zero timeout) that found nothing ready: a real loop
    /// would have slept its whole timeout there.
    pub(crate) idle_parks: u64,
}

/// What the caller can see of a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConnState {
    /// Waiting to be accepted.
    Connecting,
    /// Accepted, open.
    Open,
    /// Closed by the exchange (or refused); its last output may still be waiting.
    Closed,
}

impl MemShell {
    pub(crate) fn new(slots: usize, tx_capacity: usize) -> Self {
        MemShell {
            slots: (0..slots).map(|_| None).collect(),
            tx_capacity,
            ..MemShell::default()
        }
    }

    pub(crate) fn connect(&mut self, conn: ConnId, peer: SocketAddr) {
        self.incoming.push_back((conn, peer));
    }

    pub(crate) fn send(&mut self, conn: ConnId, bytes: &[u8]) {
        if let Some(&slot) = self.by_conn.get(&conn) {
            if let Some(p) = self.slots[slot].as_mut() {
                p.rx.extend(bytes);
            }
        } else if self.incoming.iter().any(|(c, _)| *c == conn) {
            self.early
                .entry(conn)
                .or_default()
                .0
                .extend_from_slice(bytes);
        }
    }

    pub(crate) fn close(&mut self, conn: ConnId) {
        if let Some(&slot) = self.by_conn.get(&conn) {
            if let Some(p) = self.slots[slot].as_mut() {
                p.peer_closed = true;
            }
        } else if self.incoming.iter().any(|(c, _)| *c == conn) {
            self.early.entry(conn).or_default().1 = true;
        }
        self.closed.remove(&conn);
    }

    pub(crate) fn take_output(&mut self, conn: ConnId, max: usize) -> Vec<u8> {
        let q = match self.by_conn.get(&conn) {
            Some(&slot) => self.slots[slot].as_mut().map(|p| &mut p.tx),
            None => self.closed.get_mut(&conn),
        };
        match q {
            Some(q) => {
                let n = q.len().min(max);
                q.drain(..n).collect()
            }
            None => Vec::new(),
        }
    }

    /// Bytes written to `conn` that the caller has not taken yet.
    pub(crate) fn output_len(&self, conn: ConnId) -> usize {
        match self.by_conn.get(&conn) {
            Some(&slot) => self.slots[slot].as_ref().map_or(0, |p| p.tx.len()),
            None => self.closed.get(&conn).map_or(0, VecDeque::len),
        }
    }

    pub(crate) fn state(&self, conn: ConnId) -> ConnState {
        if self.by_conn.contains_key(&conn) {
            ConnState::Open
        } else if self.incoming.iter().any(|(c, _)| *c == conn) {
            ConnState::Connecting
        } else {
            ConnState::Closed
        }
    }

    /// Forgets everything (the process died: the peer sees a reset).
    pub(crate) fn conns(&self) -> Vec<ConnId> {
        let mut v: Vec<ConnId> = self.by_conn.keys().copied().collect();
        v.extend(self.incoming.iter().map(|(c, _)| *c));
        v.extend(self.closed.keys().copied());
        v
    }

    fn accept(&mut self, table: &mut SessionTable) -> usize {
        let mut n = 0;
        while let Some((conn, peer)) = self.incoming.pop_front() {
            n += 1;
            let (early, peer_closed) = self.early.remove(&conn).unwrap_or_default();
            let Some(a) = table.prepare_admit(peer) else {
                self.closed.insert(conn, VecDeque::new());
                continue;
            };
            self.slots[a.slot] = Some(Pipe {
                conn,
                rx: early.into(),
                peer_closed,
                eof_seen: false,
                tx: VecDeque::new(),
                tx_capacity: self.tx_capacity,
                watch_write: false,
            });
            self.by_conn.insert(conn, a.slot);
            table.admit(a, peer);
        }
        n
    }
}

impl Shell for MemShell {
    fn poll(
        &mut self,
        table: &mut SessionTable,
        timeout: Option<Duration>,
        read: bool,
        requests: &mut Vec<Request>,
    ) -> std::io::Result<Polled> {
        let mut polled = Polled {
            events: self.accept(table),
            bytes: 0,
        };
        if read {
            for slot in 0..self.slots.len() {
                // Readable, or watched for room and has some (as `Sockets`, the
                // table reads what came and writes what waits).
                let ready = self.slots[slot].as_ref().is_some_and(|p| {
                    !p.rx.is_empty()
                        || (p.peer_closed && !p.eof_seen)
                        || (p.watch_write && p.tx.len() < p.tx_capacity)
                });
                if ready {
                    polled.events += 1;
                    polled.bytes += table.read_ready(slot, self, requests);
                }
            }
            if table.has_rescan() {
                polled.events += table.drain_rescan(requests);
            }
        }
        if polled.events == 0 && timeout != Some(Duration::ZERO) {
            self.idle_parks += 1;
        }
        Ok(polled)
    }
}

impl SessionIo for MemShell {
    fn read(&mut self, slot: usize, buf: &mut [u8]) -> std::io::Result<usize> {
        let Some(p) = self.slots.get_mut(slot).and_then(Option::as_mut) else {
            return Err(ErrorKind::NotConnected.into());
        };
        if p.rx.is_empty() {
            if p.peer_closed {
                p.eof_seen = true;
                return Ok(0);
            }
            return Err(ErrorKind::WouldBlock.into());
        }
        let n = p.rx.len().min(buf.len());
        for (b, x) in buf.iter_mut().zip(p.rx.drain(..n)) {
            *b = x;
        }
        Ok(n)
    }

    fn write(&mut self, slot: usize, buf: &[u8]) -> std::io::Result<usize> {
        let Some(p) = self.slots.get_mut(slot).and_then(Option::as_mut) else {
            return Err(ErrorKind::NotConnected.into());
        };
        if p.peer_closed {
            return Err(ErrorKind::BrokenPipe.into());
        }
        let room = p.tx_capacity.saturating_sub(p.tx.len());
        if room == 0 {
            return Err(ErrorKind::WouldBlock.into());
        }
        let n = room.min(buf.len());
        p.tx.extend(&buf[..n]);
        Ok(n)
    }

    fn want_write(&mut self, slot: usize, want: bool) {
        if let Some(p) = self.slots.get_mut(slot).and_then(Option::as_mut) {
            p.watch_write = want;
        }
    }

    fn close(&mut self, slot: usize) {
        if let Some(p) = self.slots.get_mut(slot).and_then(Option::take) {
            self.by_conn.remove(&p.conn);
            if !p.peer_closed {
                self.closed.insert(p.conn, p.tx);
            }
        }
    }
}
