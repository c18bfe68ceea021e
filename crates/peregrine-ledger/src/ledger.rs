//! The ledger: reservations per order, settlement from events.

use peregrine_book::{Event, NewOrder, PreMatch, RejectReason, Replace};
use peregrine_types::{AccountId, InstrumentId, InstrumentSpec, OrderId, Side};
use rustc_hash::FxHashMap;

use crate::balances::{AssetId, Balance};
use crate::fees::{FeeState, Fees};

/// The assets an instrument trades.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InstrumentAssets {
    /// What is bought and sold (quantity units).
    pub base: AssetId,
    /// What it is paid in (price units × quantity units).
    pub quote: AssetId,
}

/// An admin operation was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum LedgerError {
    /// Amounts must be positive.
    #[error("amount must be positive")]
    NonPositive,
    /// A withdrawal larger than the available balance (reserved funds are untouchable).
    #[error("insufficient available balance: {available} < {requested}")]
    Insufficient {
        /// Available now.
        available: i128,
        /// Asked for.
        requested: i128,
    },
}

/// What an open order holds.
#[derive(Debug, Clone, Copy)]
struct Hold {
    account: AccountId,
    side: Side,
    /// Limit (or protection) price in units.
    price: i64,
    /// Open quantity the reservation covers.
    leaves: i64,
    assets: InstrumentAssets,
    /// A buy's fee rate reserve (the instrument's largest charge, millionths).
    fee_ppm: i64,
    /// Quote reserved for a buy's fees: at least `fee_need(price, leaves)`.
    fee_left: i128,
}

/// The fee reserve a buy of `leaves` at `price` needs at `ppm`: what its fills can
/// charge at most (fees truncate, so the sum over fills never exceeds it).
fn fee_need(price: i64, leaves: i64, ppm: i64) -> i128 {
    price as i128 * leaves as i128 * i128::from(ppm) / 1_000_000
}

impl Hold {
    /// The asset and amount currently reserved.
    fn reserved(&self) -> (AssetId, i128) {
        match self.side {
            Side::Buy => (
                self.assets.quote,
                self.price as i128 * self.leaves as i128 + self.fee_left,
            ),
            Side::Sell => (self.assets.base, self.leaves as i128),
        }
    }

    /// Shrinks the fee reserve to what the open quantity still needs.
    fn trim_fees(&mut self) {
        if self.side == Side::Buy {
            self.fee_left = self
                .fee_left
                .min(fee_need(self.price, self.leaves, self.fee_ppm));
        }
    }
}

/// One open order's reservation, as exported for snapshots and state hashes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HoldState {
    /// The order.
    pub order: OrderId,
    /// Its owner.
    pub account: AccountId,
    /// Its side (a buy holds quote, a sell base).
    pub side: Side,
    /// Limit (or protection) price in units.
    pub price: i64,
    /// Open quantity the reservation covers.
    pub leaves: i64,
    /// The instrument's assets.
    pub assets: InstrumentAssets,
    /// A buy's fee rate reserve (millionths; 0 for sells and without fees).
    pub fee_ppm: i64,
    /// Quote reserved for a buy's fees.
    pub fee_left: i128,
}

/// A ledger's complete state in a canonical order (sorted by key): what a snapshot
/// stores and a state hash covers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LedgerState {
    /// Every (account, asset) balance ever touched, sorted by (account, asset).
    pub balances: Vec<(AccountId, AssetId, Balance)>,
    /// Every open reservation, sorted by order id.
    pub holds: Vec<HoldState>,
    /// Net deposits per asset, sorted by asset.
    pub supply: Vec<(AssetId, i128)>,
    /// Net fees the fee account collected per asset (charges minus rebates), sorted.
    pub fees: Vec<(AssetId, i128)>,
}

/// Balances and reservations.
#[derive(Debug, Default, Clone)]
pub struct Ledger {
    instruments: Vec<Option<InstrumentAssets>>,
    balances: FxHashMap<(AccountId, AssetId), Balance>,
    holds: FxHashMap<OrderId, Hold>,
    /// Net deposits per asset, for the conservation check.
    supply: FxHashMap<AssetId, i128>,
    /// The fee stage: prices fills before they settle.
    fees: Option<Fees>,
    /// Where fees go and rebates come from.
    fee_account: AccountId,
    /// Net fees collected per asset.
    collected: FxHashMap<AssetId, i128>,
}

