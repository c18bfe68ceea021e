//! One version-2 order-entry session, sans-IO: framing, the challenge and login
//! steps, heartbeats and liveness, the session sequence number, the bounded outbound
//! buffer, and the delivery of the account's report stream from the shared
//! [`ReportStore`] at the session's own pace (the recovery phase after login, then
//! live). It sees bytes, instants and the store, never a socket; the session table
//! decides who may log in (credentials, throttling, the pending pool) and where
//! requests go.
//!
//! Delivery is pulled: a session keeps a cursor into its scope's stream and
//! [`Session::pump`] copies reports into the outbound buffer while there is room, so
//! several sessions of one account each get every report, a slow reader lags instead
//! of losing reports, and a session is closed only when its cursor falls out of
//! retention (it reconnects and resumes). Answers that are not in the stream (order
//! status, open orders, refusals before sequencing) are held until the recovery phase
//! is over, so they never interleave with a replay, and until the session's cursor
//! has passed every report its scope's stream held when the answer was made, so an
//! answer never overtakes a report released before it (a lagging reader gets its
//! reports first, then the answer: the answer reflects them).

use std::collections::VecDeque;
use std::time::Instant;

use peregrine_types::Timestamp;
use peregrine_wire::field::Pad;
use peregrine_wire::reason::{DisconnectCode, LoginCode, RecoveryCode};
use peregrine_wire::stream::RecvBuffer;
use peregrine_wire::v2::session::{
    Challenge, Disconnect, LoginAccepted, LoginRejected, ReplayEnd, ReplayStart, ServerHeartbeat,
};
use peregrine_wire::v2::{Inbound, Outbound};
use peregrine_wire::{DecodeError, ReasonCode, MAX_MESSAGE_SIZE};

use peregrine_exchange_core::reports::{Position, ReportStore};

use crate::net::credentials::Grant;

/// Bytes of the per-session receive buffer.
pub(crate) const RECV_BUFFER: usize = 8192;
/// Most answers held back (during a recovery phase, or behind a lagging stream)
/// before the session is closed.
pub(crate) const MAX_HELD: usize = 1024;

/// What the engine tells a session about itself.
#[derive(Debug, Clone, Copy)]
pub(crate) struct EngineStatus {
    /// The engine sequence number now.
    pub seq: u64,
    /// The engine time now.
    pub time: Timestamp,
}

/// Where the session's stream delivery is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Delivery {
    /// Not logged in.
    None,
    /// Replaying reports up to (excluding) `to`, then `ReplayEnd`.
    Replay {
        /// One past the last replayed report.
        to: u64,
        /// Reports replayed so far.
        sent: u64,
    },
    /// Waiting for the open-orders snapshot that replaces a replay (the table asked
    /// the core for it); `ReplayEnd` follows its end.
    Snapshot,
    /// Live.
    Live,
}

/// What one inbound message means for the session table.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Step {
    /// Handled inside the session, or nothing to do.
    Nothing,
    /// A `Login` to check ([`crate::credentials::Credentials::verify`], throttling).
    Login(peregrine_wire::v2::session::Login),
    /// A version-1 `Login`: answer `unsupported_version` and close.
    OldLogin,
    /// A request of the logged-in session, for the matching stage.
    Request(Grant, Inbound),
    /// The session stops reading.
    Stop,
}

/// Logged in or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum State {
    /// Connected; the challenge was sent; only `Login` is allowed.
    AwaitLogin,
    /// Logged in.
    Active(Grant),
}

/// One session. See the module documentation.
#[derive(Debug)]
pub(crate) struct Session {
    rx: Box<RecvBuffer<RECV_BUFFER>>,
    out: Vec<u8>,
    out_sent: usize,
    limit: usize,
    seq: u64,
    nonce: [u8; 32],
    /// Login state.
    pub state: State,
    /// The stream position: the next report sequence number (one account) or the
    /// next global index (every account).
    cursor: u64,
    delivery: Delivery,
    /// Answers waiting, each with the stream position it follows (the cursor must
    /// reach it first).
    held: VecDeque<(u64, Outbound)>,
    /// When the peer last completed a message (its last sign of life: part of a
    /// message is silence).
    pub last_rx: Instant,
    /// When bytes last arrived (a message they complete dates from then).
    rx_at: Instant,
    /// Last time a message was queued.
    pub last_tx: Instant,
    /// Last time the outbound buffer moved: a write took bytes, or output was queued
    /// into an empty buffer (a slow reader's clock).
    tx_progress: Instant,
    /// Set when the session must close; the reason is logged.
    pub close: Option<String>,
    /// Why the exchange ends a logged-in session: sent as `Disconnect` before the
    /// close ([`Session::end`]).
    farewell: Option<DisconnectCode>,
    /// Close once the outbound buffer drained (logout, login refused).
    pub close_after_flush: bool,
}

