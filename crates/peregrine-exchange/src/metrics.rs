//! Exchange metrics: counted in plain fields by the thread that owns them, published
//! to a shared [`MetricsHub`] at most once per interval, rendered as Prometheus text
//! by the HTTP thread ([`crate::http`]).
//!
//! ```text
//!  matching thread                     session thread (same one in compact)
//!  CoreMetrics: plain u64 fields        SessionStats: plain u64 fields
//!   + LogHistogram of request latency   (connects, disconnects by reason, …)
//!      │ end of batch / idle:               │ timers(), at most every ms:
//!      │ Debounce (publish_interval_ms)     │ Debounce (publish_interval_ms)
//!      ▼ try_lock + clone_from              ▼ try_lock + copy
//!   MetricsHub { core, sessions, depth slot } ◀── HTTP thread: lock, copy, render
//! ```
//!
//! Nothing on the per-order path touches shared memory: an order costs a few plain
//! increments and one histogram bucket increment. The copy into the hub happens from
//! the end-of-batch or idle path, never more than once per interval, and never waits:
//! if the HTTP thread holds the lock, the publish is retried at the next chance.
//!
//! **Latency without an extra clock read per order.** The core reads the clock once per request
//! anyway (the command timestamp). A request's latency is the time from its own
//! reading to the next request's reading in the same batch, or to the one clock read
//! at the end of the batch (before the journal commit) for the last request. It
//! covers decoding into a command, the journal append, matching, and routing the
//! reports into the session buffers; not the commit (see the fsync histogram) and
//! not the socket writes.

use std::sync::{Arc, Mutex, PoisonError, TryLockError};

use peregrine_book::{CancelReason, Event};
use peregrine_journal::JournalStats;
use peregrine_types::{InstrumentId, InstrumentSpec, OrderType};
use peregrine_wire::Inbound;

use crate::depth::DepthSlot;
use crate::metrics_hist::{Debounce, LogHistogram};

/// Slots of the reject counters, indexed by [`peregrine_book::RejectReason::code`] (codes are small).
pub const REJECT_SLOTS: usize = 32;
/// Slots of the cancel counters, indexed by the [`CancelReason`] code.
pub const CANCEL_SLOTS: usize = 8;

/// Request kinds counted by [`CoreStats::requests`], in index order.
pub const REQUEST_KINDS: [&str; 4] = ["new_order", "cancel", "replace", "mass_cancel"];
/// Order types counted by [`CoreStats::orders_received`], in index order.
pub const ORDER_TYPES: [OrderType; 3] = [OrderType::Limit, OrderType::Market, OrderType::PostOnly];
/// Every cancel reason, for rendering.
pub const CANCEL_REASONS: [CancelReason; 6] = [
    CancelReason::UserRequested,
    CancelReason::MassCancel,
    CancelReason::Unfilled,
    CancelReason::FokUnfillable,
    CancelReason::SelfTrade,
    CancelReason::Expired,
];

/// The matching thread's counters. Plain fields: only the matching thread writes
/// them; the hub holds a copy.
#[derive(Debug, PartialEq, Eq, Default)]
pub struct CoreStats {
    /// New orders received, by [`ORDER_TYPES`] index.
    pub orders_received: [u64; 3],
    /// Requests received, by [`REQUEST_KINDS`] index.
    pub requests: [u64; 4],
    /// Orders accepted.
    pub accepted: u64,
    /// Fills (trades).
    pub fills: u64,
    /// Rejects by [`peregrine_book::RejectReason::code`].
    pub rejects: [u64; REJECT_SLOTS],
    /// Cancel events by [`CancelReason`] code.
    pub cancels: [u64; CANCEL_SLOTS],
    /// Engine commands executed (an all-instrument mass cancel is one per book).
    pub commands: u64,
    /// Batches that executed at least one request.
    pub batches: u64,
    /// Ticks processed (batch mode bumps it through [`CoreMetrics::tick`]).
    pub ticks: u64,
    /// Request latency on the matching thread (see the module docs), by
    /// [`REQUEST_KINDS`] index.
    pub latency: [LogHistogram; 4],
    /// Engine sequence number at the last publish.
    pub engine_seq: u64,
    /// Split topology: requests waiting in the request ring (last sample, taken
    /// every 64 iterations of the matching loop).
    pub request_ring_depth: Option<u64>,
    /// Split topology: reports waiting in the report ring (last sample).
    pub report_ring_depth: Option<u64>,
    /// The journal's counters at the last publish, when there is a journal.
    pub journal: Option<JournalStats>,
    /// Resting orders per book at the last publish, in engine order.
    pub resting: Vec<(InstrumentId, u64)>,
    /// Publishes so far.
    pub publishes: u64,
}

