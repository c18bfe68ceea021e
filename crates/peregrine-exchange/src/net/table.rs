//! The session table: accepts connections, owns every session's socket and protocol
//! state, decides who may log in, hands requests of logged-in sessions out as
//! [`Request`]s for the matching stage, and delivers the report streams.
//!
//! The rules it applies (protocol version 2, `docs/protocol.md` 4.1–4.6):
//!
//! * **Two pools.** Connections that have not logged in live in a bounded pending
//!   pool ([`PendingPool`]: a login timeout, a per-address share, the oldest evicted
//!   when full), apart from the `max_sessions` logged-in sessions: idle sockets cannot
//!   take a logged-in slot or keep a prompt client from logging in.
//! * **Challenge-response login** against stored key hashes ([`Credentials`]), with
//!   throttling per address and per account ([`LoginThrottle`]).
//! * **Report streams.** Every report of an account's stream is appended to the
//!   shared [`ReportStore`] and pulled by every session following that account
//!   (trading sessions and drop copies of it, and drop copies of every account), at
//!   each session's own pace; a request's answer also reaches the requesting session.
//!   Reports of an account with no session are retained, never dropped.
//! * **Drop copies are read-only**: order requests are refused here, unsequenced.
//! * **Backpressure**: past `[backpressure]`'s limits on what waits for its sync
//!   (replication), orders are refused here with reason `busy`, unsequenced
//!   ([`Pressure`]).
//! * **Nothing leaves before it is durable.** Reports and answers of a batch wait in
//!   the table until the journal's sync covers the batch ([`SessionTable::mark_batch`],
//!   [`SessionTable::release`]); only then do they enter the streams.
//! * **Sans-IO.** The table owns no socket, clock or randomness: the connections
//!   are a [`SessionIo`] (the socket shell, `net::sockets`, which waits on epoll and
//!   accepts; or a simulator's connections), and the time and challenge nonces come
//!   from [`SessionClock`] and [`Nonces`].
//! * **Liveness on input actually read**: a session is declared dead only after a
//!   last read attempt finds nothing waiting, and a pause of the exchange's own loop
//!   does not count as the peers' silence.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use peregrine_exchange_core::queries::Scope;
use peregrine_exchange_core::reports::{ReportStore, Retention};
use peregrine_exchange_core::route::reference::{definitions, stamped};
use peregrine_exchange_core::telemetry::{Debounce, Stopwatch};
use peregrine_exchange_core::{Clock, Outbox, Request, SessionKey};
use peregrine_types::AccountId;
use peregrine_wire::field::{Pad, SessionKind};
use peregrine_wire::reason::{AdminCode, DisconnectCode, LoginCode, RejectCode};
use peregrine_wire::v2::admin::AdminRejected;
use peregrine_wire::v2::queries::OpenOrdersRequest;
use peregrine_wire::v2::reference::InstrumentDefinition;
use peregrine_wire::v2::reports::{CancelRejected, Rejected};
use peregrine_wire::v2::{Inbound, Outbound};
use peregrine_wire::RequestKind;
use rustc_hash::FxHashMap;

use crate::config::Config;
use crate::metrics::hub::MetricsHub;
use crate::metrics::sessions::{DisconnectReason, SessionStats};
use crate::net::admission::{Admit, LoginThrottle, PendingConfig, PendingPool, ThrottleConfig};
use crate::net::credentials::{Credentials, Grant, Refusal};
use crate::net::pressure::Pressure;
use crate::net::report::Report;
use crate::net::session::conn::{Conn, ReadOutcome, SessionIo};
use crate::net::session::protocol::{Delivery, EngineStatus, Step};
use crate::net::sources::{Nonces, SessionClock};

/// A connection about to be admitted: its slot, key and challenge nonce
/// ([`SessionTable::prepare_admit`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Admission {
    /// The slot it gets.
    pub slot: usize,
    key: SessionKey,
    nonce: [u8; 32],
}

/// Output of the matching stage that waits for its batch's sync: the batch's last
/// engine sequence number (`u64::MAX` until [`SessionTable::mark_batch`]).
#[derive(Debug, Clone, Copy)]
struct Held {
    batch: u64,
    out: Report,
}

/// Held outputs beyond which the table stops growing its queue (it is reserved up
/// front; more only while the disk lags far behind).
const HELD_RESERVE: usize = 8192;

