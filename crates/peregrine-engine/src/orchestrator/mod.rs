//! The orchestrator thread: the thin shell around the orchestrator core
//! (`peregrine_orchestrator::Orchestrator`, a state machine over plain data).
//!
//! Each loop turn it pops at most one request from every strategy's submit ring
//! (scanned round-robin: a mux, so strategies never share an atomic) and the
//! completions the gateways queued, stamps each with the clock (t2, t6), hands it to
//! the core, and carries out what the core decided (`exec.rs`): journal records go to
//! the journal writer thread (no file system call here: a blocked disk cannot stall
//! this thread), gateway commands into the gateways' inboxes tagged with the journal
//! position they wait for, events into the strategies' return rings (stamped t7).
//! At most once a millisecond, and whenever it idles, it sends the core a tick
//! (kill-switch progress, liveness, re-arming), and here it does what has no place in
//! the core: control commands in, replies out, the stats snapshot, the latency
//! window, the check of strategies' processes (`house.rs`).
//!
//! It never blocks: a full gateway inbox refuses the command (the core answers
//! `GATEWAY_BUSY`; an order list's legs go in together or are all refused), a full return ring drops the event and counts it (the strategy is
//! not reading).

mod exec;
mod house;
mod report;
#[cfg(test)]
mod tests;

use std::sync::atomic::Ordering;
use std::sync::Arc;

use crossbeam_queue::ArrayQueue;
use peregrine_orchestrator as core;
use peregrine_orchestrator::{Completion, Input, Outputs};
use peregrine_queue::clock::now_ns;
use peregrine_queue::{IdlePolicy, Producer};
use peregrine_strategy::doorbell::Doorbell;
use peregrine_strategy::msg::RequestKind;

use crate::config::EngineConfig;
use crate::control::Shared;
use crate::counters::QueueRow;
use crate::durable::JournalLink;
use crate::gateway::{Dispatch, GatewayCounters};
use crate::latency::Latency;
use crate::log::EngineLog;
use crate::rings::StrategyLink;

pub use peregrine_orchestrator::Liveness;

/// Receipt slots per strategy (a power of two): acks waiting for their t8.
const RECEIPTS: usize = 1024;

/// An ack or reject waiting for the strategy's receipt (t8).
#[derive(Debug, Clone, Copy, Default)]
struct Pending {
    client_id: u64,
    ts: [u64; 8],
    scheduled_ns: u64,
}

/// The shell's side of one strategy: its rings and what is counted about them.
#[derive(Debug)]
struct Slot {
    link: StrategyLink,
    /// Counters of the current ring pair, plain fields: only this thread writes them.
    rings: RingTally,
    receipts: Box<[Pending]>,
    /// Submit and return counts of this strategy's earlier (retired) ring pairs.
    earlier: [QueueRow; 2],
    /// A failure to re-create its rings was logged (once per death).
    rearm_warned: bool,
}

/// The orchestrator's own counts for one strategy's rings, since they were created.
/// The strategy's side (submit pushes and Fulls, return pops) is read from the ring
/// headers; `*_base` is the free-running index the ring had when the count started
/// (after the pre-fault lap).
#[derive(Debug, Clone, Copy, Default)]
struct RingTally {
    submit_pops: u64,
    submit_base: u64,
    ret_pushes: u64,
    ret_full: u64,
    ret_base: u64,
}

impl Slot {
    fn new(link: StrategyLink) -> Slot {
        let rings = RingTally {
            // Only this thread pops the submit ring and pushes the return ring, so
            // head and tail here are exactly where our counts start.
            submit_base: link.rx.counts().head,
            ret_base: link.tx.counts().tail,
            ..RingTally::default()
        };
        Slot {
            link,
            rings,
            receipts: vec![Pending::default(); RECEIPTS].into_boxed_slice(),
            earlier: Default::default(),
            rearm_warned: false,
        }
    }
}

/// The orchestrator's end of one gateway.
#[derive(Debug)]
pub struct GatewayLink {
    /// Venue name.
    pub name: String,
    /// Inbox, producer end.
    pub inbox: Producer<Dispatch>,
    /// The gateway's counters (it writes inbox pops and completion pushes).
    pub counters: Arc<GatewayCounters>,
    /// Names the venue's reject reasons ([`peregrine_venues::Venue::reason_name`]).
    pub reason_name: peregrine_venues::ReasonNames,
}