impl Clone for CoreStats {
    fn clone(&self) -> Self {
        let mut c = CoreStats::default();
        c.clone_from(self);
        c
    }

    /// Copies field by field and reuses `resting`'s buffer (the derived `clone_from`
    /// would allocate a new vector on every publish). The destructuring names every
    /// field, so a new field that is not copied here does not compile.
    fn clone_from(&mut self, src: &Self) {
        let CoreStats {
            orders_received,
            requests,
            accepted,
            fills,
            rejects,
            cancels,
            commands,
            batches,
            ticks,
            latency,
            engine_seq,
            request_ring_depth,
            report_ring_depth,
            journal,
            resting,
            publishes,
        } = src;
        self.orders_received = *orders_received;
        self.requests = *requests;
        self.accepted = *accepted;
        self.fills = *fills;
        self.rejects = *rejects;
        self.cancels = *cancels;
        self.commands = *commands;
        self.batches = *batches;
        self.ticks = *ticks;
        self.latency = *latency;
        self.engine_seq = *engine_seq;
        self.request_ring_depth = *request_ring_depth;
        self.report_ring_depth = *report_ring_depth;
        self.journal = *journal;
        self.resting.clone_from(resting);
        self.publishes = *publishes;
    }
}

/// The matching thread's recorder: counters, the pending latency start, and the
/// debounced link to the hub.
#[derive(Debug, Default)]
pub struct CoreMetrics {
    stats: CoreStats,
    /// Start time and [`REQUEST_KINDS`] index of the request being executed (only
    /// timed while a hub is attached).
    pending: Option<(u64, usize)>,
    /// A request ran since the last [`CoreMetrics::end_batch`].
    in_batch: bool,
    hub: Option<(Arc<MetricsHub>, Debounce)>,
}

impl CoreMetrics {
    /// Publishes to `hub` at most once per `interval_ns`; `books` sizes the
    /// per-book vector once, so publishing never allocates.
    pub fn attach(&mut self, hub: Arc<MetricsHub>, interval_ns: u64, books: usize) {
        self.stats.resting.reserve(books);
        self.hub = Some((hub, Debounce::new(interval_ns)));
    }

    /// Whether a hub is attached.
    pub fn attached(&self) -> bool {
        self.hub.is_some()
    }

    /// The counters so far.
    pub fn stats(&self) -> &CoreStats {
        &self.stats
    }

    /// A request arrived at `now_ns` (its command timestamp): closes the latency of
    /// the previous request of the batch and counts this one. Latency is timed only
    /// while a hub is attached.
    #[inline]
    pub fn on_request(&mut self, msg: &Inbound, now_ns: u64) {
        if let Some((start, kind)) = self.pending.take() {
            self.stats.latency[kind].record(now_ns.saturating_sub(start));
        }
        let kind = match msg {
            Inbound::NewOrder(o) => {
                self.stats.orders_received[o.order_type as usize % 3] += 1;
                0
            }
            Inbound::Cancel(_) => 1,
            Inbound::Replace(_) => 2,
            Inbound::MassCancel(_) => 3,
            // Session messages never reach the core.
            _ => return,
        };
        self.stats.requests[kind] += 1;
        self.in_batch = true;
        if self.hub.is_some() {
            self.pending = Some((now_ns, kind));
        }
    }

    /// One engine command executed.
    #[inline]
    pub fn on_command(&mut self) {
        self.stats.commands += 1;
    }

