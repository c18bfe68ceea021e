//! TCP between nodes, polled by the node's own thread (no transport threads, no
//! hand-off). Each node dials every peer it sends to and reads what peers dial in:
//! one connection per direction, opened with a hello (cluster id, from, to).
//!
//! * **Bounded.** Each peer has one out-buffer of at most `send_buffer_bytes` (a single
//!   larger frame, a snapshot, is accepted into an empty buffer); a message that does
//!   not fit, or finds the peer disconnected, is dropped and the peer reported
//!   unreachable (Raft retransmits). Inbound frames are capped at `max_frame_bytes`;
//!   at most `max_inbound` connections are read; one that sends no valid hello within
//!   `hello_timeout` is closed.
//! * **Reconnects** with exponential backoff (`reconnect_min` doubling to
//!   `reconnect_max`), non-blocking connects, so an unreachable host never stalls the
//!   node.
//! * **Garbage** (bad hello, bad CRC, a frame that does not decode, a message whose
//!   `from`/`to` contradict the hello) closes that connection and is counted; the node
//!   never sees it.

use std::collections::BTreeMap;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::os::fd::{AsFd, OwnedFd};
use std::sync::Arc;
use std::time::{Duration, Instant};

use raft::eraftpb::{Message, MessageType};
use rustix::event::{PollFd, PollFlags};

use crate::transport::stats::TransportStats;
use crate::wire::{encode_frame, FrameReader, Hello, HELLO_LEN};

/// Settings of a transport.
#[derive(Debug, Clone)]
pub struct TransportOptions {
    /// This node.
    pub me: u64,
    /// Hellos naming another cluster are refused.
    pub cluster_id: u64,
    /// Largest frame read.
    pub max_frame_bytes: usize,
    /// Unsent bytes per peer.
    pub send_buffer_bytes: usize,
    /// Inbound connections read at once.
    pub max_inbound: usize,
    /// Time a new inbound connection has to send its hello.
    pub hello_timeout: Duration,
    /// First reconnect delay.
    pub reconnect_min: Duration,
    /// Longest reconnect delay.
    pub reconnect_max: Duration,
}

impl TransportOptions {
    /// Defaults for node `me` of `cluster_id`.
    pub fn new(me: u64, cluster_id: u64) -> Self {
        Self {
            me,
            cluster_id,
            max_frame_bytes: 256 << 20,
            send_buffer_bytes: 64 << 20,
            max_inbound: 64,
            hello_timeout: Duration::from_secs(5),
            reconnect_min: Duration::from_millis(20),
            reconnect_max: Duration::from_secs(1),
        }
    }
}

enum Conn {
    Idle,
    Connecting(TcpStream),
    Ready(TcpStream),
}

struct Peer {
    addr: String,
    conn: Conn,
    out: Vec<u8>,
    sent: usize,
    /// End offsets in `out` of snapshot frames not yet fully written.
    snapshots: Vec<usize>,
    backoff: Duration,
    next_attempt: Instant,
}

struct Inbound {
    stream: TcpStream,
    reader: FrameReader,
    from: Option<u64>,
    opened: Instant,
}

/// Wakes a transport blocked in [`TcpTransport::poll`] from another thread.
#[derive(Debug, Clone)]
pub struct Waker(Arc<OwnedFd>);

impl Waker {
    /// Makes the next (or current) `poll` return.
    pub fn wake(&self) {
        let _ = rustix::io::write(&*self.0, &1u64.to_ne_bytes());
    }

    /// A waker no transport polls: for a node a caller steps itself (a
    /// deterministic simulator), where waking is a no-op.
    pub fn detached() -> std::io::Result<Self> {
        let fd = rustix::event::eventfd(
            0,
            rustix::event::EventfdFlags::CLOEXEC | rustix::event::EventfdFlags::NONBLOCK,
        )?;
        Ok(Waker(Arc::new(fd)))
    }
}

/// The TCP transport of one node.
pub struct TcpTransport {
    opts: TransportOptions,
    listener: TcpListener,
    local: SocketAddr,
    peers: BTreeMap<u64, Peer>,
    inbound: Vec<Inbound>,
    waker: Arc<OwnedFd>,
    buf: Box<[u8]>,
    unreachable: Vec<u64>,
    snapshot_reports: Vec<(u64, bool)>,
    stats: TransportStats,
}

