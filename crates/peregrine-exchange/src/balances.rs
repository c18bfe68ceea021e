//! Balances in the venue: the `[balances]` / `[[assets]]` config, its resolution to
//! asset ids, the pre-match stage the matching engine runs, and the admin commands
//! (deposit, withdraw) that move money in and out.
//!
//! The money itself lives in [`peregrine_ledger::Ledger`]: a new order reserves what it
//! could spend (a buy `price × qty` of quote with an `i128` product, a market buy at
//! its protection price, a sell `qty` of base) or is rejected with
//! `InsufficientBalance` (reason 17); after each command the core hands the book's
//! events to [`Ledger::settle`], which moves fills and releases cancels.
//!
//! Units: a base asset's smallest unit is the instrument's quantity unit, a quote
//! asset's is `price unit × quantity unit`. The config check enforces it
//! (`base.decimals == qty_decimals`, `quote.decimals == price_decimals +
//! qty_decimals`), so nothing is rescaled on the order path.

use peregrine_book::{Ladder, MatchingEngine, NewOrder, PreMatch, RejectReason, Replace};
use peregrine_ledger::{AssetId, Balance, InstrumentAssets, Ledger, LedgerError, LedgerState};
use peregrine_types::{decimal, AccountId, InstrumentId, InstrumentSpec, Timestamp};
use serde::{Deserialize, Serialize};

use crate::config::Config;

/// The `[balances]` section.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BalancesConfig {
    /// Run orders through the ledger. Default `false` (no balances, no cost).
    pub enabled: bool,
    /// Deposits applied (and journaled) when the exchange starts on an empty journal,
    /// so a demo venue has funded accounts. Default: none.
    pub initial: Vec<InitialBalance>,
}

impl BalancesConfig {
    /// True for the default (lets `to_toml` omit the section).
    pub fn is_default(&self) -> bool {
        *self == BalancesConfig::default()
    }
}

/// One `[[balances.initial]]` deposit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InitialBalance {
    /// The account credited.
    pub account: AccountId,
    /// The asset's symbol.
    pub asset: String,
    /// Decimal text in whole asset units, e.g. `"100000.00"` (at most the asset's
    /// decimals).
    pub amount: String,
}

/// One `[[assets]]` entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AssetConfig {
    /// Dense id (what the wire's `asset` fields carry).
    pub id: u32,
    /// Symbol, e.g. `USD`; instruments name assets by it.
    pub symbol: String,
    /// Decimals of the smallest unit (USD in cents: 2).
    pub decimals: u32,
}

/// The config resolved to ids: everything the core needs for balances.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BalanceSetup {
    /// Base and quote asset of every instrument.
    pub instruments: Vec<(InstrumentId, InstrumentAssets)>,
    /// Who may do what with the admin commands.
    pub policy: AdminPolicy,
    /// Deposits for a fresh start, in smallest units.
    pub initial: Vec<(AccountId, AssetId, i64)>,
}

impl BalanceSetup {
    /// Resolves a validated config: `None` when balances are off.
    pub fn from_config(c: &Config) -> Result<Option<BalanceSetup>, Vec<String>> {
        let mut errs = Vec::new();
        check_config(c, &mut errs);
        if !errs.is_empty() {
            return Err(errs);
        }
        if !c.balances.enabled {
            return Ok(None);
        }
        let mut instruments = Vec::with_capacity(c.instruments.len());
        for spec in &c.instruments {
            if let (Some(base), Some(quote)) = (pair_of(c, spec, true), pair_of(c, spec, false)) {
                instruments.push((
                    spec.id,
                    InstrumentAssets {
                        base: AssetId(base.id),
                        quote: AssetId(quote.id),
                    },
                ));
            }
        }
        let initial = c
            .balances
            .initial
            .iter()
            .filter_map(|i| {
                let a = asset_by_symbol(c, &i.asset)?;
                let units = decimal::parse_scaled(&i.amount, a.decimals).ok()?;
                Some((i.account, AssetId(a.id), units))
            })
            .collect();
        let mut accounts: Vec<AccountId> = c.accounts.iter().map(|a| a.id).collect();
        accounts.sort_unstable();
        let mut assets: Vec<AssetId> = c.assets.iter().map(|a| AssetId(a.id)).collect();
        assets.sort_unstable();
        let admins = c
            .accounts
            .iter()
            .filter(|a| a.admin)
            .map(|a| a.id)
            .collect();
        Ok(Some(BalanceSetup {
            instruments,
            policy: AdminPolicy {
                assets,
                accounts,
                admins,
            },
            initial,
        }))
    }

