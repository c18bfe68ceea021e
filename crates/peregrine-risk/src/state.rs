//! The risk engine's state and rules.

use peregrine_types::{InstrumentId, Side};
use rustc_hash::FxHashMap;

use super::limits::{Limits, TokenBucket};
use super::{Breach, Fill, OrderRequest, OrderShape, RiskReject, StrategyId};
use crate::position::PositionBook;

mod replace;

/// Largest quantity (lots) or price (units) of one order the engine accepts at all, so
/// sums of open quantity and positions stay far from `i64` overflow whatever a
/// strategy writes (2^40, about 1.1e12).
pub const MAX_SANE: i64 = 1 << 40;

/// An open order as the risk engine tracks it.
#[derive(Debug, Clone, Copy)]
struct Open {
    venue: u32,
    instrument: InstrumentId,
    side: Side,
    leaves: i64,
    /// Open quantity reserved on top of `leaves` for a replace in flight that grows
    /// the order (released when the venue answers the replace).
    extra: i64,
}

/// Reservations and limits of one scope (a strategy, or everything together).
#[derive(Debug, Clone, Default)]
struct Scope {
    limits: Limits,
    open_orders: u32,
    /// Open quantity per instrument: [buy, sell].
    open_qty: FxHashMap<InstrumentId, [i64; 2]>,
    bucket: TokenBucket,
    killed: bool,
}

impl Scope {
    fn new(limits: Limits, now_ns: u64) -> Scope {
        Scope {
            limits,
            bucket: TokenBucket::full(&limits, now_ns),
            ..Scope::default()
        }
    }

    fn open_side(&self, instrument: InstrumentId, side: Side) -> i64 {
        self.open_qty
            .get(&instrument)
            .map_or(0, |q| q[side.index()])
    }

    fn add_open(&mut self, instrument: InstrumentId, side: Side, qty: i64) {
        self.open_qty.entry(instrument).or_default()[side.index()] += qty;
    }

    /// Order-level and exposure checks for one scope. `replacing`: the order replaces
    /// an open one that holds this much open quantity on the side (not counted twice;
    /// the open-order count is not checked, the order is already open).
    fn check(
        &self,
        o: &OrderRequest,
        position: i64,
        reference: Option<i64>,
        replacing: Option<i64>,
    ) -> Result<(), RiskReject> {
        let l = &self.limits;
        let (price, qty) = (o.price.units(), o.qty.lots());
        if l.max_order_qty.is_some_and(|m| qty > m) {
            return Err(RiskReject::MaxOrderQty);
        }
        if l.max_order_notional
            .is_some_and(|m| price as i128 * qty as i128 > m)
        {
            return Err(RiskReject::MaxOrderNotional);
        }
        if let (Some(collar), Some(r)) = (l.price_collar, reference) {
            if (price - r).abs() > collar {
                return Err(RiskReject::PriceCollar);
            }
        }
        if replacing.is_none() && l.max_open_orders.is_some_and(|m| self.open_orders >= m) {
            return Err(RiskReject::MaxOpenOrders);
        }
        if let Some(m) = l.max_position {
            let open = self.open_side(o.instrument, o.side) - replacing.unwrap_or(0);
            let worst = match o.side {
                Side::Buy => position as i128 + open as i128 + qty as i128,
                Side::Sell => position as i128 - open as i128 - qty as i128,
            };
            if worst.abs() > m as i128 {
                return Err(RiskReject::MaxPosition);
            }
        }
        Ok(())
    }
}

/// Per-strategy and global risk state.
#[derive(Debug, Clone, Default)]
pub struct RiskEngine {
    global: Scope,
    strategies: Vec<Option<Scope>>,
    open: FxHashMap<(StrategyId, u64), Open>,
    /// Reference price per (venue, instrument): the last trade the engine saw there.
    /// Per venue because one instrument trades at different prices on different
    /// venues; a collar around another venue's price would refuse sound orders.
    references: FxHashMap<(u32, InstrumentId), i64>,
    positions: PositionBook,
    rejects: [u64; RiskReject::ALL.len()],
}

impl RiskEngine {
    /// An engine with global limits.
    pub fn new(global: Limits) -> RiskEngine {
        RiskEngine {
            global: Scope::new(global, 0),
            ..RiskEngine::default()
        }
    }

