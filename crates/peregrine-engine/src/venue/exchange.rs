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
//! ([`orders`]) maps it, and the exchange order id from `Accepted`, back to the
//! engine's order id. A cancel or replace asked before the order is acknowledged is
//! sent when `Accepted` arrives. Orders go out as GTC limit orders with self-trade
//! prevention off, so a `Cancelled` always ends the order.
//!
//! **Bad bytes.** Any protocol violation (an undecodable frame, a session sequence
//! gap, a second login answer), a closed socket, an I/O error or three heartbeat
//! intervals of silence disconnect the session with a typed [`ExchangeError`], logged
//! on stderr. Nothing the socket delivers can panic the adapter. A report about an
//! order the adapter does not know is logged and counted, not fatal.
//!
//! **Disconnect and reconnect.** When the session drops, requests are refused with
//! [`VenueError::Disconnected`] (cancels of open orders are accepted and remembered),
//! and what was in flight is settled like this:
//!
//! * orders the exchange had not acknowledged are reported `Rejected` with
//!   [`super::REASON_DISCONNECTED`] (the engine shows `venue_down`);
//! * a replace on its way is reported `ReplaceRejected` the same way;
//! * acknowledged orders stay open, *in doubt*: protocol version 1 keeps resting
//!   orders on the book when a session drops and has no retransmission.
//!
//! The adapter reconnects every `reconnect_ms`. After every login (the first one
//! too, since a previous run may have left orders of this account resting) it sends
//! a `MassCancel` of the account's orders in every instrument, then a `Cancel` of
//! order id 0 as a barrier: the exchange handles a session's requests in order, so
//! when the barrier's `CancelRejected` arrives, every order the mass cancel removed
//! has been reported. In-doubt orders it removed are reported `Cancelled` with the
//! quantity the exchange cancelled; any still in doubt at the barrier were no longer
//! resting (filled or cancelled while the session was down, reports the exchange
//! could not deliver) and are reported `Cancelled` with their last known open
//! quantity, with a warning on stderr: fills missed that way must be reconciled from
//! the exchange's records. New orders may go out right after the barrier is sent.

mod orders;
#[cfg(test)]
mod tests;

use std::collections::VecDeque;
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use peregrine_types::{
    AccountId, ClientOrderId, InstrumentId, OrderId, OrderType, Price, Qty, StpMode, TimeInForce,
    Timestamp,
};
use peregrine_wire::orders::{Cancel, MassCancel, NewOrder, Replace};
use peregrine_wire::session::{ClientHeartbeat, Login};
use peregrine_wire::stream::RecvBuffer;
use peregrine_wire::{Credential, DecodeError, Outbound, RequestKind, WireMessage};
use serde::{Deserialize, Serialize};

use self::orders::{OrderTable, ReqKind};
use super::{Report, Venue, VenueError, VenueOrder, REASON_DISCONNECTED};

/// Bytes of the receive buffer (any number of whole frames; a frame is ≤ 512 bytes).
const RX: usize = 16 * 1024;

/// Reads per poll at most, so a flood of reports cannot starve the gateway's inbox.
const READS_PER_POLL: usize = 8;

/// Exchange venue settings (`[[venues]] exchange = { ... }` in `engine.toml`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExchangeConfig {
    /// Order-entry address of the exchange, `IP:port`.
    pub addr: String,
    /// Trading account to log in as.
    pub account: u32,
    /// Its password (1..=16 bytes; the wire credential).
    pub password: String,
    /// Heartbeat interval asked for at login, ms (the exchange's answer is used);
    /// default 1000.
    #[serde(default = "defaults::heartbeat_ms")]
    pub heartbeat_ms: u32,
    /// Connect + login timeout, ms; default 2000.
    #[serde(default = "defaults::connect_timeout_ms")]
    pub connect_timeout_ms: u64,
    /// Pause between reconnection attempts, ms; default 1000.
    #[serde(default = "defaults::reconnect_ms")]
    pub reconnect_ms: u64,
    /// Open orders tracked at once (maps reserved up front); more are refused as
    /// busy. Default 65,536.
    #[serde(default = "defaults::max_orders")]
    pub max_orders: usize,
    /// Outbound buffer, bytes; a request that does not fit is refused as busy.
    /// Default 65,536.
    #[serde(default = "defaults::out_buffer")]
    pub out_buffer: usize,
}