    /// A fresh ledger for these instruments.
    pub fn ledger(&self) -> Ledger {
        Ledger::new(&self.instruments)
    }
}

fn asset_by_symbol<'a>(c: &'a Config, symbol: &str) -> Option<&'a AssetConfig> {
    c.assets.iter().find(|a| a.symbol == symbol)
}

fn pair_of<'a>(c: &'a Config, spec: &InstrumentSpec, base: bool) -> Option<&'a AssetConfig> {
    let symbol = if base { &spec.base } else { &spec.quote };
    asset_by_symbol(c, symbol.as_deref()?)
}

/// Pushes every balances problem of `c` onto `errs` (part of [`Config::validate`]).
pub fn check_config(c: &Config, errs: &mut Vec<String>) {
    let mut ids = Vec::new();
    let mut symbols = Vec::new();
    for a in &c.assets {
        if a.symbol.is_empty() {
            errs.push(format!("asset {}: symbol must not be empty", a.id));
        }
        if a.decimals > decimal::MAX_DECIMALS {
            errs.push(format!("asset {}: decimals must be <= 18", a.symbol));
        }
        if ids.contains(&a.id) {
            errs.push(format!("asset {}: id defined twice", a.id));
        }
        if symbols.contains(&&a.symbol) {
            errs.push(format!("asset {}: symbol defined twice", a.symbol));
        }
        ids.push(a.id);
        symbols.push(&a.symbol);
    }
    for spec in &c.instruments {
        check_instrument(c, spec, errs);
    }
    if !c.balances.enabled {
        if !c.balances.initial.is_empty() {
            errs.push("balances.initial: needs balances.enabled = true".into());
        }
        return;
    }
    if c.assets.is_empty() {
        errs.push("balances.enabled: needs at least one [[assets]] entry".into());
    }
    for i in &c.balances.initial {
        check_initial(c, i, errs);
    }
}

fn check_instrument(c: &Config, spec: &InstrumentSpec, errs: &mut Vec<String>) {
    let name = format!("instrument {} ({})", spec.id, spec.symbol);
    let (base, quote) = match (&spec.base, &spec.quote) {
        (Some(b), Some(q)) => (b, q),
        (None, None) => {
            if c.balances.enabled {
                errs.push(format!("{name}: balances are on: set base and quote"));
            }
            return;
        }
        _ => {
            errs.push(format!("{name}: set both base and quote, or neither"));
            return;
        }
    };
    if base == quote {
        errs.push(format!("{name}: base and quote must differ"));
    }
    let mut resolve =
        |symbol: &str, want: u32, what: &str, rule: &str| match asset_by_symbol(c, symbol) {
            None => errs.push(format!("{name}: unknown {what} asset {symbol:?}")),
            Some(a) if a.decimals != want => errs.push(format!(
                "{name}: {what} asset {symbol} has {} decimals, but {rule} = {want}",
                a.decimals
            )),
            Some(_) => {}
        };
    resolve(base, spec.qty_decimals, "base", "qty_decimals");
    resolve(
        quote,
        spec.price_decimals + spec.qty_decimals,
        "quote",
        "price_decimals + qty_decimals",
    );
}

fn check_initial(c: &Config, i: &InitialBalance, errs: &mut Vec<String>) {
    let name = format!("balances.initial (account {}, {})", i.account, i.asset);
    if !c.accounts.iter().any(|a| a.id == i.account) {
        errs.push(format!("{name}: unknown account"));
    }
    match asset_by_symbol(c, &i.asset) {
        None => errs.push(format!("{name}: unknown asset")),
        Some(a) => match decimal::parse_scaled(&i.amount, a.decimals) {
            Ok(v) if v > 0 => {}
            Ok(_) => errs.push(format!("{name}: amount must be positive")),
            Err(e) => errs.push(format!("{name}: amount {:?}: {e}", i.amount)),
        },
    }
}

