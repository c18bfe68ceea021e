//! The Peregrine exchange as a venue: its binary order-entry protocol over TCP
//! (`docs/protocol.md`, encoded and decoded with `peregrine-wire`).
//!
//! One [`ExchangeVenue`] is one session (one account) on one gateway thread. The
//! socket is non-blocking with `TCP_NODELAY`; the gateway's loop calls
//! [`Venue::poll`], which reads whatever arrived, decodes every whole frame into
//! [`Report`]s, sends heartbeats and writes what is queued. Requests are encoded into
//! a bounded outbound buffer and written at once; a full buffer (the exchange not
//! reading) refuses further requests with [`VenueError::Busy`]. Nothing here blocks
//! except connecting and logging in, bounded by `connect_timeout_ms`, and that only
//! stalls this gateway.
//!
//! **Ids.** Every request gets a fresh client order id from a counter (started from the
//! wall clock in ns, so a restarted engine does not reuse ids); the order table
//! (the `orders` module) maps it, and the exchange order id from `Accepted`, back to the
//! engine's order id. A cancel or replace asked before the order is acknowledged is
//! sent when `Accepted` arrives. Orders go out with the type, time in force, GTD
//! expiry and STP mode the strategy gave; a `Cancelled` ends the order, except a
//! self-trade decrement (reason 5) that leaves part of it open.
//!
//! **Bad bytes.** Any protocol violation (an undecodable frame, a session sequence
//! gap, a second login answer), a closed socket, an I/O error or three heartbeat
//! intervals of silence disconnect the session with a typed [`ExchangeError`], logged
//! on stderr. Nothing the socket delivers can panic the adapter. A report about an
//! order the adapter does not know is logged and counted, not fatal.
//!
//! **Login (protocol version 2).** The exchange sends a challenge; the adapter
//! answers with a `Login` proved with the account's key (`key_file` or `key` in
//! the settings; no secret crosses the wire) and the next report sequence number it
//! expects. [`peregrine_wire::v2::client::ClientSession`] checks the session and
//! report-stream continuity of everything that follows.
//!
//! **Disconnect and reconnect: orders in doubt, replay, then reconcile.** When the
//! session drops, new orders and replaces are refused with
//! [`VenueError::Disconnected`] (cancels of open orders are accepted and remembered),
//! and nothing in flight is guessed: every order open or on its way (sent but not
//! yet acknowledged), and every replace on its way, is *in doubt*: held, with its
//! request ids, until the venue says what became of it. No report goes to the engine
//! for it meanwhile (the orchestrator keeps its risk and position effect).
//!
//! The adapter reconnects every `reconnect_ms` and logs in resuming the account's
//! report stream where it stopped: the exchange first replays every report of the
//! account the adapter has not processed, including the answers to requests that
//! reached it before the drop (an `Accepted` or `Rejected` names the order by its
//! client order id, which for a new order is the engine's order id, so even an order
//! restored from the engine's journal is recognised), and they reach the engine like
//! live ones. At the replay's end (`ReplayEnd`) every report of a request the exchange
//! received has arrived, so what is still unanswered never reached it: such a new
//! order is reported `Rejected` (reason [`super::REASON_DISCONNECTED`], the engine
//! shows `venue_down`), such a replace `ReplaceRejected` the same way: facts, no
//! longer guesses. The position in the stream survives engine restarts too: the
//! gateway hands [`Venue::report_cursor`] to the orchestrator, which journals it after
//! the reports it covers, and a restarted engine resumes from the journaled position
//! ([`ExchangeVenue::with_resume`]); a replayed fill of a restored order whose open
//! quantity it does not lower is one the journal already counted, and is skipped.
//!
//! After the replay the adapter reconciles: it sends a `MassCancel` of the account's
//! orders in every instrument, then a `Cancel` of order id 0 as a barrier (the
//! exchange handles a session's requests in order, so when the barrier's
//! `CancelRejected` arrives every order the mass cancel removed has been reported).
//! After a replay no order is left in doubt at the barrier: the invariant holds that
//! the engine's fills are the exchange's. Only when the exchange no longer retains the
//! adapter's position (it lost its state, or its retention; it answers with an
//! open-orders snapshot instead of a replay) can an order end without a report left
//! to say how: the snapshot shows it is not resting, so it is closed (reported
//! cancelled with its last open quantity, an unacknowledged one rejected), counted in
//! [`ExchangeStats::unresolved`] and warned about (fills it had may be missing:
//! reconcile from the exchange's records). New orders may go out right after the
//! barrier is sent.
//!
//! **I/O.** The adapter reaches the exchange through a [`Connect`] seam: TCP
//! ([`Tcp`]) for real use, an in-memory model in the deterministic simulation
//! (`peregrine-orchestrator`'s `tests/sim`). What it logs is kept for the gateway to
//! hand to the engine's log thread ([`Venue::drain_log`]); it never touches a file.

