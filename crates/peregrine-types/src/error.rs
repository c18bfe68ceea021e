//! Errors raised when constructing or combining domain values.

use crate::decimal::DecimalError;

/// A domain value could not be built or an arithmetic step would overflow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TypeError {
    /// A quantity must be strictly positive.
    #[error("quantity must be positive, got {0}")]
    NonPositiveQty(i64),
    /// A price must be strictly positive.
    #[error("price must be positive, got {0}")]
    NonPositivePrice(i64),
    /// An arithmetic step left the representable range.
    #[error("arithmetic overflow")]
    Overflow,
}

/// Why a price, quantity or spec is not acceptable for an instrument.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    /// Price is not a multiple of the tick size.
    #[error("price is not a multiple of the tick size")]
    PriceOffTick,
    /// Price is outside the band around the reference price.
    #[error("price is outside the allowed band")]
    PriceOutOfBand,
    /// Quantity is not a multiple of the lot size.
    #[error("quantity is not a multiple of the lot size")]
    QtyOffLot,
    /// Quantity below the instrument minimum.
    #[error("quantity is below the minimum")]
    QtyBelowMin,
    /// Quantity above the instrument maximum.
    #[error("quantity is above the maximum")]
    QtyAboveMax,
    /// Decimal text could not be converted.
    #[error("bad decimal: {0}")]
    Decimal(#[from] DecimalError),
    /// The spec itself is inconsistent.
    #[error("invalid instrument spec: {0}")]
    Invalid(&'static str),
}
