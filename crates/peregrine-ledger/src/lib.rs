//! Balances for the exchange, as the matching core's pre-match and post-match stages.
//!
//! Each account holds, per asset, an `available` and a `reserved` amount (`i128`, in the
//! asset's smallest unit). An instrument names a base and a quote asset
//! ([`InstrumentAssets`], resolved once at load, no strings on the order path). Units:
//! base amounts are in the instrument's quantity units; quote amounts are in
//! `price unit × quantity unit` (exactly what `Price::notional(Qty)` gives), so no
//! scaling happens on the order path.
//!
//! * **Pre-match** ([`Ledger`] implements [`peregrine_book::PreMatch`]): a buy reserves
//!   `price × qty` of quote (a market buy reserves at its protection price), a sell
//!   reserves `qty` of base; not enough available → `InsufficientBalance`. A replace is
//!   checked for the extra it needs.
//! * **Post-match** ([`Ledger::settle`]): reads the events the book emitted for the
//!   command and moves money: a fill moves the buyer's reserved quote and the seller's
//!   reserved base to the counterparties' available balances, and releases any price
//!   improvement the buyer had reserved; cancels, expiries, IOC/FOK remainders, STP
//!   decrements and book rejects release what the order still held; a replace adjusts
//!   the reservation to its new price and quantity.
//! * **Admin**: [`Ledger::deposit`] and [`Ledger::withdraw`] (never from reserved funds).
//!
//! Invariant (property-tested over random command streams): per asset, the sum over
//! accounts of available + reserved equals deposits − withdrawals, and no balance is ever
//! negative.
#![deny(unsafe_code)]

mod balances;
pub mod fees;
mod ledger;

pub use balances::{AssetId, Balance};
pub use fees::{FeeState, Fees};
#[cfg(feature = "sabotage")]
pub use ledger::sabotage;
pub use ledger::{HoldState, InstrumentAssets, Ledger, LedgerError, LedgerState};
