//! Operator commands as the core sees them (the engine's control socket parses the
//! text and checks keys and values before a command gets here), and how the core
//! answers them: risk limits shown or changed between two orders, the kill switch.

use peregrine_risk::{Limits, StrategyId};

use crate::io::{Output, Outputs};
use crate::record::{Rec, GLOBAL};
use crate::state::Orchestrator;

pub use crate::io::{ControlCmd, ControlReply, LimitScope};

impl Orchestrator {
    pub(crate) fn command(&mut self, cmd: ControlCmd, now: u64, out: &mut Outputs) {
        match cmd {
            ControlCmd::Kill {
                id,
                strategy,
                timeout_ms,
            } => match strategy.as_deref().map(|n| self.strategy_index(n)) {
                None => self.kill(id, None, timeout_ms, now, out),
                Some(Ok(s)) => self.kill(id, Some(s), timeout_ms, now, out),
                Some(Err(text)) => out.push(Output::Reply(ControlReply {
                    id,
                    ok: false,
                    text,
                })),
            },
            ControlCmd::Release { id, strategy } => {
                let (ok, text) = self.release(strategy, out);
                out.push(Output::Reply(ControlReply { id, ok, text }));
            }
            ControlCmd::Limits { id, scope, changes } => {
                let (ok, text) = self.limits(scope, &changes, out);
                out.push(Output::Reply(ControlReply { id, ok, text }));
            }
        }
    }

    /// Kill switch off: one strategy's, or (`None`) the global one and every
    /// strategy's; journaled like the kill.
    fn release(&mut self, strategy: Option<String>, out: &mut Outputs) -> (bool, String) {
        let scopes: Vec<Option<u16>> = match strategy.as_deref().map(|n| self.strategy_index(n)) {
            None => std::iter::once(None)
                .chain((0..self.slots.len()).map(|i| Some(i as u16)))
                .collect(),
            Some(Ok(s)) => vec![Some(s)],
            Some(Err(text)) => return (false, text),
        };
        for scope in scopes {
            self.risk.unkill(scope.map(StrategyId));
            self.record(
                Rec::Kill {
                    scope: scope.unwrap_or(GLOBAL),
                    on: false,
                },
                out,
            );
        }
        (
            true,
            format!(
                "released {}",
                strategy.as_deref().unwrap_or("every strategy")
            ),
        )
    }

    /// The index of strategy `name`, or an error reply's text.
    fn strategy_index(&self, name: &str) -> Result<u16, String> {
        self.slots
            .iter()
            .position(|s| s.name == name)
            .map(|i| i as u16)
            .ok_or_else(|| format!("unknown strategy {name:?}"))
    }

    /// Applies a (pre-checked) limit change between two orders and describes the
    /// limits now in force.
    fn limits(
        &mut self,
        scope: LimitScope,
        changes: &[(String, String)],
        out: &mut Outputs,
    ) -> (bool, String) {
        let changed = if changes.is_empty() { "" } else { "changed; " };
        match scope {
            LimitScope::All => {
                let mut text = format!("global: {}", self.risk.global_limits().render());
                for (i, slot) in self.slots.iter().enumerate() {
                    let l = self.risk.limits(StrategyId(i as u16)).unwrap_or_default();
                    text += &format!("\n{}: {}", slot.name, l.render());
                }
                (true, text)
            }
            LimitScope::Global => match self.risk.global_limits().with_changes(changes) {
                Ok(next) => {
                    self.risk.set_global_limits(next);
                    self.record(
                        Rec::Limits {
                            scope: GLOBAL,
                            limits: next,
                        },
                        out,
                    );
                    (true, format!("{changed}global: {}", next.render()))
                }
                Err(e) => (false, format!("{e}; nothing changed")),
            },
            LimitScope::Strategy(name) => {
                let s = match self.strategy_index(&name) {
                    Ok(s) => StrategyId(s),
                    Err(text) => return (false, text),
                };
                let current: Limits = self.risk.limits(s).unwrap_or_default();
                match current.with_changes(changes) {
                    Ok(next) if self.risk.set_limits(s, next).is_ok() => {
                        self.record(
                            Rec::Limits {
                                scope: s.0,
                                limits: next,
                            },
                            out,
                        );
                        (true, format!("{changed}{name}: {}", next.render()))
                    }
                    Ok(_) => (false, format!("strategy {name:?} is not registered")),
                    Err(e) => (false, format!("{e}; nothing changed")),
                }
            }
        }
    }
}
