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

use peregrine_exchange_core::telemetry::{Debounce, Stopwatch};
use peregrine_exchange_core::{Clock, Outbox, Request, SessionKey};
use peregrine_types::AccountId;
use peregrine_wire::{Credential, Outbound};
use rustc_hash::FxHashMap;

use crate::config::Config;
use crate::metrics::hub::MetricsHub;
use crate::metrics::sessions::{DisconnectReason, SessionStats};
use crate::net::poller::{ready, Poller, Ready, DURABLE, LISTENER};
use crate::net::session::conn::{Conn, ReadOutcome};
use crate::net::session::protocol::{EngineStatus, Step};

/// What one [`SessionTable::poll`] found.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Polled {
    /// Descriptors reported ready (sessions, the listener, the durability signal).
    pub events: usize,
    /// Bytes read from sessions.
    pub bytes: usize,
}

/// A slot list with a membership flag per slot, so adding is O(1) and idempotent.
#[derive(Debug)]
struct SlotSet {
    list: Vec<usize>,
    member: Vec<bool>,
}

impl SlotSet {
    fn new(slots: usize) -> Self {
        SlotSet {
            list: Vec::with_capacity(slots),
            member: vec![false; slots],
        }
    }

    fn insert(&mut self, slot: usize) {
        if !self.member[slot] {
            self.member[slot] = true;
            self.list.push(slot);
        }
    }
}

