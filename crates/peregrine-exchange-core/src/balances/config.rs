//! The `[balances]` / `[[assets]]` config and its resolution to asset ids.

use peregrine_ledger::{AssetId, InstrumentAssets, Ledger};
use peregrine_types::{decimal, AccountId, InstrumentId, InstrumentSpec};
use serde::{Deserialize, Serialize};

use crate::balances::admin::AdminPolicy;

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

/// The parts of the exchange config that balances depend on.
#[derive(Debug, Clone, Copy)]
pub struct BalanceInputs<'a> {
    /// Tradable instruments (their `base` and `quote` name assets).
    pub instruments: &'a [InstrumentSpec],
    /// Every configured account.
    pub accounts: &'a [AccountId],
    /// The accounts with `admin = true`.
    pub admins: &'a [AccountId],
    /// `[[assets]]`.
    pub assets: &'a [AssetConfig],
    /// `[balances]`.
    pub balances: &'a BalancesConfig,
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
    /// Resolves the config: `None` when balances are off; every problem found
    /// otherwise.
    pub fn resolve(c: &BalanceInputs<'_>) -> Result<Option<BalanceSetup>, Vec<String>> {
        let mut errs = Vec::new();
        check(c, &mut errs);
        if !errs.is_empty() {
            return Err(errs);
        }
        if !c.balances.enabled {
            return Ok(None);
        }
        let mut instruments = Vec::with_capacity(c.instruments.len());
        for spec in c.instruments {
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
        let mut accounts: Vec<AccountId> = c.accounts.to_vec();
        accounts.sort_unstable();
        let mut assets: Vec<AssetId> = c.assets.iter().map(|a| AssetId(a.id)).collect();
        assets.sort_unstable();
        let admins = c.admins.to_vec();
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

fn asset_by_symbol<'a>(c: &BalanceInputs<'a>, symbol: &str) -> Option<&'a AssetConfig> {
    c.assets.iter().find(|a| a.symbol == symbol)
}

fn pair_of<'a>(
    c: &BalanceInputs<'a>,
    spec: &InstrumentSpec,
    base: bool,
) -> Option<&'a AssetConfig> {
    let symbol = if base { &spec.base } else { &spec.quote };
    asset_by_symbol(c, symbol.as_deref()?)
}

/// Pushes every balances problem of `c` onto `errs` (part of the exchange config's
/// `validate`).
pub fn check(c: &BalanceInputs<'_>, errs: &mut Vec<String>) {
    let mut ids = Vec::new();
    let mut symbols = Vec::new();
    for a in c.assets {
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
    for spec in c.instruments {
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

fn check_instrument(c: &BalanceInputs<'_>, spec: &InstrumentSpec, errs: &mut Vec<String>) {
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

fn check_initial(c: &BalanceInputs<'_>, i: &InitialBalance, errs: &mut Vec<String>) {
    let name = format!("balances.initial (account {}, {})", i.account, i.asset);
    if !c.accounts.contains(&i.account) {
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