/// The orchestrator thread's state: the core and everything around it.
#[derive(Debug)]
pub struct Orchestrator {
    core: core::Orchestrator,
    out: Outputs,
    slots: Vec<Slot>,
    scan_from: usize,
    gateways: Vec<GatewayLink>,
    completions: Arc<ArrayQueue<Completion>>,
    completion_pops: u64,
    latency: Latency,
    /// Commands the gateways' inboxes refused during one batch of outputs.
    undelivered: Vec<(u32, core::GatewayCmd)>,
    /// The order list whose legs are being handed over did not fit in its gateway's
    /// inbox: its later legs are refused too (a list goes all or none).
    list_refused: bool,
    /// Strategies whose rings must be re-created (asked by the core).
    rearm: Vec<u16>,
    next_stats_ns: u64,
    next_window_ns: u64,
    next_pid_check_ns: u64,
    stats_interval_ns: u64,
    shared: Arc<Shared>,
    wait: IdlePolicy,
    /// Rung by strategies and gateways after a push: an idle orchestrator sleeps on
    /// it instead of polling (`None`: it idles by `wait` alone).
    bell: Option<Arc<Doorbell>>,
    /// The longest sleep on the bell (`orchestrator.idle_sleep_us`, else 1 ms).
    bell_timeout: std::time::Duration,
    /// Where the ring files are (to re-create a dead strategy's rings).
    dir: std::path::PathBuf,
    ring_capacity: usize,
    md_capacity: usize,
    /// Hands re-created market-data rings to the market-data thread.
    md_attach: Option<Arc<ArrayQueue<crate::market::thread::Attach>>>,
    /// The market-data thread's counters (for the snapshot).
    md_counters: Option<Arc<crate::market::thread::MdCounters>>,
    /// The journal writer thread, when recovery is configured.
    journal: Option<JournalLink>,
    log: EngineLog,
}

impl Orchestrator {
    /// An orchestrator over the given links; strategies are registered with risk in
    /// config order (strategy id = index).
    pub fn new(
        cfg: &EngineConfig,
        strategies: Vec<StrategyLink>,
        gateways: Vec<GatewayLink>,
        completions: Arc<ArrayQueue<Completion>>,
        shared: Arc<Shared>,
    ) -> Orchestrator {
        let reasons: Vec<_> = gateways.iter().map(|g| g.reason_name).collect();
        let core = core::Orchestrator::new(cfg.core_config(&reasons), now_ns());
        Orchestrator {
            core,
            out: Outputs::default(),
            slots: strategies.into_iter().map(Slot::new).collect(),
            scan_from: 0,
            gateways,
            completions,
            completion_pops: 0,
            latency: Latency::new().with_feed_slots(cfg.exchange_feed_slots()),
            undelivered: Vec::with_capacity(64),
            list_refused: false,
            rearm: Vec::new(),
            next_stats_ns: 0,
            next_window_ns: 0,
            next_pid_check_ns: 0,
            stats_interval_ns: cfg.stats_interval_ms * 1_000_000,
            shared,
            wait: cfg.orchestrator.thread().idle_policy(),
            bell: None,
            bell_timeout: cfg.orchestrator.bell_timeout(),
            dir: cfg.dir(),
            ring_capacity: cfg.ring_capacity,
            md_capacity: cfg.market_data.ring_capacity,
            md_attach: None,
            md_counters: None,
            journal: None,
            log: EngineLog::stderr_direct(),
        }
    }

    /// Connects the market-data thread: re-created strategies' md rings go to it
    /// through `attach`; its counters appear in the snapshot.
    pub fn with_market_data(
        mut self,
        attach: Arc<ArrayQueue<crate::market::thread::Attach>>,
        counters: Arc<crate::market::thread::MdCounters>,
    ) -> Orchestrator {
        self.md_attach = Some(attach);
        self.md_counters = Some(counters);
        self
    }

    /// Journals from now on through the journal writer thread behind `journal`.
    pub fn with_journal(mut self, journal: JournalLink) -> Orchestrator {
        self.core.set_journaling(true);
        self.journal = Some(journal);
        self
    }

    /// Hands the journal thread every record still in memory (at shutdown, after
    /// [`Orchestrator::run`] returned).
    pub fn finish_journal(&mut self) {
        if let Some(j) = self.journal.as_mut() {
            j.finish();
        }
    }

    /// Sleeps on `bell` when idle (see [`Orchestrator::run`]).
    pub fn with_doorbell(mut self, bell: Arc<Doorbell>) -> Orchestrator {
        self.bell = Some(bell);
        self
    }

    /// Logs through `log` (the engine's log thread) instead of straight to stderr.
    pub fn with_log(mut self, log: EngineLog) -> Orchestrator {
        self.log = log;
        self
    }

    /// Takes over a replayed state (positions, PnL, limits, kill switches, open
    /// orders); `settled` are reports the venue adapters gave at once for restored
    /// orders.
    pub fn restore(mut self, rec: core::Recovered, settled: Vec<Completion>) -> Orchestrator {
        let now = now_ns();
        let mut out = std::mem::take(&mut self.out);
        self.core.restore(rec, settled, now, &mut out);
        self.out = out;
        self.execute(now);
        self
    }

