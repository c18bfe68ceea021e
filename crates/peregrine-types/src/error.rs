//! Errors raised when constructing or combining domain values.

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