mod defaults {
    pub fn heartbeat_ms() -> u32 {
        1_000
    }
    pub fn connect_timeout_ms() -> u64 {
        2_000
    }
    pub fn reconnect_ms() -> u64 {
        1_000
    }
    pub fn max_orders() -> usize {
        65_536
    }
    pub fn out_buffer() -> usize {
        65_536
    }
}

impl ExchangeConfig {
    /// Settings with every optional field at its default.
    pub fn new(addr: &str, account: u32, password: &str) -> ExchangeConfig {
        ExchangeConfig {
            addr: addr.to_owned(),
            account,
            password: password.to_owned(),
            heartbeat_ms: defaults::heartbeat_ms(),
            connect_timeout_ms: defaults::connect_timeout_ms(),
            reconnect_ms: defaults::reconnect_ms(),
            max_orders: defaults::max_orders(),
            out_buffer: defaults::out_buffer(),
        }
    }

    /// Every problem, each prefixed with `at` (e.g. `venues[0].exchange`).
    pub fn problems(&self, at: &str) -> Vec<String> {
        let mut p = Vec::new();
        if self.addr.parse::<SocketAddr>().is_err() {
            p.push(format!("{at}.addr {:?}: expected IP:port", self.addr));
        }
        if self.account == 0 {
            p.push(format!("{at}.account must be > 0"));
        }
        if Credential::from_text(&self.password).is_none() || self.password.is_empty() {
            p.push(format!("{at}.password must be 1..=16 bytes"));
        }
        if self.heartbeat_ms == 0 {
            p.push(format!("{at}.heartbeat_ms must be > 0"));
        }
        if self.connect_timeout_ms == 0 {
            p.push(format!("{at}.connect_timeout_ms must be > 0"));
        }
        if self.max_orders == 0 || self.max_orders > 1 << 24 {
            p.push(format!("{at}.max_orders must be 1..=16777216"));
        }
        if self.out_buffer < peregrine_wire::MAX_MESSAGE_SIZE {
            p.push(format!(
                "{at}.out_buffer must be >= {}",
                peregrine_wire::MAX_MESSAGE_SIZE
            ));
        }
        p
    }
}