    /// Registers (or re-registers, keeping state) a strategy with its limits.
    pub fn register(&mut self, s: StrategyId, limits: Limits, now_ns: u64) {
        let i = s.0 as usize;
        if self.strategies.len() <= i {
            self.strategies.resize_with(i + 1, || None);
        }
        match &mut self.strategies[i] {
            Some(scope) => scope.limits = limits,
            slot => *slot = Some(Scope::new(limits, now_ns)),
        }
    }

    /// Reserves room for `orders` open orders, and for the positions, references and
    /// per-instrument reservations of `strategies` strategies (register them first)
    /// at `venues` venues in `instruments`, so that nothing grows (allocates) while
    /// orders come and go: each table is reserved for twice what it can hold, and a
    /// hash table at most half full never needs to grow.
    pub fn reserve_capacity(
        &mut self,
        orders: usize,
        strategies: usize,
        venues: usize,
        instruments: &[u32],
    ) {
        let n = instruments.len().max(1);
        self.open.reserve(orders.saturating_mul(2));
        self.references.reserve(venues.max(1) * n * 2);
        self.positions.reserve(strategies.max(1) * n * 2);
        self.global.open_qty.reserve(n * 2);
        for scope in self.strategies.iter_mut().flatten() {
            scope.open_qty.reserve(n * 2);
        }
    }

    /// Changes a strategy's limits at run time.
    pub fn set_limits(&mut self, s: StrategyId, limits: Limits) -> Result<(), RiskReject> {
        self.scope_mut(s)?.limits = limits;
        Ok(())
    }

    /// Changes the global limits at run time.
    pub fn set_global_limits(&mut self, limits: Limits) {
        self.global.limits = limits;
    }

    /// A strategy's limits (`None` if it is not registered).
    pub fn limits(&self, s: StrategyId) -> Option<Limits> {
        self.scope(s).ok().map(|x| x.limits)
    }

    /// The global limits.
    pub fn global_limits(&self) -> Limits {
        self.global.limits
    }

    /// Whether the strategy's own kill switch (not the global one) is on.
    pub fn is_strategy_killed(&self, s: StrategyId) -> bool {
        self.scope(s).is_ok_and(|x| x.killed)
    }

    /// Sets the reference price of an instrument on a venue (fills set it too).
    pub fn set_reference(&mut self, venue: u32, instrument: InstrumentId, price: i64) {
        self.references.insert((venue, instrument), price);
    }

    /// Kill switch on: globally (`None`) or for one strategy.
    pub fn kill(&mut self, s: Option<StrategyId>) {
        match s {
            None => self.global.killed = true,
            Some(s) => {
                if let Ok(scope) = self.scope_mut(s) {
                    scope.killed = true;
                }
            }
        }
    }

    /// Kill switch off.
    pub fn unkill(&mut self, s: Option<StrategyId>) {
        match s {
            None => self.global.killed = false,
            Some(s) => {
                if let Ok(scope) = self.scope_mut(s) {
                    scope.killed = false;
                }
            }
        }
    }

    /// Whether the global kill switch is on.
    pub fn is_global_killed(&self) -> bool {
        self.global.killed
    }

    /// Whether new orders from `s` are blocked by a kill switch.
    pub fn is_killed(&self, s: StrategyId) -> bool {
        self.global.killed || self.scope(s).is_ok_and(|x| x.killed)
    }

    fn scope(&self, s: StrategyId) -> Result<&Scope, RiskReject> {
        self.strategies
            .get(s.0 as usize)
            .and_then(Option::as_ref)
            .ok_or(RiskReject::UnknownStrategy)
    }

    fn scope_mut(&mut self, s: StrategyId) -> Result<&mut Scope, RiskReject> {
        self.strategies
            .get_mut(s.0 as usize)
            .and_then(Option::as_mut)
            .ok_or(RiskReject::UnknownStrategy)
    }