impl Session {
    /// A new connection: queues the `Challenge` with `nonce`.
    pub(crate) fn new(limit: usize, nonce: [u8; 32], engine: EngineStatus, now: Instant) -> Self {
        let mut s = Session {
            rx: Box::new(RecvBuffer::new()),
            out: Vec::with_capacity(limit),
            out_sent: 0,
            limit,
            seq: 0,
            nonce,
            state: State::AwaitLogin,
            cursor: 0,
            delivery: Delivery::None,
            held: VecDeque::new(),
            last_rx: now,
            rx_at: now,
            last_tx: now,
            tx_progress: now,
            close: None,
            farewell: None,
            close_after_flush: false,
        };
        s.enqueue(
            Challenge {
                session_seq: 0,
                engine_seq: engine.seq,
                engine_time: engine.time,
                nonce,
            }
            .into(),
            now,
        );
        s
    }

    /// The nonce the login must prove.
    pub(crate) fn nonce(&self) -> &[u8; 32] {
        &self.nonce
    }

    /// The grant, once logged in.
    pub(crate) fn grant(&self) -> Option<Grant> {
        match self.state {
            State::Active(g) => Some(g),
            State::AwaitLogin => None,
        }
    }

    /// Where stream delivery is.
    pub(crate) fn delivery(&self) -> Delivery {
        self.delivery
    }

    /// The free part of the receive buffer (empty when full).
    pub(crate) fn rx_spare(&mut self) -> &mut [u8] {
        self.rx.spare()
    }

    /// True if a whole message (or bytes that can never be one) waits in the receive
    /// buffer; part of a message alone is not input.
    pub(crate) fn has_frame(&self) -> bool {
        self.rx.frame_ready()
    }

    /// Ends the session for `why` (logged); a logged-in session is first told, with
    /// `Disconnect` and `code` ([`Session::farewell`]). The first reason wins.
    pub(crate) fn end(&mut self, code: DisconnectCode, why: String) {
        if self.close.is_some() {
            return;
        }
        self.close = Some(why);
        if self.grant().is_some() {
            self.farewell = Some(code);
        }
    }

    /// The disconnect reason this session was ended with, if it is to be told.
    pub(crate) fn farewell_code(&self) -> Option<DisconnectCode> {
        self.farewell
    }

    /// Queues the `Disconnect` of a session [`Session::end`]ed while logged in
    /// (beyond the buffer's limit: it is the last message); returns whether it did.
    pub(crate) fn farewell(&mut self, engine: EngineStatus, now: Instant) -> bool {
        let Some(code) = self.farewell.take() else {
            return false;
        };
        let msg = Disconnect {
            session_seq: 0,
            engine_seq: engine.seq,
            engine_time: engine.time,
            next_report_seq: self.next_report_seq(engine),
            reason: code.reason(),
            reserved: Pad,
        };
        self.push(msg.into(), now);
        true
    }

    /// Whether the peer has left output unread for longer than `limit`: unsent
    /// bytes that no write has moved since.
    pub(crate) fn stalled_reader(&self, limit: std::time::Duration, now: Instant) -> bool {
        self.unsent() > 0 && now.duration_since(self.tx_progress) > limit
    }

    /// The exchange itself did not run for `stalled` (a long pause of its own loop):
    /// that time does not count as the peer's silence.
    pub(crate) fn forgive(&mut self, stalled: std::time::Duration, now: Instant) {
        self.last_rx = (self.last_rx + stalled).min(now);
        self.tx_progress = (self.tx_progress + stalled).min(now);
    }

    /// `n` bytes were read into [`Session::rx_spare`] at `now`. They count as a sign
    /// of life once they complete a message ([`Session::next_step`]).
    pub(crate) fn received(&mut self, n: usize, now: Instant) {
        self.rx.commit(n);
        if n > 0 {
            self.rx_at = now;
        }
    }

