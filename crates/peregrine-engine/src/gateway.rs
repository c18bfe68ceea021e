//! A gateway thread: drives one venue adapter for one (venue, credential).
//!
//! It pops commands from its inbox (an in-process SPSC ring, the orchestrator thread
//! the only producer) and hands each to the venue, stamping t4, once the engine
//! journal holds everything the command depends on (a new order's `Sent` record: the
//! write-ahead rule; commands wait in arrival order, so a cancel never overtakes its
//! order). It polls the venue for reports, stamps t5, and pushes each as a
//! [`Completion`] into the shared completion queue (crossbeam's `ArrayQueue`: the seed
//! measured it the fastest M→1 hand-off). A full completion queue never drops a
//! report: it waits in a local backlog and is retried first. After a poll that
//! advanced the venue's report stream it queues the new position
//! ([`CompletionKind::Cursor`]), which the orchestrator journals after the reports it
//! covers. What the adapter logs goes to the engine's log thread.
//!
//! Nothing here makes a file-system call: a slow disk cannot stop this thread from
//! reading and writing its venue's socket (`docs/engine.md`, "The stall").

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crossbeam_queue::ArrayQueue;
use peregrine_queue::clock::now_ns;
use peregrine_queue::{Consumer, IdlePolicy};
use rustc_hash::FxHashMap;

use crate::counters::{bump, QueueCounters};
use crate::durable::JournalState;
use crate::log::EngineLog;
pub use peregrine_orchestrator::{Completion, CompletionKind, GatewayCmd};
use peregrine_types::{InstrumentId, Price, Qty, Side};
use peregrine_venues::{Report, Venue, VenueError, VenueOrder};

/// Orchestrator → gateway: a command, when it was handed over (t3), and the journal
/// position it waits for (0: none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dispatch {
    /// The command.
    pub cmd: GatewayCmd,
    /// t3: when the orchestrator pushed it.
    pub t3: u64,
    /// The command goes to the venue once the journal has committed this many records.
    pub wal: u64,
}

/// The counters a gateway writes: its inbox pops, its completion pushes and Fulls.
#[derive(Debug, Default)]
pub struct GatewayCounters {
    /// Inbox: `pops` written here (pushes/full by the orchestrator).
    pub inbox: QueueCounters,
    /// Completion queue, this gateway's pushes and Fulls.
    pub completion: QueueCounters,
}

/// Orders a gateway tracks for their timestamps at most (reserved up front).
const TRACKED: usize = 65_536;

/// One gateway's state; [`Gateway::run`] is the thread body.
#[derive(Debug)]
pub struct Gateway<V: Venue> {
    /// Venue index.
    pub index: u32,
    /// The adapter.
    pub venue: V,
    /// Commands from the orchestrator.
    pub inbox: Consumer<Dispatch>,
    /// Shared completion queue.
    pub completions: Arc<ArrayQueue<Completion>>,
    /// Counters.
    pub counters: Arc<GatewayCounters>,
    /// Set to stop.
    pub stop: Arc<AtomicBool>,
    /// Idle behaviour.
    pub wait: IdlePolicy,
    /// The orchestrator's doorbell, rung after completions were pushed (`None`: the
    /// orchestrator polls).
    pub bell: Option<Arc<peregrine_strategy::doorbell::Doorbell>>,
    /// What the journal thread publishes (with a journal).
    pub journal: Option<Arc<JournalState>>,
    /// Where log lines go.
    pub log: EngineLog,
}

/// The gateway loop's own state.
struct Turn {
    /// engine id → (t3, t4, scheduled D) of orders in flight.
    orders: FxHashMap<u64, (u64, u64, u64)>,
    backlog: VecDeque<Completion>,
    /// Commands waiting for the journal, in arrival order.
    held: VecDeque<Dispatch>,
    cursor: u64,
    /// The legs of the order list being gathered (the first `legs` of `list`).
    list: [VenueOrder; 3],
    legs: usize,
}

