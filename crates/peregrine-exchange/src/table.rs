//! The session layer: accepts connections, reads and frames input, runs the login
//! and heartbeat rules, and queues and writes output. Order-entry requests of
//! logged-in sessions are handed out as [`Request`]s for the matching stage; reports
//! come back through the [`Outbox`] implementation.
//!
//! Bad input never reaches the matching stage: a malformed frame, an unknown type, an
//! oversized length, anything but `Login` before login, a second `Login`, or silence
//! for three heartbeat intervals closes that session with a logged reason.

use std::io::ErrorKind;
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use peregrine_types::AccountId;
use peregrine_wire::session::{LoginAccepted, LoginRejected, ServerHeartbeat};
use peregrine_wire::{Credential, Inbound, Outbound, ReasonCode};
use rustc_hash::FxHashMap;

use crate::clock::Clock;
use crate::config::Config;
use crate::core::{Outbox, SessionKey};
use crate::metrics::{DisconnectReason, MetricsHub, SessionStats};
use crate::metrics_hist::Debounce;
use crate::session::{ReadOutcome, Session, State, LOGIN_BAD_CREDENTIALS};

/// An order-entry request of a logged-in session.
#[derive(Debug, Clone, Copy)]
pub struct Request {
    /// Sender.
    pub key: SessionKey,
    /// Sender's account.
    pub account: AccountId,
    /// The request.
    pub msg: Inbound,
}

/// Every session of the exchange.
#[derive(Debug)]
pub struct SessionTable {
    listener: TcpListener,
    slots: Vec<Option<Session>>,
    generations: Vec<u32>,
    latest: FxHashMap<AccountId, SessionKey>,
    credentials: FxHashMap<AccountId, Credential>,
    out_limit: usize,
    heartbeat: Duration,
    engine_seq: Arc<AtomicU64>,
    clock: Clock,
    dirty: Vec<usize>,
    flagged: Vec<bool>,
    last_timers: Instant,
    undeliverable: u64,
    stats: SessionStats,
    metrics: Option<(Arc<MetricsHub>, Debounce)>,
    started: Instant,
}

impl SessionTable {
    /// Binds the listener.
    pub fn bind(config: &Config, engine_seq: Arc<AtomicU64>) -> std::io::Result<Self> {
        let listener = TcpListener::bind(config.listen)?;
        listener.set_nonblocking(true)?;
        let credentials = config
            .accounts
            .iter()
            .filter_map(|a| Some((a.id, Credential::from_text(&a.password)?)))
            .collect();
        Ok(SessionTable {
            listener,
            slots: (0..config.max_sessions).map(|_| None).collect(),
            generations: vec![0; config.max_sessions],
            latest: FxHashMap::default(),
            credentials,
            out_limit: config.session_out_buffer,
            heartbeat: Duration::from_millis(u64::from(config.heartbeat_ms)),
            engine_seq,
            clock: Clock::new(),
            dirty: Vec::with_capacity(config.max_sessions),
            flagged: vec![false; config.max_sessions],
            last_timers: Instant::now(),
            undeliverable: 0,
            stats: SessionStats::default(),
            metrics: None,
            started: Instant::now(),
        })
    }

    /// Publishes the session counters to `hub` at most once per `interval`, from
    /// [`SessionTable::timers`].
    pub fn with_metrics(mut self, hub: Arc<MetricsHub>, interval: Duration) -> Self {
        let ns = u64::try_from(interval.as_nanos()).unwrap_or(u64::MAX);
        self.metrics = Some((hub, Debounce::new(ns)));
        self
    }

