//! Housekeeping, off the per-order path: control commands, kill-switch progress,
//! strategy liveness, the stats snapshot. Runs at most once per millisecond.

use crate::config::DeadPolicy;
use crate::control::{ControlCmd, ControlReply, LimitScope};
use crate::durable::record::GLOBAL;
use crate::durable::Rec;
use crate::risk::StrategyId;

use super::{KillJob, Liveness, Orchestrator, Slot};

const HOUSE_NS: u64 = 1_000_000;
const PID_CHECK_NS: u64 = 100_000_000;

impl Orchestrator {
    /// Runs the periodic tasks that are due at `now`.
    pub fn housekeeping(&mut self, now: u64) {
        if now < self.next_house_ns {
            return;
        }
        self.next_house_ns = now + HOUSE_NS;
        while let Some(cmd) = self.shared.commands.pop() {
            self.command(cmd, now);
        }
        self.progress_kills(now);
        let tick = now >= self.next_pid_check_ns; // the 100 ms tick (liveness advances it)
        self.check_liveness(now);
        self.rearm_dead(tick);
        if now >= self.next_window_ns {
            self.next_window_ns = now + 1_000_000_000;
            self.latency.rotate_window();
        }
        if now >= self.next_stats_ns {
            self.next_stats_ns = now + self.stats_interval_ns;
            self.publish(now);
        }
    }

    fn command(&mut self, cmd: ControlCmd, now: u64) {
        match cmd {
            ControlCmd::Kill {
                id,
                strategy,
                timeout_ms,
            } => self.kill(id, strategy, timeout_ms, now),
            ControlCmd::Release { id, strategy } => {
                let (ok, text) = self.release(strategy);
                let _ = self.shared.replies.push(ControlReply { id, ok, text });
            }
            ControlCmd::Limits { id, scope, changes } => {
                let (ok, text) = self.limits(scope, &changes);
                let _ = self.shared.replies.push(ControlReply { id, ok, text });
            }
        }
    }

    /// The index of strategy `name`, or an error reply's text.
    fn strategy_index(&self, name: &str) -> Result<u16, String> {
        self.slots
            .iter()
            .position(|s| s.link.name == name)
            .map(|i| i as u16)
            .ok_or_else(|| format!("unknown strategy {name:?}"))
    }

    /// Applies a (pre-checked) limit change between two orders and describes the
    /// limits now in force.
    fn limits(&mut self, scope: LimitScope, changes: &[(String, String)]) -> (bool, String) {
        let changed = if changes.is_empty() { "" } else { "changed; " };
        match scope {
            LimitScope::All => {
                let mut text = format!("global: {}", self.risk.global_limits().render());
                for (i, slot) in self.slots.iter().enumerate() {
                    let l = self.risk.limits(StrategyId(i as u16)).unwrap_or_default();
                    text += &format!("\n{}: {}", slot.link.name, l.render());
                }
                (true, text)
            }
            LimitScope::Global => match self.risk.global_limits().with_changes(changes) {
                Ok(next) => {
                    self.risk.set_global_limits(next);
                    self.log(&Rec::Limits {
                        scope: GLOBAL,
                        limits: next,
                    });
                    (true, format!("{changed}global: {}", next.render()))
                }
                Err(e) => (false, format!("{e}; nothing changed")),
            },
            LimitScope::Strategy(name) => {
                let s = match self.strategy_index(&name) {
                    Ok(s) => StrategyId(s),
                    Err(text) => return (false, text),
                };
                let current = self.risk.limits(s).unwrap_or_default();
                match current.with_changes(changes) {
                    Ok(next) if self.risk.set_limits(s, next).is_ok() => {
                        self.log(&Rec::Limits {
                            scope: s.0,
                            limits: next,
                        });
                        (true, format!("{changed}{name}: {}", next.render()))
                    }
                    Ok(_) => (false, format!("strategy {name:?} is not registered")),
                    Err(e) => (false, format!("{e}; nothing changed")),
                }
            }
        }
    }

    /// Kill switch off: one strategy's, or (`None`) the global one and every
    /// strategy's; journaled like the kill.
    fn release(&mut self, strategy: Option<String>) -> (bool, String) {
        let scopes: Vec<Option<u16>> = match strategy.as_deref().map(|n| self.strategy_index(n)) {
            None => std::iter::once(None)
                .chain((0..self.slots.len()).map(|i| Some(i as u16)))
                .collect(),
            Some(Ok(s)) => vec![Some(s)],
            Some(Err(text)) => return (false, text),
        };
        for scope in scopes {
            self.risk.unkill(scope.map(StrategyId));
            self.log(&Rec::Kill {
                scope: scope.unwrap_or(GLOBAL),
                on: false,
            });
        }
        (
            true,
            format!(
                "released {}",
                strategy.as_deref().unwrap_or("every strategy")
            ),
        )
    }

    fn kill(&mut self, id: u64, strategy: Option<String>, timeout_ms: u64, now: u64) {
        let scope = match strategy.as_deref().map(|n| self.strategy_index(n)) {
            None => None,
            Some(Ok(s)) => Some(s),
            Some(Err(text)) => {
                let _ = self.shared.replies.push(ControlReply {
                    id,
                    ok: false,
                    text,
                });
                return;
            }
        };
        self.risk.kill(scope.map(StrategyId));
        self.log(&Rec::Kill {
            scope: scope.unwrap_or(GLOBAL),
            on: true,
        });
        for (i, slot) in self.slots.iter_mut().enumerate() {
            if scope.is_none_or(|s| s as usize == i) {
                slot.killed_by_death = false; // an operator's kill stays on
            }
        }
        let cancels = self.cancel_scope(scope);
        self.kills.push(KillJob {
            id,
            scope,
            deadline_ns: now + timeout_ms * 1_000_000,
            cancels,
        });
    }