/// The matching engine's pre-match stage in the venue: the ledger when balances are
/// on, nothing when they are off.
///
/// Why an `Option` inside one concrete type rather than a generic `Core<L, P>`: the
/// choice is made from the config at start, and a generic parameter would spread
/// through the core, both topologies, recovery, snapshots and the server (and every
/// test that builds a core) for a saving of one well-predicted branch per order when
/// balances are off. Off, [`PreMatch::check_new`] is that branch and
/// [`Balances::settle`] returns at once; no allocation, no hashing, no strings.
#[derive(Debug, Default)]
pub struct Balances(Option<Ledger>);

impl Balances {
    /// Balances off.
    pub const fn off() -> Self {
        Balances(None)
    }

    /// Balances on, in `ledger`.
    pub fn on(ledger: Ledger) -> Self {
        Balances(Some(ledger))
    }

    /// The ledger, when balances are on.
    pub fn ledger(&self) -> Option<&Ledger> {
        self.0.as_ref()
    }

    /// The ledger, mutably.
    pub fn ledger_mut(&mut self) -> Option<&mut Ledger> {
        self.0.as_mut()
    }

    /// The post-match stage: applies one command's events to the ledger.
    #[inline]
    pub fn settle(&mut self, events: &[peregrine_book::Event]) {
        if let Some(l) = self.0.as_mut() {
            l.settle(events);
        }
    }
}

impl PreMatch for Balances {
    #[inline]
    fn check_new(&mut self, order: &NewOrder, spec: &InstrumentSpec) -> Result<(), RejectReason> {
        match self.0.as_mut() {
            Some(l) => l.check_new(order, spec),
            None => Ok(()),
        }
    }

    #[inline]
    fn check_replace(&mut self, r: &Replace, spec: &InstrumentSpec) -> Result<(), RejectReason> {
        match self.0.as_mut() {
            Some(l) => l.check_replace(r, spec),
            None => Ok(()),
        }
    }
}

/// The engine the venue runs.
pub type VenueEngine = MatchingEngine<Ladder, Balances>;

/// Deposit or withdrawal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AdminKind {
    /// Credit the available balance.
    Deposit,
    /// Debit the available balance (never reserved funds).
    Withdraw,
}

/// A journaled admin command (tags 6 and 7 of [`crate::command_codec`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AdminCommand {
    /// Sequencing time.
    pub ts: Timestamp,
    /// What to do.
    pub kind: AdminKind,
    /// The account credited or debited.
    pub account: AccountId,
    /// The asset.
    pub asset: AssetId,
    /// Amount in the asset's smallest unit (the ledger refuses non-positive ones).
    pub amount: i64,
    /// The requester's id, echoed in the answer.
    pub request_id: u64,
}

/// Why an admin request was refused: the `reason` of the wire's `AdminRejected`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u16)]
pub enum AdminReason {
    /// The session's account is not marked `admin = true` (or, for a query, asked
    /// about another account).
    NotAdmin = 1,
    /// The exchange runs without balances.
    BalancesOff = 2,
    /// No such asset id.
    UnknownAsset = 3,
    /// No such account.
    UnknownAccount = 4,
    /// The amount is zero or negative.
    NonPositive = 5,
    /// A withdrawal larger than the available balance (reserved funds are never taken).
    InsufficientAvailable = 6,
}

impl AdminReason {
    /// Every reason, for tables and tests.
    pub const ALL: [AdminReason; 6] = [
        Self::NotAdmin,
        Self::BalancesOff,
        Self::UnknownAsset,
        Self::UnknownAccount,
        Self::NonPositive,
        Self::InsufficientAvailable,
    ];

    /// The wire code.
    pub const fn code(self) -> u16 {
        self as u16
    }

    /// Decodes a wire code.
    pub fn from_code(code: u16) -> Option<AdminReason> {
        Self::ALL.iter().copied().find(|r| r.code() == code)
    }