mod config;
mod inbound;
pub mod md;
mod orders;
#[cfg(test)]
mod tests;

pub use config::{ExchangeConfig, ExchangeError, ExchangeStats};

use std::collections::VecDeque;
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use peregrine_client::order_entry::{LeaderWalk, Next};
use peregrine_types::{AccountId, ClientOrderId, InstrumentId, OrderId, Price, Qty, Timestamp};
use peregrine_wire::auth::AccountKey;
use peregrine_wire::field::ListLeg;
use peregrine_wire::field::Pad;
use peregrine_wire::stream::RecvBuffer;
use peregrine_wire::v2::client::{ClientSession, LoginParams, Step};
use peregrine_wire::v2::venue::{NewOrderExt, NewOrderList};
use peregrine_wire::v2::{Cancel, ClientHeartbeat, MassCancel, NewOrder, Outbound, Replace};
use peregrine_wire::WireMessage;

use self::orders::{OrderTable, ReqKind};
use super::{Report, Venue, VenueError, VenueOrder};
use crate::log::LogLines;

/// Bytes of the receive buffer (any number of whole frames; a frame is ≤ 512 bytes).
const RX: usize = 16 * 1024;

/// Reads per poll at most, so a flood of reports cannot starve the gateway's inbox.
const READS_PER_POLL: usize = 8;

/// A connection to the exchange: a TCP socket, or a simulated one.
pub trait Link: std::fmt::Debug {
    /// Reads what arrived (blocking up to the read timeout, or `WouldBlock` once
    /// non-blocking; `Ok(0)` at EOF).
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize>;
    /// Writes what fits (`WouldBlock` when nothing does, once non-blocking).
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize>;
    /// Blocking reads give up after `d` (the login).
    fn set_read_timeout(&mut self, d: Option<Duration>) -> std::io::Result<()>;
    /// Non-blocking from now on (after the login).
    fn set_nonblocking(&mut self, on: bool) -> std::io::Result<()>;
}

/// How the adapter opens a [`Link`].
pub trait Connect: std::fmt::Debug {
    /// The connection type.
    type Link: Link;
    /// Connects to `addr` within `timeout`.
    fn connect(&mut self, addr: SocketAddr, timeout: Duration) -> std::io::Result<Self::Link>;
}

/// TCP with `TCP_NODELAY`, the real thing.
#[derive(Debug, Clone, Copy, Default)]
pub struct Tcp;

impl Connect for Tcp {
    type Link = TcpStream;

    fn connect(&mut self, addr: SocketAddr, timeout: Duration) -> std::io::Result<TcpStream> {
        let s = TcpStream::connect_timeout(&addr, timeout)?;
        s.set_nodelay(true)?;
        s.set_write_timeout(Some(timeout))?;
        Ok(s)
    }
}

impl Link for TcpStream {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        Read::read(self, buf)
    }
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        Write::write(self, buf)
    }
    fn set_read_timeout(&mut self, d: Option<Duration>) -> std::io::Result<()> {
        TcpStream::set_read_timeout(self, d)
    }
    fn set_nonblocking(&mut self, on: bool) -> std::io::Result<()> {
        TcpStream::set_nonblocking(self, on)
    }
}

/// Client order ids of the adapter's own requests (cancels, replaces, the mass
/// cancel and its barrier) have this bit set; a new order's client order id is the
/// engine's order id, which never has it.
const REQUEST_BIT: u64 = 1 << 62;

