//! The feed's TCP recovery service. Three answers, all from the thread that owns the
//! engine, between batches, after the batch's feed packets were sent:
//!
//! * **Snapshot**: a `SnapshotRequest` for an instrument gets `SnapshotHeader`, every
//!   level (bids best first, then asks best first) and `SnapshotEnd`, as of a feed
//!   sequence number (`as_of_seq`, the last one sent, which exactly matches the book).
//! * **Replay**: a `ReplayRequest` for a range gets `ReplayResponse` with the count that
//!   follows, then those feed messages unchanged, from the publisher's
//!   [`Retained`] ring of the core's feed. At most [`MAX_REPLAY`] messages per request (ask again
//!   for the rest); a range older than the ring, not yet sent, or of another feed
//!   session is answered with count 0 and a reason ([`REPLAY_NOT_RETAINED`],
//!   [`REPLAY_OTHER_SESSION`]), and the subscriber falls back to a snapshot.
//! * **Instrument list**: an `InstrumentListRequest` gets `InstrumentList` (the count)
//!   and every instrument's `InstrumentDefinition`, with its current trading status.
//!
//! Sockets are non-blocking. An answer that does not fit the socket buffer is kept in
//! the client's own buffer (bounded by the largest answer) and written on later polls;
//! the client's next requests are read only once it is flushed.
//!
//! Market data is public, so there is no login; [`RecoveryLimits`] keep idle sockets
//! from denying the service to others: a connection idle (no request read, no answer
//! byte written) beyond `idle_ms` is closed, and a newcomer over its address's share
//! or over the total takes the place of a connection that is not being answered
//! (one that sent nothing first, idle longest first), or is refused when every
//! connection is being answered ([`super::admission`]). A real subscriber asks as
//! soon as it connects: once its request is read it cannot be closed for a
//! newcomer, however many silent sockets arrive and from however many addresses.

use std::io::{ErrorKind, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::time::{Duration, Instant};

use peregrine_exchange_core::balances::VenueEngine as MatchingEngine;
use peregrine_exchange_core::feed::Retained;
use peregrine_exchange_core::route::reference::stamped;
use peregrine_types::{Side, Timestamp};
use peregrine_wire::md::recovery::{
    InstrumentDefinition, InstrumentList, InstrumentListRequest, Recovery, ReplayRequest,
    ReplayResponse, SnapshotEnd, SnapshotHeader, SnapshotLevel, SnapshotRequest,
};
use peregrine_wire::md::MdMessage;
use peregrine_wire::stream::RecvBuffer;
use peregrine_wire::{ReasonCode, WireMessage};

use super::admission::{admit, Admit, Held, Phase};

/// `ReplayResponse.reason`: (part of) the range is not retained: older than the
/// replay ring, not sent yet, or replay is off.
pub(crate) const REPLAY_NOT_RETAINED: u16 = 1;
/// `SnapshotHeader.reason`: no such instrument.
pub(crate) const SNAPSHOT_UNKNOWN_INSTRUMENT: u16 = 2;
/// `ReplayResponse.reason`: the request names another feed session.
pub(crate) const REPLAY_OTHER_SESSION: u16 = 3;

/// Most feed messages sent for one replay request.
pub(crate) const MAX_REPLAY: u16 = 8192;
/// Most levels per side sent in a snapshot.
const MAX_LEVELS: usize = 10_000;
/// Who may hold a recovery connection, and for how long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RecoveryLimits {
    /// Connections at once.
    pub clients: usize,
    /// Connections from one address.
    pub per_address: usize,
    /// A connection idle this long is closed.
    pub idle: Duration,
}

#[derive(Debug)]
struct Client {
    stream: TcpStream,
    peer: IpAddr,
    /// Last request read or answer byte written.
    active: Instant,
    rx: Box<RecvBuffer<1024>>,
    /// Answer bytes not yet written, from `sent`.
    out: Vec<u8>,
    sent: usize,
    /// A snapshot request waiting for the book to match the feed sent so far.
    deferred: Option<SnapshotRequest>,
    /// A whole request was read (a connection that sent nothing goes first when
    /// room must be made).
    asked: bool,
    /// Accepted in this poll and not read yet.
    fresh: bool,
}

