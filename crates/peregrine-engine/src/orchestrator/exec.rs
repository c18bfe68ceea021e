//! Carrying out what the core decided, in order.

use peregrine_orchestrator::{GatewayCmd, Input, Note, Output};
use peregrine_queue::clock::now_ns;
use peregrine_strategy::msg::{Event, EventKind};
use peregrine_types::stamp;

use super::{Orchestrator, Pending, RECEIPTS};
use crate::counters::bump;
use crate::gateway::Dispatch;

impl Orchestrator {
    /// Carries out every output the core produced (and what the core decides about
    /// commands a full inbox refused), at `now`.
    pub(super) fn execute(&mut self, now: u64) {
        loop {
            let mut out = std::mem::take(&mut self.out);
            for o in out.drain() {
                self.carry_out(o, now);
            }
            self.out = out;
            // Refused hand-overs go back to the core, which answers them (busy).
            if self.undelivered.is_empty() {
                break;
            }
            // In order: a list's legs are refused in leg order.
            for (venue, cmd) in self.undelivered.drain(..) {
                self.core
                    .handle(Input::Undelivered { venue, cmd }, now, &mut self.out);
            }
        }
        if let Some(j) = self.journal.as_mut() {
            j.flush();
            if j.failed() {
                self.core.handle(Input::JournalFailed, now, &mut self.out);
                if !self.out.is_empty() {
                    let mut out = std::mem::take(&mut self.out);
                    for o in out.drain() {
                        self.carry_out(o, now);
                    }
                    self.out = out;
                }
            }
        }
    }

    fn carry_out(&mut self, o: Output, now: u64) {
        match o {
            Output::Event { strategy, event } => self.emit(strategy, event),
            Output::Gateway { venue, cmd } => {
                let wal = self.journal.as_ref().map_or(0, |j| j.appended());
                let gw = &mut self.gateways[venue as usize];
                // An order list's legs come consecutively: all of them fit in the
                // inbox (its only producer is this thread) or none goes.
                if let GatewayCmd::ListLeg { kind, index, .. } = cmd {
                    if index == 0 {
                        self.list_refused = gw.inbox.free_slots() < kind.legs();
                    }
                    if self.list_refused {
                        bump(&gw.counters.inbox.full);
                        return self.undelivered.push((venue, cmd));
                    }
                }
                let d = Dispatch {
                    cmd,
                    t3: now_ns(),
                    wal,
                };
                if gw.inbox.try_push(d).is_err() {
                    bump(&gw.counters.inbox.full);
                    self.undelivered.push((venue, cmd));
                } else {
                    bump(&gw.counters.inbox.pushes);
                }
            }
            Output::Record(rec) => {
                if let Some(j) = self.journal.as_mut() {
                    j.append(rec);
                }
            }
            Output::Reply(r) => {
                // Bounded; a reply nobody waits for any more may be dropped.
                let _ = self.shared.replies.push(r);
            }
            Output::Publish => self.publish(now),
            Output::RetireRings { strategy } => {
                crate::rings::unlink(&self.dir, &self.slots[strategy as usize].link.name);
            }
            Output::RecreateRings { strategy } => self.rearm.push(strategy),
            Output::Note(n) => self.note(n),
        }
    }

    /// Pushes an event to strategy `s`, stamping t7; counts a full ring; keeps what a
    /// receipt needs to complete the latency sample.
    fn emit(&mut self, s: u16, mut ev: Event) {
        let slot = &mut self.slots[s as usize];
        ev.ts[stamp::ORCH_RETURN] = now_ns();
        match slot.link.tx.try_push(ev) {
            Ok(()) => slot.rings.ret_pushes += 1,
            Err(_) => slot.rings.ret_full += 1,
        }
        if matches!(
            ev.kind(),
            Some(
                EventKind::Ack | EventKind::Reject | EventKind::Replaced | EventKind::ReplaceReject
            )
        ) {
            slot.receipts[ev.client_id as usize & (RECEIPTS - 1)] = Pending {
                client_id: ev.client_id,
                ts: ev.ts,
                scheduled_ns: ev.scheduled_delay_ns,
            };
        }
    }

    fn note(&mut self, n: Note) {
        let engine = &self.core.config().name;
        let name = |s: u16| {
            self.slots
                .get(s as usize)
                .map_or("?", |x| x.link.name.as_str())
        };
        let line = match n {
            Note::StrategyDead {
                strategy,
                cause,
                cancels,
            } => {
                // For the strategy's runner, which finds its rings replaced: why.
                let why = match cause {
                    peregrine_orchestrator::DeathCause::Silent => format!(
                        "no request from it for {} ms of the engine's own running time",
                        self.core.config().heartbeat_timeout_ns / 1_000_000
                    ),
                    peregrine_orchestrator::DeathCause::ProcessExited => {
                        "its process was gone".to_owned()
                    }
                };
                let path = peregrine_strategy::paths::dead_note(&self.dir, name(strategy));
                self.log.file(path, format!("{} ({why})\n", cause.as_str()));
                format!(
                    "engine {engine}: strategy {} is dead ({}: {why}); kill switch on, \
                     {cancels} cancels sent",
                    name(strategy),
                    cause.as_str()
                )
            }
            Note::Rearmed {
                strategy,
                generation,
            } => format!(
                "engine {engine}: strategy {}: every order of the dead incarnation has ended; \
                 fresh rings created (generation {generation}), waiting for it to attach",
                name(strategy)
            ),
            Note::Stalled { gap_ns } => format!(
                "engine {engine}: the orchestrator did not run for {:.1} ms (not scheduled); \
                 strategies' silence during it is not held against them",
                gap_ns as f64 / 1e6
            ),
            Note::JournalFailed => format!(
                "engine {engine}: JOURNAL FAILED ({}); global kill switch on: no new orders \
                 until the engine is restarted",
                self.journal
                    .as_ref()
                    .and_then(|j| j.error())
                    .unwrap_or_default()
            ),
            Note::OrderTableFull => format!(
                "engine {engine}: {} orders in flight, the most the order table holds \
                 (orchestrator.max_in_flight): new orders are refused as busy",
                self.core.config().max_in_flight
            ),
        };
        self.log.line(line);
    }
}