    /// Counts one event of the engine.
    #[inline]
    pub fn on_event(&mut self, ev: &Event) {
        match ev {
            Event::Accepted(_) => self.stats.accepted += 1,
            Event::Fill(_) => self.stats.fills += 1,
            Event::Rejected(r) => self.stats.rejects[r.reason.code() as usize % REJECT_SLOTS] += 1,
            Event::Cancelled(c) => self.stats.cancels[c.reason as usize % CANCEL_SLOTS] += 1,
            _ => {}
        }
    }

    /// Whether a request ran since the last [`CoreMetrics::end_batch`].
    #[inline]
    pub fn in_batch(&self) -> bool {
        self.in_batch
    }

    /// Whether the batch's last request awaits an end time (a hub is attached):
    /// only then does the core read the clock at the end of a batch.
    #[inline]
    pub fn timing(&self) -> bool {
        self.pending.is_some()
    }

    /// The batch's requests were all executed (at `now_ns`, when timing).
    #[inline]
    pub fn end_batch(&mut self, now_ns: Option<u64>) {
        if let (Some((start, kind)), Some(now)) = (self.pending.take(), now_ns) {
            self.stats.latency[kind].record(now.saturating_sub(start));
        }
        if self.in_batch {
            self.in_batch = false;
            self.stats.batches += 1;
        }
    }

    /// Counts `n` processed ticks (batch mode).
    #[inline]
    pub fn tick(&mut self, n: u64) {
        self.stats.ticks += n;
    }

    /// Split topology: a sample of the rings' backlog.
    #[inline]
    pub fn set_ring_depths(&mut self, requests: u64, reports: u64) {
        self.stats.request_ring_depth = Some(requests);
        self.stats.report_ring_depth = Some(reports);
    }

    /// Whether a publish would run at `now_ns`.
    #[inline]
    pub fn is_due(&self, now_ns: u64) -> bool {
        self.hub.as_ref().is_some_and(|(_, d)| d.is_due(now_ns))
    }

    /// Copies the counters to the hub if due, after `fill` set the values read at
    /// publish time (sequence, resting orders, journal). Returns whether it did.
    pub fn publish(&mut self, now_ns: u64, fill: impl FnOnce(&mut CoreStats)) -> bool {
        if !self.is_due(now_ns) {
            return false;
        }
        fill(&mut self.stats);
        self.stats.publishes += 1;
        let Some((hub, debounce)) = self.hub.as_mut() else {
            return false;
        };
        if hub.publish_core(&self.stats) {
            debounce.done(now_ns);
            true
        } else {
            self.stats.publishes -= 1;
            false
        }
    }
}

/// Why a session ended, for `peregrine_exchange_session_disconnects_total`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DisconnectReason {
    /// Its outbound buffer overflowed.
    SlowReader,
    /// A malformed frame, an unknown type, or a protocol violation (anything before
    /// `Login`, a second `Login`).
    BadInput,
    /// Silent for three heartbeat intervals.
    HeartbeatTimeout,
    /// The peer closed the connection.
    PeerClosed,
    /// A socket error.
    IoError,
    /// A `Logout`, after its output drained.
    Logout,
    /// Bad credentials, after the `LoginRejected` drained.
    LoginRejected,
    /// Anything else (internal errors).
    Other,
}

impl DisconnectReason {
    /// Every reason, in counter index order.
    pub const ALL: [DisconnectReason; 8] = [
        Self::SlowReader,
        Self::BadInput,
        Self::HeartbeatTimeout,
        Self::PeerClosed,
        Self::IoError,
        Self::Logout,
        Self::LoginRejected,
        Self::Other,
    ];

    /// The label value.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::SlowReader => "slow_reader",
            Self::BadInput => "bad_input",
            Self::HeartbeatTimeout => "heartbeat_timeout",
            Self::PeerClosed => "peer_closed",
            Self::IoError => "io_error",
            Self::Logout => "logout",
            Self::LoginRejected => "login_rejected",
            Self::Other => "other",
        }
    }

    /// Classifies the close reason the session layer logs (`None`: closed after its
    /// output drained, i.e. a logout, or a login reject if never logged in).
    pub fn classify(why: Option<&str>, logged_in: bool) -> Self {
        let Some(why) = why else {
            return if logged_in {
                Self::Logout
            } else {
                Self::LoginRejected
            };
        };
        if why.starts_with("slow reader") {
            Self::SlowReader
        } else if why.starts_with("malformed input")
            || why.ends_with("before login")
            || why.starts_with("second Login")
        {
            Self::BadInput
        } else if why.starts_with("no input for") {
            Self::HeartbeatTimeout
        } else if why.starts_with("peer closed") {
            Self::PeerClosed
        } else if why.starts_with("read error") || why.starts_with("write") {
            Self::IoError
        } else {
            Self::Other
        }
    }
}