impl Client {
    fn held(&self) -> Held {
        let phase = if self.fresh {
            Phase::Fresh
        } else if self.deferred.is_some() || self.sent < self.out.len() {
            Phase::InFlight
        } else if self.asked {
            Phase::Answered
        } else {
            Phase::Silent
        };
        Held {
            peer: self.peer,
            phase,
            active: self.active,
        }
    }
}

/// The recovery listener and its clients.
#[derive(Debug)]
pub(crate) struct RecoveryServer {
    listener: TcpListener,
    clients: Vec<Client>,
    limits: RecoveryLimits,
    /// Every instrument's definition (engine position and status filled in when
    /// sent).
    definitions: Vec<InstrumentDefinition>,
    /// The clients as admission sees them (kept to reuse its allocation).
    scratch: Vec<Held>,
}

/// What an answer is built from.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Source<'a> {
    /// The book.
    pub engine: &'a MatchingEngine,
    /// The feed session id.
    pub session_id: u64,
    /// The last feed sequence number sent.
    pub as_of_seq: u64,
    /// Engine time now.
    pub now: Timestamp,
    /// The engine sequence number now.
    pub engine_seq: u64,
    /// The replay ring, if the feed is on.
    pub retained: Option<&'a Retained>,
    /// The book matches the feed sent so far (no feed message waits, for its batch's
    /// sync or its packet): only then is a snapshot answered, so it never shows a
    /// state a crash could still lose, nor one the feed has not caught up with.
    pub consistent: bool,
}

impl RecoveryServer {
    /// Binds the listener.
    pub(crate) fn bind(addr: SocketAddr, limits: RecoveryLimits) -> std::io::Result<Self> {
        let listener = TcpListener::bind(addr)?;
        listener.set_nonblocking(true)?;
        Ok(RecoveryServer {
            listener,
            clients: Vec::new(),
            limits,
            definitions: Vec::new(),
            scratch: Vec::new(),
        })
    }

    /// Answers instrument-list requests with `definitions`.
    pub(crate) fn with_definitions(mut self, definitions: Vec<InstrumentDefinition>) -> Self {
        self.definitions = definitions;
        self
    }

    /// The bound address.
    pub(crate) fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Accepts, reads and answers.
    pub(crate) fn poll(&mut self, src: Source<'_>) {
        let now = Instant::now();
        while let Ok((stream, peer)) = self.listener.accept() {
            if stream.set_nonblocking(true).is_err() || !self.make_room(peer.ip()) {
                log::debug!("recovery: refused {peer}");
                continue; // dropping `stream` closes it
            }
            let _ = stream.set_nodelay(true);
            self.clients.push(Client {
                stream,
                peer: peer.ip(),
                active: now,
                rx: Box::new(RecvBuffer::new()),
                out: Vec::with_capacity(1 << 12),
                sent: 0,
                deferred: None,
                asked: false,
                fresh: true,
            });
        }
        let idle = self.limits.idle;
        let mut i = 0;
        while i < self.clients.len() {
            let c = &mut self.clients[i];
            c.fresh = false;
            if serve(c, src, &self.definitions, now) && now.duration_since(c.active) < idle {
                i += 1;
            } else {
                self.clients.swap_remove(i);
            }
        }
    }

    /// Makes room for a newcomer from `peer` ([`super::admission`]); false when it
    /// must be refused.
    fn make_room(&mut self, peer: IpAddr) -> bool {
        self.scratch.clear();
        self.scratch.extend(self.clients.iter().map(Client::held));
        match admit(
            &self.scratch,
            peer,
            self.limits.clients,
            self.limits.per_address,
        ) {
            Admit::Take => true,
            Admit::Evict(i) => {
                let c = self.clients.swap_remove(i);
                log::debug!(
                    "recovery: closed {} (not being answered) for a newcomer",
                    c.peer
                );
                true
            }
            Admit::Refuse => false,
        }
    }

