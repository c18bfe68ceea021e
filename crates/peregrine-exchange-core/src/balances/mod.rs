//! Balances in the venue: the `[balances]` / `[[assets]]` config, its resolution to
//! asset ids, the pre-match stage the matching engine runs, and the admin commands
//! (deposit, withdraw) that move money in and out.
//!
//! The money itself lives in [`peregrine_ledger::Ledger`]: a new order reserves what it
//! could spend (a buy `price × qty` of quote with an `i128` product, a market buy at
//! its protection price, a sell `qty` of base) or is rejected with
//! `InsufficientBalance` (reason 17); after each command the core hands the book's
//! events to [`peregrine_ledger::Ledger::settle`], which moves fills and releases cancels.
//!
//! Units: a base asset's smallest unit is the instrument's quantity unit, a quote
//! asset's is `price unit × quantity unit`. The config check enforces it
//! (`base.decimals == qty_decimals`, `quote.decimals == price_decimals +
//! qty_decimals`), so nothing is rescaled on the order path.

mod admin;
mod config;
mod hash;
mod stage;

pub use admin::{apply_admin, AdminCommand, AdminKind, AdminPolicy, AdminReason};
pub use config::{check, AssetConfig, BalanceInputs, BalanceSetup, BalancesConfig, InitialBalance};
pub use hash::{saturate, state_hash_with};
pub use stage::{Balances, VenueEngine};

#[cfg(test)]
mod tests;
