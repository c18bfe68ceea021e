//! One load-generator session: a non-blocking socket, the orders it sent and what
//! came back for each.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use peregrine_types::{AccountId, ClientOrderId};
use peregrine_wire::auth::AccountKey;
use peregrine_wire::orders::NewOrder;
use peregrine_wire::reason::RejectCode;
use peregrine_wire::session::ClientHeartbeat;
use peregrine_wire::v2::client::LoginParams;
use peregrine_wire::v2::Outbound;
use peregrine_wire::{LiquidityRole, WireMessage};

use super::report::Stats;
use crate::error::{ClientError, IoContext};
use crate::order_entry::{Connection, Rx};

/// Client order ids are `session index << TAG_SHIFT | order number`.
/// Each login attempt's connect and read timeout, and how long to keep trying a
/// cluster's nodes before giving up.
const TIMEOUT: Duration = Duration::from_secs(5);
const TAG_SHIFT: u32 = 40;
const TAG_MASK: u64 = (1 << TAG_SHIFT) - 1;

/// How an order was answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Answer {
    /// `Accepted`.
    Ack,
    /// `Rejected` for a business reason.
    Reject,
    /// `Rejected` with reason `busy`: the exchange at capacity.
    Busy,
}

/// One order's life, as the client sees it.
#[derive(Debug, Clone, Copy, Default)]
struct Sent {
    /// Nanoseconds since the run's start the order was due (open loop) or sent.
    at: u64,
    answered: bool,
    filled: bool,
}

/// A client session.
#[derive(Debug)]
pub(crate) struct Conn {
    stream: TcpStream,
    rx: Rx,
    tx: Vec<u8>,
    tx_sent: usize,
    /// End offset in `tx` of each order queued there (cleared with `tx`).
    tx_order_ends: Vec<usize>,
    sent: Vec<Sent>,
    expected_seq: u64,
    /// The session's index, in the top bits of its client order ids: several
    /// sessions of one account each see the account's every report, and keep only
    /// their own.
    tag: u64,
    /// Orders sent and not yet answered.
    pub outstanding: usize,
    /// False once the session failed.
    pub alive: bool,
    /// A write to the exchange failed (counted an error in the summary).
    pub(super) write_failed: bool,
    last_tx: Instant,
}

impl Conn {
    /// Connects and logs in at whichever of `addrs` leads (blocking, with a timeout,
    /// starting the report stream live), then turns non-blocking; also returns the
    /// address it logged in at. `index` tags the session's client order ids.
    pub(super) fn open(
        addrs: &[SocketAddr],
        account: AccountId,
        key: &AccountKey,
        index: usize,
    ) -> Result<(Conn, SocketAddr), ClientError> {
        let params = LoginParams::trading(account, 0);
        let (mut conn, _, at) =
            Connection::connect_any(addrs, params, key.clone(), TIMEOUT, TIMEOUT)?;
        conn.recover(|_| {})?;
        let (stream, rx, session) = conn.into_parts();
        stream
            .set_nonblocking(true)
            .doing(|| "making the socket non-blocking".into())?;
        let conn = Conn {
            stream,
            rx,
            tx: Vec::with_capacity(1 << 16),
            tx_sent: 0,
            tx_order_ends: Vec::new(),
            sent: Vec::new(),
            expected_seq: session.next_session_seq(),
            tag: (index as u64) << TAG_SHIFT,
            outstanding: 0,
            alive: true,
            write_failed: false,
            last_tx: Instant::now(),
        };
        Ok((conn, at))
    }

    fn queue<M: WireMessage>(&mut self, msg: &M) {
        let start = self.tx.len();
        self.tx.resize(start + M::SIZE, 0);
        // The slice is exactly M::SIZE bytes: encoding cannot fail.
        let _ = msg.encode(&mut self.tx[start..]);
    }

    /// Queues a new order (written by the next [`Conn::flush`]); `at` is its scheduled
    /// (or actual) send time.
    pub(super) fn send_order(&mut self, mut order: NewOrder, at: u64) {
        order.client_order_id = ClientOrderId(self.tag | (self.sent.len() as u64 + 1));
        self.sent.push(Sent {
            at,
            answered: false,
            filled: false,
        });
        self.outstanding += 1;
        self.queue(&order);
        self.tx_order_ends.push(self.tx.len());
    }

    /// Orders queued and not yet written to the socket: the exchange had not read
    /// what came before them (TCP flow control holds them in this process).
    pub(super) fn unwritten(&self) -> usize {
        let written = self.tx_order_ends.partition_point(|&e| e <= self.tx_sent);
        self.tx_order_ends.len() - written
    }

    /// Writes queued bytes; sends a heartbeat when idle for half a second.
    pub(super) fn flush(&mut self) {
        if self.tx.is_empty() && self.last_tx.elapsed() > Duration::from_millis(500) {
            self.queue(&ClientHeartbeat {});
        }
        while self.alive && self.tx_sent < self.tx.len() {
            match self.stream.write(&self.tx[self.tx_sent..]) {
                Ok(n) => self.tx_sent += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => {
                    // Counted (an error), not a silent end: its outstanding
                    // orders are then counted lost, and the reason is shown.
                    eprintln!("loadgen: session write failed: {e}");
                    self.alive = false;
                    self.write_failed = true;
                }
            }
        }
        if !self.tx.is_empty() {
            self.tx.clear();
            self.tx_order_ends.clear();
            self.tx_sent = 0;
            self.last_tx = Instant::now();
        }
    }

