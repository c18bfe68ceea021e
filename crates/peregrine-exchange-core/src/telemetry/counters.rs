//! The matching stage's counters: counted in plain fields on the matching thread,
//! copied to a shared [`StatsSlot`] at most once per interval; the server's metrics
//! hub reads the slot and renders it as Prometheus text.
//!
//! ```text
//!  matching thread                     session thread (same one in compact)
//!  CoreMetrics: plain u64 fields        SessionStats: plain u64 fields
//!   + LogHistogram of request latency   (connects, disconnects by reason, …)
//!      │ end of batch / idle:               │ timers(), at most every ms:
//!      │ Debounce (publish_interval_ms)     │ Debounce (publish_interval_ms)
//!      ▼ try_lock + clone_from              ▼ try_lock + copy
//!   StatsSlot · server hub { sessions, depth slot } ◀── HTTP thread: lock, copy, render
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
use peregrine_types::{InstrumentId, OrderType};
use peregrine_wire::v2::Inbound;

use crate::telemetry::hist::{Debounce, LogHistogram};

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
    hub: Option<(Arc<StatsSlot>, Debounce)>,
}

impl CoreMetrics {
    /// Publishes to `hub` at most once per `interval_ns`; `books` sizes the
    /// per-book vector once, so publishing never allocates.
    pub fn attach(&mut self, hub: Arc<StatsSlot>, interval_ns: u64, books: usize) {
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
        if hub.publish(&self.stats) {
            debounce.done(now_ns);
            true
        } else {
            self.stats.publishes -= 1;
            false
        }
    }
}

/// Where the matching thread's counters are published; shared with readers (the
/// server's metrics hub). The matching thread only ever `try_lock`s it.
#[derive(Debug)]
pub struct StatsSlot {
    latest: Mutex<CoreStats>,
}

impl StatsSlot {
    /// An empty slot for `books` instruments (sized so publishing never allocates).
    pub fn new(books: usize) -> Self {
        StatsSlot {
            latest: Mutex::new(CoreStats {
                resting: Vec::with_capacity(books),
                ..CoreStats::default()
            }),
        }
    }

    /// Copies `stats` in, unless a reader holds the lock (returns false; the caller
    /// retries later). `clone_from` reuses the slot's vectors: no allocation once both
    /// sides have the same instruments.
    pub fn publish(&self, stats: &CoreStats) -> bool {
        match self.latest.try_lock() {
            Ok(mut g) => g.clone_from(stats),
            Err(TryLockError::Poisoned(p)) => p.into_inner().clone_from(stats),
            Err(TryLockError::WouldBlock) => return false,
        }
        true
    }

    /// A copy of the last published counters (allocates, on the reader's thread).
    pub fn read(&self) -> CoreStats {
        self.latest
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    #[cfg(test)]
    pub(crate) fn hold(&self) -> std::sync::MutexGuard<'_, CoreStats> {
        self.latest.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use peregrine_types::{ClientOrderId, OrderId};
    use peregrine_wire::orders::Cancel;

    #[test]
    fn latency_runs_from_request_to_next_request_or_batch_end() {
        let hub = Arc::new(StatsSlot::new(1));
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
        let hub = Arc::new(StatsSlot::new(1));
        let mut m = CoreMetrics::default();
        assert!(!m.publish(0, |_| {}), "no hub attached");
        m.attach(Arc::clone(&hub), 100, 1);
        m.on_command();
        assert!(m.publish(0, |s| s.engine_seq = 5));
        assert!(!m.publish(50, |_| {}), "inside the interval");
        let held = hub.hold();
        assert!(!m.publish(100, |_| {}), "reader holds the lock");
        drop(held);
        assert!(m.publish(101, |s| s.engine_seq = 6));
        let core = hub.read();
        assert_eq!((core.commands, core.engine_seq, core.publishes), (1, 6, 2));
    }
}