    /// The next inbound message and what it means, or `None` when no whole frame is
    /// buffered. A protocol violation sets [`Session::close`] and returns
    /// [`Step::Stop`].
    pub(crate) fn next_step(&mut self) -> Option<Step> {
        if self.close.is_some() || self.close_after_flush {
            return None;
        }
        let violation = DisconnectCode::ProtocolViolation;
        let msg = match self.rx.next(Inbound::decode) {
            Ok(Some(m)) => m,
            Ok(None) => return None,
            Err(DecodeError::UnknownType(0x01)) if self.state == State::AwaitLogin => {
                return Some(Step::OldLogin);
            }
            Err(e) => {
                self.end(violation, format!("malformed input: {e}"));
                return Some(Step::Stop);
            }
        };
        // A whole message: the peer is alive as of the read that completed it.
        self.last_rx = self.last_rx.max(self.rx_at);
        Some(match (self.state, msg) {
            (State::AwaitLogin, Inbound::Login(l)) => Step::Login(l),
            (State::AwaitLogin, other) => {
                self.end(violation, format!("{} before login", other.desc().name));
                Step::Stop
            }
            (State::Active(_), Inbound::Login(_)) => {
                self.end(violation, "second Login on a logged-in session".into());
                Step::Stop
            }
            (State::Active(_), Inbound::ClientHeartbeat(_)) => Step::Nothing,
            (State::Active(_), Inbound::Logout(_)) => {
                self.close_after_flush = true;
                Step::Stop
            }
            (State::Active(g), msg) => Step::Request(g, msg),
        })
    }

    /// Refuses the login with `code` (and a retry delay) and closes after the answer.
    pub(crate) fn refuse(
        &mut self,
        code: LoginCode,
        retry_after_ms: u32,
        engine: EngineStatus,
        now: Instant,
    ) {
        let r = LoginRejected {
            session_seq: 0,
            engine_seq: engine.seq,
            engine_time: engine.time,
            reason: code.reason(),
            reserved: peregrine_wire::field::Pad,
            retry_after_ms,
        };
        self.enqueue(r.into(), now);
        self.close_after_flush = true;
    }

    /// Accepts the login: queues `LoginAccepted` (with `defs` instrument definitions
    /// following it, queued by the caller), then starts the recovery phase from
    /// `from` (the login's `next_report_seq`). Returns `true` when the position is
    /// lost and the caller must have the core send the open-orders snapshot
    /// (`OpenOrdersRequest` with request id 0), after which [`Session::snapshot_done`]
    /// ends the phase.
    #[allow(clippy::too_many_arguments)] // one call site, the table's login
    pub(crate) fn accept(
        &mut self,
        grant: Grant,
        heartbeat_ms: u32,
        instrument_count: u32,
        from: u64,
        store: &ReportStore,
        engine: EngineStatus,
        now: Instant,
        defs: impl IntoIterator<Item = Outbound>,
    ) -> bool {
        self.state = State::Active(grant);
        let (next, oldest, position, start) = match grant.target {
            Some(a) => {
                let next = store.next_seq(a);
                let start = if from == 0 { next } else { from };
                (next, store.oldest_seq(a), store.position(a, start), start)
            }
            None => {
                // Every account: positions are engine sequence numbers.
                let next = engine.seq + 1;
                let start = if from == 0 { next } else { from };
                let pos = match store.first_global_at(start) {
                    _ if start > next => Position::Ahead,
                    Some(g) => {
                        self.cursor = g;
                        Position::Replay
                    }
                    None => Position::NotRetained,
                };
                (next, store.all_floor(), pos, start)
            }
        };
        let accepted = LoginAccepted {
            session_seq: 0,
            engine_seq: engine.seq,
            engine_time: engine.time,
            account: grant.account,
            heartbeat_interval_ms: heartbeat_ms,
            next_report_seq: next,
            oldest_report_seq: oldest,
            target: grant.target,
            instrument_count,
            kind: grant.kind,
        };
        self.enqueue(accepted.into(), now);
        for d in defs {
            self.enqueue(d, now);
        }
        let reason = match position {
            Position::Replay => None,
            Position::NotRetained => Some(RecoveryCode::NotRetained),
            Position::Ahead => Some(RecoveryCode::AheadOfStream),
        };
        let count = match (reason, grant.target) {
            (None, Some(_)) => next - start,
            (None, None) => store.next_global() - self.cursor,
            (Some(_), _) => 0,
        };
        self.enqueue(
            ReplayStart {
                session_seq: 0,
                engine_seq: engine.seq,
                engine_time: engine.time,
                from_seq: from,
                to_seq: next,
                count,
                reason: reason.map_or(ReasonCode::NONE, |r| r.reason()),
            }
            .into(),
            now,
        );
        if reason.is_some() {
            self.delivery = Delivery::Snapshot;
            return true;
        }
        if grant.target.is_some() {
            self.cursor = start;
        }
        self.delivery = Delivery::Replay {
            to: match grant.target {
                Some(_) => next,
                None => store.next_global(),
            },
            sent: 0,
        };
        false
    }