    /// The bound address.
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Accepts every pending connection. Returns whether any arrived.
    pub fn accept(&mut self) -> bool {
        let mut any = false;
        loop {
            match self.listener.accept() {
                Ok((stream, peer)) => {
                    any = true;
                    let Some(slot) = self.slots.iter().position(Option::is_none) else {
                        self.stats.refused += 1;
                        crate::log!(
                            "refused {peer}: max_sessions ({}) reached",
                            self.slots.len()
                        );
                        continue;
                    };
                    let key = SessionKey::new(slot as u32, self.generations[slot]);
                    match Session::new(stream, key, self.out_limit) {
                        Ok(s) => {
                            self.stats.accepted += 1;
                            crate::log!("session {slot}: connected from {peer}");
                            self.slots[slot] = Some(s);
                        }
                        Err(e) => crate::log!("refused {peer}: socket setup failed: {e}"),
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => return any,
                Err(e) => {
                    crate::log!("accept failed: {e}");
                    return any;
                }
            }
        }
    }

    /// Reads every session once; session messages are handled here, order-entry
    /// requests appended to `requests`. Returns the bytes read.
    pub fn read_all(&mut self, requests: &mut Vec<Request>) -> usize {
        let mut total = 0;
        for slot in 0..self.slots.len() {
            let Some(s) = self.slots[slot].as_mut() else {
                continue;
            };
            match s.read() {
                ReadOutcome::Ok(0) => continue,
                ReadOutcome::Ok(n) => total += n,
                ReadOutcome::Closed(why) => {
                    s.close.get_or_insert(why);
                }
            }
            self.drain_frames(slot, requests);
            self.mark_dirty(slot);
        }
        total
    }

    fn drain_frames(&mut self, slot: usize, requests: &mut Vec<Request>) {
        loop {
            let Some(s) = self.slots[slot].as_mut() else {
                return;
            };
            // Closing, or logged out / rejected and draining output: ignore input.
            if s.close.is_some() || s.close_after_flush {
                return;
            }
            let msg = match s.next_message() {
                Ok(Some(m)) => m,
                Ok(None) => return,
                Err(why) => {
                    s.close = Some(why);
                    return;
                }
            };
            match (s.state, msg) {
                (State::AwaitLogin, Inbound::Login(l)) => self.login(slot, l),
                (State::AwaitLogin, other) => {
                    s.close = Some(format!("{} before login", name_of(&other)));
                }
                (State::Active(_), Inbound::Login(_)) => {
                    s.close = Some("second Login on a logged-in session".into());
                }
                (State::Active(_), Inbound::ClientHeartbeat(_)) => {}
                (State::Active(_), Inbound::Logout(_)) => {
                    s.close_after_flush = true;
                    return;
                }
                (State::Active(account), msg) => requests.push(Request {
                    key: s.key,
                    account,
                    msg,
                }),
            }
        }
    }

    fn login(&mut self, slot: usize, login: peregrine_wire::session::Login) {
        let now = Instant::now();
        let seq = self.engine_seq.load(Ordering::Relaxed);
        let t = self.clock.now();
        let heartbeat_ms = self.heartbeat.as_millis() as u32;
        let Some(s) = self.slots[slot].as_mut() else {
            return;
        };
        let ok = self.credentials.get(&login.account) == Some(&login.credential);
        if !ok {
            let reject = LoginRejected {
                session_seq: 0,
                engine_seq: seq,
                engine_time: t,
                reason: ReasonCode(LOGIN_BAD_CREDENTIALS),
            };
            s.enqueue(reject.into(), now);
            s.close_after_flush = true;
            crate::log!(
                "session {slot}: login rejected for account {}: bad credentials",
                login.account
            );
            return;
        }
        s.state = State::Active(login.account);
        let accepted = LoginAccepted {
            session_seq: 0,
            engine_seq: seq,
            engine_time: t,
            account: login.account,
            heartbeat_interval_ms: heartbeat_ms,
        };
        s.enqueue(accepted.into(), now);
        self.latest.insert(login.account, s.key);
        self.stats.logins += 1;
        crate::log!("session {slot}: account {} logged in", login.account);
    }

    fn mark_dirty(&mut self, slot: usize) {
        if !self.flagged[slot] {
            self.flagged[slot] = true;
            self.dirty.push(slot);
        }
    }

    /// Writes queued output of every session touched since the last flush, and closes
    /// sessions marked for closing.
    pub fn flush(&mut self) {
        for i in 0..self.dirty.len() {
            let slot = self.dirty[i];
            let Some(s) = self.slots[slot].as_mut() else {
                continue;
            };
            if s.close.is_none() {
                s.flush();
            }
            let finished = s.close_after_flush && s.unsent() == 0;
            if s.close.is_some() || finished {
                self.close(slot);
            }
        }
        let (slots, flagged) = (&self.slots, &mut self.flagged);
        self.dirty.retain(|&slot| {
            let keep = slots[slot]
                .as_ref()
                .is_some_and(|s| s.unsent() > 0 || s.close_after_flush);
            flagged[slot] = keep;
            keep
        });
    }

    fn close(&mut self, slot: usize) {
        let Some(s) = self.slots[slot].take() else {
            return;
        };
        let reason = DisconnectReason::classify(s.close.as_deref(), s.account().is_some());
        self.stats.disconnected(reason);
        let why = s.close.as_deref().unwrap_or(match reason {
            DisconnectReason::LoginRejected => "login rejected",
            _ => "logout",
        });
        let who = s
            .account()
            .map_or("not logged in".to_string(), |a| format!("account {a}"));
        crate::log!("session {slot}: disconnected ({who}, {}): {why}", s.peer);
        s.shutdown();
        self.generations[slot] = self.generations[slot].wrapping_add(1);
        if let Some(a) = s.account() {
            if self.latest.get(&a) == Some(&s.key) {
                self.latest.remove(&a);
            }
        }
    }

    /// Heartbeats and liveness, at most every millisecond.
    pub fn timers(&mut self) {
        let now = Instant::now();
        if now.duration_since(self.last_timers) < Duration::from_millis(1) {
            return;
        }
        self.last_timers = now;
        let seq = self.engine_seq.load(Ordering::Relaxed);
        let t = self.clock.now();
        for slot in 0..self.slots.len() {
            let Some(s) = self.slots[slot].as_mut() else {
                continue;
            };
            if now.duration_since(s.last_rx) > self.heartbeat * 3 {
                s.close = Some("no input for three heartbeat intervals".into());
            } else if s.account().is_some() && now.duration_since(s.last_tx) >= self.heartbeat {
                let hb = ServerHeartbeat {
                    session_seq: 0,
                    engine_seq: seq,
                    engine_time: t,
                };
                s.enqueue(hb.into(), now);
            } else if s.unsent() == 0 && s.close.is_none() {
                continue;
            }
            self.mark_dirty(slot);
        }
        self.publish_metrics(now);
    }

    /// Copies the counters to the hub, at most once per interval (from the timers,
    /// never from the per-message path).
    fn publish_metrics(&mut self, now: Instant) {
        let t = u64::try_from(now.duration_since(self.started).as_nanos()).unwrap_or(u64::MAX);
        if !self.metrics.as_ref().is_some_and(|(_, d)| d.is_due(t)) {
            return;
        }
        let mut s = self.stats;
        for sess in self.slots.iter().flatten() {
            s.connected += 1;
            s.logged_in += u64::from(sess.account().is_some());
            s.outbound_bytes += sess.unsent() as u64;
        }
        s.undeliverable = self.undeliverable;
        if let Some((hub, debounce)) = self.metrics.as_mut() {
            if hub.publish_sessions(&s) {
                debounce.done(t);
            }
        }
    }

    /// The session counters so far (gauges are filled only in published copies).
    pub fn stats(&self) -> &SessionStats {
        &self.stats
    }

    /// Live sessions.
    pub fn sessions(&self) -> usize {
        self.slots.iter().filter(|s| s.is_some()).count()
    }

    /// Reports dropped because neither the session nor its account was connected.
    pub fn undeliverable(&self) -> u64 {
        self.undeliverable
    }

    fn live(&self, key: SessionKey) -> bool {
        self.slots
            .get(key.slot())
            .and_then(Option::as_ref)
            .is_some_and(|s| s.key == key && s.close.is_none())
    }
}

impl Outbox for SessionTable {
    fn send(&mut self, to: SessionKey, account: AccountId, msg: Outbound) {
        let key = if self.live(to) {
            to
        } else {
            match self.latest.get(&account) {
                Some(&k) if self.live(k) => k,
                _ => {
                    self.undeliverable += 1;
                    return;
                }
            }
        };
        let now = Instant::now();
        if let Some(s) = self.slots[key.slot()].as_mut() {
            s.enqueue(msg, now);
        }
        self.mark_dirty(key.slot());
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
