//! Fixed-point quantity.

use serde::{Deserialize, Serialize};

use crate::TypeError;

/// A quantity in the instrument's quantity unit (`10^-qty_decimals` of the base asset).
///
/// Built through [`Qty::new`] it is strictly positive; [`Qty::ZERO`] exists for
/// remaining/filled counters. Arithmetic is checked or saturating by name.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[repr(transparent)]
pub struct Qty(i64);

impl Qty {
    /// Zero, for counters.
    pub const ZERO: Qty = Qty(0);

    /// A checked constructor: the value must be strictly positive.
    #[inline]
    pub const fn new(lots: i64) -> Result<Qty, TypeError> {
        if lots > 0 {
            Ok(Qty(lots))
        } else {
            Err(TypeError::NonPositiveQty(lots))
        }
    }

    /// Wraps a raw value without checks (validated earlier, or a counter).
    #[inline]
    pub const fn from_raw(lots: i64) -> Qty {
        Qty(lots)
    }

    /// The raw count of quantity units.
    #[inline]
    pub const fn lots(self) -> i64 {
        self.0
    }

    /// True for zero.
    #[inline]
    pub const fn is_zero(self) -> bool {
        self.0 == 0
    }

    /// The smaller of two quantities.
    #[inline]
    pub fn min(self, other: Qty) -> Qty {
        if self.0 <= other.0 {
            self
        } else {
            other
        }
    }

    /// Checked sum.
    #[inline]
    pub fn checked_add(self, other: Qty) -> Result<Qty, TypeError> {
        self.0
            .checked_add(other.0)
            .map(Qty)
            .ok_or(TypeError::Overflow)
    }

    /// Checked difference; negative results are an error.
    #[inline]
    pub fn checked_sub(self, other: Qty) -> Result<Qty, TypeError> {
        match self.0.checked_sub(other.0) {
            Some(v) if v >= 0 => Ok(Qty(v)),
            _ => Err(TypeError::Overflow),
        }
    }
}

impl core::fmt::Display for Qty {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constructor_and_arithmetic() {
        assert_eq!(Qty::new(0), Err(TypeError::NonPositiveQty(0)));
        assert_eq!(Qty::new(-1), Err(TypeError::NonPositiveQty(-1)));
        let a = Qty::new(5).unwrap();
        let b = Qty::new(3).unwrap();
        assert_eq!(a.checked_sub(b).unwrap().lots(), 2);
        assert_eq!(b.checked_sub(a), Err(TypeError::Overflow));
        assert_eq!(
            Qty::from_raw(i64::MAX).checked_add(b),
            Err(TypeError::Overflow)
        );
        assert_eq!(a.min(b), b);
        assert!(Qty::ZERO.is_zero());
    }
}