/// The session layer's counters (plain fields of the thread that owns the sockets).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SessionStats {
    /// Connections open now (gauge, set at publish).
    pub connected: u64,
    /// Of those, logged in (gauge, set at publish).
    pub logged_in: u64,
    /// Connections accepted.
    pub accepted: u64,
    /// Connections refused because `max_sessions` were open.
    pub refused: u64,
    /// Successful logins.
    pub logins: u64,
    /// Sessions closed, by [`DisconnectReason::ALL`] index.
    pub disconnects: [u64; 8],
    /// Bytes queued in all sessions' outbound buffers, not yet written (gauge).
    pub outbound_bytes: u64,
    /// Reports dropped because neither the session nor its account was connected.
    pub undeliverable: u64,
}

impl SessionStats {
    /// Counts a closed session.
    pub fn disconnected(&mut self, why: DisconnectReason) {
        let i = DisconnectReason::ALL
            .iter()
            .position(|r| *r == why)
            .unwrap_or(DisconnectReason::ALL.len() - 1);
        self.disconnects[i] += 1;
    }
}

/// Labels of one instrument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstrumentLabel {
    /// Id.
    pub id: InstrumentId,
    /// Symbol (the `instrument` label).
    pub symbol: String,
    /// Decimals of prices.
    pub price_decimals: u32,
    /// Decimals of quantities.
    pub qty_decimals: u32,
}

/// The published state every thread writes into and the HTTP thread reads.
#[derive(Debug)]
pub struct MetricsHub {
    pub(crate) instruments: Vec<InstrumentLabel>,
    core: Mutex<CoreStats>,
    sessions: Mutex<SessionStats>,
    pub(crate) depth: Option<Arc<DepthSlot>>,
}

impl MetricsHub {
    /// A hub for these instruments; `depth` is the slot of the core's depth
    /// publisher, if any.
    pub fn new(instruments: &[InstrumentSpec], depth: Option<Arc<DepthSlot>>) -> Self {
        let instruments: Vec<InstrumentLabel> = instruments
            .iter()
            .map(|s| InstrumentLabel {
                id: s.id,
                symbol: s.symbol.clone(),
                price_decimals: s.price_decimals,
                qty_decimals: s.qty_decimals,
            })
            .collect();
        let core = CoreStats {
            resting: Vec::with_capacity(instruments.len()),
            ..CoreStats::default()
        };
        MetricsHub {
            instruments,
            core: Mutex::new(core),
            sessions: Mutex::new(SessionStats::default()),
            depth,
        }
    }

    /// Copies the core's counters in, unless a reader holds the lock (returns false;
    /// the caller retries later). `clone_from` reuses the hub's vectors: no
    /// allocation once both sides have the same instruments.
    pub fn publish_core(&self, stats: &CoreStats) -> bool {
        match self.core.try_lock() {
            Ok(mut g) => g.clone_from(stats),
            Err(TryLockError::Poisoned(p)) => p.into_inner().clone_from(stats),
            Err(TryLockError::WouldBlock) => return false,
        }
        true
    }

    /// Copies the session layer's counters in, unless a reader holds the lock.
    pub fn publish_sessions(&self, stats: &SessionStats) -> bool {
        match self.sessions.try_lock() {
            Ok(mut g) => *g = *stats,
            Err(TryLockError::Poisoned(p)) => *p.into_inner() = *stats,
            Err(TryLockError::WouldBlock) => return false,
        }
        true
    }

    /// Copies of the last published counters.
    pub fn read(&self) -> (CoreStats, SessionStats) {
        let core = self
            .core
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let sessions = *self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        (core, sessions)
    }