    /// A short name for logs and the CLI.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::NotAdmin => "not_admin",
            Self::BalancesOff => "balances_off",
            Self::UnknownAsset => "unknown_asset",
            Self::UnknownAccount => "unknown_account",
            Self::NonPositive => "non_positive_amount",
            Self::InsufficientAvailable => "insufficient_available",
        }
    }
}

impl From<LedgerError> for AdminReason {
    fn from(e: LedgerError) -> Self {
        match e {
            LedgerError::NonPositive => Self::NonPositive,
            LedgerError::Insufficient { .. } => Self::InsufficientAvailable,
        }
    }
}

/// Who may send admin requests, and which ids exist. Consulted only for admin
/// messages, never on the order path.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AdminPolicy {
    /// Configured asset ids, sorted.
    pub assets: Vec<AssetId>,
    /// Configured accounts, sorted.
    pub accounts: Vec<AccountId>,
    /// Accounts with `admin = true`.
    pub admins: Vec<AccountId>,
}

impl AdminPolicy {
    /// Checks a request from `from` about (`account`, `asset`); `write` for deposits
    /// and withdrawals (admins only), false for a query (own account, or admin).
    pub fn check(
        &self,
        from: AccountId,
        account: AccountId,
        asset: AssetId,
        write: bool,
    ) -> Result<(), AdminReason> {
        let admin = self.admins.contains(&from);
        if !admin && (write || from != account) {
            return Err(AdminReason::NotAdmin);
        }
        if self.accounts.binary_search(&account).is_err() {
            return Err(AdminReason::UnknownAccount);
        }
        if self.assets.binary_search(&asset).is_err() {
            return Err(AdminReason::UnknownAsset);
        }
        Ok(())
    }
}

/// Applies an admin command to the ledger; the balance after it, or why not.
pub fn apply_admin(ledger: &mut Ledger, a: &AdminCommand) -> Result<Balance, AdminReason> {
    let amount = i128::from(a.amount);
    match a.kind {
        AdminKind::Deposit => ledger.deposit(a.account, a.asset, amount)?,
        AdminKind::Withdraw => ledger.withdraw(a.account, a.asset, amount)?,
    }
    Ok(ledger.balance(a.account, a.asset))
}

/// The venue state hash with balances: Blake3 over the engine's hash and the ledger's
/// canonical state (balances by (account, asset), holds by order id, supply by asset;
/// all little-endian).
pub fn state_hash_with(
    engine: peregrine_book::StateHash,
    ledger: &LedgerState,
) -> peregrine_book::StateHash {
    let mut h = blake3::Hasher::new();
    h.update(&engine.0);
    h.update(&(ledger.balances.len() as u64).to_le_bytes());
    for (account, asset, b) in &ledger.balances {
        h.update(&account.0.to_le_bytes());
        h.update(&asset.0.to_le_bytes());
        h.update(&b.available.to_le_bytes());
        h.update(&b.reserved.to_le_bytes());
    }
    h.update(&(ledger.holds.len() as u64).to_le_bytes());
    for o in &ledger.holds {
        h.update(&o.order.0.to_le_bytes());
        h.update(&o.account.0.to_le_bytes());
        h.update(&[o.side as u8]);
        h.update(&o.price.to_le_bytes());
        h.update(&o.leaves.to_le_bytes());
        h.update(&o.assets.base.0.to_le_bytes());
        h.update(&o.assets.quote.0.to_le_bytes());
    }
    h.update(&(ledger.supply.len() as u64).to_le_bytes());
    for (asset, v) in &ledger.supply {
        h.update(&asset.0.to_le_bytes());
        h.update(&v.to_le_bytes());
    }
    peregrine_book::StateHash(*h.finalize().as_bytes())
}

/// Saturates an `i128` amount to the wire's `i64`.
pub fn saturate(v: i128) -> i64 {
    i64::try_from(v).unwrap_or(if v < 0 { i64::MIN } else { i64::MAX })
}

#[cfg(test)]
#[path = "balances_tests.rs"]
mod tests;