impl Ledger {
    /// A ledger for instruments with the given assets.
    pub fn new(instruments: &[(InstrumentId, InstrumentAssets)]) -> Ledger {
        let mut l = Ledger::default();
        for (id, assets) in instruments {
            let i = id.0 as usize;
            if l.instruments.len() <= i {
                l.instruments.resize(i + 1, None);
            }
            l.instruments[i] = Some(*assets);
        }
        l
    }

    /// Charges `fees` on every fill from now on, paying them to (and rebates from)
    /// `account`.
    pub fn with_fees(mut self, fees: Fees, account: AccountId) -> Self {
        self.fees = Some(fees);
        self.fee_account = account;
        self
    }

    /// The fee stage, if fees are on.
    pub fn fees(&self) -> Option<&Fees> {
        self.fees.as_ref()
    }

    /// The fee stage, mutably (restoring a snapshot).
    pub fn fees_mut(&mut self) -> Option<&mut Fees> {
        self.fees.as_mut()
    }

    /// The fee account.
    pub fn fee_account(&self) -> AccountId {
        self.fee_account
    }

    /// Net fees collected in `asset` (charges minus rebates).
    pub fn fees_collected(&self, asset: AssetId) -> i128 {
        self.collected.get(&asset).copied().unwrap_or(0)
    }

    /// Reserves room for `orders` open reservations and `balances` (account, asset)
    /// pairs, so the order path does not grow the maps (rehash) under load.
    pub fn reserve(&mut self, orders: usize, balances: usize) {
        self.holds.reserve(orders);
        self.balances.reserve(balances);
        if let Some(f) = self.fees.as_mut() {
            f.reserve(balances);
        }
    }

    /// Balance of an account in an asset.
    pub fn balance(&self, account: AccountId, asset: AssetId) -> Balance {
        self.balances
            .get(&(account, asset))
            .copied()
            .unwrap_or_default()
    }

    /// Credits `amount` to `account`'s available balance.
    pub fn deposit(
        &mut self,
        account: AccountId,
        asset: AssetId,
        amount: i128,
    ) -> Result<(), LedgerError> {
        if amount <= 0 {
            return Err(LedgerError::NonPositive);
        }
        self.balances.entry((account, asset)).or_default().available += amount;
        *self.supply.entry(asset).or_default() += amount;
        Ok(())
    }

    /// Debits `amount` from the available balance; reserved funds are never touched.
    pub fn withdraw(
        &mut self,
        account: AccountId,
        asset: AssetId,
        amount: i128,
    ) -> Result<(), LedgerError> {
        if amount <= 0 {
            return Err(LedgerError::NonPositive);
        }
        let b = self.balances.entry((account, asset)).or_default();
        if b.available < amount {
            return Err(LedgerError::Insufficient {
                available: b.available,
                requested: amount,
            });
        }
        b.available -= amount;
        *self.supply.entry(asset).or_default() -= amount;
        Ok(())
    }

    /// Checks the invariant: per asset, Σ(available + reserved) = net deposits, and no
    /// balance is negative; reserved equals what open orders hold.
    pub fn check(&self) -> Result<(), String> {
        let mut totals: FxHashMap<AssetId, i128> = FxHashMap::default();
        let mut reserved: FxHashMap<(AccountId, AssetId), i128> = FxHashMap::default();
        for ((account, asset), b) in &self.balances {
            if b.available < 0 || b.reserved < 0 {
                return Err(format!("negative balance {account:?} {asset:?}: {b:?}"));
            }
            *totals.entry(*asset).or_default() += b.total();
            *reserved.entry((*account, *asset)).or_default() += b.reserved;
        }
        for (asset, supply) in &self.supply {
            let t = totals.get(asset).copied().unwrap_or(0);
            if t != *supply {
                return Err(format!(
                    "asset {asset:?}: balances {t} != deposits {supply}"
                ));
            }
        }
        for h in self.holds.values() {
            let (asset, amount) = h.reserved();
            *reserved.entry((h.account, asset)).or_default() -= amount;
        }
        if let Some((k, v)) = reserved.iter().find(|(_, v)| **v != 0) {
            return Err(format!("{k:?}: reserved differs from open orders by {v}"));
        }
        for h in self.holds.values() {
            if h.fee_left < fee_need(h.price, h.leaves, h.fee_ppm) || h.fee_left < 0 {
                return Err(format!(
                    "{:?}: fee reserve {} too small",
                    h.account, h.fee_left
                ));
            }
        }
        Ok(())
    }