impl std::fmt::Debug for TcpTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TcpTransport")
            .field("me", &self.opts.me)
            .field("local", &self.local)
            .field("peers", &self.peers.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl TcpTransport {
    /// Listens on `listen` (port 0: any free port).
    pub fn bind(opts: TransportOptions, listen: &str) -> io::Result<Self> {
        let listener = TcpListener::bind(listen)?;
        listener.set_nonblocking(true)?;
        let local = listener.local_addr()?;
        let waker = rustix::event::eventfd(
            0,
            rustix::event::EventfdFlags::NONBLOCK | rustix::event::EventfdFlags::CLOEXEC,
        )?;
        Ok(Self {
            opts,
            listener,
            local,
            peers: BTreeMap::new(),
            inbound: Vec::new(),
            waker: Arc::new(waker),
            buf: vec![0u8; 256 << 10].into_boxed_slice(),
            unreachable: Vec::new(),
            snapshot_reports: Vec::new(),
            stats: TransportStats::default(),
        })
    }

    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// A handle that interrupts `poll`.
    pub fn waker(&self) -> Waker {
        Waker(self.waker.clone())
    }

    /// Counters.
    pub fn stats(&self) -> &TransportStats {
        &self.stats
    }

    /// Adds a peer or changes its address (the connection is re-opened).
    pub fn set_peer(&mut self, id: u64, addr: &str) {
        if id == self.opts.me {
            return;
        }
        if let Some(p) = self.peers.get(&id) {
            if p.addr == addr {
                return;
            }
        }
        self.peers.insert(
            id,
            Peer {
                addr: addr.to_string(),
                conn: Conn::Idle,
                out: Vec::new(),
                sent: 0,
                snapshots: Vec::new(),
                backoff: self.opts.reconnect_min,
                next_attempt: Instant::now(),
            },
        );
    }

    /// Forgets a peer and closes its connection.
    pub fn remove_peer(&mut self, id: u64) {
        self.peers.remove(&id);
    }

    /// Peers whose messages were dropped since the last call (report them to raft-rs).
    pub fn take_unreachable(&mut self) -> Vec<u64> {
        std::mem::take(&mut self.unreachable)
    }

    /// Snapshot messages fully written (`true`) or dropped (`false`) since the last call.
    pub fn take_snapshot_reports(&mut self) -> Vec<(u64, bool)> {
        std::mem::take(&mut self.snapshot_reports)
    }

    /// Queues `m` for its peer; written by the next [`TcpTransport::flush`] or `poll`.
    pub fn send(&mut self, m: &Message) {
        let to = m.to;
        let is_snap = m.msg_type == MessageType::MsgSnapshot;
        let max = self.opts.send_buffer_bytes;
        let dropped = match self.peers.get_mut(&to) {
            Some(p) if matches!(p.conn, Conn::Ready(_)) => {
                let pending = p.out.len() - p.sent;
                let len = crate::wire::codec::encoded_len(m) + crate::wire::frame::FRAME_HEADER_LEN;
                if pending > 0 && pending + len > max {
                    true
                } else {
                    encode_frame(m, &mut p.out);
                    if is_snap {
                        p.snapshots.push(p.out.len());
                    }
                    self.stats.frames_queued += 1;
                    false
                }
            }
            _ => true,
        };
        if dropped {
            self.stats.dropped += 1;
            if !self.unreachable.contains(&to) {
                self.unreachable.push(to);
            }
            if is_snap {
                self.snapshot_reports.push((to, false));
            }
        }
    }

    /// Writes queued bytes to every connected peer without blocking.
    pub fn flush(&mut self) {
        let ids: Vec<u64> = self.peers.keys().copied().collect();
        for id in ids {
            self.flush_peer(id);
        }
    }

    fn flush_peer(&mut self, id: u64) {
        let Some(p) = self.peers.get_mut(&id) else {
            return;
        };
        let Conn::Ready(stream) = &mut p.conn else {
            return;
        };
        let mut failed = false;
        while p.sent < p.out.len() {
            match stream.write(&p.out[p.sent..]) {
                Ok(0) => {
                    failed = true;
                    break;
                }
                Ok(n) => {
                    p.sent += n;
                    self.stats.bytes_sent += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => {
                    failed = true;
                    break;
                }
            }
        }
        while p.snapshots.first().is_some_and(|end| *end <= p.sent) {
            p.snapshots.remove(0);
            self.snapshot_reports.push((id, true));
        }
        if failed {
            self.disconnect(id);
        } else if p.sent == p.out.len() {
            p.out.clear();
            p.sent = 0;
        }
    }

    fn disconnect(&mut self, id: u64) {
        let now = Instant::now();
        let max = self.opts.reconnect_max;
        if let Some(p) = self.peers.get_mut(&id) {
            p.conn = Conn::Idle;
            p.out.clear();
            p.sent = 0;
            for _ in p.snapshots.drain(..) {
                self.snapshot_reports.push((id, false));
            }
            p.next_attempt = now + p.backoff;
            p.backoff = (p.backoff * 2).min(max);
            self.stats.disconnects += 1;
            if !self.unreachable.contains(&id) {
                self.unreachable.push(id);
            }
        }
    }

    /// Waits up to `timeout` for network activity or a wake-up, then accepts, reads
    /// whole messages into `inbox`, finishes connects and writes what is queued.
    pub fn poll(&mut self, timeout: Duration, inbox: &mut Vec<Message>) -> io::Result<()> {
        let now = Instant::now();
        self.start_connects(now);
        self.expire_hellos(now);
        let wait = self
            .peers
            .values()
            .filter(|p| matches!(p.conn, Conn::Idle))
            .map(|p| p.next_attempt.saturating_duration_since(now))
            .fold(timeout, Duration::min);
        let ready = self.wait(wait)?;
        if ready.listener {
            self.accept();
        }
        if ready.waker {
            let mut b = [0u8; 8];
            let _ = rustix::io::read(&*self.waker, &mut b);
        }
        for i in ready.inbound.into_iter().rev() {
            self.read_inbound(i, inbox);
        }
        for id in ready.connecting {
            self.finish_connect(id);
        }
        for id in ready.closed {
            self.check_outbound(id);
        }
        self.flush();
        Ok(())
    }

    fn wait(&mut self, timeout: Duration) -> io::Result<Readiness> {
        let mut fds = Vec::with_capacity(2 + self.inbound.len() + self.peers.len());
        fds.push(PollFd::new(&self.listener, PollFlags::IN));
        fds.push(PollFd::from_borrowed_fd(self.waker.as_fd(), PollFlags::IN));
        for c in &self.inbound {
            fds.push(PollFd::new(&c.stream, PollFlags::IN));
        }
        let mut ids = Vec::with_capacity(self.peers.len());
        for (id, p) in &self.peers {
            let (stream, flags) = match &p.conn {
                Conn::Idle => continue,
                Conn::Connecting(s) => (s, PollFlags::OUT),
                Conn::Ready(s) if p.sent < p.out.len() => (s, PollFlags::IN | PollFlags::OUT),
                Conn::Ready(s) => (s, PollFlags::IN),
            };
            fds.push(PollFd::new(stream, flags));
            ids.push(*id);
        }
        let ts = rustix::event::Timespec {
            tv_sec: timeout.as_secs() as i64,
            tv_nsec: i64::from(timeout.subsec_nanos()),
        };
        match rustix::event::poll(&mut fds, Some(&ts)) {
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => return Ok(Readiness::default()),
            Err(e) => return Err(e.into()),
        }
        let any = |f: &PollFd<'_>| !f.revents().is_empty();
        let mut r = Readiness {
            listener: any(&fds[0]),
            waker: any(&fds[1]),
            ..Default::default()
        };
        let n_in = self.inbound.len();
        for i in 0..n_in {
            if any(&fds[2 + i]) {
                r.inbound.push(i);
            }
        }
        for (k, id) in ids.into_iter().enumerate() {
            let rev = fds[2 + n_in + k].revents();
            if rev.is_empty() {
                continue;
            }
            match self.peers.get(&id).map(|p| &p.conn) {
                Some(Conn::Connecting(_)) => r.connecting.push(id),
                Some(Conn::Ready(_))
                    if rev.intersects(PollFlags::IN | PollFlags::HUP | PollFlags::ERR) =>
                {
                    r.closed.push(id)
                }
                _ => {}
            }
        }
        Ok(r)
    }

    fn start_connects(&mut self, now: Instant) {
        let me = self.opts.me;
        let cluster_id = self.opts.cluster_id;
        let mut failed = Vec::new();
        for (id, p) in &mut self.peers {
            if !matches!(p.conn, Conn::Idle) || p.next_attempt > now {
                continue;
            }
            self.stats.connect_attempts += 1;
            match connect_nonblocking(&p.addr) {
                Ok((stream, done)) => {
                    p.out.clear();
                    p.sent = 0;
                    let hello = Hello {
                        cluster_id,
                        from: me,
                        to: *id,
                    };
                    p.out.extend_from_slice(&hello.encode());
                    p.conn = if done {
                        Conn::Ready(stream)
                    } else {
                        Conn::Connecting(stream)
                    };
                }
                Err(_) => failed.push(*id),
            }
        }
        for id in failed {
            self.disconnect(id);
        }
    }

    fn finish_connect(&mut self, id: u64) {
        let Some(p) = self.peers.get_mut(&id) else {
            return;
        };
        let Conn::Connecting(stream) = &p.conn else {
            return;
        };
        let ok = matches!(stream.take_error(), Ok(None)) && stream.peer_addr().is_ok();
        if !ok {
            self.disconnect(id);
            return;
        }
        let Conn::Connecting(stream) = std::mem::replace(&mut p.conn, Conn::Idle) else {
            return;
        };
        p.conn = Conn::Ready(stream);
        p.backoff = self.opts.reconnect_min;
        self.stats.connects += 1;
    }

    /// A peer we only write to became readable: it closed (or sent garbage).
    fn check_outbound(&mut self, id: u64) {
        let Some(p) = self.peers.get_mut(&id) else {
            return;
        };
        let Conn::Ready(stream) = &mut p.conn else {
            return;
        };
        let mut b = [0u8; 64];
        match stream.read(&mut b) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            _ => self.disconnect(id),
        }
    }

    fn accept(&mut self) {
        loop {
            match self.listener.accept() {
                Ok((stream, _)) => {
                    if self.inbound.len() >= self.opts.max_inbound
                        || stream.set_nonblocking(true).is_err()
                    {
                        self.stats.refused += 1;
                        continue;
                    }
                    let _ = stream.set_nodelay(true);
                    self.inbound.push(Inbound {
                        stream,
                        reader: FrameReader::new(self.opts.max_frame_bytes),
                        from: None,
                        opened: Instant::now(),
                    });
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return, // WouldBlock, or out of descriptors: retry next poll
            }
        }
    }

    fn expire_hellos(&mut self, now: Instant) {
        let limit = self.opts.hello_timeout;
        let before = self.inbound.len();
        self.inbound
            .retain(|c| c.from.is_some() || now.duration_since(c.opened) < limit);
        self.stats.refused += (before - self.inbound.len()) as u64;
    }

    fn read_inbound(&mut self, i: usize, inbox: &mut Vec<Message>) {
        let mut close = false;
        loop {
            let c = &mut self.inbound[i];
            match c.stream.read(&mut self.buf) {
                Ok(0) => {
                    close = true;
                    break;
                }
                Ok(n) => {
                    self.stats.bytes_received += n as u64;
                    c.reader.extend(&self.buf[..n]);
                    if let Err(why) = drain_frames(c, &self.opts, inbox, &mut self.stats) {
                        self.stats.bad_input += 1;
                        self.stats.last_bad_input = Some(why);
                        close = true;
                        break;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => {
                    close = true;
                    break;
                }
            }
        }
        if close {
            self.inbound.swap_remove(i);
        }
    }
}

/// Decodes every whole frame buffered on `c`; an error closes the connection.
fn drain_frames(
    c: &mut Inbound,
    opts: &TransportOptions,
    inbox: &mut Vec<Message>,
    stats: &mut TransportStats,
) -> Result<(), String> {
    if c.from.is_none() {
        let Some(raw) = c.reader.take_raw::<HELLO_LEN>() else {
            return Ok(());
        };
        let h = Hello::decode(&raw).map_err(|e| e.to_string())?;
        if h.cluster_id != opts.cluster_id || h.to != opts.me || h.from == opts.me {
            return Err(format!(
                "hello for cluster {} node {} from {}",
                h.cluster_id, h.to, h.from
            ));
        }
        c.from = Some(h.from);
    }
    let from = c.from.unwrap_or(0);
    while let Some(m) = c.reader.next_message().map_err(|e| e.to_string())? {
        if m.from != from || m.to != opts.me {
            return Err(format!(
                "message {}→{} on a connection from {from}",
                m.from, m.to
            ));
        }
        stats.frames_received += 1;
        inbox.push(m);
    }
    Ok(())
}

#[derive(Default)]
struct Readiness {
    listener: bool,
    waker: bool,
    inbound: Vec<usize>,
    connecting: Vec<u64>,
    closed: Vec<u64>,
}

/// Starts a non-blocking connect; `true` if it completed at once.
fn connect_nonblocking(addr: &str) -> io::Result<(TcpStream, bool)> {
    let sa: SocketAddr = match addr.parse() {
        Ok(sa) => sa,
        Err(_) => addr
            .to_socket_addrs()?
            .next()
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no address"))?,
    };
    let family = if sa.is_ipv4() {
        rustix::net::AddressFamily::INET
    } else {
        rustix::net::AddressFamily::INET6
    };
    let fd = rustix::net::socket_with(
        family,
        rustix::net::SocketType::STREAM,
        rustix::net::SocketFlags::NONBLOCK | rustix::net::SocketFlags::CLOEXEC,
        None,
    )?;
    let done = match rustix::net::connect(&fd, &sa) {
        Ok(()) => true,
        Err(rustix::io::Errno::INPROGRESS) => false,
        Err(e) => return Err(e.into()),
    };
    let stream = TcpStream::from(fd);
    stream.set_nodelay(true)?;
    Ok((stream, done))
}