/// Every session of the exchange.
#[derive(Debug)]
pub(crate) struct SessionTable {
    /// Sessions with input buffered but not yet handled (read outside
    /// [`SessionTable::poll`], by the liveness check).
    rescan: Vec<usize>,
    /// Reports and answers waiting for their batch to be durable, oldest first.
    held: VecDeque<Held>,
    /// Stage timing: the stopwatch, and when each session was last written.
    stopwatch: Option<Stopwatch>,
    written_ns: Vec<u64>,
    slots: Vec<Option<Conn>>,
    generations: Vec<u32>,
    credentials: Credentials,
    throttle: LoginThrottle,
    pending: PendingPool<SessionKey>,
    logged_in: usize,
    max_sessions: usize,
    /// Logged-in sessions per account (trading and drop copies).
    per_account: FxHashMap<AccountId, usize>,
    max_per_account: usize,
    /// How long unsent output may wait without a write before the session is cut
    /// off as a slow reader.
    slow_reader: Duration,
    /// Sessions following one account's stream.
    followers: FxHashMap<AccountId, Vec<SessionKey>>,
    /// Drop copies of every account.
    all_followers: Vec<SessionKey>,
    store: ReportStore,
    definitions: Vec<InstrumentDefinition>,
    out_limit: usize,
    heartbeat: Duration,
    engine_seq: Arc<AtomicU64>,
    /// The engine's clock (engine times in session messages).
    clock: Clock,
    /// The session layer's clock (heartbeats, liveness, timeouts).
    time: SessionClock,
    nonces: Nonces,
    dirty: Vec<usize>,
    flagged: Vec<bool>,
    last_timers: Instant,
    stats: SessionStats,
    metrics: Option<(Arc<MetricsHub>, Debounce)>,
    started: Instant,
    pressure: Pressure,
    /// Negative control of the stall test (tests only): judge liveness on the clock
    /// alone, with no last read and no forgiveness of the loop's own stall.
    #[cfg(test)]
    pub(crate) naive_liveness: bool,
    /// Accounts whose cancel-on-disconnect session ended without a `Logout`: their
    /// mass cancels wait for the loop ([`SessionTable::take_disconnects`]).
    disconnects: Vec<AccountId>,
}

impl SessionTable {
    /// The table of `config`'s sessions. `store` holds the report streams rebuilt by
    /// the start-up replay (an empty store without a journal); `clock` gives engine
    /// times, `time` the session layer's instants, `nonces` the login challenges.
    pub(crate) fn new(
        config: &Config,
        engine_seq: Arc<AtomicU64>,
        store: Option<ReportStore>,
        clock: Clock,
        time: SessionClock,
        nonces: Nonces,
    ) -> Self {
        let a = &config.access;
        let slots = Self::slots_for(config);
        let now = time.now();
        let retention = Retention {
            per_account: config.reports.retain_per_account,
        };
        SessionTable {
            rescan: Vec::new(),
            held: VecDeque::with_capacity(HELD_RESERVE),
            stopwatch: None,
            written_ns: vec![0; slots],
            slots: (0..slots).map(|_| None).collect(),
            generations: vec![0; slots],
            credentials: Credentials::new(&config.accounts),
            throttle: LoginThrottle::new(ThrottleConfig {
                free_failures: a.throttle_free_failures,
                base_ms: a.throttle_base_ms,
                max_ms: a.throttle_max_ms,
                ..ThrottleConfig::default()
            }),
            pending: PendingPool::new(PendingConfig {
                capacity: a.pending,
                per_address: a.pending_per_address,
                timeout_ms: a.login_timeout_ms,
            }),
            logged_in: 0,
            max_sessions: config.max_sessions,
            per_account: FxHashMap::default(),
            max_per_account: config.max_sessions_per_account,
            slow_reader: Duration::from_millis(config.slow_reader_ms),
            followers: FxHashMap::default(),
            all_followers: Vec::new(),
            store: store.unwrap_or_else(|| ReportStore::new(retention)),
            definitions: definitions(&config.instruments, &config.assets),
            out_limit: config.session_out_buffer,
            heartbeat: Duration::from_millis(u64::from(config.heartbeat_ms)),
            engine_seq,
            clock,
            time,
            nonces,
            dirty: Vec::with_capacity(slots),
            flagged: vec![false; slots],
            last_timers: now,
            stats: SessionStats::default(),
            metrics: None,
            started: now,
            pressure: Pressure::new((&config.backpressure).into()),
            #[cfg(test)]
            naive_liveness: false,
            disconnects: Vec::new(),
        }
    }

