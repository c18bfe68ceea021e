//! A gateway thread: drives one venue adapter for one (venue, credential).
//!
//! It pops commands from its inbox (an in-process SPSC ring, the orchestrator the only
//! producer), stamps t4 and hands them to the venue; it polls the venue for reports,
//! stamps t5, and pushes each as a [`Completion`] into the shared completion queue
//! (crossbeam's `ArrayQueue`: the seed measured it the fastest M→1 hand-off). A full
//! completion queue never drops a report: it waits in a local backlog and is retried
//! first. The adapter never blocks, so a slow venue only delays its own reports.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crossbeam_queue::ArrayQueue;
use peregrine_queue::clock::now_ns;
use peregrine_queue::{Consumer, IdlePolicy};
use peregrine_types::{Price, Qty};
use rustc_hash::FxHashMap;

use crate::counters::{bump, QueueCounters};
use peregrine_venues::{Report, Venue, VenueError, VenueOrder};

/// Orchestrator → gateway.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GatewayCmd {
    /// Send a new order.
    New(VenueOrder),
    /// Cancel an order by engine id.
    Cancel(u64),
    /// Change an order's limit price and open quantity.
    Replace {
        /// The engine's order id.
        engine_id: u64,
        /// New limit price.
        price: Price,
        /// New open quantity.
        qty: Qty,
    },
}

/// What a completion says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompletionKind {
    /// A venue report.
    Report(Report),
    /// The venue refused the cancel synchronously (unknown order, busy, disconnected).
    CancelFailed(VenueError),
    /// The venue refused the submit synchronously (busy, disconnected).
    SubmitFailed(VenueError),
    /// The venue refused the replace synchronously (unknown order, busy, disconnected).
    ReplaceFailed(VenueError),
}

/// Gateway → orchestrator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Completion {
    /// Venue index.
    pub venue: u32,
    /// The engine's order id.
    pub engine_id: u64,
    /// What happened.
    pub kind: CompletionKind,
    /// t4: when the gateway popped the order.
    pub t4: u64,
    /// t5: when the gateway got this report.
    pub t5: u64,
    /// The delay D the venue scheduled for the order (0 unknown).
    pub scheduled_ns: u64,
}

/// The counters a gateway writes: its inbox pops, its completion pushes and Fulls.
#[derive(Debug, Default)]
pub struct GatewayCounters {
    /// Inbox: `pops` written here (pushes/full by the orchestrator).
    pub inbox: QueueCounters,
    /// Completion queue, this gateway's pushes and Fulls.
    pub completion: QueueCounters,
}

/// One gateway's state; [`Gateway::run`] is the thread body.
#[derive(Debug)]
pub struct Gateway<V: Venue> {
    /// Venue index.
    pub index: u32,
    /// The adapter.
    pub venue: V,
    /// Commands from the orchestrator.
    pub inbox: Consumer<GatewayCmd>,
    /// Shared completion queue.
    pub completions: Arc<ArrayQueue<Completion>>,
    /// Counters.
    pub counters: Arc<GatewayCounters>,
    /// Set to stop.
    pub stop: Arc<AtomicBool>,
    /// Idle behaviour.
    pub wait: IdlePolicy,
}

impl<V: Venue> Gateway<V> {
    /// Runs until `stop`.
    pub fn run(mut self) {
        let mut orders: FxHashMap<u64, (u64, u64)> = FxHashMap::default();
        let mut backlog: VecDeque<Completion> = VecDeque::new();
        let mut waiter = self.wait.idler();
        // Relaxed: a stop flag; nothing is published through it.
        while !self.stop.load(Ordering::Relaxed) {
            let mut busy = self.flush(&mut backlog);
            while let Some(cmd) = self.inbox.try_pop() {
                bump(&self.counters.inbox.pops);
                self.command(cmd, &mut orders, &mut backlog);
                busy = true;
            }
            let now = now_ns();
            let index = self.index;
            let n = self.venue.poll(now, &mut |report| {
                let id = report.engine_id();
                let (t4, d) = orders.get(&id).copied().unwrap_or((0, 0));
                if terminal(&report) {
                    orders.remove(&id);
                }
                backlog.push_back(Completion {
                    venue: index,
                    engine_id: id,
                    kind: CompletionKind::Report(report),
                    t4,
                    t5: now,
                    scheduled_ns: d,
                });
            });
            busy |= n > 0;
            self.flush(&mut backlog);
            if busy {
                waiter.reset();
            } else {
                waiter.idle();
            }
        }
    }

    fn command(
        &mut self,
        cmd: GatewayCmd,
        orders: &mut FxHashMap<u64, (u64, u64)>,
        backlog: &mut VecDeque<Completion>,
    ) {
        let t4 = now_ns();
        let (id, result): (u64, Result<(), CompletionKind>) = match cmd {
            GatewayCmd::New(order) => {
                let r = self.venue.submit(order, t4);
                if r.is_ok() {
                    let d = self.venue.last_scheduled_delay_ns().unwrap_or(0);
                    orders.insert(order.engine_id, (t4, d));
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
                if let Some(e) = orders.get_mut(&engine_id) {
                    e.0 = t4;
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
            let (t4o, d) = orders.get(&id).copied().unwrap_or((t4, 0));
            backlog.push_back(Completion {
                venue: self.index,
                engine_id: id,
                kind,
                t4: t4o,
                t5: now_ns(),
                scheduled_ns: d,
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
        moved
    }
}

fn terminal(r: &Report) -> bool {
    match r {
        Report::Ack { .. }
        | Report::Replaced { .. }
        | Report::CancelRejected { .. }
        | Report::ReplaceRejected { .. } => false,
        Report::Fill { leaves, .. } => leaves.is_zero(),
        Report::Rejected { .. } | Report::Cancelled { .. } => true,
    }
}
