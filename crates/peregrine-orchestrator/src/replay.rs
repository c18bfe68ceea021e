//! Recovery: the journal's records applied to the state the engine had, and that
//! state handed to a fresh core ([`Orchestrator::restore`]).
//!
//! Records are applied through the same [`RiskEngine`] methods the live core calls
//! (reserve, fill, done, replaced, reduced, limits, kill switch), so positions,
//! realized PnL, reference prices, open-order reservations, limits and kill switches
//! come back exactly. Orders still open at the end are returned as
//! [`RestoredOrder`]s: they belong to a previous incarnation of their strategy (its
//! process has to attach anew and numbers its orders from 1 again), so they are
//! re-keyed as *orphans* (client id with [`ORPHAN`] set), which no strategy can name
//! and no event reaches; the engine asks each venue to reconcile them. Reading the
//! journal's files is the engine's business (`peregrine-engine`'s `durable`): this
//! module sees decoded records only.

use peregrine_risk::{Fill, RiskEngine, StrategyId};
use peregrine_types::{InstrumentId, Price, Qty, Side};
use peregrine_venues::RestoredOrder;
use rustc_hash::FxHashMap;

use crate::config::CoreConfig;
use crate::io::{Completion, Outputs};
use crate::record::{Rec, GLOBAL, ORPHAN};
use crate::state::{Live, Orchestrator};

/// What a replay rebuilt.
#[derive(Debug)]
pub struct Recovered {
    /// Risk state: positions, PnL, references, reservations, limits, kill switches.
    pub risk: RiskEngine,
    /// Orders still open.
    pub orders: Vec<RestoredOrder>,
    /// Next engine order id.
    pub next_engine_id: u64,
    /// Records replayed.
    pub records: u64,
    /// Per venue of the current config: the next report sequence number of its
    /// report stream to ask for (the last [`Rec::Cursor`] journaled for it).
    pub cursors: Vec<Option<u64>>,
    /// Things that could not be mapped onto the current config.
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, Copy)]
struct Open {
    strategy: Option<u16>,
    key: u64,
    venue: Option<u32>,
    instrument: InstrumentId,
    side: Side,
    price: i64,
    qty: i64,
    leaves: i64,
    venue_id: u64,
}

/// The replay's state: feed it every record in journal order, then
/// [`Replayer::finish`].
#[derive(Debug)]
pub struct Replayer<'a> {
    cfg: &'a CoreConfig,
    risk: RiskEngine,
    open: FxHashMap<u64, Open>,
    strategies: Vec<Option<u16>>,
    venues: Vec<Option<u32>>,
    cursors: Vec<Option<u64>>,
    next_engine_id: u64,
    records: u64,
    warnings: Vec<String>,
}