    /// Connection slots of `config`: the logged-in sessions and the pending pool.
    pub(crate) fn slots_for(config: &Config) -> usize {
        config.max_sessions + config.access.pending
    }

    /// Now, by the session layer's clock.
    #[inline]
    fn now(&self) -> Instant {
        self.time.now()
    }

    /// Publishes the session counters to `hub` at most once per `interval`, from
    /// [`SessionTable::timers`].
    pub(crate) fn with_metrics(mut self, hub: Arc<MetricsHub>, interval: Duration) -> Self {
        let ns = u64::try_from(interval.as_nanos()).unwrap_or(u64::MAX);
        self.metrics = Some((hub, Debounce::new(ns)));
        self
    }

    /// Stamps each request's read and decode instants on `stopwatch`, and each
    /// session's last write ([`SessionTable::written_ns`]).
    pub(crate) fn with_stage_timing(mut self, stopwatch: Stopwatch) -> Self {
        self.stopwatch = Some(stopwatch);
        self
    }

    /// When session `slot` was last written (stopwatch nanoseconds; 0: never, or
    /// no stage timing).
    pub(crate) fn written_ns(&self, slot: usize) -> u64 {
        self.written_ns.get(slot).copied().unwrap_or(0)
    }

    /// Sessions whose buffered input waits to be handled (read by the liveness
    /// check): the next poll must not block.
    pub(crate) fn has_rescan(&self) -> bool {
        !self.rescan.is_empty()
    }

    /// Handles the input the liveness check read; returns how many sessions had some.
    pub(crate) fn drain_rescan(&mut self, requests: &mut Vec<Request>) -> usize {
        let rescan = std::mem::take(&mut self.rescan);
        let n = rescan.len();
        for slot in rescan {
            self.drain_frames(slot, requests);
            self.mark_dirty(slot);
        }
        n
    }

    fn now_ms(&self, now: Instant) -> u64 {
        u64::try_from(now.duration_since(self.started).as_millis()).unwrap_or(u64::MAX)
    }

    /// A newcomer from `peer`: the slot it gets (a free one; the pending pool evicts
    /// the oldest waiting connection when full) and its challenge nonce, or `None`
    /// when it is refused (every slot taken, no nonce). The caller sets its
    /// connection up at that slot, then calls [`SessionTable::admit`].
    pub(crate) fn prepare_admit(&mut self, peer: SocketAddr) -> Option<Admission> {
        let Some(slot) = self.slots.iter().position(Option::is_none) else {
            self.stats.refused += 1;
            log::info!("refused {peer}: every slot is taken");
            return None;
        };
        let key = SessionKey::new(slot as u32, self.generations[slot]);
        let mut nonce = [0u8; 32];
        if let Err(e) = self.nonces.fill(&mut nonce) {
            log::error!("refused {peer}: no random nonce: {e}");
            return None;
        }
        Some(Admission { slot, key, nonce })
    }

    /// Admits the newcomer whose connection was set up at `a.slot` into the pending
    /// pool: it is sent the challenge.
    pub(crate) fn admit(&mut self, a: Admission, peer: SocketAddr) {
        let now = self.now();
        let engine = self.engine_status();
        let (slot, key) = (a.slot, a.key);
        self.stats.accepted += 1;
        self.slots[slot] = Some(Conn::new(peer, key, self.out_limit, a.nonce, engine, now));
        self.mark_dirty(slot);
        if let Admit::Evicted(old) = self.pending.admit(key, peer.ip(), self.now_ms(now)) {
            if let Some(c) = self.slot_of(old) {
                c.proto.close = Some("evicted from the pending pool (login too slow)".into());
                self.mark_dirty(old.slot());
            }
        }
    }

    fn slot_of(&mut self, key: SessionKey) -> Option<&mut Conn> {
        self.slots
            .get_mut(key.slot())
            .and_then(Option::as_mut)
            .filter(|c| c.key == key)
    }