impl<V: Venue> Gateway<V> {
    /// Runs until `stop`.
    pub fn run(mut self) {
        let mut t = Turn {
            orders: FxHashMap::with_capacity_and_hasher(TRACKED, Default::default()),
            backlog: VecDeque::with_capacity(1_024),
            held: VecDeque::with_capacity(1_024),
            cursor: self.venue.report_cursor().unwrap_or(0),
            list: [VenueOrder::limit(0, InstrumentId(0), Side::Buy, Price::from_raw(0), Qty::ZERO);
                3],
            legs: 0,
        };
        let mut waiter = self.wait.idler();
        // Relaxed: a stop flag; nothing is published through it.
        while !self.stop.load(Ordering::Relaxed) {
            let mut busy = self.flush(&mut t.backlog);
            while let Some(d) = self.inbox.try_pop() {
                bump(&self.counters.inbox.pops);
                t.held.push_back(d);
                busy = true;
            }
            busy |= self.release(&mut t);
            let now = now_ns();
            let index = self.index;
            let (orders, backlog) = (&mut t.orders, &mut t.backlog);
            let n = self.venue.poll(now, &mut |report| {
                let id = report.engine_id();
                let (t3, t4, d) = orders.get(&id).copied().unwrap_or((0, 0, 0));
                if terminal(&report) {
                    orders.remove(&id);
                }
                backlog.push_back(Completion {
                    venue: index,
                    engine_id: id,
                    kind: CompletionKind::Report(report),
                    t3,
                    t4,
                    t5: now,
                    scheduled_ns: d,
                });
            });
            busy |= n > 0;
            if let Some(c) = self.venue.report_cursor().filter(|c| *c != t.cursor) {
                t.cursor = c;
                t.backlog.push_back(Completion {
                    venue: index,
                    engine_id: 0,
                    kind: CompletionKind::Cursor(c),
                    t3: 0,
                    t4: 0,
                    t5: now,
                    scheduled_ns: 0,
                });
            }
            let log = &self.log;
            self.venue.drain_log(&mut |line| log.line(line));
            self.flush(&mut t.backlog);
            if busy {
                waiter.reset();
            } else {
                waiter.idle();
            }
        }
    }

    /// Hands over every held command whose journal records are committed, in order.
    /// Once the journal has failed, held new orders are refused (busy: they never
    /// reached the venue, and the engine cannot make them durable) and the rest go.
    fn release(&mut self, t: &mut Turn) -> bool {
        let (committed, failed) = match &self.journal {
            None => (u64::MAX, false),
            // Acquire: pairs with the journal thread's Release store after its write.
            // Relaxed (failed): a flag; nothing else is read through it.
            Some(j) => (
                j.committed.load(Ordering::Acquire),
                j.failed.load(Ordering::Relaxed),
            ),
        };
        let mut any = false;
        while let Some(d) = t.held.front().copied() {
            if d.wal > committed && !failed {
                break;
            }
            t.held.pop_front();
            any = true;
            match d.cmd {
                GatewayCmd::New(o) if d.wal > committed => {
                    self.refuse(&[o], d.t3, VenueError::Busy, t);
                }
                GatewayCmd::ListLeg { order, .. } if d.wal > committed => {
                    // With the legs gathered so far: the list never goes.
                    self.drop_list(d.t3, t);
                    self.refuse(&[order], d.t3, VenueError::Busy, t);
                }
                _ => self.command(d, t),
            }
        }
        any
    }

    /// Orders that never reached the venue: each refused with `e`.
    fn refuse(&self, orders: &[VenueOrder], t3: u64, e: VenueError, t: &mut Turn) {
        for o in orders {
            t.backlog.push_back(Completion {
                venue: self.index,
                engine_id: o.engine_id,
                kind: CompletionKind::SubmitFailed(e),
                t3,
                t4: 0,
                t5: now_ns(),
                scheduled_ns: 0,
            });
        }
    }

