//! One request to the feed's TCP recovery service (a book snapshot, or a replay of a
//! range of feed messages) as a state machine that never blocks: the socket connects
//! without waiting (`connect` on a non-blocking socket), and [`Fetch::poll`] writes
//! what the socket takes, reads what arrived, decodes whole frames and returns
//! `Ok(None)` until the answer is complete. The subscriber polls it from its own
//! `poll`, so a gap never stalls the thread that reads the feed; the blocking
//! [`super::recovery::snapshot`] and [`super::recovery::replay`] drive the same
//! machine to completion.
//!
//! A cluster node that does not lead answers `RecoveryRedirect`: the fetch ends with
//! [`ClientError::Redirected`] naming the leader's recovery address, for the caller
//! to follow ([`super::recovery`] and the subscriber do).

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use peregrine_types::InstrumentId;
use peregrine_wire::md::recovery::{Recovery, ReplayRequest, SnapshotRequest};
use peregrine_wire::md::MdMessage;
use peregrine_wire::stream::RecvBuffer;
use peregrine_wire::WireMessage;

use crate::error::{ClientError, IoContext};
use crate::md::book::L2Book;

/// How long one fetch may take, connecting included.
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(5);

/// Receive buffer: any number of whole recovery frames.
const RX: usize = 65_536;

/// A book from the recovery service.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// The book.
    pub book: L2Book,
    /// The feed session it belongs to.
    pub session_id: u64,
    /// The last feed sequence number it reflects (the feed continues at
    /// `as_of_seq + 1`).
    pub as_of_seq: u64,
}

/// A finished fetch.
#[derive(Debug)]
pub enum Fetched {
    /// The snapshot asked for.
    Snapshot(Snapshot),
    /// The replayed messages with their sequence numbers, in order; `None` when the
    /// service no longer retains (part of) the range.
    Replay(Option<Vec<(u64, MdMessage)>>),
}

#[derive(Debug)]
enum Want {
    Snapshot {
        book: L2Book,
        session_id: u64,
    },
    Replay {
        session_id: u64,
        /// First sequence number asked for overall.
        first: u64,
        /// One past the last.
        end: u64,
        got: Vec<(u64, MdMessage)>,
        /// The current request's announced count (after its response), and how many
        /// of its messages arrived.
        expected: Option<u64>,
        received: u64,
    },
}

/// One recovery request in flight.
#[derive(Debug)]
pub struct Fetch {
    stream: TcpStream,
    out: Vec<u8>,
    sent: usize,
    rx: Box<RecvBuffer<RX>>,
    want: Want,
    deadline: Instant,
}

impl Fetch {
    /// Starts fetching one instrument's book from the service at `addr`.
    pub fn snapshot(addr: SocketAddr, instrument: InstrumentId) -> Result<Fetch, ClientError> {
        let mut out = vec![0u8; SnapshotRequest::SIZE];
        SnapshotRequest {
            request_id: 1,
            instrument,
        }
        .encode(&mut out)?;
        let want = Want::Snapshot {
            book: L2Book::default(),
            session_id: 0,
        };
        Fetch::start(addr, out, want)
    }

    /// Starts fetching feed messages `first..first + count` of session `session_id`
    /// (asking again while each answer is partial).
    pub fn replay(
        addr: SocketAddr,
        session_id: u64,
        first: u64,
        count: u64,
    ) -> Result<Fetch, ClientError> {
        let want = Want::Replay {
            session_id,
            first,
            end: first.saturating_add(count),
            got: Vec::with_capacity(count.min(1 << 16) as usize),
            expected: None,
            received: 0,
        };
        let mut f = Fetch::start(addr, Vec::new(), want)?;
        f.request_more()?;
        Ok(f)
    }

    fn start(addr: SocketAddr, out: Vec<u8>, want: Want) -> Result<Fetch, ClientError> {
        let stream = connect_nonblocking(addr)
            .doing(|| format!("connecting to the recovery service {addr}"))?;
        Ok(Fetch {
            stream,
            out,
            sent: 0,
            rx: Box::new(RecvBuffer::new()),
            want,
            deadline: Instant::now() + FETCH_TIMEOUT,
        })
    }

    /// Queues the next replay request (for what is still missing).
    fn request_more(&mut self) -> Result<(), ClientError> {
        let Want::Replay {
            session_id,
            first,
            end,
            got,
            expected,
            received,
        } = &mut self.want
        else {
            return Ok(());
        };
        let next = *first + got.len() as u64;
        *expected = None;
        *received = 0;
        let mut buf = [0u8; ReplayRequest::SIZE];
        ReplayRequest {
            session_id: *session_id,
            first_seq: next,
            count: u16::try_from(*end - next).unwrap_or(u16::MAX),
        }
        .encode(&mut buf)?;
        self.out.extend_from_slice(&buf);
        Ok(())
    }