    /// Reads session `slot` once (it was reported ready) and handles what arrived.
    /// Returns the bytes read.
    pub(crate) fn read_ready(
        &mut self,
        slot: usize,
        io: &mut impl SessionIo,
        requests: &mut Vec<Request>,
    ) -> usize {
        let now = self.now();
        let Some(s) = self.slots.get_mut(slot).and_then(Option::as_mut) else {
            return 0;
        };
        let n = match s.read(io, now) {
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
        self.mark_dirty(slot);
        n
    }

    fn drain_frames(&mut self, slot: usize, requests: &mut Vec<Request>) {
        loop {
            let engine = self.engine_status();
            let Some(s) = self.slots[slot].as_mut() else {
                return;
            };
            let key = s.key;
            match s.proto.next_step() {
                None | Some(Step::Stop) => return,
                Some(Step::Nothing) => {}
                Some(Step::OldLogin) => {
                    let now = self.time.now();
                    s.proto
                        .refuse(LoginCode::UnsupportedVersion, 0, engine, now);
                    return;
                }
                Some(Step::Login(l)) => self.login(slot, &l, requests),
                Some(Step::Request(g, msg)) => {
                    if let Some(r) = self.admit_request(key, g, msg) {
                        requests.push(r);
                    }
                }
            }
        }
    }

    /// A request of a logged-in session for the core, or `None` when it is refused
    /// here (a drop copy is read-only; past `[backpressure]`'s limits, `busy`).
    fn admit_request(&mut self, key: SessionKey, g: Grant, msg: Inbound) -> Option<Request> {
        let scope = match g.target {
            Some(a) => Scope::Account(a),
            None => Scope::All,
        };
        let code = if g.kind == SessionKind::DropCopy {
            Some(RejectCode::ReadOnlySession)
        } else if self
            .pressure
            // Relaxed: a display value written by the matching stage.
            .refuses(&msg, self.engine_seq.load(Ordering::Relaxed))
        {
            Some(RejectCode::Busy)
        } else {
            None
        };
        if let Some(refusal) = code.and_then(|c| refusal(&msg, g.account, self.engine_status(), c))
        {
            let now = self.now();
            let store = &self.store;
            if let Some(c) = self
                .slots
                .get_mut(key.slot())
                .and_then(Option::as_mut)
                .filter(|c| c.key == key)
            {
                c.proto.answer(refusal, store, now);
            }
            self.mark_dirty(key.slot());
            return None;
        }
        Some(Request {
            key,
            account: g.account,
            scope,
            msg,
            read_ns: 0,
            decoded_ns: 0,
        })
    }

    fn login(
        &mut self,
        slot: usize,
        login: &peregrine_wire::v2::session::Login,
        requests: &mut Vec<Request>,
    ) {
        let now = self.now();
        let now_ms = self.now_ms(now);
        let engine = self.engine_status();
        let Some(s) = self.slots[slot].as_mut() else {
            return;
        };
        let (key, addr) = (s.key, s.peer.ip());
        if let Err(wait) = self.throttle.check(login.account, addr, now_ms) {
            let wait = u32::try_from(wait).unwrap_or(u32::MAX);
            s.proto.refuse(LoginCode::Throttled, wait, engine, now);
            log::info!(
                "session {slot}: login of account {} from {addr} throttled ({wait} ms)",
                login.account
            );
            return;
        }
        let grant = match self.credentials.verify(s.proto.nonce(), login) {
            Ok(g) => g,
            Err(refusal) => {
                let (code, known) = match refusal {
                    Refusal::BadCredentials => (LoginCode::BadCredentials, false),
                    Refusal::NotPermitted => (LoginCode::NotPermitted, true),
                };
                if !known {
                    // Known or not, the same: the throttle must not tell them apart.
                    self.throttle.failure(login.account, addr, now_ms);
                }
                s.proto.refuse(code, 0, engine, now);
                log::info!(
                    "session {slot}: login of account {} from {addr} refused: {:?}",
                    login.account,
                    code
                );
                return;
            }
        };
        if self.logged_in >= self.max_sessions {
            s.proto.refuse(LoginCode::SessionLimit, 0, engine, now);
            log::info!(
                "session {slot}: login refused: max_sessions ({}) reached",
                self.max_sessions
            );
            return;
        }
        let mine = self.per_account.get(&grant.account).copied().unwrap_or(0);
        if mine >= self.max_per_account {
            s.proto
                .refuse(LoginCode::AccountSessionLimit, 0, engine, now);
            log::info!(
                "session {slot}: login of account {} refused: it has max_sessions_per_account ({}) sessions",
                grant.account,
                self.max_per_account
            );
            return;
        }
        self.throttle.success(grant.account, addr, now_ms);
        self.pending.remove(key);
        self.logged_in += 1;
        *self.per_account.entry(grant.account).or_insert(0) += 1;
        self.stats.logins += 1;
        let heartbeat_ms = u32::try_from(self.heartbeat.as_millis()).unwrap_or(u32::MAX);
        let defs = self
            .definitions
            .iter()
            .map(|d| Outbound::from(stamped(d, engine.seq, engine.time, None)));
        let lost = s.proto.accept(
            grant,
            heartbeat_ms,
            self.definitions.len() as u32,
            login.next_report_seq,
            &self.store,
            engine,
            now,
            defs,
        );
        match grant.target {
            Some(a) => self.followers.entry(a).or_default().push(key),
            None => self.all_followers.push(key),
        }
        if lost {
            // The core sends the open-orders snapshot that replaces the replay.
            requests.push(Request {
                key,
                account: grant.account,
                scope: grant.target.map_or(Scope::All, Scope::Account),
                msg: Inbound::OpenOrdersRequest(OpenOrdersRequest {
                    request_id: 0,
                    account: grant.target,
                    instrument: None,
                }),
                read_ns: 0,
                decoded_ns: 0,
            });
        }
        log::info!(
            "session {slot}: account {} logged in from {addr} ({:?}, {}, resuming at {})",
            grant.account,
            grant.kind,
            grant
                .target
                .map_or("every account".into(), |a| format!("account {a}")),
            login.next_report_seq
        );
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

    /// Moves report-stream output into the buffers of every session touched since
    /// the last flush, writes, and closes sessions marked for closing. Returns
    /// whether any bytes were written (progress: a replay under way keeps the loop
    /// from parking).
    pub(crate) fn flush(&mut self, io: &mut impl SessionIo) -> bool {
        let engine = self.engine_status();
        let now = self.now();
        let mut wrote = false;
        for i in 0..self.dirty.len() {
            let slot = self.dirty[i];
            let Some(s) = self.slots[slot].as_mut() else {
                continue;
            };
            if s.proto.close.is_none() {
                s.proto.pump(&self.store, engine, now);
                let before = s.proto.unsent();
                s.flush(io, now);
                if s.proto.unsent() != before {
                    wrote = true;
                    if let Some(w) = self.stopwatch {
                        self.written_ns[slot] = w.now_ns();
                    }
                }
                // Room freed by the write: pull more of the stream while it lasts.
                while s.proto.close.is_none() && s.proto.pump(&self.store, engine, now) {
                    let before = s.proto.unsent();
                    s.flush(io, now);
                    if s.proto.unsent() == before {
                        break;
                    }
                }
                // Output the connection refused: be woken when it takes more (a
                // reader that catches up is written at full speed).
                io.want_write(slot, s.proto.unsent() > 0);
            }
            let finished = s.proto.close_after_flush && s.proto.unsent() == 0;
            if s.proto.close.is_some() || finished {
                self.close(slot, io);
            }
        }
        let (slots, flagged, store) = (&self.slots, &mut self.flagged, &self.store);
        self.dirty.retain(|&slot| {
            let keep = slots[slot].as_ref().is_some_and(|s| {
                s.proto.unsent() > 0 || s.proto.close_after_flush || behind(s, store, engine)
            });
            flagged[slot] = keep;
            keep
        });
        wrote
    }

    fn close(&mut self, slot: usize, io: &mut impl SessionIo) {
        let (engine, now) = (self.engine_status(), self.now());
        let Some(mut s) = self.slots[slot].take() else {
            return;
        };
        // A logged-in session the exchange ends is told why first (best effort: one
        // write attempt of what it has not sent yet, the `Disconnect` last).
        let code = s.proto.farewell_code();
        if s.proto.farewell(engine, now) {
            s.flush(io, now);
        }
        let p = &s.proto;
        let logged_in = p.grant().is_some();
        let reason = match code {
            Some(c) => DisconnectReason::of(c),
            None => DisconnectReason::classify(p.close.as_deref(), logged_in),
        };
        self.stats.disconnected(reason);
        let why = p.close.as_deref().unwrap_or(match reason {
            DisconnectReason::LoginRejected => "login refused",
            _ => "logout",
        });
        let who = p.grant().map_or("not logged in".to_string(), |g| {
            format!("account {}", g.account)
        });
        log::info!("session {slot}: disconnected ({who}, {}): {why}", s.peer);
        io.close(slot);
        self.rescan.retain(|&r| r != slot);
        self.generations[slot] = self.generations[slot].wrapping_add(1);
        self.pending.remove(s.key);
        if let Some(g) = p.grant() {
            // A `Logout` is the one clean end (it sets `close_after_flush` on a
            // logged-in session); anything else cancels when the session asked.
            if g.cancel_on_disconnect && !p.close_after_flush {
                log::info!(
                    "session {slot}: cancel-on-disconnect for account {}",
                    g.account
                );
                self.disconnects.push(g.account);
            }
            self.logged_in -= 1;
            if let Some(n) = self.per_account.get_mut(&g.account) {
                *n -= 1;
                if *n == 0 {
                    self.per_account.remove(&g.account);
                }
            }
            let list = match g.target {
                Some(a) => self.followers.get_mut(&a),
                None => Some(&mut self.all_followers),
            };
            if let Some(list) = list {
                list.retain(|k| *k != s.key);
            }
        }
    }

    /// A graceful stop: ends every session, a logged-in one with `Disconnect`
    /// (reason `shutdown`) after what it has not sent yet (one write attempt each).
    pub(crate) fn shutdown(&mut self, io: &mut impl SessionIo) {
        for slot in 0..self.slots.len() {
            if let Some(s) = self.slots[slot].as_mut() {
                s.proto
                    .end(DisconnectCode::Shutdown, "the exchange is stopping".into());
                self.close(slot, io);
            }
        }
    }

    /// Hands the loop the cancel-on-disconnect mass cancels of the sessions closed
    /// since the last call ([`Request::cancel_on_disconnect`]); returns how many.
    pub(crate) fn take_disconnects(&mut self, requests: &mut Vec<Request>) -> usize {
        let n = self.disconnects.len();
        for account in self.disconnects.drain(..) {
            requests.push(Request::cancel_on_disconnect(account));
        }
        n
    }

    /// Heartbeats, liveness, login timeouts: at most every millisecond.
    pub(crate) fn timers(&mut self, io: &mut impl SessionIo) {
        let now = self.now();
        let since = now.duration_since(self.last_timers);
        if since < Duration::from_millis(1) {
            return;
        }
        self.last_timers = now;
        // The loop itself did not run for a while (a stall of the exchange): that time
        // is nobody's silence.
        let stalled = (since > self.heartbeat).then_some(since);
        #[cfg(test)]
        let stalled = stalled.filter(|_| !self.naive_liveness);
        #[cfg(test)]
        let naive = self.naive_liveness;
        #[cfg(not(test))]
        let naive = false;
        let engine = self.engine_status();
        let now_ms = self.now_ms(now);
        while let Some(key) = self.pending.pop_expired(now_ms) {
            if let Some(c) = self.slot_of(key) {
                if c.proto.grant().is_none() {
                    c.proto.refuse(LoginCode::LoginTimeout, 0, engine, now);
                }
                self.mark_dirty(key.slot());
            }
        }
        for slot in 0..self.slots.len() {
            let Some(s) = self.slots[slot].as_mut() else {
                continue;
            };
            if let Some(d) = stalled {
                s.proto.forgive(d, now);
            }
            if s.proto.grant().is_none() {
                continue;
            }
            let silent = now.duration_since(s.proto.last_rx);
            if silent > self.heartbeat * 3 {
                // Judge on input actually read: bytes waiting in the socket mean the
                // peer is alive, whatever our own delays were.
                // Part of a message is not: a peer that stops mid-message is silent.
                let read = !naive && matches!(s.read(io, now), ReadOutcome::Ok(_));
                if read && s.proto.has_frame() {
                    // Handled by the next poll (the socket may be drained now).
                    if !self.rescan.contains(&slot) {
                        self.rescan.push(slot);
                    }
                    self.mark_dirty(slot);
                    continue;
                }
                s.proto.end(
                    DisconnectCode::HeartbeatTimeout,
                    "no input for three heartbeat intervals".into(),
                );
                self.mark_dirty(slot);
            } else if s.proto.stalled_reader(self.slow_reader, now) {
                s.proto.end(
                    DisconnectCode::SlowReader,
                    format!(
                        "slow reader: its output did not move for {} ms",
                        self.slow_reader.as_millis()
                    ),
                );
                self.mark_dirty(slot);
            } else if s.proto.delivery() == Delivery::Live {
                let before = s.proto.unsent();
                s.proto.heartbeat_if_due(self.heartbeat, engine, now);
                if s.proto.unsent() != before {
                    self.mark_dirty(slot);
                }
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
        s.busy = self.pressure.refused();
        for sess in self.slots.iter().flatten() {
            s.connected += 1;
            s.logged_in += u64::from(sess.proto.grant().is_some());
            s.outbound_bytes += sess.proto.unsent() as u64;
        }
        if let Some((hub, debounce)) = self.metrics.as_mut() {
            if hub.publish_sessions(&s) {
                debounce.done(t);
            }
        }
    }
}

impl SessionTable {
    /// Queues `notice` as the last message of every logged-in session, after the
    /// reports already released to it (a cluster leader that lost its quorum tells
    /// them where the leader is, or that none is known yet; the shell writes it:
    /// `Sockets::farewell`). Results held for replication are never released.
    /// Returns the slots told.
    pub(crate) fn queue_farewell(&mut self, notice: Outbound) -> Vec<usize> {
        let engine = self.engine_status();
        let now = self.now();
        let mut told = Vec::new();
        for (slot, c) in self.slots.iter_mut().enumerate() {
            let Some(s) = c.as_mut() else {
                continue;
            };
            if s.proto.grant().is_some() && s.proto.close.is_none() {
                while s.proto.pump(&self.store, engine, now) {}
                s.proto.enqueue(notice, now);
                told.push(slot);
            }
        }
        told
    }

    /// Writes what session `slot` has queued; true once all of it is written (or
    /// the session failed or is gone).
    pub(crate) fn flush_slot(&mut self, slot: usize, io: &mut impl SessionIo) -> bool {
        let now = self.now();
        let Some(s) = self.slots.get_mut(slot).and_then(Option::as_mut) else {
            return true;
        };
        s.flush(io, now);
        s.proto.close.is_some() || s.proto.unsent() == 0
    }
}

/// True if the session has stream output it has not pulled yet.
fn behind(c: &Conn, store: &ReportStore, engine: EngineStatus) -> bool {
    let p = &c.proto;
    match (p.delivery(), p.grant()) {
        (Delivery::Replay { .. }, _) => true,
        (Delivery::Live, Some(g)) => match g.target {
            Some(a) => p.next_report_seq(engine) < store.next_seq(a),
            None => false,
        },
        _ => false,
    }
}

impl SessionTable {
    /// The batch ending at engine sequence number `seq` was committed: the reports
    /// and answers queued since the last mark belong to it (they wait for its sync).
    /// Once per loop iteration: backpressure judges the next poll's requests by the
    /// pipeline as it stands now.
    pub(crate) fn mark_batch(&mut self, seq: u64) {
        let now =
            u64::try_from(self.now().duration_since(self.started).as_nanos()).unwrap_or(u64::MAX);
        self.pressure.marked(seq, now);
        self.pressure.poll_started(now);
        for h in self.held.iter_mut().rev() {
            if h.batch != u64::MAX {
                break;
            }
            h.batch = seq;
        }
    }

    /// Everything through `durable` is durable: the reports and answers of those
    /// batches enter the streams and the sessions' buffers. Returns whether any did.
    pub(crate) fn release(&mut self, durable: u64) -> bool {
        self.pressure.released(durable);
        let mut any = false;
        while let Some(h) = self.held.front().copied() {
            if h.batch > durable {
                break;
            }
            self.held.pop_front();
            any = true;
            match h.out {
                Report::Stream {
                    account,
                    requester,
                    msg,
                } => self.deliver_report(account, msg, requester),
                Report::Answer { to, msg } => self.deliver_answer(to, msg),
            }
        }
        any
    }

    /// Appends a durable report to `account`'s stream: every session following the
    /// account pulls it, and the requester gets it too if it does not follow.
    pub(crate) fn deliver_report(
        &mut self,
        account: AccountId,
        msg: Outbound,
        requester: SessionKey,
    ) {
        self.store.append(account, msg);
        let mut requester_follows = false;
        if let Some(list) = self.followers.get(&account) {
            for &k in list {
                requester_follows |= k == requester;
                let slot = k.slot();
                if !self.flagged[slot] {
                    self.flagged[slot] = true;
                    self.dirty.push(slot);
                }
            }
        }
        for i in 0..self.all_followers.len() {
            let k = self.all_followers[i];
            requester_follows |= k == requester;
            self.mark_dirty(k.slot());
        }
        // The answer to an admin's request about another account (a deposit) also
        // goes to the admin. Nothing else of another account's stream does: a fill of
        // the resting order a taker hit is the maker's alone.
        let admin_answer = matches!(msg, Outbound::Balance(_) | Outbound::AdminRejected(_));
        if admin_answer && !requester_follows {
            self.deliver_answer(requester, msg);
        }
    }

    /// Queues an answer of a durable batch for session `to` only.
    pub(crate) fn deliver_answer(&mut self, to: SessionKey, msg: Outbound) {
        let engine = self.engine_status();
        let now = self.now();
        let store = &self.store;
        let Some(c) = self
            .slots
            .get_mut(to.slot())
            .and_then(Option::as_mut)
            .filter(|c| c.key == to)
        else {
            return;
        };
        let snapshot_end = match msg {
            Outbound::OpenOrdersEnd(e) if e.request_id == 0 => Some(e.report_seq),
            _ => None,
        };
        // Reports of the account's stream released before this answer precede it (an
        // answer reflects every report up to its `report_seq`, and a pipelined query
        // must not overtake the reports of the requests sent before it): the stream is
        // pulled into the session's buffer first, not on the next flush.
        c.proto.pump(store, engine, now);
        c.proto.answer(msg, store, now);
        if let Some(as_of) = snapshot_end {
            c.proto.snapshot_done(as_of, store, engine, now);
        }
        self.mark_dirty(to.slot());
    }
}

/// The compact topology's outbox: output waits in the table until its batch is
/// durable ([`SessionTable::release`]).
impl Outbox for SessionTable {
    fn report(&mut self, account: AccountId, msg: Outbound, requester: SessionKey) {
        self.held.push_back(Held {
            batch: u64::MAX,
            out: Report::Stream {
                account,
                requester,
                msg,
            },
        });
    }

    fn answer(&mut self, to: SessionKey, msg: Outbound) {
        self.held.push_back(Held {
            batch: u64::MAX,
            out: Report::Answer { to, msg },
        });
    }
}

/// The refusal of an order request before sequencing, with `code`: on a read-only
/// (drop-copy) session, or `busy` (backpressure); `None` for requests it does not
/// cover.
fn refusal(
    msg: &Inbound,
    account: AccountId,
    e: EngineStatus,
    code: RejectCode,
) -> Option<Outbound> {
    let reason = code.reason();
    let cancel_rejected = |client_order_id, order_id, instrument, kind| {
        Outbound::from(CancelRejected {
            session_seq: 0,
            engine_seq: e.seq,
            engine_time: e.time,
            client_order_id,
            order_id,
            instrument,
            reason,
            request_kind: kind,
            reserved: Pad,
            report_seq: 0,
            account,
        })
    };
    Some(match msg {
        Inbound::NewOrder(o) => Rejected {
            session_seq: 0,
            engine_seq: e.seq,
            engine_time: e.time,
            client_order_id: o.client_order_id,
            instrument: o.instrument,
            reason,
            reserved: Pad,
            report_seq: 0,
            account,
        }
        .into(),
        Inbound::Cancel(c) => cancel_rejected(
            c.client_order_id,
            c.order_id,
            Some(c.instrument),
            RequestKind::Cancel,
        ),
        Inbound::Replace(r) => cancel_rejected(
            r.client_order_id,
            r.order_id,
            Some(r.instrument),
            RequestKind::Replace,
        ),
        Inbound::MassCancel(m) => cancel_rejected(
            m.client_order_id,
            peregrine_types::OrderId(0),
            m.instrument,
            RequestKind::MassCancel,
        ),
        Inbound::Deposit(d) if code == RejectCode::ReadOnlySession => {
            admin_refusal(d.request_id, d.account, d.asset, e)
        }
        Inbound::Withdraw(w) if code == RejectCode::ReadOnlySession => {
            admin_refusal(w.request_id, w.account, w.asset, e)
        }
        _ => return None,
    })
}

fn admin_refusal(request_id: u64, account: AccountId, asset: u32, e: EngineStatus) -> Outbound {
    AdminRejected {
        session_seq: 0,
        engine_seq: e.seq,
        engine_time: e.time,
        request_id,
        account,
        asset,
        reason: AdminCode::NotAdmin.reason(),
        reserved: Pad,
        report_seq: 0,
    }
    .into()
}