    /// The complete state, sorted (allocates: for snapshots and hashes, not the
    /// order path).
    pub fn export(&self) -> LedgerState {
        let mut balances: Vec<_> = self
            .balances
            .iter()
            .map(|(&(account, asset), &b)| (account, asset, b))
            .collect();
        balances.sort_unstable_by_key(|&(account, asset, _)| (account, asset));
        let mut holds: Vec<_> = self
            .holds
            .iter()
            .map(|(&order, h)| HoldState {
                order,
                account: h.account,
                side: h.side,
                price: h.price,
                leaves: h.leaves,
                assets: h.assets,
                fee_ppm: h.fee_ppm,
                fee_left: h.fee_left,
            })
            .collect();
        holds.sort_unstable_by_key(|h| h.order);
        let mut supply: Vec<_> = self.supply.iter().map(|(&a, &v)| (a, v)).collect();
        supply.sort_unstable_by_key(|&(a, _)| a);
        let mut fees: Vec<_> = self.collected.iter().map(|(&a, &v)| (a, v)).collect();
        fees.sort_unstable_by_key(|&(a, _)| a);
        LedgerState {
            balances,
            holds,
            supply,
            fees,
        }
    }

    /// The fee stage's state (volumes), when fees are on.
    pub fn export_fees(&self) -> Option<FeeState> {
        self.fees.as_ref().map(Fees::export)
    }

    /// Replaces balances, holds and supply with `state` (restoring a snapshot); the
    /// instrument table is kept. Run [`Ledger::check`] afterwards to verify it.
    pub fn restore(&mut self, state: &LedgerState) {
        self.balances = state
            .balances
            .iter()
            .map(|&(account, asset, b)| ((account, asset), b))
            .collect();
        self.holds = state
            .holds
            .iter()
            .map(|h| {
                let hold = Hold {
                    account: h.account,
                    side: h.side,
                    price: h.price,
                    leaves: h.leaves,
                    assets: h.assets,
                    fee_ppm: h.fee_ppm,
                    fee_left: h.fee_left,
                };
                (h.order, hold)
            })
            .collect();
        self.supply = state.supply.iter().copied().collect();
        self.collected = state.fees.iter().copied().collect();
    }

    /// The open quantity an order's reservation covers (None when it holds nothing).
    pub fn held_qty(&self, id: OrderId) -> Option<i64> {
        self.holds.get(&id).map(|h| h.leaves)
    }

    /// Orders holding funds.
    pub fn open_holds(&self) -> usize {
        self.holds.len()
    }

    /// The assets `instrument` trades (`None`: not an instrument of this ledger).
    pub fn assets(&self, instrument: InstrumentId) -> Option<InstrumentAssets> {
        self.instruments
            .get(instrument.0 as usize)
            .copied()
            .flatten()
    }

    fn move_reserved(&mut self, account: AccountId, asset: AssetId, amount: i128) {
        let b = self.balances.entry((account, asset)).or_default();
        b.reserved -= amount;
        b.available += amount;
    }

    /// Applies the events of one command (the post-match stage), in order. The
    /// matching engine does it event by event through [`PreMatch::on_event`]; this is
    /// for callers that hold the events (fills are charged their events' fees as they
    /// are: price them first).
    pub fn settle(&mut self, events: &[Event]) {
        for e in events {
            self.settle_one(e);
        }
    }