/// Every session of the exchange.
#[derive(Debug)]
pub struct SessionTable {
    listener: TcpListener,
    poller: Poller,
    durable_fd: Option<std::os::fd::OwnedFd>,
    ready: Vec<Ready>,
    slots: Vec<Option<Conn>>,
    /// Slots in use, for the timers and metrics (never a walk over every slot).
    live: Vec<usize>,
    free: Vec<usize>,
    /// Sessions that got reports since the last [`SessionTable::mark_batch`].
    touched: SlotSet,
    /// Sessions whose marked reports wait for their sync.
    holding: SlotSet,
    generations: Vec<u32>,
    latest: FxHashMap<AccountId, SessionKey>,
    credentials: FxHashMap<AccountId, Credential>,
    out_limit: usize,
    heartbeat: Duration,
    engine_seq: Arc<AtomicU64>,
    clock: Clock,
    dirty: SlotSet,
    /// Stage timing: the stopwatch, and when each session was last written.
    stopwatch: Option<Stopwatch>,
    written_ns: Vec<u64>,
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
        let poller = Poller::new(config.max_sessions + 4)?;
        poller.add(&listener, LISTENER)?;
        let n = config.max_sessions;
        let credentials = config
            .accounts
            .iter()
            .filter_map(|a| Some((a.id, Credential::from_text(&a.password)?)))
            .collect();
        Ok(SessionTable {
            listener,
            poller,
            durable_fd: None,
            ready: Vec::with_capacity(n + 4),
            slots: (0..n).map(|_| None).collect(),
            live: Vec::with_capacity(n),
            free: (0..n).rev().collect(),
            touched: SlotSet::new(n),
            holding: SlotSet::new(n),
            generations: vec![0; n],
            latest: FxHashMap::default(),
            credentials,
            out_limit: config.session_out_buffer,
            heartbeat: Duration::from_millis(u64::from(config.heartbeat_ms)),
            engine_seq,
            clock: Clock::monotonic(),
            dirty: SlotSet::new(n),
            stopwatch: None,
            written_ns: vec![0; n],
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

    /// Stamps each request's read and decode instants on `stopwatch`, and each
    /// session's last write ([`SessionTable::written_ns`]).
    pub fn with_stage_timing(mut self, stopwatch: Stopwatch) -> Self {
        self.stopwatch = Some(stopwatch);
        self
    }

    /// When session `slot` was last written (stopwatch nanoseconds; 0: never, or
    /// no stage timing).
    pub fn written_ns(&self, slot: usize) -> u64 {
        self.written_ns.get(slot).copied().unwrap_or(0)
    }

    /// The bound address.
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Also wakes [`SessionTable::poll`] when the group commit signals `fd` (kept
    /// open as long as the table).
    pub fn watch_durable(&mut self, fd: std::os::fd::OwnedFd) -> std::io::Result<()> {
        self.poller.add_edge(&fd, DURABLE)?;
        self.durable_fd = Some(fd);
        Ok(())
    }

    /// Waits for readiness (`timeout` zero: just look; `None`: until something is
    /// ready), accepts pending connections and, if `read`, reads every ready session
    /// once (level-triggered: one left unread is reported again); session messages
    /// are handled here, order-entry requests appended to `requests`.
    pub fn poll(
        &mut self,
        timeout: Option<Duration>,
        read: bool,
        requests: &mut Vec<Request>,
    ) -> std::io::Result<Polled> {
        self.ready.clear();
        self.ready
            .extend(self.poller.wait(timeout)?.iter().map(ready));
        let mut polled = Polled {
            events: self.ready.len(),
            bytes: 0,
        };
        for i in 0..self.ready.len() {
            match self.ready[i].token {
                LISTENER => self.accept(),
                DURABLE => {}
                token if read => polled.bytes += self.read(token as usize, requests),
                _ => {}
            }
        }
        Ok(polled)
    }

    /// Accepts every pending connection.
    fn accept(&mut self) {
        loop {
            match self.listener.accept() {
                Ok((stream, peer)) => {
                    let Some(slot) = self.free.pop() else {
                        self.stats.refused += 1;
                        log::info!(
                            "refused {peer}: max_sessions ({}) reached",
                            self.slots.len()
                        );
                        continue;
                    };
                    let key = SessionKey::new(slot as u32, self.generations[slot]);
                    let conn = Conn::new(stream, key, self.out_limit).and_then(|c| {
                        self.poller.add(c.fd(), slot as u64)?;
                        Ok(c)
                    });
                    match conn {
                        Ok(s) => {
                            self.stats.accepted += 1;
                            log::info!("session {slot}: connected from {peer}");
                            self.slots[slot] = Some(s);
                            self.live.push(slot);
                        }
                        Err(e) => {
                            self.free.push(slot);
                            log::info!("refused {peer}: socket setup failed: {e}");
                        }
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(e) => {
                    log::info!("accept failed: {e}");
                    return;
                }
            }
        }
    }

    /// Reads session `slot` once (it was reported ready) and handles what arrived.
    /// Returns the bytes read.
    fn read(&mut self, slot: usize, requests: &mut Vec<Request>) -> usize {
        let Some(s) = self.slots.get_mut(slot).and_then(Option::as_mut) else {
            return 0;
        };
        let n = match s.read() {
            ReadOutcome::Ok(n) => n,
            ReadOutcome::Closed(why) => {
                s.proto.close.get_or_insert(why);
                0
            }
        };
        let (first, read_ns) = (requests.len(), self.stopwatch.map_or(0, |w| w.now_ns()));
        self.drain_frames(slot, requests);
        if let (Some(w), true) = (self.stopwatch, requests.len() > first) {
            let decoded_ns = w.now_ns();
            for r in &mut requests[first..] {
                r.read_ns = read_ns;
                r.decoded_ns = decoded_ns;
            }
        }
        self.dirty.insert(slot);
        n
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
                    read_ns: 0,
                    decoded_ns: 0,
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

    /// The batch ending at engine sequence number `seq` was committed: the reports
    /// queued since the last mark belong to it (they wait for its sync).
    pub fn mark_batch(&mut self, seq: u64) {
        for i in 0..self.touched.list.len() {
            let slot = self.touched.list[i];
            self.touched.member[slot] = false;
            if let Some(s) = self.slots[slot].as_mut() {
                if s.proto.mark(seq) {
                    self.holding.insert(slot);
                }
            }
        }
        self.touched.list.clear();
    }

    /// Everything through `durable` is durable: the reports of those batches may be
    /// written. Returns whether any became writable.
    pub fn release(&mut self, durable: u64) -> bool {
        let mut any = false;
        let mut i = 0;
        while i < self.holding.list.len() {
            let slot = self.holding.list[i];
            let (released, waiting) = match self.slots[slot].as_mut() {
                Some(s) => (s.proto.release(durable), s.proto.holding()),
                None => (false, false),
            };
            if released {
                self.dirty.insert(slot);
                any = true;
            }
            if waiting {
                i += 1;
            } else {
                self.holding.member[slot] = false;
                self.holding.list.swap_remove(i);
            }
        }
        any
    }

    /// Writes the writable output of every session touched since the last flush,
    /// and closes sessions marked for closing.
    pub fn flush(&mut self) {
        for i in 0..self.dirty.list.len() {
            let slot = self.dirty.list[i];
            let Some(s) = self.slots[slot].as_mut() else {
                continue;
            };
            if s.proto.close.is_none() && !s.proto.pending().is_empty() {
                s.flush();
                if let Some(w) = self.stopwatch {
                    self.written_ns[slot] = w.now_ns();
                }
            }
            let finished = s.proto.close_after_flush && s.proto.unsent() == 0;
            if s.proto.close.is_some() || finished {
                self.close(slot);
            }
        }
        let (slots, member) = (&self.slots, &mut self.dirty.member);
        self.dirty.list.retain(|&slot| {
            let keep = slots[slot]
                .as_ref()
                .is_some_and(|s| !s.proto.pending().is_empty() || s.proto.close_after_flush);
            member[slot] = keep;
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
        self.poller.remove(s.fd());
        s.shutdown();
        self.free.push(slot);
        if let Some(at) = self.live.iter().position(|&l| l == slot) {
            self.live.swap_remove(at);
        }
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
        for i in 0..self.live.len() {
            let slot = self.live[i];
            let Some(s) = self.slots[slot].as_mut() else {
                continue;
            };
            if s.proto.on_timer(now, self.heartbeat, engine) {
                self.dirty.insert(slot);
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

impl SessionTable {
    /// The slot a report for `to` goes to: that session, else the account's current
    /// one (a reconnect); `None` (counted) when neither is connected.
    fn route(&mut self, to: SessionKey, account: AccountId) -> Option<usize> {
        if self.live(to) {
            return Some(to.slot());
        }
        match self.latest.get(&account) {
            Some(&k) if self.live(k) => Some(k.slot()),
            _ => {
                self.undeliverable += 1;
                None
            }
        }
    }

    /// Queues a report whose batch is already durable (the split topology's
    /// matching thread releases only those): writable at once.
    pub fn deliver(&mut self, to: SessionKey, account: AccountId, msg: Outbound) {
        let Some(slot) = self.route(to, account) else {
            return;
        };
        if let Some(s) = self.slots[slot].as_mut() {
            s.proto.enqueue(msg, Instant::now());
        }
        self.dirty.insert(slot);
    }
}

impl Outbox for SessionTable {
    /// Queues a report of the batch being executed: written once the batch is
    /// marked and durable.
    fn send(&mut self, to: SessionKey, account: AccountId, msg: Outbound) {
        let Some(slot) = self.route(to, account) else {
            return;
        };
        if let Some(s) = self.slots[slot].as_mut() {
            s.proto.enqueue_report(msg, Instant::now());
        }
        self.touched.insert(slot);
        self.dirty.insert(slot);
    }
}