    /// Sends a cancel for every open order in `scope` (None: all) that has none out
    /// yet; returns how many were sent.
    pub(super) fn cancel_scope(&mut self, scope: Option<u16>) -> u64 {
        let ids: Vec<u64> = self
            .orders
            .iter()
            .filter(|(_, o)| !o.cancel_sent && scope.is_none_or(|s| o.strategy == s))
            .map(|(id, _)| *id)
            .collect();
        ids.into_iter().filter(|id| self.send_cancel(*id)).count() as u64
    }

    fn open_in(&self, scope: Option<u16>) -> usize {
        self.orders
            .values()
            .filter(|o| scope.is_none_or(|s| o.strategy == s))
            .count()
    }

    fn progress_kills(&mut self, now: u64) {
        let mut jobs = std::mem::take(&mut self.kills);
        jobs.retain_mut(|job| {
            job.cancels += self.cancel_scope(job.scope); // retry cancels a full inbox refused
            let open = self.open_in(job.scope);
            let who = match job.scope {
                None => "all strategies".to_owned(),
                Some(s) => format!("strategy {}", self.slots[s as usize].link.name),
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
            self.publish(now);
            let _ = self.shared.replies.push(reply);
            false
        });
        self.kills = jobs;
    }

    fn check_liveness(&mut self, now: u64) {
        let check_pids = now >= self.next_pid_check_ns;
        if check_pids {
            self.next_pid_check_ns = now + PID_CHECK_NS;
        }
        for s in 0..self.slots.len() {
            let slot = &self.slots[s];
            if slot.state != Liveness::Alive {
                continue;
            }
            let silent = now.saturating_sub(slot.last_seen_ns) > self.heartbeat_timeout_ns;
            let gone = check_pids && slot.pid.is_some_and(|p| !process_alive(p));
            if silent || gone {
                self.declare_dead(
                    s as u16,
                    if gone {
                        "process exited"
                    } else {
                        "heartbeat timeout"
                    },
                );
            }
        }
    }

    fn declare_dead(&mut self, s: u16, why: &str) {
        let was_killed = self.risk.is_strategy_killed(StrategyId(s));
        let slot = &mut self.slots[s as usize];
        slot.state = Liveness::Dead;
        slot.killed_by_death = !was_killed;
        // Nobody may attach to these rings any more: the dead (or stalled) process may
        // still hold them. We keep reading ours until fresh ones replace them.
        crate::rings::unlink(&self.dir, &slot.link.name);
        // Not journaled: a death's kill switch belongs to that incarnation, and every
        // incarnation after an engine restart is a new one.
        self.risk.kill(Some(StrategyId(s)));
        let cancels = match self.on_dead {
            DeadPolicy::Cancel => self.cancel_scope(Some(s)),
            DeadPolicy::Leave => 0,
        };
        eprintln!(
            "engine {}: strategy {} is dead ({why}); kill switch on, {cancels} cancels sent",
            self.engine, self.slots[s as usize].link.name
        );
    }
}

impl Orchestrator {
    /// Gives every dead strategy whose orders have all ended (cancel confirmed by the
    /// venue, or filled) a fresh ring pair at the same paths, so a restarted process
    /// can attach. Waiting for its orders first means the new incarnation inherits
    /// none: its client ids (which start again from 1) can never name an order of the
    /// dead one, and no event about an old order reaches the new rings. With
    /// `on_dead = "leave"` that wait lasts until those orders fill or are cancelled.
    /// A failed re-creation is retried on the 100 ms `tick` only.
    fn rearm_dead(&mut self, tick: bool) {
        for s in 0..self.slots.len() {
            let slot = &self.slots[s];
            if slot.state != Liveness::Dead
                || (slot.rearm_failed && !tick)
                || self.open_in(Some(s as u16)) > 0
            {
                continue;
            }
            let name = self.slots[s].link.name.clone();
            // ~1 ms of file work and page faults, on this thread but only once per death.
            match crate::rings::create_link(&self.dir, &name, self.ring_capacity, self.md_capacity)
            {
                Ok(mut link) => {
                    if let (Some(tx), Some(q)) = (link.md.take(), self.md_attach.as_ref()) {
                        // Bounded: one entry per re-created strategy; never full in
                        // practice (the md thread drains it every turn).
                        let _ = q.push((s as u16, tx));
                    }
                    let old = &self.slots[s];
                    let (generation, killed_by_death) = (old.generation + 1, old.killed_by_death);
                    let (malformed, after_dead) = (old.malformed, old.after_dead);
                    // Totals carry over; what the old rings still held is discarded.
                    let earlier = [self.submit_row(old), self.return_row(old)].map(|mut q| {
                        q.discarded += q.depth;
                        q.depth = 0;
                        q
                    });
                    self.slots[s] = Slot::new(link, generation);
                    self.slots[s].malformed = malformed;
                    self.slots[s].after_dead = after_dead;
                    self.slots[s].earlier = earlier;
                    if killed_by_death {
                        self.risk.unkill(Some(StrategyId(s as u16)));
                    }
                    eprintln!(
                        "engine {}: strategy {name}: every order of the dead incarnation has \
                         ended; fresh rings created (generation {generation}), waiting for it \
                         to attach",
                        self.engine
                    );
                }
                Err(e) => {
                    if !self.slots[s].rearm_failed {
                        eprintln!(
                            "engine {}: re-creating the rings of {name}: {e}",
                            self.engine
                        );
                        self.slots[s].rearm_failed = true;
                    }
                }
            }
        }
    }
}

/// Whether process `pid` exists and is not a zombie.
fn process_alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state is the first field after the parenthesised command name.
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}