/// Why the session ended (or never started).
#[derive(Debug, thiserror::Error)]
pub enum ExchangeError {
    /// The settings cannot work (see [`ExchangeConfig::problems`]).
    #[error("bad settings: {0}")]
    Config(String),
    /// Connecting failed.
    #[error("connecting to {0}: {1}")]
    Connect(SocketAddr, std::io::Error),
    /// A read or write failed.
    #[error("socket: {0}")]
    Io(std::io::Error),
    /// The exchange closed the connection.
    #[error("the exchange closed the connection")]
    Closed,
    /// The exchange refused the login.
    #[error("login refused, reason {0}")]
    LoginRejected(u16),
    /// No login answer in time.
    #[error("no login answer within {0} ms")]
    LoginTimeout(u64),
    /// Bytes that are not the protocol.
    #[error("protocol violation: {0}")]
    Protocol(#[from] DecodeError),
    /// A session sequence number was skipped or repeated.
    #[error("session sequence gap: expected {expected}, got {got}")]
    SequenceGap {
        /// The next number expected.
        expected: u64,
        /// The number received.
        got: u64,
    },
    /// A message that cannot come now.
    #[error("unexpected {0}")]
    Unexpected(&'static str),
    /// Nothing received for three heartbeat intervals.
    #[error("the exchange was silent for {0} ms")]
    Silent(u64),
}

/// What the adapter counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExchangeStats {
    /// Successful logins.
    pub logins: u64,
    /// Sessions lost (or connection attempts that failed).
    pub disconnects: u64,
    /// Reports about orders or requests the adapter did not know.
    pub unknown_reports: u64,
    /// Orders still in doubt at a reconciliation barrier (fills may have been missed).
    pub reconciled_gone: u64,
}

/// The Peregrine exchange as a [`Venue`].
#[derive(Debug)]
pub struct ExchangeVenue {
    name: String,
    cfg: ExchangeConfig,
    addr: SocketAddr,
    credential: Credential,
    stream: Option<TcpStream>,
    rx: Box<RecvBuffer<RX>>,
    out: Vec<u8>,
    out_sent: usize,
    expected_seq: u64,
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
}

impl ExchangeVenue {
    /// An adapter named `name` (for logs); connects on [`ExchangeVenue::connect`] or
    /// at the first poll.
    pub fn new(name: &str, cfg: ExchangeConfig) -> Result<ExchangeVenue, ExchangeError> {
        let problems = cfg.problems("exchange");
        if !problems.is_empty() {
            return Err(ExchangeError::Config(problems.join("; ")));
        }
        let addr = cfg
            .addr
            .parse()
            .map_err(|_| ExchangeError::Config(format!("addr {:?}", cfg.addr)))?;
        let credential = Credential::from_text(&cfg.password)
            .ok_or_else(|| ExchangeError::Config("password longer than 16 bytes".into()))?;
        Ok(ExchangeVenue {
            name: name.to_owned(),
            addr,
            credential,
            stream: None,
            rx: Box::new(RecvBuffer::new()),
            out: Vec::with_capacity(cfg.out_buffer),
            out_sent: 0,
            expected_seq: 1,
            heartbeat_ns: u64::from(cfg.heartbeat_ms) * 1_000_000,
            last_tx_ns: 0,
            last_rx_ns: 0,
            next_connect_ns: 0,
            next_cl: first_client_order_id(),
            mass_cl: 0,
            barrier_cl: 0,
            table: OrderTable::new(cfg.max_orders),
            // Filled only when a session drops (one report per order then in flight).
            pending: VecDeque::with_capacity(1_024),
            stats: ExchangeStats::default(),
            cfg,
        })
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
                self.stats.logins += 1;
                self.last_rx_ns = now_ns;
                self.last_tx_ns = now_ns;
                eprintln!(
                    "venue {}: logged in to {} as account {}",
                    self.name, self.addr, self.cfg.account
                );
                self.reconcile(now_ns);
                Ok(())
            }
            Err(e) => {
                self.stats.disconnects += 1;
                Err(e)
            }
        }
    }

    fn login(&mut self) -> Result<TcpStream, ExchangeError> {
        let timeout = Duration::from_millis(self.cfg.connect_timeout_ms);
        let io = ExchangeError::Io;
        let mut stream = TcpStream::connect_timeout(&self.addr, timeout)
            .map_err(|e| ExchangeError::Connect(self.addr, e))?;
        stream.set_nodelay(true).map_err(io)?;
        stream.set_write_timeout(Some(timeout)).map_err(io)?;
        let login = Login {
            account: AccountId(self.cfg.account),
            heartbeat_interval_ms: self.cfg.heartbeat_ms,
            credential: self.credential,
        };
        let mut buf = [0u8; Login::SIZE];
        let n = login
            .encode(&mut buf)
            .map_err(|_| ExchangeError::Unexpected("encode"))?;
        stream.write_all(&buf[..n]).map_err(io)?;
        *self.rx = RecvBuffer::new();
        let deadline = Instant::now() + timeout;
        let answer = loop {
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
        match answer {
            Outbound::LoginAccepted(a) if a.session_seq == 1 => {
                self.heartbeat_ns = u64::from(a.heartbeat_interval_ms.max(1)) * 1_000_000;
            }
            Outbound::LoginAccepted(a) => {
                return Err(ExchangeError::SequenceGap {
                    expected: 1,
                    got: a.session_seq,
                })
            }
            Outbound::LoginRejected(r) => return Err(ExchangeError::LoginRejected(r.reason.0)),
            _ => return Err(ExchangeError::Unexpected("message before the login answer")),
        }
        self.expected_seq = 2;
        stream.set_nonblocking(true).map_err(io)?;
        self.out.clear();
        self.out_sent = 0;
        Ok(stream)
    }

    /// Mass cancel + barrier after a login.
    fn reconcile(&mut self, now_ns: u64) {
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
        self.stats.disconnects += 1;
        self.out.clear();
        self.out_sent = 0;
        self.barrier_cl = 0;
        self.mass_cl = 0;
        self.next_connect_ns = now_ns + self.cfg.reconnect_ms * 1_000_000;
        let pending = &mut self.pending;
        let mut lost = 0;
        let mut replaces = Vec::new();
        self.table.on_disconnect(
            &mut |engine_id| {
                lost += 1;
                pending.push_back(Report::Rejected {
                    engine_id,
                    reason: REASON_DISCONNECTED,
                });
            },
            &mut |engine_id| replaces.push(engine_id),
        );
        for engine_id in replaces {
            self.pending.push_back(Report::ReplaceRejected {
                engine_id,
                reason: REASON_DISCONNECTED,
            });
        }
        eprintln!(
            "venue {}: exchange {} disconnected: {why}; {lost} unacknowledged orders \
             rejected, {} open orders in doubt until the next login (retrying every {} ms)",
            self.name,
            self.addr,
            self.table.len(),
            self.cfg.reconnect_ms
        );
    }

    fn unknown(&mut self, what: &str, id: u64) {
        self.stats.unknown_reports += 1;
        eprintln!("venue {}: {what} about unknown id {id} ignored", self.name);
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

    /// Reads what arrived and turns it into reports.
    fn read(&mut self, now_ns: u64, out: &mut dyn FnMut(Report)) -> Result<usize, ExchangeError> {
        let mut n = 0;
        for _ in 0..READS_PER_POLL {
            let Some(stream) = self.stream.as_mut() else {
                return Ok(n);
            };
            match stream.read(self.rx.spare()) {
                Ok(0) => return Err(ExchangeError::Closed),
                Ok(k) => {
                    self.rx.commit(k);
                    self.last_rx_ns = now_ns;
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(n),
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(ExchangeError::Io(e)),
            }
            while let Some(m) = self.rx.next(Outbound::decode)? {
                n += self.on_message(m, now_ns, out)?;
            }
        }
        Ok(n)
    }

    /// One message from the exchange.
    fn on_message(
        &mut self,
        m: Outbound,
        now_ns: u64,
        out: &mut dyn FnMut(Report),
    ) -> Result<usize, ExchangeError> {
        if m.session_seq() != self.expected_seq {
            return Err(ExchangeError::SequenceGap {
                expected: self.expected_seq,
                got: m.session_seq(),
            });
        }
        self.expected_seq += 1;
        let report = match m {
            Outbound::LoginAccepted(_) | Outbound::LoginRejected(_) => {
                return Err(ExchangeError::Unexpected("a second login answer"))
            }
            Outbound::ServerHeartbeat(_) => return Ok(0),
            Outbound::Accepted(a) => {
                return Ok(self.on_accepted(a.client_order_id.0, a.order_id.0, now_ns, out))
            }
            Outbound::Rejected(r) => match self.table.take_request(r.client_order_id.0) {
                Some((engine_id, ReqKind::New)) => {
                    self.table.remove(engine_id);
                    Report::Rejected {
                        engine_id,
                        reason: r.reason.0,
                    }
                }
                _ => {
                    self.unknown("Rejected", r.client_order_id.0);
                    return Ok(0);
                }
            },
            Outbound::Fill(f) => {
                let Some(engine_id) = self.table.by_order(f.order_id.0) else {
                    self.unknown("Fill", f.order_id.0);
                    return Ok(0);
                };
                if f.leaves_qty.is_zero() {
                    self.table.remove(engine_id);
                } else if let Some(t) = self.table.get_mut(engine_id) {
                    t.leaves = f.leaves_qty.lots();
                }
                Report::Fill {
                    engine_id,
                    price: f.price,
                    qty: f.qty,
                    leaves: f.leaves_qty,
                }
            }
            Outbound::Cancelled(c) => {
                if c.request_id.0 != 0 && c.request_id.0 != self.mass_cl {
                    self.table.take_request(c.request_id.0);
                }
                match self.table.by_order(c.order_id.0) {
                    Some(engine_id) => {
                        self.table.remove(engine_id);
                        Report::Cancelled {
                            engine_id,
                            qty: c.cancelled_qty,
                        }
                    }
                    None if c.request_id.0 == self.mass_cl => return Ok(0), // an order of a previous session
                    None => {
                        self.unknown("Cancelled", c.order_id.0);
                        return Ok(0);
                    }
                }
            }
            Outbound::Replaced(r) => {
                self.table.take_request(r.client_order_id.0);
                let Some(engine_id) = self.table.by_order(r.order_id.0) else {
                    self.unknown("Replaced", r.order_id.0);
                    return Ok(0);
                };
                if let Some(t) = self.table.get_mut(engine_id) {
                    t.leaves = r.new_qty.lots();
                    t.replace_cl = 0;
                }
                Report::Replaced {
                    engine_id,
                    price: r.new_price,
                    qty: r.new_qty,
                }
            }
            Outbound::CancelRejected(c) => {
                let cl = c.client_order_id.0;
                if cl == self.barrier_cl && c.request_kind == RequestKind::Cancel {
                    return Ok(self.end_reconcile(out));
                }
                if cl == self.mass_cl {
                    return Ok(0); // nothing of ours was resting
                }
                match self.table.take_request(cl) {
                    Some((engine_id, ReqKind::Cancel)) => {
                        if let Some(t) = self.table.get_mut(engine_id) {
                            t.cancel_cl = 0;
                        }
                        Report::CancelRejected {
                            engine_id,
                            reason: c.reason.0,
                        }
                    }
                    Some((engine_id, ReqKind::Replace)) => {
                        if let Some(t) = self.table.get_mut(engine_id) {
                            t.replace_cl = 0;
                        }
                        Report::ReplaceRejected {
                            engine_id,
                            reason: c.reason.0,
                        }
                    }
                    _ => {
                        self.unknown("CancelRejected", cl);
                        return Ok(0);
                    }
                }
            }
        };
        out(report);
        Ok(1)
    }

    fn on_accepted(
        &mut self,
        cl: u64,
        order_id: u64,
        now_ns: u64,
        out: &mut dyn FnMut(Report),
    ) -> usize {
        let Some((engine_id, ReqKind::New)) = self.table.take_request(cl) else {
            self.unknown("Accepted", cl);
            return 0;
        };
        let Some(t) = self.table.acked(engine_id, order_id) else {
            return 0;
        };
        out(Report::Ack {
            engine_id,
            venue_id: order_id,
        });
        let mut n = 1;
        // Requests asked before the ack go out now; one that cannot is refused.
        if t.want_cancel {
            if let Err(e) = self.send_cancel(engine_id, now_ns) {
                out(Report::CancelRejected {
                    engine_id,
                    reason: refusal(e),
                });
                n += 1;
            }
        } else if let Some((price, qty)) = t.want_replace {
            if let Err(e) = self.send_replace(engine_id, price, qty, now_ns) {
                out(Report::ReplaceRejected {
                    engine_id,
                    reason: refusal(e),
                });
                n += 1;
            }
        }
        n
    }

    /// The barrier came back: orders still in doubt are gone.
    fn end_reconcile(&mut self, out: &mut dyn FnMut(Report)) -> usize {
        self.barrier_cl = 0;
        let mut n = 0;
        self.table.drop_in_doubt(&mut |engine_id, leaves| {
            n += 1;
            out(Report::Cancelled {
                engine_id,
                qty: Qty::from_raw(leaves),
            });
        });
        if n > 0 {
            self.stats.reconciled_gone += n as u64;
            eprintln!(
                "venue {}: WARNING: {n} orders open before the disconnect were no longer \
                 resting at the exchange; reported cancelled, but fills during the outage \
                 may have been missed: reconcile from the exchange's records",
                self.name
            );
        }
        n
    }
}

/// Client order ids continue from the wall clock in nanoseconds, so a restarted
/// engine does not reuse the ids of an earlier run on the same account (the protocol
/// asks for ids unique per account per trading day); 1 if the clock is before 1970.
fn first_client_order_id() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64)
        .max(1)
}

