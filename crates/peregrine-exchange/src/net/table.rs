//! The session table: accepts connections, owns every session's socket and protocol
//! state, hands order-entry requests of logged-in sessions out as [`Request`]s for
//! the matching stage, and takes reports back through its [`Outbox`]
//! implementation (redirecting a report for a closed session to the account's
//! current one). The rules of one session are in [`crate::net::session::protocol`].

use std::io::ErrorKind;
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use peregrine_exchange_core::telemetry::Debounce;
use peregrine_exchange_core::{Clock, Outbox, Request, SessionKey};
use peregrine_types::AccountId;
use peregrine_wire::{Credential, Outbound};
use rustc_hash::FxHashMap;

use crate::config::Config;
use crate::metrics::hub::MetricsHub;
use crate::metrics::sessions::{DisconnectReason, SessionStats};
use crate::net::session::conn::{Conn, ReadOutcome};
use crate::net::session::protocol::{EngineStatus, Step};

/// Every session of the exchange.
#[derive(Debug)]
pub struct SessionTable {
    listener: TcpListener,
    slots: Vec<Option<Conn>>,
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
            clock: Clock::monotonic(),
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
                        log::info!(
                            "refused {peer}: max_sessions ({}) reached",
                            self.slots.len()
                        );
                        continue;
                    };
                    let key = SessionKey::new(slot as u32, self.generations[slot]);
                    match Conn::new(stream, key, self.out_limit) {
                        Ok(s) => {
                            self.stats.accepted += 1;
                            log::info!("session {slot}: connected from {peer}");
                            self.slots[slot] = Some(s);
                        }
                        Err(e) => log::info!("refused {peer}: socket setup failed: {e}"),
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => return any,
                Err(e) => {
                    log::info!("accept failed: {e}");
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
                    s.proto.close.get_or_insert(why);
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
            match s.proto.next_step() {
                None | Some(Step::Stop) => return,
                Some(Step::Nothing) => {}
                Some(Step::Login(l)) => self.login(slot, &l),
                Some(Step::Request(account, msg)) => requests.push(Request {
                    key: s.proto.key,
                    account,
                    msg,
                }),
            }
        }
    }

    fn login(&mut self, slot: usize, login: &peregrine_wire::session::Login) {
        let engine = self.engine_status();
        let Some(s) = self.slots[slot].as_mut() else {
            return;
        };
        let ok = s.proto.login(
            login,
            &self.credentials,
            self.heartbeat,
            engine,
            Instant::now(),
        );
        if !ok {
            log::info!(
                "session {slot}: login rejected for account {}: bad credentials",
                login.account
            );
            return;
        }
        self.latest.insert(login.account, s.proto.key);
        self.stats.logins += 1;
        log::info!("session {slot}: account {} logged in", login.account);
    }

    fn engine_status(&self) -> EngineStatus {
        EngineStatus {
            // Relaxed: a display value written by the matching stage.
            seq: self.engine_seq.load(Ordering::Relaxed),
            time: self.clock.now(),
        }
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
            if s.proto.close.is_none() {
                s.flush();
            }
            let finished = s.proto.close_after_flush && s.proto.unsent() == 0;
            if s.proto.close.is_some() || finished {
                self.close(slot);
            }
        }
        let (slots, flagged) = (&self.slots, &mut self.flagged);
        self.dirty.retain(|&slot| {
            let keep = slots[slot]
                .as_ref()
                .is_some_and(|s| s.proto.unsent() > 0 || s.proto.close_after_flush);
            flagged[slot] = keep;
            keep
        });
    }

    fn close(&mut self, slot: usize) {
        let Some(s) = self.slots[slot].take() else {
            return;
        };
        let p = &s.proto;
        let reason = DisconnectReason::classify(p.close.as_deref(), p.account().is_some());
        self.stats.disconnected(reason);
        let why = p.close.as_deref().unwrap_or(match reason {
            DisconnectReason::LoginRejected => "login rejected",
            _ => "logout",
        });
        let who = p
            .account()
            .map_or("not logged in".to_string(), |a| format!("account {a}"));
        log::info!("session {slot}: disconnected ({who}, {}): {why}", s.peer);
        s.shutdown();
        self.generations[slot] = self.generations[slot].wrapping_add(1);
        if let Some(a) = s.proto.account() {
            if self.latest.get(&a) == Some(&s.proto.key) {
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
        let engine = self.engine_status();
        for slot in 0..self.slots.len() {
            let Some(s) = self.slots[slot].as_mut() else {
                continue;
            };
            if s.proto.on_timer(now, self.heartbeat, engine) {
                self.mark_dirty(slot);
            }
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
            s.logged_in += u64::from(sess.proto.account().is_some());
            s.outbound_bytes += sess.proto.unsent() as u64;
        }
        s.undeliverable = self.undeliverable;
        if let Some((hub, debounce)) = self.metrics.as_mut() {
            if hub.publish_sessions(&s) {
                debounce.done(t);
            }
        }
    }

    fn live(&self, key: SessionKey) -> bool {
        self.slots
            .get(key.slot())
            .and_then(Option::as_ref)
            .is_some_and(|s| s.proto.key == key && s.proto.close.is_none())
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
            s.proto.enqueue(msg, now);
        }
        self.mark_dirty(key.slot());
    }
}