    /// The open-orders snapshot of a lost position ended with `OpenOrdersEnd`
    /// reflecting reports up to `as_of` (for every account: engine sequence number
    /// `as_of`): live delivery continues right after it.
    pub(crate) fn snapshot_done(
        &mut self,
        as_of: u64,
        store: &ReportStore,
        engine: EngineStatus,
        now: Instant,
    ) {
        if self.delivery != Delivery::Snapshot {
            return;
        }
        let next = match self.grant().and_then(|g| g.target) {
            Some(_) => {
                self.cursor = as_of + 1;
                as_of + 1
            }
            None => {
                self.cursor = store
                    .first_global_at(as_of + 1)
                    .unwrap_or(store.next_global());
                as_of + 1
            }
        };
        self.end_recovery(next, 0, engine, now);
    }

    fn end_recovery(&mut self, next: u64, count: u64, engine: EngineStatus, now: Instant) {
        self.enqueue(
            ReplayEnd {
                session_seq: 0,
                engine_seq: engine.seq,
                engine_time: engine.time,
                next_report_seq: next,
                count,
            }
            .into(),
            now,
        );
        self.delivery = Delivery::Live;
        self.release_held(now);
    }

    /// Queues the held answers whose stream position the cursor has reached, in
    /// order, while they fit (live sessions only). Returns whether any was queued.
    fn release_held(&mut self, now: Instant) -> bool {
        let mut any = false;
        while let Some(&(after, msg)) = self.held.front() {
            if self.delivery != Delivery::Live || self.cursor < after {
                break;
            }
            if self.unsent() > 0 && self.unsent() + msg.size() > self.limit {
                break;
            }
            self.held.pop_front();
            self.enqueue(msg, now);
            any = true;
        }
        any
    }

    /// One past the newest report of the session's scope in `store`.
    fn stream_end(&self, store: &ReportStore) -> u64 {
        match self.grant().map(|g| g.target) {
            Some(Some(a)) => store.next_seq(a),
            Some(None) => store.next_global(),
            None => 0,
        }
    }

    /// An answer outside the stream (query answer, open-order snapshot line,
    /// refusal): queued now when live, caught up with the stream in `store` and
    /// with room for it; else held until the recovery phase ends and the cursor has
    /// passed every report the stream holds now.
    pub(crate) fn answer(&mut self, msg: Outbound, store: &ReportStore, now: Instant) {
        let snapshot_line = self.delivery == Delivery::Snapshot
            && match msg {
                Outbound::OpenOrder(o) => o.request_id == 0,
                Outbound::OpenOrdersEnd(e) => e.request_id == 0,
                _ => false,
            };
        if snapshot_line {
            self.enqueue(msg, now);
            return;
        }
        let after = self.stream_end(store);
        let fits = self.unsent() == 0 || self.unsent() + msg.size() <= self.limit;
        if self.delivery == Delivery::Live && self.held.is_empty() && self.cursor >= after && fits {
            self.enqueue(msg, now);
        } else if self.held.len() < MAX_HELD {
            self.held.push_back((after, msg));
        } else {
            self.end(
                DisconnectCode::SlowReader,
                "slow reader: too many answers held behind the report stream".into(),
            );
        }
    }