    /// Whether a snapshot request waits for a consistent book (the polling loop
    /// then stops taking orders until the feed has caught up: one sync at most).
    pub(crate) fn waiting(&self) -> bool {
        self.clients.iter().any(|c| c.deferred.is_some())
    }
}

/// Writes what is pending, then reads and answers one client; false when it must be
/// dropped.
fn serve(c: &mut Client, src: Source<'_>, defs: &[InstrumentDefinition], now: Instant) -> bool {
    if !flush(c, now) {
        return false;
    }
    if c.deferred.is_some() {
        // Waiting for our book, not for the client: not idle.
        c.active = now;
    }
    if c.sent < c.out.len() {
        return true;
    }
    c.out.clear();
    c.sent = 0;
    if let Some(r) = c.deferred {
        if !src.consistent {
            return true;
        }
        c.deferred = None;
        snapshot(&r, &mut c.out, src);
    } else {
        match c.stream.read(c.rx.spare()) {
            Ok(0) => return false,
            Ok(n) => {
                c.rx.commit(n);
                c.active = now;
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => return true,
            Err(_) => return false,
        }
    }
    // Requests are answered in order: one that must wait holds back those behind it.
    while c.deferred.is_none() {
        match c.rx.next(Recovery::decode) {
            Ok(Some(Recovery::SnapshotRequest(r))) if src.consistent => {
                c.asked = true;
                snapshot(&r, &mut c.out, src)
            }
            Ok(Some(Recovery::SnapshotRequest(r))) => {
                c.asked = true;
                c.deferred = Some(r)
            }
            Ok(Some(Recovery::ReplayRequest(r))) => {
                c.asked = true;
                replay(&r, &mut c.out, src)
            }
            Ok(Some(Recovery::InstrumentListRequest(r))) => {
                c.asked = true;
                instrument_list(&r, defs, &mut c.out, src)
            }
            Ok(None) => break,
            Ok(Some(_)) | Err(_) => return false,
        }
    }
    flush(c, now)
}

/// Writes as much pending output as the socket takes (progress counts as activity:
/// a client that stops reading its answer is idle); false on a broken socket.
fn flush(c: &mut Client, now: Instant) -> bool {
    while c.sent < c.out.len() {
        match c.stream.write(&c.out[c.sent..]) {
            Ok(0) => return false,
            Ok(n) => {
                c.sent += n;
                c.active = now;
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => return true,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => return false,
        }
    }
    true
}

/// Answers one request as the service does (the bytes it would write), for a
/// caller that carries the connection itself (the stepped venue of the simulator).
/// `None`: a snapshot that must wait for a consistent book (ask again after the
/// next batch), or a request this service does not answer without definitions.
pub(crate) fn answer(request: &Recovery, src: Source<'_>) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    match request {
        Recovery::SnapshotRequest(r) if src.consistent => snapshot(r, &mut out, src),
        Recovery::ReplayRequest(r) => replay(r, &mut out, src),
        _ => return None,
    }
    Some(out)
}

fn replay(r: &ReplayRequest, out: &mut Vec<u8>, src: Source<'_>) {
    let wanted = r.count.min(MAX_REPLAY);
    let (count, reason) = match src.retained {
        _ if r.session_id != src.session_id => (0, REPLAY_OTHER_SESSION),
        None => (0, REPLAY_NOT_RETAINED),
        Some(ring) => {
            let (_, n) = ring.range(r.first_seq, u64::from(wanted));
            // n <= wanted <= u16::MAX.
            let n = u16::try_from(n).unwrap_or(0);
            let reason = if n == r.count { 0 } else { REPLAY_NOT_RETAINED };
            (n, reason)
        }
    };
    put(
        out,
        &ReplayResponse {
            session_id: r.session_id,
            first_seq: r.first_seq,
            count,
            reason: ReasonCode(reason),
        },
    );
    let Some(ring) = src.retained else { return };
    for seq in r.first_seq..r.first_seq + u64::from(count) {
        match ring.get(seq) {
            Some(MdMessage::Trade(t)) => put(out, &t),
            Some(MdMessage::L2Update(u)) => put(out, &u),
            Some(MdMessage::Commitment(c)) => put(out, &c),
            Some(MdMessage::MarketStatus(m)) => put(out, &m),
            Some(MdMessage::AuctionIndicative(m)) => put(out, &m),
            // In range by construction; unreachable, and a short answer is detected
            // by the subscriber's sequence check.
            None => {}
        }
    }
}

/// `InstrumentList`, then every definition (`session_seq` 0 on this channel), each
/// with the engine's position and the instrument's current status.
fn instrument_list(
    r: &InstrumentListRequest,
    defs: &[InstrumentDefinition],
    out: &mut Vec<u8>,
    src: Source<'_>,
) {
    put(
        out,
        &InstrumentList {
            request_id: r.request_id,
            count: u32::try_from(defs.len()).unwrap_or(u32::MAX),
            reason: ReasonCode::NONE,
        },
    );
    for d in defs {
        let status = src.engine.book(d.instrument).map(|b| b.spec().status);
        put(out, &stamped(d, src.engine_seq, src.now, status));
    }
}

fn snapshot(r: &SnapshotRequest, out: &mut Vec<u8>, src: Source<'_>) {
    let Source {
        engine,
        session_id,
        as_of_seq,
        now,
        ..
    } = src;
    let header_at = out.len();
    let mut header = SnapshotHeader {
        request_id: r.request_id,
        session_id,
        as_of_seq,
        engine_time: now,
        instrument: r.instrument,
        level_count: 0,
        reason: ReasonCode::NONE,
    };
    put(out, &header);
    let mut count = 0u32;
    match engine.book(r.instrument) {
        Some(book) => {
            for side in [Side::Buy, Side::Sell] {
                book.visit_depth(side, MAX_LEVELS, &mut |price, qty, order_count| {
                    put(
                        out,
                        &SnapshotLevel {
                            price,
                            qty,
                            order_count,
                            side,
                        },
                    );
                    count += 1;
                });
            }
        }
        None => header.reason = ReasonCode(SNAPSHOT_UNKNOWN_INSTRUMENT),
    }
    header.level_count = count;
    // Rewrite the header in place with the final count (same size).
    let _ = header.encode(&mut out[header_at..header_at + SnapshotHeader::SIZE]);
    put(
        out,
        &SnapshotEnd {
            request_id: r.request_id,
            as_of_seq,
            instrument: r.instrument,
            level_count: count,
        },
    );
}

fn put<M: WireMessage>(out: &mut Vec<u8>, m: &M) {
    let at = out.len();
    out.resize(at + M::SIZE, 0);
    let _ = m.encode(&mut out[at..]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    use peregrine_book::MatchingEngine as Engine;
    use peregrine_exchange_core::balances::Balances;
    use peregrine_types::{InstrumentId, InstrumentSpec};

    fn limits() -> RecoveryLimits {
        RecoveryLimits {
            clients: 4,
            per_address: 2,
            idle: Duration::from_secs(10),
        }
    }

    fn source(engine: &MatchingEngine, consistent: bool) -> Source<'_> {
        Source {
            engine,
            session_id: 7,
            as_of_seq: 0,
            now: Timestamp(1),
            engine_seq: 3,
            retained: None,
            consistent,
        }
    }

    /// A newcomer to a full service takes the place of the connection idle longest;
    /// a connection idle beyond the limit is closed.
    #[test]
    fn a_full_service_closes_the_longest_idle_and_idle_ones_expire() {
        let engine = Engine::new(&[InstrumentSpec::example(1)], 16)
            .unwrap()
            .with_stage(Balances::off());
        let limits = RecoveryLimits {
            clients: 2,
            per_address: 8,
            idle: Duration::from_millis(300),
        };
        let mut server = RecoveryServer::bind("127.0.0.1:0".parse().unwrap(), limits).unwrap();
        let addr = server.local_addr().unwrap();
        let eof = |c: &mut TcpStream| {
            c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
            matches!(c.read(&mut [0u8; 64]), Ok(0))
        };
        let until = |server: &mut RecoveryServer, n: usize| {
            let deadline = Instant::now() + Duration::from_secs(10);
            while server.clients.len() != n {
                assert!(Instant::now() < deadline, "never {n} clients");
                server.poll(source(&engine, true));
                std::thread::sleep(Duration::from_millis(1));
            }
        };
        let mut oldest = TcpStream::connect(addr).unwrap();
        until(&mut server, 1);
        std::thread::sleep(Duration::from_millis(5));
        let mut second = TcpStream::connect(addr).unwrap();
        until(&mut server, 2);
        let _third = TcpStream::connect(addr).unwrap();
        oldest.set_nonblocking(true).unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            assert!(
                Instant::now() < deadline,
                "the longest idle was never closed"
            );
            server.poll(source(&engine, true));
            match oldest.read(&mut [0u8; 64]) {
                Ok(0) => break,
                Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                other => panic!("{other:?}"),
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(server.clients.len(), 2, "the newcomer took its place");
        // Nobody asks anything: both remaining ones expire.
        until(&mut server, 0);
        assert!(eof(&mut second));
    }

    /// The recovery service answers an instrument-list request (the protocol
    /// promises it, sections 4.8 and 6) with the list, every definition (with the
    /// engine's position and the book's current status), and keeps the connection
    /// open for the next request.
    #[test]
    fn an_instrument_list_request_is_answered_and_the_connection_stays() {
        use peregrine_exchange_core::route::reference::definitions;
        use peregrine_types::InstrumentStatus;
        let mut halted = InstrumentSpec::example(2);
        halted.symbol = "HLT-USD".into();
        halted.status = InstrumentStatus::Halted;
        let specs = [InstrumentSpec::example(1), halted];
        let engine = Engine::new(&specs, 16).unwrap().with_stage(Balances::off());
        let mut server = RecoveryServer::bind("127.0.0.1:0".parse().unwrap(), limits())
            .unwrap()
            .with_definitions(definitions(&specs, &[]));
        let mut client = TcpStream::connect(server.local_addr().unwrap()).unwrap();
        let mut req = [0u8; 64];
        let n = InstrumentListRequest { request_id: 41 }
            .encode(&mut req)
            .unwrap();
        let m = SnapshotRequest {
            request_id: 42,
            instrument: InstrumentId(1),
        }
        .encode(&mut req[n..])
        .unwrap();
        client.write_all(&req[..n + m]).unwrap();
        client
            .set_read_timeout(Some(Duration::from_millis(20)))
            .unwrap();
        let mut got = Vec::new();
        let mut buf = vec![0u8; 4096];
        let mut len = 0;
        let deadline = Instant::now() + Duration::from_secs(10);
        while !got.iter().any(|m| matches!(m, Recovery::SnapshotEnd(_))) {
            assert!(Instant::now() < deadline, "answers: {got:?}");
            server.poll(source(&engine, true));
            if let Ok(n) = client.read(&mut buf[len..]) {
                assert!(n > 0, "the service closed the connection");
                len += n;
            }
            while let Ok((msg, used)) = Recovery::decode(&buf[..len]) {
                got.push(msg);
                buf.copy_within(used..len, 0);
                len -= used;
            }
        }
        match &got[..3] {
            [Recovery::InstrumentList(l), Recovery::InstrumentDefinition(a), Recovery::InstrumentDefinition(b)] =>
            {
                assert_eq!((l.request_id, l.count, l.reason), (41, 2, ReasonCode::NONE));
                assert_eq!(
                    (a.instrument, a.engine_seq, a.session_seq),
                    (InstrumentId(1), 3, 0)
                );
                assert_eq!(a.symbol.as_str(), specs[0].symbol);
                assert_eq!(b.symbol.as_str(), "HLT-USD");
                assert_eq!(b.status, InstrumentStatus::Halted);
            }
            other => panic!("{other:?}"),
        }
        assert!(
            matches!(got[3], Recovery::SnapshotHeader(h) if h.request_id == 42),
            "the next request is answered on the same connection"
        );
    }

    /// A snapshot request is held while the book is ahead of the feed, and answered
    /// (in order) once it is not.
    #[test]
    fn a_snapshot_waits_for_a_consistent_book() {
        let engine = Engine::new(&[InstrumentSpec::example(1)], 16)
            .unwrap()
            .with_stage(Balances::off());
        let mut server = RecoveryServer::bind("127.0.0.1:0".parse().unwrap(), limits()).unwrap();
        let mut client = TcpStream::connect(server.local_addr().unwrap()).unwrap();
        let mut req = [0u8; SnapshotRequest::SIZE];
        SnapshotRequest {
            request_id: 9,
            instrument: InstrumentId(1),
        }
        .encode(&mut req)
        .unwrap();
        client.write_all(&req).unwrap();
        client.set_nonblocking(true).unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while !server.waiting() {
            assert!(Instant::now() < deadline, "the request never arrived");
            server.poll(source(&engine, false));
            std::thread::sleep(Duration::from_millis(1));
        }
        let mut buf = [0u8; 4096];
        assert!(
            matches!(client.read(&mut buf), Err(e) if e.kind() == ErrorKind::WouldBlock),
            "no answer while inconsistent"
        );
        server.poll(source(&engine, true));
        assert!(!server.waiting());
        client.set_nonblocking(false).unwrap();
        client
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let n = client.read(&mut buf).unwrap();
        match Recovery::decode(&buf[..n]).unwrap().0 {
            Recovery::SnapshotHeader(h) => assert_eq!((h.request_id, h.session_id), (9, 7)),
            other => panic!("{other:?}"),
        }
    }

    /// A client whose request is being answered (held for a consistent book) is not
    /// closed for a newcomer: the newcomer is refused.
    #[test]
    fn a_client_being_answered_is_kept_and_the_newcomer_refused() {
        let engine = Engine::new(&[InstrumentSpec::example(1)], 16)
            .unwrap()
            .with_stage(Balances::off());
        let limits = RecoveryLimits {
            clients: 1,
            per_address: 1,
            idle: Duration::from_secs(10),
        };
        let mut server = RecoveryServer::bind("127.0.0.1:0".parse().unwrap(), limits).unwrap();
        let addr = server.local_addr().unwrap();
        let mut asker = TcpStream::connect(addr).unwrap();
        let mut req = [0u8; SnapshotRequest::SIZE];
        SnapshotRequest {
            request_id: 3,
            instrument: InstrumentId(1),
        }
        .encode(&mut req)
        .unwrap();
        asker.write_all(&req).unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while !server.waiting() {
            assert!(Instant::now() < deadline, "the request never arrived");
            server.poll(source(&engine, false));
            std::thread::sleep(Duration::from_millis(1));
        }
        let mut newcomer = TcpStream::connect(addr).unwrap();
        newcomer
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        // Polled (inconsistent) until the newcomer is accepted and closed.
        newcomer.set_nonblocking(true).unwrap();
        loop {
            assert!(Instant::now() < deadline, "the newcomer was never refused");
            server.poll(source(&engine, false));
            match newcomer.read(&mut [0u8; 16]) {
                Ok(0) => break,
                Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                Err(e) if e.kind() == ErrorKind::ConnectionReset => break,
                other => panic!("{other:?}"),
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(server.waiting(), "the asker is still held");
        server.poll(source(&engine, true));
        asker
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let mut buf = [0u8; 4096];
        let n = asker.read(&mut buf).unwrap();
        match Recovery::decode(&buf[..n]).unwrap().0 {
            Recovery::SnapshotHeader(h) => assert_eq!(h.request_id, 3),
            other => panic!("{other:?}"),
        }
    }
}