/// The Peregrine exchange as a [`Venue`].
#[derive(Debug)]
pub struct ExchangeVenue<C: Connect = Tcp> {
    connector: C,
    name: String,
    cfg: ExchangeConfig,
    /// Which of the configured addresses (a cluster's nodes) to try next
    /// (`peregrine_client::order_entry::LeaderWalk`), and the one the next (or the
    /// current) login goes to.
    walk: LeaderWalk,
    addr: SocketAddr,
    key: AccountKey,
    stream: Option<C::Link>,
    /// The session's protocol state (from the challenge on).
    session: Option<ClientSession>,
    /// The next report sequence number of the account's stream to ask for at login
    /// (0: none known, start live).
    resume: u64,
    /// Between login and the end of the replay.
    recovering: bool,
    rx: Box<RecvBuffer<RX>>,
    out: Vec<u8>,
    out_sent: usize,
    heartbeat_ns: u64,
    last_tx_ns: u64,
    last_rx_ns: u64,
    next_connect_ns: u64,
    next_cl: u64,
    mass_cl: u64,
    barrier_cl: u64,
    table: OrderTable,
    pending: VecDeque<Report>,
    stats: ExchangeStats,
    /// The last recovery after a login was an open-orders snapshot, not a replay:
    /// orders still in doubt at the barrier cannot be settled.
    snapshot_recovery: bool,
    log: LogLines,
    /// Test-only: the old behaviour (reject what was unacknowledged at a drop).
    #[cfg(feature = "test-sabotage")]
    sabotage: bool,
}

impl ExchangeVenue {
    /// An adapter named `name` (for logs) over TCP; connects on
    /// [`ExchangeVenue::connect`] or at the first poll.
    pub fn new(name: &str, cfg: ExchangeConfig) -> Result<ExchangeVenue, ExchangeError> {
        ExchangeVenue::with_connect(name, cfg, Tcp)
    }
}

impl<C: Connect> ExchangeVenue<C> {
    /// An adapter that connects through `connector`.
    pub fn with_connect(
        name: &str,
        cfg: ExchangeConfig,
        connector: C,
    ) -> Result<ExchangeVenue<C>, ExchangeError> {
        let problems = cfg.problems("exchange");
        if !problems.is_empty() {
            return Err(ExchangeError::Config(problems.join("; ")));
        }
        let addrs = config::parse_addrs(&cfg.addr)
            .ok_or_else(|| ExchangeError::Config(format!("addr {:?}", cfg.addr)))?;
        let first = addrs[0];
        let mut walk = LeaderWalk::new(addrs);
        let addr = advance(&mut walk, first);
        let key = cfg.account_key()?;
        Ok(ExchangeVenue {
            connector,
            name: name.to_owned(),
            walk,
            addr,
            key,
            stream: None,
            session: None,
            resume: 0,
            recovering: false,
            rx: Box::new(RecvBuffer::new()),
            out: Vec::with_capacity(cfg.out_buffer),
            out_sent: 0,
            heartbeat_ns: u64::from(cfg.heartbeat_ms) * 1_000_000,
            last_tx_ns: 0,
            last_rx_ns: 0,
            next_connect_ns: 0,
            next_cl: first_client_order_id() | REQUEST_BIT,
            mass_cl: 0,
            barrier_cl: 0,
            table: OrderTable::new(cfg.max_orders),
            // Filled only when a session drops (one report per order then in flight).
            pending: VecDeque::with_capacity(1_024),
            stats: ExchangeStats::default(),
            snapshot_recovery: false,
            log: LogLines::default(),
            #[cfg(feature = "test-sabotage")]
            sabotage: false,
            cfg,
        })
    }

    /// Resumes the account's report stream at report `seq` at the next login (the
    /// position a restarted engine journaled: module docs); 0 starts live.
    pub fn with_resume(mut self, seq: u64) -> Self {
        self.resume = seq;
        self
    }