    /// Copies reports of the session's scope from `store` into the outbound buffer
    /// while there is room. Returns whether anything was queued.
    pub(crate) fn pump(&mut self, store: &ReportStore, engine: EngineStatus, now: Instant) -> bool {
        let Some(g) = self.grant() else {
            return false;
        };
        if self.close.is_some() || matches!(self.delivery, Delivery::None | Delivery::Snapshot) {
            return false;
        }
        let mut any = false;
        loop {
            any |= self.release_held(now);
            if let Delivery::Replay { to, sent } = self.delivery {
                if self.cursor >= to {
                    let next = match g.target {
                        Some(_) => to,
                        None => engine.seq + 1,
                    };
                    self.end_recovery(next, sent, engine, now);
                    any = true;
                    continue;
                }
            }
            let (end, next) = match g.target {
                Some(a) => (store.next_seq(a), store.get(a, self.cursor)),
                None => (store.next_global(), store.at_global(self.cursor)),
            };
            if self.cursor >= end {
                return any;
            }
            let Some(msg) = next.copied() else {
                self.end(
                    DisconnectCode::BehindRetention,
                    format!(
                        "fell behind the report retention at position {}",
                        self.cursor
                    ),
                );
                return any;
            };
            if self.unsent() + msg.size() > self.limit {
                return any;
            }
            self.enqueue(msg, now);
            self.cursor += 1;
            if let Delivery::Replay { to, sent } = self.delivery {
                self.delivery = Delivery::Replay { to, sent: sent + 1 };
            }
            any = true;
        }
    }

    /// The stream position reached (what a heartbeat announces).
    pub(crate) fn next_report_seq(&self, engine: EngineStatus) -> u64 {
        match self.grant().and_then(|g| g.target) {
            Some(_) => self.cursor,
            None => engine.seq + 1,
        }
    }

    /// Queues a heartbeat if nothing was sent for `interval` (live sessions only).
    pub(crate) fn heartbeat_if_due(
        &mut self,
        interval: std::time::Duration,
        engine: EngineStatus,
        now: Instant,
    ) {
        if self.delivery != Delivery::Live || now.duration_since(self.last_tx) < interval {
            return;
        }
        let hb = ServerHeartbeat {
            session_seq: 0,
            engine_seq: engine.seq,
            engine_time: engine.time,
            next_report_seq: self.next_report_seq(engine),
        };
        self.enqueue(hb.into(), now);
    }

    /// Stamps the next session sequence number and queues the message; a message
    /// that does not fit closes the session (slow reader of answers).
    pub(crate) fn enqueue(&mut self, msg: Outbound, now: Instant) {
        if self.close.is_some() {
            return;
        }
        if self.out_sent > 0 && self.out.len() + msg.size() > self.limit {
            self.out.drain(..self.out_sent);
            self.out_sent = 0;
        }
        if self.out.len() + msg.size() > self.limit.max(msg.size()) {
            self.end(
                DisconnectCode::SlowReader,
                format!(
                    "slow reader: {} unsent bytes exceed the {}-byte outbound buffer",
                    self.unsent(),
                    self.limit
                ),
            );
            return;
        }
        self.push(msg, now);
    }

    /// Stamps the next session sequence number and appends the message, whatever
    /// the buffer's limit.
    fn push(&mut self, mut msg: Outbound, now: Instant) {
        let mut frame = [0u8; MAX_MESSAGE_SIZE];
        self.seq += 1;
        msg.set_session_seq(self.seq);
        let Ok(n) = msg.encode(&mut frame) else {
            self.close
                .get_or_insert_with(|| "internal: outbound encode failed".into());
            return;
        };
        if self.unsent() == 0 {
            self.tx_progress = now;
        }
        self.out.extend_from_slice(&frame[..n]);
        self.last_tx = now;
    }

    /// Bytes queued and not yet written.
    pub(crate) fn unsent(&self) -> usize {
        self.out.len() - self.out_sent
    }

    /// The queued bytes to write next.
    pub(crate) fn pending_output(&self) -> &[u8] {
        &self.out[self.out_sent..]
    }

    /// `n` bytes of [`Session::pending_output`] were written at `now`.
    pub(crate) fn wrote(&mut self, n: usize, now: Instant) {
        if n > 0 {
            self.tx_progress = now;
        }
        self.out_sent = (self.out_sent + n).min(self.out.len());
        if self.out_sent == self.out.len() {
            self.out.clear();
            self.out_sent = 0;
        }
    }
}

#[cfg(test)]
#[path = "protocol_tests.rs"]
mod tests;