    /// The legs of a list gathered so far, refused (busy): the list never goes.
    fn drop_list(&self, t3: u64, t: &mut Turn) {
        let (list, n) = (t.list, t.legs);
        t.legs = 0;
        self.refuse(&list[..n], t3, VenueError::Busy, t);
    }

    fn command(&mut self, d: Dispatch, t: &mut Turn) {
        let t4 = now_ns();
        let (id, result): (u64, Result<(), CompletionKind>) = match d.cmd {
            GatewayCmd::ListLeg { kind, index, order } => {
                // The orchestrator's shell hands over a list's legs consecutively and
                // all or none, so a leg out of place is a bug: refuse what is gathered.
                if usize::from(index) != t.legs {
                    self.drop_list(d.t3, t);
                    if index != 0 {
                        return self.refuse(&[order], d.t3, VenueError::Busy, t);
                    }
                }
                t.list[t.legs] = order;
                t.legs += 1;
                if t.legs < kind.legs() {
                    return;
                }
                t.legs = 0;
                let list = t.list;
                let legs = &list[..kind.legs()];
                match self.venue.submit_list(kind, legs, t4) {
                    Ok(()) => {
                        for o in legs {
                            t.orders.insert(o.engine_id, (d.t3, t4, 0));
                        }
                    }
                    Err(e) => self.refuse(legs, d.t3, e, t),
                }
                return;
            }
            GatewayCmd::New(order) => {
                let r = self.venue.submit(order, t4);
                if r.is_ok() {
                    let sched = self.venue.last_scheduled_delay_ns().unwrap_or(0);
                    t.orders.insert(order.engine_id, (d.t3, t4, sched));
                }
                (order.engine_id, r.map_err(CompletionKind::SubmitFailed))
            }
            GatewayCmd::Cancel(id) => (
                id,
                self.venue
                    .cancel(id, t4)
                    .map_err(CompletionKind::CancelFailed),
            ),
            GatewayCmd::Replace {
                engine_id,
                price,
                qty,
            } => {
                // The replace's answer is timed from here.
                if let Some(e) = t.orders.get_mut(&engine_id) {
                    e.0 = d.t3;
                    e.1 = t4;
                }
                (
                    engine_id,
                    self.venue
                        .replace(engine_id, price, qty, t4)
                        .map_err(CompletionKind::ReplaceFailed),
                )
            }
        };
        if let Err(kind) = result {
            let (t3, t4o, sched) = t.orders.get(&id).copied().unwrap_or((d.t3, t4, 0));
            t.backlog.push_back(Completion {
                venue: self.index,
                engine_id: id,
                kind,
                t3,
                t4: t4o,
                t5: now_ns(),
                scheduled_ns: sched,
            });
        }
    }

    /// Pushes the backlog in order; true if anything moved.
    fn flush(&mut self, backlog: &mut VecDeque<Completion>) -> bool {
        let mut moved = false;
        while let Some(c) = backlog.pop_front() {
            match self.completions.push(c) {
                Ok(()) => {
                    bump(&self.counters.completion.pushes);
                    moved = true;
                }
                Err(c) => {
                    bump(&self.counters.completion.full);
                    backlog.push_front(c);
                    break;
                }
            }
        }
        if let (true, Some(bell)) = (moved, &self.bell) {
            bell.ring();
        }
        moved
    }
}

fn terminal(r: &Report) -> bool {
    match r {
        Report::Ack { .. }
        | Report::Replaced { .. }
        | Report::CancelRejected { .. }
        | Report::ReplaceRejected { .. }
        | Report::Triggered { .. }
        | Report::ListStatus { .. } => false,
        Report::Fill { leaves, .. } => leaves.is_zero(),
        Report::Rejected { .. } | Report::Cancelled { .. } => true,
    }
}