    /// Numbers the adapter's own requests from `n` (the simulation's runs must not
    /// depend on the wall clock); the request bit stays set.
    pub fn with_first_request_id(mut self, n: u64) -> Self {
        self.next_cl = n | REQUEST_BIT;
        self
    }

    /// Test-only: drop the in-doubt state (the old behaviour, which the simulation's
    /// negative control must catch: an order unacknowledged when the session drops is
    /// rejected at once, whatever the exchange did with it).
    #[cfg(feature = "test-sabotage")]
    pub fn sabotage_no_in_doubt(&mut self) {
        self.sabotage = true;
    }

    /// The next report sequence number the adapter will ask for at login (0: live).
    pub fn resume_point(&self) -> u64 {
        self.resume
    }

    /// Logged in, and the replay that follows the login is not over yet (the
    /// reconciliation starts at its end).
    pub fn in_recovery(&self) -> bool {
        self.recovering
    }

    /// Whether the session is logged in.
    pub fn connected(&self) -> bool {
        self.stream.is_some()
    }

    /// Counters.
    pub fn stats(&self) -> ExchangeStats {
        self.stats
    }

    /// Orders the adapter tracks as open.
    pub fn open_orders(&self) -> usize {
        self.table.len()
    }

    /// Connects and logs in, blocking up to `connect_timeout_ms`; then starts the
    /// reconciliation (see the module docs). On failure the next attempt is due
    /// `reconnect_ms` later.
    pub fn connect(&mut self, now_ns: u64) -> Result<(), ExchangeError> {
        self.next_connect_ns = now_ns + self.cfg.reconnect_ms * 1_000_000;
        let result = self.login();
        match result {
            Ok(stream) => {
                self.stream = Some(stream);
                self.walk.logged_in(self.addr);
                self.stats.logins += 1;
                self.last_rx_ns = now_ns;
                self.last_tx_ns = now_ns;
                self.recovering = true;
                let at = if self.resume == 0 {
                    "the live end".to_string()
                } else {
                    self.resume.to_string()
                };
                self.log.push(format!(
                    "venue {}: logged in to {} as account {}, resuming the report stream at {at}",
                    self.name, self.addr, self.cfg.account
                ));
                Ok(())
            }
            Err(e) => {
                self.stats.disconnects += 1;
                self.next_address(&e, now_ns);
                Err(e)
            }
        }
    }

    /// Where the next login goes after `e`, as the walk says: the leader a follower
    /// named (at once), or the next configured address (a node down, or no leader
    /// known yet: after the `retry_after_ms` it asked for). Other failures (a
    /// rejected login, a protocol violation) try the same address again.
    fn next_address(&mut self, e: &ExchangeError, now_ns: u64) {
        match e {
            ExchangeError::Redirected {
                address,
                retry_after_ms,
                ..
            } => {
                let followed = self.walk.redirected(*address, *retry_after_ms);
                self.next_connect_ns = if followed {
                    now_ns
                } else {
                    now_ns + u64::from(*retry_after_ms) * 1_000_000
                };
                self.addr = advance(&mut self.walk, self.addr);
            }
            ExchangeError::Connect(..) | ExchangeError::Closed | ExchangeError::LoginTimeout(_) => {
                self.addr = advance(&mut self.walk, self.addr);
            }
            _ => {}
        }
    }

