//! Fixed-point price and notional.

use serde::{Deserialize, Serialize};

use crate::{Qty, TypeError};

/// A price in the instrument's price unit (`10^-price_decimals` of the quote asset).
///
/// Always strictly positive when built through [`Price::new`]. Whether it sits on
/// the instrument's tick grid is the instrument's business ([`crate::InstrumentSpec`]).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[repr(transparent)]
pub struct Price(i64);

impl Price {
    /// The largest representable price.
    pub const MAX: Price = Price(i64::MAX);

    /// A checked constructor: the value must be strictly positive.
    #[inline]
    pub const fn new(units: i64) -> Result<Price, TypeError> {
        if units > 0 {
            Ok(Price(units))
        } else {
            Err(TypeError::NonPositivePrice(units))
        }
    }

    /// Wraps a raw value without checks. For values that were validated before (for
    /// example decoded and checked at the edge) and for sentinels.
    #[inline]
    pub const fn from_raw(units: i64) -> Price {
        Price(units)
    }

    /// The raw count of price units.
    #[inline]
    pub const fn units(self) -> i64 {
        self.0
    }

    /// Price × quantity, exact, in `price unit × qty unit`.
    #[inline]
    pub const fn notional(self, qty: Qty) -> Notional {
        Notional(self.0 as i128 * qty.lots() as i128)
    }

    /// `self + ticks` with overflow checked.
    #[inline]
    pub fn checked_add(self, units: i64) -> Result<Price, TypeError> {
        self.0
            .checked_add(units)
            .map(Price)
            .ok_or(TypeError::Overflow)
    }

    /// `self - units` with overflow checked.
    #[inline]
    pub fn checked_sub(self, units: i64) -> Result<Price, TypeError> {
        self.0
            .checked_sub(units)
            .map(Price)
            .ok_or(TypeError::Overflow)
    }
}

impl core::fmt::Display for Price {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Price × quantity in `i128`: the product of two `i64` always fits, so building one
/// never fails; narrowing or accumulating is checked.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[repr(transparent)]
pub struct Notional(pub i128);

impl Notional {
    /// Zero.
    pub const ZERO: Notional = Notional(0);

    /// Checked sum.
    #[inline]
    pub fn checked_add(self, other: Notional) -> Result<Notional, TypeError> {
        self.0
            .checked_add(other.0)
            .map(Notional)
            .ok_or(TypeError::Overflow)
    }

    /// Checked difference.
    #[inline]
    pub fn checked_sub(self, other: Notional) -> Result<Notional, TypeError> {
        self.0
            .checked_sub(other.0)
            .map(Notional)
            .ok_or(TypeError::Overflow)
    }

    /// Narrows to `i64`, failing when out of range.
    #[inline]
    pub fn to_i64(self) -> Result<i64, TypeError> {
        i64::try_from(self.0).map_err(|_| TypeError::Overflow)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn constructor_rejects_non_positive() {
        assert_eq!(Price::new(0), Err(TypeError::NonPositivePrice(0)));
        assert_eq!(Price::new(-5), Err(TypeError::NonPositivePrice(-5)));
        assert_eq!(Price::new(1).unwrap().units(), 1);
    }

    #[test]
    fn notional_of_extremes_is_exact() {
        let n = Price::MAX.notional(Qty::new(i64::MAX).unwrap());
        assert_eq!(n.0, i64::MAX as i128 * i64::MAX as i128);
        assert_eq!(n.to_i64(), Err(TypeError::Overflow));
        assert_eq!(
            Notional(i128::MAX).checked_add(Notional(1)),
            Err(TypeError::Overflow)
        );
    }

    #[test]
    fn checked_add_overflows_cleanly() {
        assert_eq!(Price::MAX.checked_add(1), Err(TypeError::Overflow));
        assert_eq!(Price::new(10).unwrap().checked_sub(3).unwrap().units(), 7);
    }

    proptest! {
        #[test]
        fn prop_notional_matches_i128(p in 1i64..=i64::MAX, q in 1i64..=i64::MAX) {
            let n = Price::new(p).unwrap().notional(Qty::new(q).unwrap());
            prop_assert_eq!(n.0, (p as i128) * (q as i128));
        }
    }
}