impl<'a> Replayer<'a> {
    /// A replay on top of `cfg`'s strategies and limits.
    pub fn new(cfg: &'a CoreConfig, now_ns: u64) -> Replayer<'a> {
        let mut risk = RiskEngine::new(cfg.global_limits);
        for (i, s) in cfg.strategies.iter().enumerate() {
            risk.register(StrategyId(i as u16), s.limits, now_ns);
        }
        Replayer {
            cfg,
            risk,
            open: FxHashMap::default(),
            strategies: Vec::new(),
            venues: Vec::new(),
            cursors: vec![None; cfg.venues.len()],
            next_engine_id: 1,
            records: 0,
            warnings: Vec::new(),
        }
    }

    /// The state at the end of the journal.
    pub fn finish(mut self) -> Recovered {
        self.orphan_all();
        let mut orders: Vec<RestoredOrder> = self
            .open
            .iter()
            .filter_map(|(id, o)| {
                Some(RestoredOrder {
                    engine_id: *id,
                    strategy: o.strategy?,
                    client_key: o.key,
                    venue: o.venue?,
                    instrument: o.instrument,
                    side: o.side,
                    price: Price::from_raw(o.price),
                    qty: Qty::from_raw(o.qty),
                    leaves: Qty::from_raw(o.leaves),
                    venue_id: o.venue_id,
                })
            })
            .collect();
        orders.sort_by_key(|o| o.engine_id);
        Recovered {
            risk: self.risk,
            orders,
            next_engine_id: self.next_engine_id,
            records: self.records,
            cursors: self.cursors,
            warnings: self.warnings,
        }
    }

    /// Applies one record.
    pub fn apply(&mut self, rec: Rec) {
        self.records += 1;
        match rec {
            Rec::Roster { strategies, venues } => self.roster(&strategies, &venues),
            Rec::Sent(o) => {
                self.next_engine_id = self.next_engine_id.max(o.engine_id + 1);
                let strategy = self.strategies.get(o.strategy as usize).copied().flatten();
                let venue = self.venues.get(o.venue as usize).copied().flatten();
                if let Some(s) = strategy {
                    let sid = StrategyId(s);
                    let v = venue.unwrap_or(u32::MAX);
                    self.risk
                        .restore_open(sid, o.client_id, v, o.instrument, o.side, o.qty.lots());
                }
                self.open.insert(
                    o.engine_id,
                    Open {
                        strategy,
                        key: o.client_id,
                        venue,
                        instrument: o.instrument,
                        side: o.side,
                        price: o.price.units(),
                        qty: o.qty.lots(),
                        leaves: o.qty.lots(),
                        venue_id: 0,
                    },
                );
            }
            Rec::Ack {
                engine_id,
                venue_id,
            } => {
                if let Some(o) = self.open.get_mut(&engine_id) {
                    o.venue_id = venue_id;
                }
            }
            Rec::Fill {
                engine_id,
                price,
                qty,
                leaves,
            } => {
                let Some(o) = self.open.get(&engine_id).copied() else {
                    return;
                };
                if let Some(s) = o.strategy {
                    let fill = Fill {
                        venue: o.venue.unwrap_or(u32::MAX),
                        instrument: o.instrument,
                        side: o.side,
                        price: Price::from_raw(price),
                        qty: Qty::from_raw(qty),
                    };
                    self.risk.on_fill(StrategyId(s), o.key, fill);
                }
                self.set_leaves(engine_id, leaves);
            }
            Rec::Cancelled {
                engine_id,
                qty,
                leaves,
            } => {
                let Some(o) = self.open.get(&engine_id).copied() else {
                    return;
                };
                if let Some(s) = o.strategy {
                    if leaves == 0 {
                        self.risk.on_done(StrategyId(s), o.key);
                    } else {
                        self.risk.on_reduced(StrategyId(s), o.key, qty);
                    }
                }
                self.set_leaves(engine_id, leaves);
            }
            Rec::Rejected { engine_id } => {
                if let Some(o) = self.open.remove(&engine_id) {
                    if let Some(s) = o.strategy {
                        self.risk.on_done(StrategyId(s), o.key);
                    }
                }
            }
            Rec::Replaced {
                engine_id,
                price,
                qty,
            } => {
                let Some(o) = self.open.get_mut(&engine_id) else {
                    return;
                };
                o.price = price;
                o.qty = qty;
                o.leaves = qty;
                if let Some(s) = o.strategy {
                    self.risk
                        .on_replaced(StrategyId(s), o.key, Qty::from_raw(qty));
                }
            }
            Rec::Limits { scope, limits } => match self.scope(scope) {
                Some(None) => self.risk.set_global_limits(limits),
                Some(Some(s)) => {
                    let _ = self.risk.set_limits(StrategyId(s), limits);
                }
                None => {}
            },
            Rec::Kill { scope, on } => match (self.scope(scope), on) {
                (Some(s), true) => self.risk.kill(s.map(StrategyId)),
                (Some(s), false) => self.risk.unkill(s.map(StrategyId)),
                (None, _) => {}
            },
            Rec::Cursor { venue, seq } => {
                if let Some(Some(v)) = self.venues.get(venue as usize) {
                    if let Some(c) = self.cursors.get_mut(*v as usize) {
                        *c = Some(seq);
                    }
                }
            }
        }
    }

    /// A new engine run begins: what was open belongs to the old one.
    fn roster(&mut self, strategies: &[String], venues: &[String]) {
        self.orphan_all();
        let cfg = self.cfg;
        self.strategies = strategies.iter().map(|n| cfg.strategy_index(n)).collect();
        self.venues = venues.iter().map(|n| cfg.venue_index(n)).collect();
        for (n, m) in strategies.iter().zip(&self.strategies) {
            if m.is_none() {
                self.warnings.push(format!(
                    "strategy {n:?} is in the journal but not in the config: its \
                     positions and orders are not restored"
                ));
            }
        }
    }

    /// `Some(None)`: global; `Some(Some(s))`: strategy `s`; `None`: unmapped.
    fn scope(&self, scope: u16) -> Option<Option<u16>> {
        if scope == GLOBAL {
            return Some(None);
        }
        self.strategies
            .get(scope as usize)
            .copied()
            .flatten()
            .map(Some)
    }

    fn set_leaves(&mut self, engine_id: u64, leaves: i64) {
        if leaves <= 0 {
            self.open.remove(&engine_id);
        } else if let Some(o) = self.open.get_mut(&engine_id) {
            o.leaves = leaves;
        }
    }

    /// Re-keys every open order as an orphan (idempotent).
    fn orphan_all(&mut self) {
        for o in self.open.values_mut() {
            if o.key & ORPHAN != 0 {
                continue;
            }
            if let Some(s) = o.strategy {
                self.risk.rekey(StrategyId(s), o.key, o.key | ORPHAN);
            }
            o.key |= ORPHAN;
        }
    }
}

impl Orchestrator {
    /// Takes over a replayed state: positions, PnL, limits, kill switches, the next
    /// order id, and the orders still open (orphans the venues now reconcile).
    /// `settled` are reports the venue adapters gave at once for restored orders
    /// (the simulated venue restarted with the engine, so its orders are gone).
    pub fn restore(
        &mut self,
        rec: Recovered,
        settled: Vec<Completion>,
        now: u64,
        out: &mut Outputs,
    ) {
        self.risk = rec.risk;
        let cap = self.cfg.max_in_flight.max(1);
        self.risk.reserve_capacity(
            cap,
            self.cfg.strategies.len(),
            self.cfg.venues.len(),
            &self.cfg.instruments,
        );
        self.next_engine_id = self.next_engine_id.max(rec.next_engine_id);
        for o in &rec.orders {
            let live = Live {
                strategy: o.strategy,
                client_id: o.client_key,
                venue: o.venue,
                instrument: o.instrument.0,
                side: o.side,
                price: o.price.units(),
                qty: o.qty.lots(),
                leaves: o.leaves.lots(),
                ts: [0; 8],
                cancel_sent: true, // the venue reconciles it: nothing else to send
                cancel_asked: false,
                replace_pending: false,
            };
            self.orders.insert(o.engine_id, live);
            self.by_client
                .insert((o.strategy, o.client_key), o.engine_id);
        }
        for c in settled {
            self.on_completion(c, now, out);
        }
    }
}