    fn login(&mut self) -> Result<C::Link, ExchangeError> {
        let timeout = Duration::from_millis(self.cfg.connect_timeout_ms);
        let io = ExchangeError::Io;
        let mut stream = self
            .connector
            .connect(self.addr, timeout)
            .map_err(|e| ExchangeError::Connect(self.addr, e))?;
        let account = AccountId(self.cfg.account);
        let mut session = ClientSession::new(LoginParams {
            heartbeat_ms: self.cfg.heartbeat_ms,
            ..LoginParams::trading(account, self.resume)
        });
        *self.rx = RecvBuffer::new();
        let deadline = Instant::now() + timeout;
        loop {
            let m = loop {
                if let Some(m) = self.rx.next(Outbound::decode)? {
                    break m;
                }
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(ExchangeError::LoginTimeout(self.cfg.connect_timeout_ms));
                }
                stream.set_read_timeout(Some(left)).map_err(io)?;
                match stream.read(self.rx.spare()) {
                    Ok(0) => return Err(ExchangeError::Closed),
                    Ok(k) => self.rx.commit(k),
                    Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                        return Err(ExchangeError::LoginTimeout(self.cfg.connect_timeout_ms))
                    }
                    Err(e) if e.kind() == ErrorKind::Interrupted => {}
                    Err(e) => return Err(io(e)),
                }
            };
            match session.on_message(&m, &self.key)? {
                Step::SendLogin(login) => {
                    let mut buf = [0u8; peregrine_wire::MAX_MESSAGE_SIZE];
                    let n = login
                        .encode(&mut buf)
                        .map_err(|_| ExchangeError::Unexpected("encode"))?;
                    write_all(&mut stream, &buf[..n]).map_err(io)?;
                }
                Step::LoggedIn(a) => {
                    self.heartbeat_ns = u64::from(a.heartbeat_interval_ms.max(1)) * 1_000_000;
                    break;
                }
                Step::Rejected {
                    reason,
                    retry_after_ms,
                } => {
                    return Err(ExchangeError::LoginRejected {
                        reason,
                        retry_after_ms,
                    })
                }
                Step::Redirect {
                    leader_id,
                    address,
                    retry_after_ms,
                } => {
                    return Err(ExchangeError::Redirected {
                        leader_id,
                        address: address
                            .as_ref()
                            .and_then(|a| a.as_text())
                            .and_then(peregrine_client::order_entry::resolve_leader),
                        retry_after_ms,
                    })
                }
                _ => return Err(ExchangeError::Unexpected("message before the login answer")),
            }
        }
        // What follows the answer (definitions, the replay) stays in `rx` for `read`.
        self.session = Some(session);
        stream.set_nonblocking(true).map_err(io)?;
        self.out.clear();
        self.out_sent = 0;
        Ok(stream)
    }

    /// Mass cancel + barrier after the replay that follows a login.
    pub(super) fn reconcile(&mut self, now_ns: u64) {
        self.mass_cl = self.cl();
        self.barrier_cl = self.cl();
        let mass = MassCancel {
            client_order_id: ClientOrderId(self.mass_cl),
            instrument: None,
            side: None,
        };
        let barrier = Cancel {
            client_order_id: ClientOrderId(self.barrier_cl),
            order_id: OrderId(0),
            instrument: InstrumentId(1),
        };
        self.queue(&mass, now_ns);
        self.queue(&barrier, now_ns);
        if let Err(e) = self.flush() {
            self.disconnect(e, now_ns);
        }
    }

    fn cl(&mut self) -> u64 {
        let c = self.next_cl;
        self.next_cl += 1;
        c
    }

    fn room(&mut self, n: usize) -> bool {
        if self.out.len() + n <= self.out.capacity() {
            return true;
        }
        if self.flush().is_err() {
            return false;
        }
        self.out.len() + n <= self.out.capacity()
    }

    /// Encodes `msg` into the outbound buffer (the caller checked [`Self::room`]).
    fn queue<M: WireMessage>(&mut self, msg: &M, now_ns: u64) {
        let mut buf = [0u8; peregrine_wire::MAX_MESSAGE_SIZE];
        if let Ok(n) = msg.encode(&mut buf) {
            if self.out.len() + n <= self.out.capacity() {
                self.out.extend_from_slice(&buf[..n]);
                self.last_tx_ns = now_ns;
            }
        }
    }

    /// Writes what the socket takes now.
    fn flush(&mut self) -> Result<(), ExchangeError> {
        let Some(stream) = self.stream.as_mut() else {
            return Ok(());
        };
        while self.out_sent < self.out.len() {
            match stream.write(&self.out[self.out_sent..]) {
                Ok(0) => return Err(ExchangeError::Closed),
                Ok(k) => self.out_sent += k,
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(ExchangeError::Io(e)),
            }
        }
        if self.out_sent == self.out.len() {
            self.out.clear();
        } else {
            self.out.drain(..self.out_sent); // a memmove within the capacity
        }
        self.out_sent = 0;
        Ok(())
    }

    /// Queues and writes; a write failure drops the session (whose reports settle
    /// what was queued).
    fn send<M: WireMessage>(&mut self, msg: &M, now_ns: u64) {
        self.queue(msg, now_ns);
        if let Err(e) = self.flush() {
            self.disconnect(e, now_ns);
        }
    }

    /// Drops the session and settles what was in flight (module docs).
    fn disconnect(&mut self, why: ExchangeError, now_ns: u64) {
        if self.stream.take().is_none() {
            return;
        }
        self.session = None;
        self.recovering = false;
        self.stats.disconnects += 1;
        self.out.clear();
        self.out_sent = 0;
        self.barrier_cl = 0;
        self.mass_cl = 0;
        self.next_connect_ns = now_ns + self.cfg.reconnect_ms * 1_000_000;
        let was = self.addr;
        // The node that served first (`LeaderWalk::logged_in`), then the others.
        self.addr = advance(&mut self.walk, was);
        #[cfg(feature = "test-sabotage")]
        if self.sabotage {
            return self.disconnect_sabotaged(why, was);
        }
        let (unacked, replaces) = self.table.on_disconnect();
        self.log.push(format!(
            "venue {}: exchange {} disconnected: {why}; {} open orders in doubt ({unacked} \
             not yet acknowledged, {replaces} with a replace on its way) until the replay \
             after the next login settles them (retrying every {} ms)",
            self.name,
            was,
            self.table.len(),
            self.cfg.reconnect_ms
        ));
    }

    /// Test-only: the old settlement at a drop, which guessed (module docs).
    #[cfg(feature = "test-sabotage")]
    fn disconnect_sabotaged(&mut self, why: ExchangeError, was: SocketAddr) {
        let (lost, replaces) = self.table.forget_unacknowledged();
        for engine_id in lost {
            self.pending.push_back(Report::Rejected {
                engine_id,
                reason: super::REASON_DISCONNECTED,
            });
        }
        for engine_id in replaces {
            self.pending.push_back(Report::ReplaceRejected {
                engine_id,
                reason: super::REASON_DISCONNECTED,
            });
        }
        self.log.push(format!(
            "venue {}: exchange {was} disconnected: {why} (sabotaged)",
            self.name
        ));
    }

    fn unknown(&mut self, what: &str, id: u64) {
        self.stats.unknown_reports += 1;
        self.log.push(format!(
            "venue {}: {what} about unknown id {id} ignored",
            self.name
        ));
    }

    fn send_cancel(&mut self, engine_id: u64, now_ns: u64) -> Result<(), VenueError> {
        if !self.room(Cancel::SIZE) {
            return Err(VenueError::Busy);
        }
        let cl = self.cl();
        let Some(t) = self.table.get_mut(engine_id) else {
            return Err(VenueError::UnknownOrder(engine_id));
        };
        t.cancel_cl = cl;
        t.want_cancel = false;
        let msg = Cancel {
            client_order_id: ClientOrderId(cl),
            order_id: OrderId(t.order_id),
            instrument: t.instrument,
        };
        self.table.insert_request(cl, engine_id, ReqKind::Cancel);
        self.send(&msg, now_ns);
        Ok(())
    }

    fn send_replace(
        &mut self,
        engine_id: u64,
        price: Price,
        qty: Qty,
        now_ns: u64,
    ) -> Result<(), VenueError> {
        if !self.room(Replace::SIZE) {
            return Err(VenueError::Busy);
        }
        let cl = self.cl();
        let Some(t) = self.table.get_mut(engine_id) else {
            return Err(VenueError::UnknownOrder(engine_id));
        };
        t.replace_cl = cl;
        t.want_replace = None;
        let msg = Replace {
            client_order_id: ClientOrderId(cl),
            order_id: OrderId(t.order_id),
            new_price: price,
            new_qty: qty,
            instrument: t.instrument,
        };
        self.table.insert_request(cl, engine_id, ReqKind::Replace);
        self.send(&msg, now_ns);
        Ok(())
    }
}

