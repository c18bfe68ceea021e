//! Housekeeping, off the per-order path: kill-switch progress, strategy liveness,
//! re-arming dead strategies. Runs at most once per millisecond of input time.

use peregrine_risk::StrategyId;

use crate::control::ControlReply;
use crate::io::{DeathCause, Note, Output, Outputs};
use crate::record::{Rec, GLOBAL};
use crate::state::{Liveness, Orchestrator, HOUSE_NS, RETRY_NS};

impl Orchestrator {
    /// Runs the periodic tasks that are due at `now`.
    pub(crate) fn housekeeping(&mut self, now: u64, out: &mut Outputs) {
        if now < self.next_house_ns {
            return;
        }
        self.next_house_ns = now + HOUSE_NS;
        self.progress_kills(now, out);
        let tick = now >= self.next_pid_tick_ns;
        if tick {
            self.next_pid_tick_ns = now + RETRY_NS;
        }
        self.check_liveness(now, out);
        self.rearm_dead(tick, out);
    }

    /// Sends a cancel for every open order in `scope` (None: all) that has none out
    /// yet; returns how many were sent.
    pub(crate) fn cancel_scope(&mut self, scope: Option<u16>, out: &mut Outputs) -> u64 {
        let mut sent = 0;
        for (id, o) in self.orders.iter_mut() {
            if !o.cancel_sent && scope.is_none_or(|s| o.strategy == s) {
                o.cancel_sent = true;
                sent += 1;
                out.push(Output::Gateway {
                    venue: o.venue,
                    cmd: crate::GatewayCmd::Cancel(*id),
                });
            }
        }
        sent
    }

    pub(crate) fn open_in(&self, scope: Option<u16>) -> usize {
        self.orders
            .values()
            .filter(|o| scope.is_none_or(|s| o.strategy == s))
            .count()
    }

    pub(crate) fn kill(
        &mut self,
        id: u64,
        scope: Option<u16>,
        timeout_ms: u64,
        now: u64,
        out: &mut Outputs,
    ) {
        self.risk.kill(scope.map(StrategyId));
        self.record(
            Rec::Kill {
                scope: scope.unwrap_or(GLOBAL),
                on: true,
            },
            out,
        );
        for (i, slot) in self.slots.iter_mut().enumerate() {
            if scope.is_none_or(|s| s as usize == i) {
                slot.killed_by_death = false; // an operator's kill stays on
            }
        }
        let cancels = self.cancel_scope(scope, out);
        self.kills.push(crate::state::KillJob {
            id,
            scope,
            deadline_ns: now + timeout_ms * 1_000_000,
            cancels,
        });
        // Answered at once if nothing was open.
        self.progress_kills(now, out);
    }

    fn progress_kills(&mut self, now: u64, out: &mut Outputs) {
        let mut jobs = std::mem::take(&mut self.kills);
        jobs.retain_mut(|job| {
            job.cancels += self.cancel_scope(job.scope, out); // retry refused cancels
            let open = self.open_in(job.scope);
            let who = match job.scope {
                None => "all strategies".to_owned(),
                Some(s) => format!("strategy {}", self.slots[s as usize].name),
            };
            let reply = if open == 0 {
                let text = format!(
                    "kill switch on for {who}; {} cancels sent; no open orders left: every one \
                     was confirmed cancelled by its venue or filled",
                    job.cancels
                );
                ControlReply {
                    id: job.id,
                    ok: true,
                    text,
                }
            } else if now >= job.deadline_ns {
                let text = format!(
                    "kill switch on for {who}, but {open} orders still open at the timeout \
                     (venues did not confirm the cancels)"
                );
                ControlReply {
                    id: job.id,
                    ok: false,
                    text,
                }
            } else {
                return true;
            };
            // Publish first, so `stats` right after the reply shows the outcome.
            out.push(Output::Publish);
            out.push(Output::Reply(reply));
            false
        });
        self.kills.extend(jobs);
    }

    fn check_liveness(&mut self, now: u64, out: &mut Outputs) {
        for s in 0..self.slots.len() {
            let slot = &self.slots[s];
            if slot.state != Liveness::Alive {
                continue;
            }
            if now.saturating_sub(slot.last_seen_ns) > self.cfg.heartbeat_timeout_ns {
                self.declare_dead(s as u16, DeathCause::Silent, out);
            }
        }
    }

    pub(crate) fn declare_dead(&mut self, s: u16, cause: DeathCause, out: &mut Outputs) {
        let was_killed = self.risk.is_strategy_killed(StrategyId(s));
        let slot = &mut self.slots[s as usize];
        slot.state = Liveness::Dead;
        slot.killed_by_death = !was_killed;
        slot.rearm_asked = false;
        slot.rearm_failed = false;
        // Nobody may attach to these rings any more: the dead (or stalled) process may
        // still hold them. The shell keeps reading the old ones until fresh ones
        // replace them.
        out.push(Output::RetireRings { strategy: s });
        // Not journaled: a death's kill switch belongs to that incarnation, and every
        // incarnation after an engine restart is a new one.
        self.risk.kill(Some(StrategyId(s)));
        let cancels = if self.cancels_on_death() {
            self.cancel_scope(Some(s), out)
        } else {
            0
        };
        out.push(Output::Note(Note::StrategyDead {
            strategy: s,
            cause,
            cancels,
        }));
    }

    /// Asks for fresh rings for every dead strategy whose orders have all ended
    /// (cancel confirmed by the venue, or filled), so a restarted process can attach.
    /// Waiting for its orders first means the new incarnation inherits none: its
    /// client ids (which start again from 1) can never name an order of the dead one,
    /// and no event about an old order reaches the new rings. With `on_dead =
    /// "leave"` that wait lasts until those orders fill or are cancelled. A failed
    /// re-creation is asked again on the 100 ms `tick` only.
    fn rearm_dead(&mut self, tick: bool, out: &mut Outputs) {
        for s in 0..self.slots.len() {
            let slot = &self.slots[s];
            if slot.state != Liveness::Dead
                || slot.rearm_asked
                || (slot.rearm_failed && !tick)
                || self.open_in(Some(s as u16)) > 0
            {
                continue;
            }
            self.slots[s].rearm_asked = true;
            out.push(Output::RecreateRings { strategy: s as u16 });
        }
    }

    /// The shell made fresh rings for strategy `s`: a new incarnation may attach.
    pub(crate) fn rearmed(&mut self, s: u16, out: &mut Outputs) {
        let Some(slot) = self.slots.get_mut(s as usize) else {
            return;
        };
        if slot.state != Liveness::Dead {
            return;
        }
        slot.state = Liveness::Waiting;
        slot.generation += 1;
        slot.pid = None;
        slot.rearm_asked = false;
        slot.rearm_failed = false;
        // Records the dead incarnation left half read (an extension, the first legs
        // of a list) never left the engine and held no risk: dropped with it.
        slot.pending_ext = None;
        slot.pending_list = None;
        let (generation, killed_by_death) = (slot.generation, slot.killed_by_death);
        slot.killed_by_death = false;
        if killed_by_death {
            self.risk.unkill(Some(StrategyId(s)));
        }
        out.push(Output::Note(Note::Rearmed {
            strategy: s,
            generation,
        }));
    }
}