    /// Applies one event.
    #[inline]
    pub fn settle_one(&mut self, e: &Event) {
        match e {
            Event::Fill(f) => self.on_fill(f),
            Event::Cancelled(c) => self.release(c.id, c.qty.lots()),
            Event::Rejected(r) if r.command == peregrine_book::CommandKind::New => {
                if let Some(h) = self.holds.get(&r.id).copied() {
                    self.release(r.id, h.leaves);
                }
            }
            Event::List(l) if l.status == peregrine_book::ListStatus::Rejected => {
                for id in l.legs {
                    if let Some(h) = self.holds.get(&id).copied() {
                        self.release(id, h.leaves);
                    }
                }
            }
            Event::Replaced(r) => self.on_replaced(r.id, r.price.units(), r.qty.lots()),
            _ => {}
        }
    }

    /// Releases the reservation for `qty` of an order's open quantity (and the fee
    /// reserve it no longer needs).
    fn release(&mut self, id: OrderId, qty: i64) {
        let Some(mut h) = self.holds.get(&id).copied() else {
            return;
        };
        let (asset, before) = h.reserved();
        h.leaves -= qty;
        h.trim_fees();
        if h.leaves <= 0 {
            h.fee_left = 0;
        }
        let (_, after) = h.reserved();
        self.move_reserved(h.account, asset, before - after);
        self.store(id, h);
    }

    fn store(&mut self, id: OrderId, h: Hold) {
        if h.leaves <= 0 {
            self.holds.remove(&id);
        } else {
            self.holds.insert(id, h);
        }
    }

    /// Moves an order's fee between its account and the fee account: `fee` > 0 is
    /// paid from `held` (a buy's fee reserve) or from the account's available
    /// balance (`held` false: a sell pays from its proceeds), `fee` < 0 is a rebate.
    fn charge(&mut self, account: AccountId, asset: AssetId, fee: i64, held: bool) {
        if fee == 0 {
            return;
        }
        let fee = i128::from(fee);
        let b = self.balances.entry((account, asset)).or_default();
        if held && fee > 0 {
            b.reserved -= fee;
        } else {
            b.available -= fee;
        }
        #[cfg(feature = "sabotage")]
        if sabotage::leaking() {
            return; // the negative control: the fee leaves the payer and reaches nobody
        }
        self.balances
            .entry((self.fee_account, asset))
            .or_default()
            .available += fee;
        *self.collected.entry(asset).or_default() += fee;
    }

    fn on_fill(&mut self, f: &peregrine_book::event::Fill) {
        let (q, p) = (f.qty.lots(), f.price.units());
        for (id, fee) in [(f.maker_id, f.maker_fee), (f.taker_id, f.taker_fee)] {
            let Some(mut h) = self.holds.get(&id).copied() else {
                continue;
            };
            let (base, quote) = (h.assets.base, h.assets.quote);
            let cost = p as i128 * q as i128;
            match h.side {
                Side::Buy => {
                    // Reserved at the limit; pay the trade price, release the improvement.
                    let held = h.price as i128 * q as i128;
                    let b = self.balances.entry((h.account, quote)).or_default();
                    b.reserved -= held;
                    b.available += held - cost;
                    self.balances
                        .entry((h.account, base))
                        .or_default()
                        .available += q as i128;
                    // A fee comes out of the fee reserve, which covers every fill's.
                    if fee > 0 {
                        h.fee_left -= i128::from(fee);
                    }
                    self.charge(h.account, quote, fee, true);
                }
                Side::Sell => {
                    self.balances.entry((h.account, base)).or_default().reserved -= q as i128;
                    self.balances
                        .entry((h.account, quote))
                        .or_default()
                        .available += cost;
                    self.charge(h.account, quote, fee, false);
                }
            }
            h.leaves -= q;
            if h.leaves <= 0 && h.fee_left > 0 {
                // Done: what the fee reserve did not need goes back.
                self.move_reserved(h.account, quote, h.fee_left);
                h.fee_left = 0;
            }
            self.store(id, h);
            // The post-condition of a fill, on in release (two map lookups): a
            // trade never leaves either side's balances negative (money from
            // nothing); `check` verifies the whole ledger where it can afford to.
            for asset in [base, quote] {
                let b = self.balance(h.account, asset);
                assert!(
                    b.available >= 0 && b.reserved >= 0,
                    "a fill left account {} asset {} negative: {b:?}",
                    h.account.0,
                    asset.0
                );
            }
        }
    }