    /// Makes progress without blocking: `Ok(Some(..))` once the answer is complete,
    /// `Ok(None)` while it is not, an error if the service failed, closed, answered
    /// something else, or took longer than [`FETCH_TIMEOUT`].
    pub fn poll(&mut self) -> Result<Option<Fetched>, ClientError> {
        if Instant::now() >= self.deadline {
            return Err(ClientError::Io {
                what: "waiting for the recovery service".into(),
                source: ErrorKind::TimedOut.into(),
            });
        }
        if !self.write()? {
            return Ok(None); // still connecting, or the request is not all out
        }
        loop {
            if let Some(done) = self.decode()? {
                return Ok(Some(done));
            }
            if self.sent < self.out.len() {
                return Ok(None); // a follow-up replay request to write first
            }
            match self.stream.read(self.rx.spare()) {
                Ok(0) => return Err(ClientError::Closed("by the recovery service")),
                Ok(n) => self.rx.commit(n),
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(None),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => {
                    return Err(ClientError::Io {
                        what: "reading from the recovery service".into(),
                        source: e,
                    })
                }
            }
        }
    }

    /// Writes what is queued; true once everything is out.
    fn write(&mut self) -> Result<bool, ClientError> {
        while self.sent < self.out.len() {
            match self.stream.write(&self.out[self.sent..]) {
                Ok(0) => return Err(ClientError::Closed("by the recovery service")),
                Ok(n) => self.sent += n,
                // Not connected yet: ENOTCONN / EAGAIN until the handshake completes.
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::NotConnected) => {
                    return Ok(false)
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => {
                    return Err(ClientError::Io {
                        what: "sending to the recovery service".into(),
                        source: e,
                    })
                }
            }
        }
        self.out.clear();
        self.sent = 0;
        Ok(true)
    }

    /// Applies every whole frame received; the answer once it is complete.
    fn decode(&mut self) -> Result<Option<Fetched>, ClientError> {
        while let Some(m) = self.rx.next(Recovery::decode)? {
            if let Recovery::RecoveryRedirect(r) = m {
                // A cluster node that does not lead: the leader serves recovery.
                return Err(ClientError::Redirected {
                    leader_id: r.leader_id,
                    address: r.address.as_text().map(str::to_owned),
                    retry_after_ms: r.retry_after_ms,
                });
            }
            let mut ask_more = false;
            match &mut self.want {
                Want::Snapshot { book, session_id } => match m {
                    Recovery::SnapshotHeader(h) if h.reason.0 != 0 => {
                        return Err(ClientError::Unexpected(format!(
                            "snapshot refused, reason {}",
                            h.reason.0
                        )))
                    }
                    Recovery::SnapshotHeader(h) => *session_id = h.session_id,
                    Recovery::SnapshotLevel(l) => {
                        book.update(l.side, l.price.units(), l.qty.lots())
                    }
                    Recovery::SnapshotEnd(e) => {
                        return Ok(Some(Fetched::Snapshot(Snapshot {
                            book: std::mem::take(book),
                            session_id: *session_id,
                            as_of_seq: e.as_of_seq,
                        })))
                    }
                    other => return Err(unexpected(&other)),
                },
                Want::Replay {
                    first,
                    end,
                    got,
                    expected,
                    received,
                    ..
                } => {
                    let next = *first + got.len() as u64 - *received;
                    let msg = match m {
                        Recovery::ReplayResponse(r) => {
                            if expected.is_some() {
                                return Err(ClientError::Unexpected("two replay responses".into()));
                            }
                            if r.first_seq != next {
                                return Err(ClientError::Unexpected(
                                    "replay of the wrong range".into(),
                                ));
                            }
                            if r.count == 0 {
                                return Ok(Some(Fetched::Replay(None)));
                            }
                            *expected = Some(u64::from(r.count));
                            continue;
                        }
                        Recovery::Trade(t) if expected.is_some() => MdMessage::Trade(t),
                        Recovery::L2Update(u) if expected.is_some() => MdMessage::L2Update(u),
                        Recovery::Commitment(c) if expected.is_some() => MdMessage::Commitment(c),
                        other => return Err(unexpected(&other)),
                    };
                    got.push((next + *received, msg));
                    *received += 1;
                    if *expected == Some(*received) {
                        if *first + got.len() as u64 >= *end {
                            return Ok(Some(Fetched::Replay(Some(std::mem::take(got)))));
                        }
                        ask_more = true;
                    }
                }
            }
            if ask_more {
                self.request_more()?;
                self.write()?;
            }
        }
        Ok(None)
    }

    /// Drives the fetch to completion, blocking the caller (yielding between polls).
    pub fn wait(mut self) -> Result<Fetched, ClientError> {
        loop {
            if let Some(done) = self.poll()? {
                return Ok(done);
            }
            std::thread::sleep(Duration::from_micros(50));
        }
    }
}

impl std::os::fd::AsFd for Fetch {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.stream.as_fd()
    }
}

fn unexpected(m: &Recovery) -> ClientError {
    ClientError::Unexpected(format!("recovery message {m:?}"))
}

/// A TCP connection to `addr` started without waiting for the handshake.
fn connect_nonblocking(addr: SocketAddr) -> std::io::Result<TcpStream> {
    use rustix::net::{AddressFamily, SocketFlags, SocketType};
    let family = if addr.is_ipv4() {
        AddressFamily::INET
    } else {
        AddressFamily::INET6
    };
    let fd = rustix::net::socket_with(
        family,
        SocketType::STREAM,
        SocketFlags::NONBLOCK | SocketFlags::CLOEXEC,
        None,
    )?;
    match rustix::net::connect(&fd, &addr) {
        Ok(()) | Err(rustix::io::Errno::INPROGRESS) => {}
        Err(e) => return Err(e.into()),
    }
    let stream = TcpStream::from(fd);
    stream.set_nodelay(true)?;
    Ok(stream)
}
