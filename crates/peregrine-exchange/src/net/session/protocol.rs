//! The per-session protocol, sans-IO: framing of the receive buffer, the login and
//! logout rules, heartbeats and liveness, the session sequence number stamped on
//! every outbound message, and the bounded outbound buffer, whose reports stay
//! unwritable until the batch that made them is durable ([`Protocol::mark`],
//! [`Protocol::release`]). It sees bytes and instants, never a socket: [`crate::net::session::conn`] moves the bytes, and the
//! session table ([`crate::net::table`]) decides where requests and reports go.
//!
//! Bad input never reaches the matching stage: a malformed frame, an unknown type, an
//! oversized length, anything but `Login` before login, a second `Login`, or silence
//! for three heartbeat intervals closes the session with a reason.

use std::time::{Duration, Instant};

use peregrine_types::{AccountId, Timestamp};
use peregrine_wire::session::{Login, LoginAccepted, LoginRejected, ServerHeartbeat};
use peregrine_wire::stream::RecvBuffer;
use peregrine_wire::{Credential, Inbound, Outbound, ReasonCode, MAX_MESSAGE_SIZE};
use rustc_hash::FxHashMap;

use peregrine_exchange_core::SessionKey;

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

/// What the engine tells a session about itself (in `LoginAccepted` and heartbeats).
#[derive(Debug, Clone, Copy)]
pub struct EngineStatus {
    /// The engine sequence number now.
    pub seq: u64,
    /// The engine time now.
    pub time: Timestamp,
}

/// What one inbound message means for the session table.
#[derive(Debug, Clone, Copy)]
pub enum Step {
    /// Handled inside the session (heartbeat), or nothing to do.
    Nothing,
    /// A `Login` to check against the credentials ([`Protocol::login`]).
    Login(Login),
    /// An order-entry request of the logged-in account, for the matching stage.
    Request(AccountId, Inbound),
    /// The session stops reading (closing, or draining its output after a logout).
    Stop,
}

/// Batches of a session's reports that wait for their sync: (the batch's last
/// engine sequence number, the absolute end of its bytes), oldest first. Bounded:
/// when full, the newest entry is extended (released later, never earlier).
#[derive(Debug, Clone, Copy, Default)]
struct Marks {
    buf: [(u64, u64); 8],
    head: usize,
    len: usize,
}

impl Marks {
    fn push(&mut self, seq: u64, end: u64) {
        if self.len == self.buf.len() {
            let newest = (self.head + self.len - 1) % self.buf.len();
            self.buf[newest] = (seq, end);
        } else {
            self.buf[(self.head + self.len) % self.buf.len()] = (seq, end);
            self.len += 1;
        }
    }

    /// Pops every batch durable at `durable`; the end of the newest one popped.
    fn release(&mut self, durable: u64) -> Option<u64> {
        let mut end = None;
        while self.len > 0 && self.buf[self.head].0 <= durable {
            end = Some(self.buf[self.head].1);
            self.head = (self.head + 1) % self.buf.len();
            self.len -= 1;
        }
        end
    }
}

/// One session's protocol state.
#[derive(Debug)]
pub struct Protocol {
    /// Its key.
    pub key: SessionKey,
    rx: Box<RecvBuffer<RECV_BUFFER>>,
    out: Vec<u8>,
    out_sent: usize,
    limit: usize,
    /// Absolute offset (bytes ever queued) of `out[0]`.
    out_base: u64,
    /// Absolute end of the bytes that may be written.
    writable: u64,
    /// Reports queued since the last mark (they wait for the next one).
    unmarked: bool,
    marks: Marks,
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

impl Protocol {
    /// A fresh session with an outbound buffer of `limit` bytes, connected at `now`.
    pub fn new(key: SessionKey, limit: usize, now: Instant) -> Self {
        Protocol {
            key,
            rx: Box::new(RecvBuffer::new()),
            out: Vec::with_capacity(limit),
            out_sent: 0,
            limit,
            out_base: 0,
            writable: 0,
            unmarked: false,
            marks: Marks::default(),
            state: State::AwaitLogin,
            seq: 0,
            last_rx: now,
            last_tx: now,
            close: None,
            close_after_flush: false,
        }
    }

    /// The account, once logged in.
    pub fn account(&self) -> Option<AccountId> {
        match self.state {
            State::Active(a) => Some(a),
            State::AwaitLogin => None,
        }
    }

    /// The free part of the receive buffer (empty when full).
    pub fn rx_spare(&mut self) -> &mut [u8] {
        self.rx.spare()
    }

    /// `n` bytes were read into [`Protocol::rx_spare`] at `now`.
    pub fn received(&mut self, n: usize, now: Instant) {
        self.rx.commit(n);
        self.last_rx = now;
    }