    /// The thread body: loops until `shared.stop`, then publishes a last snapshot.
    ///
    /// Idle, it spins, then yields, as its wait strategy says; where that strategy
    /// would park (or sleep), an orchestrator with a doorbell sleeps on it instead,
    /// woken at once by a strategy's or a gateway's push and at the latest after
    /// `bell_timeout` (for timers, control commands and liveness).
    pub fn run(mut self) -> Orchestrator {
        let mut waiter = self.wait.idler();
        let (mut turns, mut idle_turns) = (0u32, 0u32);
        // Relaxed: a stop flag; nothing is published through it.
        while !self.shared.stop.load(Ordering::Relaxed) {
            let busy = self.poll_once();
            turns = turns.wrapping_add(1);
            idle_turns = if busy { 0 } else { idle_turns.wrapping_add(1) };
            // Housekeeping reads the clock (~23 ns): every 32nd idle turn, and every
            // 256th turn under load, so polling stays tight.
            if idle_turns % 32 == 1 || turns.is_multiple_of(256) {
                self.housekeeping(now_ns());
            }
            if busy {
                waiter.reset();
            } else if self.bell.is_none() {
                waiter.idle();
            } else if waiter.idle_or_block() && self.sleep_on_bell() {
                waiter.reset();
            }
        }
        self.publish(now_ns());
        self
    }

    /// Sleeps on the doorbell until a push rings it or `bell_timeout` passes, after
    /// one more poll with the bell armed (so no push between the last poll and the
    /// sleep is missed); housekeeping after. True if that poll found work.
    fn sleep_on_bell(&mut self) -> bool {
        let Some(bell) = self.bell.clone() else {
            return false;
        };
        if !self.undelivered.is_empty() || !self.rearm.is_empty() {
            return false;
        }
        let ticket = bell.arm();
        let busy = self.poll_once();
        if !busy {
            bell.wait(ticket, self.bell_timeout);
        }
        bell.disarm();
        self.housekeeping(now_ns());
        busy
    }

    /// One pass over every input; true if anything was done.
    pub fn poll_once(&mut self) -> bool {
        let mut busy = false;
        let n = self.slots.len();
        for step in 0..n {
            let s = (self.scan_from + step) % n;
            if let Some(req) = self.slots[s].link.rx.try_pop() {
                let t2 = now_ns();
                self.slots[s].rings.submit_pops += 1;
                self.measure(s, &req);
                self.handle(
                    Input::Request {
                        strategy: s as u16,
                        req,
                    },
                    t2,
                );
                self.scan_from = (s + 1) % n;
                busy = true;
                break;
            }
        }
        if let Some(c) = self.completions.pop() {
            let t6 = now_ns();
            self.completion_pops += 1;
            self.handle(Input::Completion(c), t6);
            busy = true;
        }
        busy
    }

    /// Hands one input to the core and carries out what it decided.
    fn handle(&mut self, input: Input, now: u64) {
        self.core.handle(input, now, &mut self.out);
        self.execute(now);
    }

    /// A receipt (t8) or a market-data receipt completes a latency sample; the core
    /// sees the request too (it proves the strategy alive).
    fn measure(&mut self, s: usize, req: &peregrine_strategy::msg::Request) {
        if req.kind == RequestKind::Receipt as u8 {
            let client_id = req.client_id;
            let p = &mut self.slots[s].receipts[client_id as usize & (RECEIPTS - 1)];
            if p.client_id == client_id && p.ts[peregrine_types::stamp::STRATEGY_RECV] == 0 {
                p.ts[peregrine_types::stamp::STRATEGY_RECV] = req.aux;
                let (stamps, d) = (p.ts, p.scheduled_ns);
                self.latency.record(&stamps, d);
            }
        } else if req.kind == RequestKind::MdReceipt as u8 {
            if let Ok(peregrine_strategy::msg::Command::MdReceipt {
                slot,
                exchange_ts,
                recv_ts,
                publish_ts,
                seen_ts,
            }) = req.decode()
            {
                self.latency
                    .record_md(slot as usize, exchange_ts, recv_ts, publish_ts, seen_ts);
            }
        }
    }

    /// The core, for tests and reports.
    pub fn core(&self) -> &core::Orchestrator {
        &self.core
    }

    /// The risk engine (positions, rejects), for tests and reports.
    pub fn risk(&self) -> &peregrine_risk::RiskEngine {
        self.core.risk()
    }

    /// The latency histograms.
    pub fn latency(&self) -> &Latency {
        &self.latency
    }

    /// Orders in flight.
    pub fn in_flight(&self) -> usize {
        self.core.in_flight()
    }

    /// A strategy's liveness.
    pub fn liveness(&self, s: u16) -> Liveness {
        self.core.liveness(s)
    }

    /// Malformed requests from strategy `s`.
    pub fn malformed(&self, s: u16) -> u64 {
        self.core.malformed(s)
    }

    /// Strategy `s`'s incarnation: 1 at start, +1 each time its rings are re-created.
    pub fn generation(&self, s: u16) -> u32 {
        self.core.generation(s)
    }

    /// Requests strategy `s` wrote after it was declared dead.
    pub fn after_dead(&self, s: u16) -> u64 {
        self.core.after_dead(s)
    }
}