    /// Checks a new order; on success reserves it. Rules in order: known strategy, kill
    /// switch, valid fields, duplicate client id, then for the strategy and then globally:
    /// qty, notional, collar, open orders, position; last the rate limits (so a refused
    /// order never spends a token).
    pub fn check_new(
        &mut self,
        s: StrategyId,
        o: &OrderRequest,
        now_ns: u64,
    ) -> Result<(), RiskReject> {
        let r = self.evaluate(s, o, now_ns);
        match r {
            Ok(()) => self.reserve(s, o),
            Err(e) => self.rejects[e.index()] += 1,
        }
        r
    }

    /// [`RiskEngine::check_new`] after checking the order's type, time in force and
    /// expiry ([`OrderShape::is_valid`]; an invalid one is [`RiskReject::InvalidOrder`]).
    /// A market order's price is its protection price, so the collar applies to it.
    pub fn check_new_shaped(
        &mut self,
        s: StrategyId,
        o: &OrderRequest,
        shape: OrderShape,
        now_ns: u64,
    ) -> Result<(), RiskReject> {
        if !shape.is_valid() && !self.is_killed(s) && self.scope(s).is_ok() {
            self.rejects[RiskReject::InvalidOrder.index()] += 1;
            return Err(RiskReject::InvalidOrder);
        }
        self.check_new(s, o, now_ns)
    }

    /// Reserves an open order without checking it (recovery from the journal: the
    /// order was checked when it was sent).
    pub fn restore_open(
        &mut self,
        s: StrategyId,
        client_id: u64,
        venue: u32,
        instrument: InstrumentId,
        side: Side,
        qty: i64,
    ) {
        if self.scope(s).is_err() {
            return;
        }
        let o = OrderRequest {
            venue,
            instrument,
            client_id,
            side,
            price: peregrine_types::Price::from_raw(1),
            qty: peregrine_types::Qty::from_raw(qty),
        };
        self.reserve(s, &o);
    }

    /// Moves the reservation of order `old` of `s` to the key `new` (recovery: orders
    /// of a previous incarnation become orphans no new client id can collide with).
    pub fn rekey(&mut self, s: StrategyId, old: u64, new: u64) {
        if let Some(open) = self.open.remove(&(s, old)) {
            self.open.insert((s, new), open);
        }
    }

    /// Part of an order left without trading (a self-trade decrement): its open
    /// quantity shrinks by `qty`; the order stays open.
    pub fn on_reduced(&mut self, s: StrategyId, client_id: u64, qty: i64) {
        if let Some(mut open) = self.open.get(&(s, client_id)).copied() {
            let q = qty.clamp(0, open.leaves);
            open.leaves -= q;
            self.release(s, open, q, false);
            self.open.insert((s, client_id), open);
        }
    }

    fn evaluate(&mut self, s: StrategyId, o: &OrderRequest, now_ns: u64) -> Result<(), RiskReject> {
        let scope = self.scope(s)?;
        if self.global.killed || scope.killed {
            return Err(RiskReject::KillSwitch);
        }
        let (q, p) = (o.qty.lots(), o.price.units());
        if q <= 0 || p <= 0 || q > MAX_SANE || p > MAX_SANE {
            return Err(RiskReject::InvalidOrder);
        }
        if self.open.contains_key(&(s, o.client_id)) {
            return Err(RiskReject::DuplicateClientOrderId);
        }
        let reference = self.reference(o.venue, o.instrument);
        scope.check(o, self.positions.get(s, o.instrument).net, reference, None)?;
        self.global
            .check(o, self.positions.net_total(o.instrument), reference, None)?;
        let sc = self.scope(s)?;
        if !sc.bucket.peek(&sc.limits, now_ns)
            || !self.global.bucket.peek(&self.global.limits, now_ns)
        {
            return Err(RiskReject::RateLimited);
        }
        let sc = self.scope_mut(s)?;
        let limits = sc.limits;
        sc.bucket.try_take(&limits, now_ns);
        let limits = self.global.limits;
        self.global.bucket.try_take(&limits, now_ns);
        Ok(())
    }

    fn reserve(&mut self, s: StrategyId, o: &OrderRequest) {
        let qty = o.qty.lots();
        self.open.insert(
            (s, o.client_id),
            Open {
                venue: o.venue,
                instrument: o.instrument,
                side: o.side,
                leaves: qty,
                extra: 0,
            },
        );
        for scope in [
            Some(&mut self.global),
            self.strategies[s.0 as usize].as_mut(),
        ]
        .into_iter()
        .flatten()
        {
            scope.open_orders += 1;
            scope.add_open(o.instrument, o.side, qty);
        }
    }