    /// The next inbound message and what it means, or `None` when no whole frame is
    /// buffered. A protocol violation sets [`Protocol::close`] and returns
    /// [`Step::Stop`].
    pub fn next_step(&mut self) -> Option<Step> {
        // Closing, or logged out / rejected and draining output: ignore input.
        if self.close.is_some() || self.close_after_flush {
            return None;
        }
        let msg = match self.rx.next(Inbound::decode) {
            Ok(Some(m)) => m,
            Ok(None) => return None,
            Err(e) => {
                self.close = Some(format!("malformed input: {e}"));
                return Some(Step::Stop);
            }
        };
        Some(match (self.state, msg) {
            (State::AwaitLogin, Inbound::Login(l)) => Step::Login(l),
            (State::AwaitLogin, other) => {
                self.close = Some(format!("{} before login", name_of(&other)));
                Step::Stop
            }
            (State::Active(_), Inbound::Login(_)) => {
                self.close = Some("second Login on a logged-in session".into());
                Step::Stop
            }
            (State::Active(_), Inbound::ClientHeartbeat(_)) => Step::Nothing,
            (State::Active(_), Inbound::Logout(_)) => {
                self.close_after_flush = true;
                Step::Stop
            }
            (State::Active(account), msg) => Step::Request(account, msg),
        })
    }

    /// Answers a `Login`: accepted if `credentials` hold the account's credential
    /// (the session becomes active), else rejected and closed after the answer.
    /// Returns whether it was accepted.
    pub fn login(
        &mut self,
        login: &Login,
        credentials: &FxHashMap<AccountId, Credential>,
        heartbeat: Duration,
        engine: EngineStatus,
        now: Instant,
    ) -> bool {
        if credentials.get(&login.account) != Some(&login.credential) {
            let reject = LoginRejected {
                session_seq: 0,
                engine_seq: engine.seq,
                engine_time: engine.time,
                reason: ReasonCode(LOGIN_BAD_CREDENTIALS),
            };
            self.enqueue(reject.into(), now);
            self.close_after_flush = true;
            return false;
        }
        self.state = State::Active(login.account);
        let accepted = LoginAccepted {
            session_seq: 0,
            engine_seq: engine.seq,
            engine_time: engine.time,
            account: login.account,
            heartbeat_interval_ms: heartbeat.as_millis() as u32,
        };
        self.enqueue(accepted.into(), now);
        true
    }

    /// Liveness and heartbeats at `now`: closes a session silent for three
    /// intervals, queues a heartbeat to a logged-in session that was sent nothing for
    /// one. Returns whether the session needs a flush (output queued or closing).
    pub fn on_timer(&mut self, now: Instant, heartbeat: Duration, engine: EngineStatus) -> bool {
        if now.duration_since(self.last_rx) > heartbeat * 3 {
            self.close = Some("no input for three heartbeat intervals".into());
        } else if self.account().is_some() && now.duration_since(self.last_tx) >= heartbeat {
            let hb = ServerHeartbeat {
                session_seq: 0,
                engine_seq: engine.seq,
                engine_time: engine.time,
            };
            self.enqueue(hb.into(), now);
        } else if self.unsent() == 0 && self.close.is_none() {
            return false;
        }
        true
    }

    /// Queues a session message (login answer, heartbeat): writable at once unless
    /// reports wait ahead of it (then with them).
    pub fn enqueue(&mut self, msg: Outbound, now: Instant) {
        self.push(msg, now);
        if self.marks.len == 0 && !self.unmarked {
            self.writable = self.end();
        }
    }

    /// Queues a report of the batch being executed: it waits until the batch is
    /// marked ([`Protocol::mark`]) and durable ([`Protocol::release`]).
    pub fn enqueue_report(&mut self, msg: Outbound, now: Instant) {
        self.push(msg, now);
        self.unmarked = true;
    }

    /// The batch ending at engine sequence number `seq` was committed: the reports
    /// queued since the last mark belong to it. Returns whether there were any.
    pub fn mark(&mut self, seq: u64) -> bool {
        if !std::mem::take(&mut self.unmarked) {
            return false;
        }
        self.marks.push(seq, self.end());
        true
    }

    /// Everything through `durable` is durable: the reports of those batches (and
    /// what was queued behind them once none waits) become writable. Returns
    /// whether more bytes became writable; [`Protocol::holding`] tells whether
    /// batches still wait.
    pub fn release(&mut self, durable: u64) -> bool {
        let Some(end) = self.marks.release(durable) else {
            return false;
        };
        let before = self.writable;
        self.writable = if self.marks.len == 0 && !self.unmarked {
            self.end()
        } else {
            end
        };
        self.writable > before
    }