/// The walk's next address (`fallback` if it has none). Its waits between rounds are
/// not used: every attempt here is already paced by `reconnect_ms`, or by the
/// `retry_after_ms` a node asked for.
fn advance(walk: &mut LeaderWalk, fallback: SocketAddr) -> SocketAddr {
    // A wait ends a round; the next call starts the next one.
    for _ in 0..2 {
        if let Next::Try(a) = walk.next() {
            return a;
        }
    }
    fallback
}

/// Writes all of `buf` (the login, blocking with the write timeout).
fn write_all<L: Link>(l: &mut L, mut buf: &[u8]) -> std::io::Result<()> {
    while !buf.is_empty() {
        match l.write(buf) {
            Ok(0) => return Err(ErrorKind::WriteZero.into()),
            Ok(n) => buf = &buf[n..],
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Client order ids of requests continue from the wall clock in nanoseconds (with
/// [`REQUEST_BIT`]), so a restarted engine does not reuse the ids of an earlier run on
/// the same account (the protocol asks for ids unique per account per trading day);
/// 1 if the clock is before 1970.
fn first_client_order_id() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64)
        .max(1)
}

impl<C: Connect> Venue for ExchangeVenue<C> {
    /// Restored orders are in doubt until the replay after the next login settles
    /// them (one never acknowledged is known by its client order id, its engine id),
    /// and the reconciliation after it cancels what still rests (module docs).
    fn restore(&mut self, o: &super::RestoredOrder) -> Option<Report> {
        self.table
            .insert_restored(o.engine_id, o.venue_id, o.instrument, o.leaves);
        None
    }

    fn report_cursor(&self) -> Option<u64> {
        (self.resume > 0).then_some(self.resume)
    }

    fn drain_log(&mut self, out: &mut dyn FnMut(String)) {
        self.log.drain(out);
    }

    fn in_doubt(&self) -> usize {
        self.table.in_doubt()
    }

    fn submit(&mut self, order: VenueOrder, now_ns: u64) -> Result<(), VenueError> {
        if self.stream.is_none() {
            return Err(VenueError::Disconnected);
        }
        if self.table.is_full() || !self.room(NewOrder::SIZE.max(NewOrderExt::SIZE)) {
            return Err(VenueError::Busy);
        }
        // A new order's client order id is its engine id (unique across engine runs),
        // so a replay after a drop or a restart recognises it (module docs).
        let cl = if order.engine_id & REQUEST_BIT == 0 {
            order.engine_id
        } else {
            self.cl()
        };
        self.table
            .insert_new(order.engine_id, cl, order.instrument, order.qty);
        if !order.ext.is_plain() {
            // A stop, trailing stop or iceberg: the version-3 `NewOrderExt`, answered
            // by `AcceptedExt` (or `Rejected`), then `Triggered` when it fires.
            let e = order.ext;
            let msg = NewOrderExt {
                client_order_id: ClientOrderId(cl),
                price: order.price,
                qty: order.qty,
                expire_at: Timestamp(order.expire_at),
                stop_price: e.stop_price,
                display_qty: e.display_qty,
                instrument: order.instrument,
                trail: e.trail,
                side: order.side,
                order_type: order.order_type,
                tif: order.tif,
                stp: order.stp,
                trigger: e.trigger,
                trail_unit: e.trail_unit,
                reserved: Pad,
            };
            self.send(&msg, now_ns);
            return Ok(());
        }
        let msg = NewOrder {
            client_order_id: ClientOrderId(cl),
            price: order.price,
            qty: order.qty,
            expire_at: Timestamp(order.expire_at),
            instrument: order.instrument,
            side: order.side,
            order_type: order.order_type,
            tif: order.tif,
            stp: order.stp,
        };
        // A failed write drops the session, whose settlement reports this order.
        self.send(&msg, now_ns);
        Ok(())
    }

    fn submit_list(
        &mut self,
        kind: peregrine_types::ListKind,
        legs: &[VenueOrder],
        now_ns: u64,
    ) -> Result<(), VenueError> {
        if self.stream.is_none() {
            return Err(VenueError::Disconnected);
        }
        let n = kind.legs();
        // The orchestrator sends exactly `n` legs with consecutive engine ids, one
        // instrument: the `ListStatus` answers name leg 0's client order id only, and
        // a rejected list's legs are found from it (`inbound.rs`).
        let consecutive = legs
            .iter()
            .enumerate()
            .all(|(i, l)| l.engine_id == legs[0].engine_id + i as u64);
        if legs.len() != n
            || !consecutive
            || legs[0].engine_id & REQUEST_BIT != 0
            || legs.iter().any(|l| l.instrument != legs[0].instrument)
        {
            return Err(VenueError::Unsupported);
        }
        if !self.table.has_room(n) || !self.room(NewOrderList::SIZE) {
            return Err(VenueError::Busy);
        }
        let mut wire = [ListLeg::UNUSED; 3];
        for (w, o) in wire.iter_mut().zip(legs) {
            // Each leg's client order id is its engine id, as for a single order.
            self.table
                .insert_new(o.engine_id, o.engine_id, o.instrument, o.qty);
            *w = ListLeg {
                client_order_id: ClientOrderId(o.engine_id),
                price: o.price,
                qty: o.qty,
                expire_at: Timestamp(o.expire_at),
                stop_price: o.ext.stop_price,
                display_qty: o.ext.display_qty,
                trail: o.ext.trail,
                side: o.side,
                order_type: o.order_type,
                tif: o.tif,
                stp: o.stp,
                trigger: o.ext.trigger,
                trail_unit: o.ext.trail_unit,
            };
        }
        let msg = NewOrderList::new(
            ClientOrderId(legs[0].engine_id),
            legs[0].instrument,
            kind,
            wire,
        );
        // A failed write drops the session, whose settlement reports every leg.
        self.send(&msg, now_ns);
        Ok(())
    }

    fn cancel(&mut self, engine_id: u64, now_ns: u64) -> Result<(), VenueError> {
        let connected = self.stream.is_some();
        let Some(t) = self.table.get_mut(engine_id) else {
            return Err(VenueError::UnknownOrder(engine_id));
        };
        if t.cancel_cl != 0 {
            return Ok(()); // one is on its way
        }
        if t.in_doubt || !connected || t.order_id == 0 {
            // After the ack, or by the reconciliation after the next login.
            t.want_cancel = true;
            return Ok(());
        }
        self.send_cancel(engine_id, now_ns)
    }

    fn replace(
        &mut self,
        engine_id: u64,
        price: Price,
        qty: Qty,
        now_ns: u64,
    ) -> Result<(), VenueError> {
        if self.stream.is_none() {
            return Err(VenueError::Disconnected);
        }
        let Some(t) = self.table.get_mut(engine_id) else {
            return Err(VenueError::UnknownOrder(engine_id));
        };
        if t.in_doubt {
            return Err(VenueError::Disconnected);
        }
        if t.replace_cl != 0 || t.want_replace.is_some() {
            return Err(VenueError::Busy);
        }
        if t.order_id == 0 {
            t.want_replace = Some((price, qty));
            return Ok(());
        }
        self.send_replace(engine_id, price, qty, now_ns)
    }

    fn poll(&mut self, now_ns: u64, out: &mut dyn FnMut(Report)) -> usize {
        let mut n = 0;
        if self.stream.is_none() && now_ns >= self.next_connect_ns {
            if let Err(e) = self.connect(now_ns) {
                self.log.push(format!(
                    "venue {}: {e}; retrying in {} ms",
                    self.name, self.cfg.reconnect_ms
                ));
            }
        }
        if self.stream.is_some() {
            let result = self.read(now_ns, out).and_then(|k| {
                n += k;
                if now_ns.saturating_sub(self.last_tx_ns) >= self.heartbeat_ns {
                    self.queue(&ClientHeartbeat {}, now_ns);
                }
                self.flush()?;
                let silent = now_ns.saturating_sub(self.last_rx_ns);
                if silent > 3 * self.heartbeat_ns {
                    return Err(ExchangeError::Silent(silent / 1_000_000));
                }
                Ok(())
            });
            if let Err(e) = result {
                self.disconnect(e, now_ns);
            }
        }
        while let Some(r) = self.pending.pop_front() {
            out(r);
            n += 1;
        }
        n
    }
}