/// The reason a deferred request carries when it could not be sent (0: unspecified,
/// or [`REASON_DISCONNECTED`]).
fn refusal(e: VenueError) -> u16 {
    match e {
        VenueError::Disconnected => REASON_DISCONNECTED,
        VenueError::Busy | VenueError::UnknownOrder(_) => 0,
    }
}

impl Venue for ExchangeVenue {
    fn submit(&mut self, order: VenueOrder, now_ns: u64) -> Result<(), VenueError> {
        if self.stream.is_none() {
            return Err(VenueError::Disconnected);
        }
        if self.table.is_full() || !self.room(NewOrder::SIZE) {
            return Err(VenueError::Busy);
        }
        let cl = self.cl();
        self.table
            .insert_new(order.engine_id, cl, order.instrument, order.qty);
        let msg = NewOrder {
            client_order_id: ClientOrderId(cl),
            price: order.price,
            qty: order.qty,
            expire_at: Timestamp(0),
            instrument: order.instrument,
            side: order.side,
            order_type: OrderType::Limit,
            tif: TimeInForce::Gtc,
            stp: StpMode::None,
        };
        // A failed write drops the session, whose settlement reports this order.
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
                eprintln!(
                    "venue {}: {e}; retrying in {} ms",
                    self.name, self.cfg.reconnect_ms
                );
            }
        }
        if self.stream.is_some() {
            let result = self.read(now_ns, out).and_then(|k| {
                n += k;
                if now_ns.saturating_sub(self.last_tx_ns) >= self.heartbeat_ns {
                    self.queue(&ClientHeartbeat {}, now_ns);
                }
                let silent = now_ns.saturating_sub(self.last_rx_ns);
                if silent > 3 * self.heartbeat_ns {
                    return Err(ExchangeError::Silent(silent / 1_000_000));
                }
                self.flush()
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