    /// The labels of an instrument, if the hub knows it.
    pub fn symbol(&self, id: InstrumentId) -> Option<&InstrumentLabel> {
        self.instruments.iter().find(|i| i.id == id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use peregrine_types::{ClientOrderId, OrderId};
    use peregrine_wire::orders::Cancel;

    #[test]
    fn latency_runs_from_request_to_next_request_or_batch_end() {
        let hub = Arc::new(MetricsHub::new(&[InstrumentSpec::example(1)], None));
        let mut m = CoreMetrics::default();
        m.attach(hub, 100, 1);
        let cancel = Inbound::Cancel(Cancel {
            client_order_id: ClientOrderId(1),
            order_id: OrderId(1),
            instrument: InstrumentId(1),
        });
        assert!(!m.in_batch());
        m.on_request(&cancel, 1_000);
        m.on_request(&cancel, 1_300);
        assert!(m.in_batch() && m.timing());
        m.end_batch(Some(2_000));
        assert!(!m.in_batch() && !m.timing());
        m.end_batch(Some(9_000)); // an empty batch records nothing
        let s = m.stats();
        assert_eq!((s.latency[1].count, s.latency[1].sum_ns), (2, 1_000));
        assert_eq!(s.latency[0].count, 0);
        assert_eq!((s.requests[1], s.batches), (2, 1));
    }

    #[test]
    fn without_a_hub_requests_and_batches_count_but_nothing_is_timed() {
        let mut m = CoreMetrics::default();
        let cancel = Inbound::Cancel(Cancel {
            client_order_id: ClientOrderId(1),
            order_id: OrderId(1),
            instrument: InstrumentId(1),
        });
        m.on_request(&cancel, 1_000);
        assert!(m.in_batch() && !m.timing(), "no clock read needed");
        m.end_batch(None);
        let s = m.stats();
        assert_eq!((s.requests[1], s.batches, s.latency[1].count), (1, 1, 0));
    }

    #[test]
    fn publish_is_debounced_and_skips_a_held_hub() {
        let hub = Arc::new(MetricsHub::new(&[InstrumentSpec::example(1)], None));
        let mut m = CoreMetrics::default();
        assert!(!m.publish(0, |_| {}), "no hub attached");
        m.attach(Arc::clone(&hub), 100, 1);
        m.on_command();
        assert!(m.publish(0, |s| s.engine_seq = 5));
        assert!(!m.publish(50, |_| {}), "inside the interval");
        let held = hub.core.lock().unwrap();
        assert!(!m.publish(100, |_| {}), "reader holds the lock");
        drop(held);
        assert!(m.publish(101, |s| s.engine_seq = 6));
        let (core, _) = hub.read();
        assert_eq!((core.commands, core.engine_seq, core.publishes), (1, 6, 2));
    }

    #[test]
    fn close_reasons_are_classified() {
        let c = |w: &str| DisconnectReason::classify(Some(w), true);
        assert_eq!(
            c("slow reader: 10 unsent bytes exceed the 8-byte outbound buffer"),
            DisconnectReason::SlowReader
        );
        assert_eq!(c("malformed input: bad length"), DisconnectReason::BadInput);
        assert_eq!(c("NewOrder before login"), DisconnectReason::BadInput);
        assert_eq!(
            c("second Login on a logged-in session"),
            DisconnectReason::BadInput
        );
        assert_eq!(
            c("no input for three heartbeat intervals"),
            DisconnectReason::HeartbeatTimeout
        );
        assert_eq!(
            c("peer closed the connection"),
            DisconnectReason::PeerClosed
        );
        assert_eq!(c("read error: reset"), DisconnectReason::IoError);
        assert_eq!(c("write error: broken pipe"), DisconnectReason::IoError);
        assert_eq!(c("write returned 0"), DisconnectReason::IoError);
        assert_eq!(
            c("internal: outbound encode failed"),
            DisconnectReason::Other
        );
        assert_eq!(
            DisconnectReason::classify(None, true),
            DisconnectReason::Logout
        );
        assert_eq!(
            DisconnectReason::classify(None, false),
            DisconnectReason::LoginRejected
        );
        let mut s = SessionStats::default();
        s.disconnected(DisconnectReason::Other);
        s.disconnected(DisconnectReason::SlowReader);
        assert_eq!(s.disconnects, [1, 0, 0, 0, 0, 0, 0, 1]);
    }
}