    /// Reads and processes whatever arrived; returns how many orders got their
    /// answer. Latencies end at the time the bytes were read (nanoseconds since
    /// `start`, read after the `read` call returns).
    pub(super) fn poll(&mut self, start: Instant, stats: &mut Stats) -> usize {
        if !self.alive {
            return 0;
        }
        match self.stream.read(self.rx.spare()) {
            Ok(0) => {
                self.fail(stats);
                return 0;
            }
            Ok(n) => self.rx.commit(n),
            Err(e) if e.kind() == ErrorKind::WouldBlock => return 0,
            Err(e) if e.kind() == ErrorKind::Interrupted => return 0,
            Err(_) => {
                self.fail(stats);
                return 0;
            }
        }
        let now = start.elapsed().as_nanos() as u64;
        let mut answered = 0;
        loop {
            match self.rx.next(Outbound::decode) {
                Ok(Some(m)) => answered += self.on_message(m, now, stats),
                Ok(None) => return answered,
                Err(_) => {
                    self.fail(stats);
                    return answered;
                }
            }
        }
    }

    fn fail(&mut self, stats: &mut Stats) {
        if self.alive {
            self.alive = false;
            stats.errors += 1;
        }
    }

    fn on_message(&mut self, m: Outbound, now: u64, stats: &mut Stats) -> usize {
        if m.session_seq() != self.expected_seq {
            stats.errors += 1;
        }
        self.expected_seq = m.session_seq() + 1;
        match m {
            Outbound::Accepted(a) => self.answer(a.client_order_id, now, stats, Answer::Ack),
            Outbound::Rejected(r) if r.reason == RejectCode::Busy.reason() => {
                self.answer(r.client_order_id, now, stats, Answer::Busy)
            }
            Outbound::Rejected(r) => self.answer(r.client_order_id, now, stats, Answer::Reject),
            Outbound::Fill(f) if self.mine(f.client_order_id).is_some() => {
                stats.fills += 1;
                if f.role == LiquidityRole::Taker {
                    self.taker_fill(f.client_order_id, now, stats);
                }
                0
            }
            Outbound::Cancelled(c) if self.mine(c.client_order_id).is_some() => {
                stats.cancels += 1;
                0
            }
            Outbound::CancelRejected(c) if self.mine(c.client_order_id).is_some() => {
                stats.errors += 1;
                0
            }
            Outbound::LoginRejected(_) => {
                stats.errors += 1;
                0
            }
            Outbound::Disconnect(d) => {
                // The exchange ended the session (slow reader, heartbeat timeout):
                // say why, so that its unanswered orders have a cause.
                eprintln!("loadgen: session ended by the exchange: {:?}", d.reason);
                self.fail(stats);
                0
            }
            Outbound::LeaderRedirect(_) => {
                // The leader lost its quorum and ended the session: what is
                // outstanding stays unanswered (counted lost).
                stats.redirected += 1;
                self.alive = false;
                0
            }
            _ => 0,
        }
    }

    /// The index of this session's order `id` in `sent`, `None` for another
    /// session's order (same account).
    fn mine(&self, id: ClientOrderId) -> Option<usize> {
        (id.0 >> TAG_SHIFT == self.tag >> TAG_SHIFT)
            .then(|| ((id.0 & TAG_MASK) as usize).wrapping_sub(1))
    }

    fn answer(&mut self, id: ClientOrderId, now: u64, stats: &mut Stats, how: Answer) -> usize {
        let Some(i) = self.mine(id) else {
            return 0; // another session's order
        };
        let Some(s) = self.sent.get_mut(i) else {
            stats.errors += 1;
            return 0;
        };
        if s.answered {
            stats.errors += 1;
            return 0;
        }
        s.answered = true;
        self.outstanding -= 1;
        let took = now.saturating_sub(s.at).max(1);
        match how {
            Answer::Ack => stats.ack.saturating_record(took),
            Answer::Reject => {
                stats.ack.saturating_record(took);
                stats.rejects += 1;
            }
            Answer::Busy => {
                stats.busy_ack.saturating_record(took);
                stats.busy += 1;
            }
        }
        1
    }

    fn taker_fill(&mut self, id: ClientOrderId, now: u64, stats: &mut Stats) {
        let Some(i) = self.mine(id) else {
            return;
        };
        if let Some(s) = self.sent.get_mut(i) {
            if !s.filled {
                s.filled = true;
                stats
                    .fill
                    .saturating_record(now.saturating_sub(s.at).max(1));
            }
        }
    }

    /// Orders sent on this session.
    pub(super) fn sent_count(&self) -> usize {
        self.sent.len()
    }
}