    fn release(&mut self, s: StrategyId, open: Open, qty: i64, done: bool) {
        let strategy = self
            .strategies
            .get_mut(s.0 as usize)
            .and_then(Option::as_mut);
        for scope in [Some(&mut self.global), strategy].into_iter().flatten() {
            scope.add_open(open.instrument, open.side, -qty);
            if done {
                scope.open_orders -= 1;
            }
        }
    }

    /// A fill of `s`'s order `client_id`. The position always moves (a trade happened,
    /// even if it arrives after the engine considered the order done, as when a fill
    /// races a cancel); the open quantity is released if the order is still tracked.
    /// Also sets the reference price. Returns a breach if this fill pushed the strategy
    /// over its loss or position limit (its kill switch is then on).
    pub fn on_fill(&mut self, s: StrategyId, client_id: u64, fill: Fill) -> Option<Breach> {
        if let Some(mut open) = self.open.get(&(s, client_id)).copied() {
            let q = fill.qty.lots().min(open.leaves);
            open.leaves -= q;
            let done = open.leaves == 0;
            // Filled out while a replace was in flight: the replace can only fail now.
            let extra = if done {
                std::mem::take(&mut open.extra)
            } else {
                0
            };
            self.release(s, open, q + extra, done);
            if open.leaves == 0 {
                self.open.remove(&(s, client_id));
            } else {
                self.open.insert((s, client_id), open);
            }
        }
        self.positions.apply(
            s,
            fill.instrument,
            fill.venue,
            fill.side,
            fill.price,
            fill.qty,
        );
        self.references
            .insert((fill.venue, fill.instrument), fill.price.units());
        self.breach(s, fill.instrument)
    }

    /// The order is finished without (more) fills: cancelled, expired or rejected by the
    /// venue. Releases whatever it still held.
    pub fn on_done(&mut self, s: StrategyId, client_id: u64) {
        if let Some(open) = self.open.remove(&(s, client_id)) {
            self.release(s, open, open.leaves + open.extra, true);
        }
    }

    fn breach(&mut self, s: StrategyId, instrument: InstrumentId) -> Option<Breach> {
        let pos = self.positions.get(s, instrument);
        let limits = self.scope(s).ok()?.limits;
        let mark = self.mark(s, instrument);
        let hit = if limits.max_loss.is_some_and(|m| pos.total(mark) < -m) {
            Some(Breach::Loss(s))
        } else if limits.max_position.is_some_and(|m| pos.net.abs() > m) {
            Some(Breach::Position(s))
        } else {
            None
        };
        if hit.is_some() {
            self.kill(Some(s));
        }
        hit
    }

    /// Positions and PnL.
    pub fn positions(&self) -> &PositionBook {
        &self.positions
    }

    /// Rejects so far by reason.
    pub fn reject_count(&self, r: RiskReject) -> u64 {
        self.rejects[r.index()]
    }

    /// Open orders of a strategy (or all, for `None`).
    pub fn open_orders(&self, s: Option<StrategyId>) -> u32 {
        match s {
            None => self.global.open_orders,
            Some(s) => self.scope(s).map_or(0, |x| x.open_orders),
        }
    }

    /// Client ids of a strategy's open orders, sorted (what a kill must cancel).
    pub fn open_client_ids(&self, s: StrategyId) -> Vec<u64> {
        let mut v: Vec<u64> = self
            .open
            .keys()
            .filter(|(x, _)| *x == s)
            .map(|(_, c)| *c)
            .collect();
        v.sort_unstable();
        v
    }

    /// The reference price of an instrument on a venue, if known.
    pub fn reference(&self, venue: u32, instrument: InstrumentId) -> Option<i64> {
        self.references.get(&(venue, instrument)).copied()
    }

    /// The price a strategy's position in an instrument is marked at: the reference
    /// of the venue it last traded on, else its own last fill price.
    pub fn mark(&self, s: StrategyId, instrument: InstrumentId) -> i64 {
        let pos = self.positions.get(s, instrument);
        self.reference(pos.last_venue, instrument)
            .unwrap_or(pos.last_price)
    }
}