    /// Whether marked batches still wait for their sync.
    pub fn holding(&self) -> bool {
        self.marks.len > 0
    }

    /// Absolute end of the queued bytes.
    fn end(&self) -> u64 {
        self.out_base + self.out.len() as u64
    }

    /// Stamps the next session sequence number and queues the message. A full
    /// buffer marks the session for closing (slow reader) and drops the message.
    fn push(&mut self, mut msg: Outbound, now: Instant) {
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
            self.out_base += self.out_sent as u64;
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

    /// Bytes queued and not yet written (writable or waiting).
    pub fn unsent(&self) -> usize {
        self.out.len() - self.out_sent
    }

    /// The queued bytes that may be written and were not yet.
    pub fn pending(&self) -> &[u8] {
        let writable = usize::try_from(self.writable - self.out_base).unwrap_or(usize::MAX);
        &self.out[self.out_sent..writable.clamp(self.out_sent, self.out.len())]
    }

    /// `n` bytes of [`Protocol::pending`] were written; the buffer is reset once all
    /// of it was.
    pub fn wrote(&mut self, n: usize) {
        self.out_sent += n;
        if self.out_sent >= self.out.len() {
            self.out_base += self.out.len() as u64;
            self.out.clear();
            self.out_sent = 0;
        }
    }
}

fn name_of(msg: &Inbound) -> &'static str {
    match msg {
        Inbound::Login(_) => "Login",
        Inbound::Logout(_) => "Logout",
        Inbound::ClientHeartbeat(_) => "ClientHeartbeat",
        Inbound::NewOrder(_) => "NewOrder",
        Inbound::Cancel(_) => "Cancel",
        Inbound::Replace(_) => "Replace",
        Inbound::MassCancel(_) => "MassCancel",
        Inbound::Deposit(_) => "Deposit",
        Inbound::Withdraw(_) => "Withdraw",
        Inbound::BalanceQuery(_) => "BalanceQuery",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use peregrine_types::{ClientOrderId, InstrumentId, OrderId};
    use peregrine_wire::orders::Cancel;
    use peregrine_wire::session::ClientHeartbeat;
    use peregrine_wire::WireMessage;

    const HB: Duration = Duration::from_millis(100);
    const ENGINE: EngineStatus = EngineStatus {
        seq: 7,
        time: Timestamp(9),
    };

    fn feed<M: WireMessage>(p: &mut Protocol, m: &M, now: Instant) {
        let n = m.encode(p.rx_spare()).unwrap();
        p.received(n, now);
    }

    fn creds() -> FxHashMap<AccountId, Credential> {
        let mut c = FxHashMap::default();
        c.insert(AccountId(1), Credential::from_text("pw").unwrap());
        c
    }

    fn login(pw: &str) -> Login {
        Login {
            account: AccountId(1),
            heartbeat_interval_ms: 100,
            credential: Credential::from_text(pw).unwrap(),
        }
    }

    fn cancel() -> Cancel {
        Cancel {
            client_order_id: ClientOrderId(1),
            order_id: OrderId(1),
            instrument: InstrumentId(1),
        }
    }

    #[test]
    fn login_then_requests_then_logout() {
        let t0 = Instant::now();
        let mut p = Protocol::new(SessionKey::new(0, 0), 4096, t0);
        feed(&mut p, &login("pw"), t0);
        let Some(Step::Login(l)) = p.next_step() else {
            panic!("a login")
        };
        assert!(p.login(&l, &creds(), HB, ENGINE, t0));
        assert_eq!(p.account(), Some(AccountId(1)));
        let accepted = Outbound::decode(p.pending()).unwrap().0;
        assert!(
            matches!(accepted, Outbound::LoginAccepted(a) if a.session_seq == 1 && a.engine_seq == 7)
        );
        feed(&mut p, &cancel(), t0);
        feed(&mut p, &ClientHeartbeat {}, t0);
        assert!(matches!(
            p.next_step(),
            Some(Step::Request(AccountId(1), Inbound::Cancel(_)))
        ));
        assert!(matches!(p.next_step(), Some(Step::Nothing)));
        assert!(p.next_step().is_none());
        feed(&mut p, &peregrine_wire::session::Logout {}, t0);
        assert!(matches!(p.next_step(), Some(Step::Stop)));
        assert!(p.close_after_flush && p.close.is_none());
        let n = p.unsent();
        p.wrote(n);
        assert_eq!(p.unsent(), 0);
    }

    #[test]
    fn violations_close_with_a_reason() {
        let t0 = Instant::now();
        let mut p = Protocol::new(SessionKey::new(0, 0), 4096, t0);
        feed(&mut p, &cancel(), t0);
        assert!(matches!(p.next_step(), Some(Step::Stop)));
        assert_eq!(p.close.as_deref(), Some("Cancel before login"));
        assert!(
            p.next_step().is_none(),
            "a closing session reads nothing more"
        );

        let mut p = Protocol::new(SessionKey::new(0, 0), 4096, t0);
        feed(&mut p, &login("nope"), t0);
        let Some(Step::Login(l)) = p.next_step() else {
            panic!()
        };
        assert!(!p.login(&l, &creds(), HB, ENGINE, t0));
        assert!(p.close_after_flush);
        assert!(matches!(
            Outbound::decode(p.pending()).unwrap().0,
            Outbound::LoginRejected(_)
        ));

        let mut p = Protocol::new(SessionKey::new(0, 0), 4096, t0);
        let n = p.rx_spare().len().min(4);
        p.rx_spare()[..n].copy_from_slice(&[0xFF; 4][..n]);
        p.received(n, t0);
        assert!(matches!(p.next_step(), Some(Step::Stop)));
        assert!(p.close.as_deref().unwrap().starts_with("malformed input"));
    }

    fn accepted(order: u64) -> Outbound {
        Outbound::Accepted(peregrine_wire::reports::Accepted {
            session_seq: 0,
            engine_seq: order,
            engine_time: Timestamp(order),
            order_id: OrderId(order),
            client_order_id: ClientOrderId(order),
            price: peregrine_types::Price::from_raw(1),
            qty: peregrine_types::Qty::from_raw(1),
            expire_at: Timestamp(0),
            instrument: InstrumentId(1),
            side: peregrine_types::Side::Buy,
            order_type: peregrine_types::OrderType::Limit,
            tif: peregrine_types::TimeInForce::Gtc,
            stp: peregrine_types::StpMode::None,
        })
    }

    #[test]
    fn reports_wait_for_their_batch_to_be_durable() {
        let t0 = Instant::now();
        let mut p = Protocol::new(SessionKey::new(0, 0), 4096, t0);
        p.state = State::Active(AccountId(1));
        p.enqueue_report(accepted(1), t0);
        assert!(p.pending().is_empty(), "not marked yet");
        assert!(p.mark(1));
        p.enqueue_report(accepted(2), t0);
        assert!(p.mark(2));
        p.enqueue(
            ServerHeartbeat {
                session_seq: 0,
                engine_seq: 2,
                engine_time: Timestamp(0),
            }
            .into(),
            t0,
        );
        assert!(p.pending().is_empty(), "batch 1 is not durable yet");
        assert!(p.release(1));
        assert_eq!(p.pending().len(), 80, "batch 1 only");
        assert!(p.holding());
        p.wrote(80);
        assert!(p.release(2));
        assert_eq!(
            p.pending().len(),
            80 + 32,
            "batch 2 and the heartbeat behind it"
        );
        assert!(!p.holding());
        assert!(!p.release(5), "nothing more");
        let n = p.pending().len();
        p.wrote(n);
        assert_eq!(p.unsent(), 0);
        p.enqueue(
            ServerHeartbeat {
                session_seq: 0,
                engine_seq: 2,
                engine_time: Timestamp(0),
            }
            .into(),
            t0,
        );
        assert_eq!(p.pending().len(), 32, "nothing waits: writable at once");
        assert!(!p.mark(3), "no report since the last mark");
    }

    #[test]
    fn heartbeats_liveness_and_slow_readers() {
        let t0 = Instant::now();
        let mut p = Protocol::new(SessionKey::new(0, 0), 64, t0);
        assert!(
            !p.on_timer(t0 + HB, HB, ENGINE),
            "not logged in: no heartbeat"
        );
        p.state = State::Active(AccountId(1));
        assert!(p.on_timer(t0 + HB, HB, ENGINE), "a heartbeat is queued");
        assert!(matches!(
            Outbound::decode(p.pending()).unwrap().0,
            Outbound::ServerHeartbeat(_)
        ));
        assert!(p.on_timer(t0 + HB * 4, HB, ENGINE));
        assert_eq!(
            p.close.as_deref(),
            Some("no input for three heartbeat intervals")
        );

        let mut p = Protocol::new(SessionKey::new(0, 0), 64, t0);
        p.state = State::Active(AccountId(1));
        for _ in 0..10 {
            p.on_timer(t0 + HB, HB, ENGINE);
            p.last_tx = t0;
        }
        assert!(p.close.as_deref().unwrap().starts_with("slow reader"));
    }
}