    fn on_replaced(&mut self, id: OrderId, price: i64, qty: i64) {
        let Some(mut h) = self.holds.get(&id).copied() else {
            return;
        };
        let (asset, before) = h.reserved();
        h.price = price;
        h.leaves = qty;
        if h.side == Side::Buy {
            h.fee_left = fee_need(price, qty, h.fee_ppm);
        }
        let (_, after) = h.reserved();
        // check_replace made sure `after - before` is available.
        self.move_reserved(h.account, asset, before - after);
        self.store(id, h);
    }

    fn need(
        side: Side,
        price: i64,
        qty: i64,
        assets: InstrumentAssets,
        fee_ppm: i64,
    ) -> (AssetId, i128) {
        match side {
            Side::Buy => (
                assets.quote,
                price as i128 * qty as i128 + fee_need(price, qty, fee_ppm),
            ),
            Side::Sell => (assets.base, qty as i128),
        }
    }

    /// A buy's fee rate reserve on `instrument`.
    fn fee_ppm(&self, instrument: InstrumentId, side: Side) -> i64 {
        match (&self.fees, side) {
            (Some(f), Side::Buy) => f.max_charge_ppm(instrument),
            _ => 0,
        }
    }
}

impl PreMatch for Ledger {
    fn check_new(&mut self, o: &NewOrder, _spec: &InstrumentSpec) -> Result<(), RejectReason> {
        if o.qty.lots() <= 0 || o.price.units() <= 0 {
            return Ok(()); // the book rejects these; nothing to reserve
        }
        let assets = self
            .assets(o.instrument)
            .ok_or(RejectReason::UnknownInstrument)?;
        let fee_ppm = self.fee_ppm(o.instrument, o.side);
        let (asset, amount) = Self::need(o.side, o.price.units(), o.qty.lots(), assets, fee_ppm);
        let b = self.balances.entry((o.account, asset)).or_default();
        if b.available < amount {
            return Err(RejectReason::InsufficientBalance);
        }
        b.available -= amount;
        b.reserved += amount;
        self.holds.insert(
            o.id,
            Hold {
                account: o.account,
                side: o.side,
                price: o.price.units(),
                leaves: o.qty.lots(),
                assets,
                fee_ppm,
                fee_left: fee_need(o.price.units(), o.qty.lots(), fee_ppm),
            },
        );
        Ok(())
    }

    fn check_replace(&mut self, r: &Replace, _spec: &InstrumentSpec) -> Result<(), RejectReason> {
        let Some(h) = self.holds.get(&r.id).copied() else {
            return Ok(());
        };
        if h.account != r.account || r.qty.lots() <= 0 || r.price.units() <= 0 {
            return Ok(()); // the book rejects these
        }
        let (asset, before) = h.reserved();
        let (_, after) = Self::need(h.side, r.price.units(), r.qty.lots(), h.assets, h.fee_ppm);
        if after - before > self.balance(h.account, asset).available {
            return Err(RejectReason::InsufficientBalance);
        }
        Ok(())
    }

    #[inline]
    fn on_event(&mut self, event: &mut Event) {
        if let (Event::Fill(f), Some(fees)) = (&mut *event, self.fees.as_mut()) {
            fees.price(f);
        }
        self.settle_one(event);
    }

    #[inline]
    fn begin(&mut self, now: peregrine_types::Timestamp) {
        if let Some(f) = self.fees.as_mut() {
            f.set_time(now.0);
        }
    }
}

/// The negative control of the simulator's conservation invariant (`peregrine-sim`,
/// built only with the `sabotage` feature, never in what users run): while switched on
/// for the calling thread, a fill's fee is taken from the payer and credited to nobody.
#[cfg(feature = "sabotage")]
pub mod sabotage {
    use std::cell::Cell;

    thread_local! {
        static LEAK: Cell<bool> = const { Cell::new(false) };
    }

    /// Switches the fee leak on or off for this thread.
    pub fn leak_fees(on: bool) {
        LEAK.with(|l| l.set(on));
    }

    pub(crate) fn leaking() -> bool {
        LEAK.with(Cell::get)
    }
}
