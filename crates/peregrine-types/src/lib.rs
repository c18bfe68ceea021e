//! Domain types shared by every Peregrine crate.
//!
//! Money is integer fixed point. A [`Price`] is an `i64` count of the instrument's
//! price unit (`10^-price_decimals` of the quote asset) and a [`Qty`] an `i64` count of
//! its quantity unit (`10^-qty_decimals` of the base asset). The instrument's
//! [`InstrumentSpec`] says which multiples are legal (tick size, lot size). Products of
//! price and quantity ([`Notional`]) are computed in `i128`, so they cannot overflow, and
//! every narrowing conversion is checked. Decimal text converts to and from these units
//! exactly ([`decimal`]); there is no `f64` anywhere on the trade path.
//!
//! Nothing here allocates after construction and every type on the order path is `Copy`.
#![deny(unsafe_code)]

pub mod conditional;
pub mod decimal;
pub mod error;
pub mod ids;
pub mod instrument;
pub mod lock;
pub mod order;
pub mod price;
pub mod qty;
pub mod rng;
pub mod rules;
pub mod side;
pub mod stamp;
pub mod utc;

pub use conditional::{AuctionKind, ListKind, OrderExt, TradingPhase, TrailUnit, TriggerKind};
pub use decimal::DecimalError;
pub use error::TypeError;
pub use ids::{wall_ns, AccountId, ClientOrderId, InstrumentId, OrderId, Timestamp};
pub use instrument::{InstrumentSpec, InstrumentStatus, SpecError};
pub use order::{OrderType, StpMode, TimeInForce};
pub use price::{Notional, Price};
pub use qty::Qty;
pub use rng::Rng;
pub use rules::{FeeSchedule, FeeTier, Schedule, TimeOfDay, VolatilityRule};
pub use side::Side;
pub use utc::Utc;
