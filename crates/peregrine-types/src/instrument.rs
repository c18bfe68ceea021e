//! Instrument specification: grids, limits, band and trading status.

use serde::{Deserialize, Serialize};

use crate::decimal;
pub use crate::error::SpecError;
use crate::rules::{FeeSchedule, Schedule, VolatilityRule};
use crate::{InstrumentId, Price, Qty};

/// Whether an instrument accepts new orders.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InstrumentStatus {
    /// Trading.
    Active,
    /// No new orders or replaces; cancels are still accepted.
    Halted,
}

/// Everything the matching core needs to know about an instrument.
///
/// Prices are in units of `10^-price_decimals` quote, quantities in units of
/// `10^-qty_decimals` base. The band is `[reference - band, reference + band]`,
/// inclusive, in price units.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InstrumentSpec {
    /// Dense id.
    pub id: InstrumentId,
    /// Human name, for config and reports only.
    pub symbol: String,
    /// Decimals of the price unit.
    pub price_decimals: u32,
    /// Decimals of the quantity unit.
    pub qty_decimals: u32,
    /// Legal prices are multiples of this many price units.
    pub tick_size: i64,
    /// Legal quantities are multiples of this many quantity units.
    pub lot_size: i64,
    /// Smallest order quantity.
    pub min_qty: i64,
    /// Largest order quantity.
    pub max_qty: i64,
    /// Centre of the price band.
    pub reference_price: i64,
    /// Half-width of the price band, in price units.
    pub band: i64,
    /// Trading status.
    pub status: InstrumentStatus,
    /// Symbol of the base asset (what is bought and sold), for an exchange with
    /// balances; resolved to an asset id when the config loads. Optional.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
    /// Symbol of the quote asset (what prices are paid in), as `base`. Optional.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quote: Option<String>,
    /// The dynamic price band that starts volatility auctions. Default: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volatility: Option<VolatilityRule>,
    /// The daily opening and closing auctions. Default: none (continuous all day).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<Schedule>,
    /// Maker and taker fees with volume tiers. Default: none (no fees).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fees: Option<FeeSchedule>,
}

impl InstrumentSpec {
    /// A spec for tests and demos: 2 price decimals, tick 1, lot 1, qty 1..=1_000_000,
    /// reference 10_000 (100.00) with a band of ±5_000.
    pub fn example(id: u32) -> InstrumentSpec {
        InstrumentSpec {
            id: InstrumentId(id),
            symbol: format!("TEST{id}"),
            price_decimals: 2,
            qty_decimals: 0,
            tick_size: 1,
            lot_size: 1,
            min_qty: 1,
            max_qty: 1_000_000,
            reference_price: 10_000,
            band: 5_000,
            status: InstrumentStatus::Active,
            base: None,
            quote: None,
            volatility: None,
            schedule: None,
            fees: None,
        }
    }

    /// Checks the spec's own consistency, reporting the first problem.
    pub fn validate(&self) -> Result<(), SpecError> {
        if self.tick_size <= 0 {
            return Err(SpecError::Invalid("tick_size must be positive"));
        }
        if self.lot_size <= 0 {
            return Err(SpecError::Invalid("lot_size must be positive"));
        }
        if self.min_qty <= 0 || self.max_qty < self.min_qty {
            return Err(SpecError::Invalid("need 0 < min_qty <= max_qty"));
        }
        if self.band < 0 || self.reference_price <= 0 {
            return Err(SpecError::Invalid("need reference_price > 0 and band >= 0"));
        }
        if self.price_decimals > decimal::MAX_DECIMALS || self.qty_decimals > decimal::MAX_DECIMALS
        {
            return Err(SpecError::Invalid("at most 18 decimals"));
        }
        if self.reference_price.checked_add(self.band).is_none() {
            return Err(SpecError::Invalid("reference_price + band overflows"));
        }
        crate::rules::validate(
            self.volatility.as_ref(),
            self.schedule.as_ref(),
            self.fees.as_ref(),
            self.price_decimals + self.qty_decimals,
        )
    }

    /// Lowest price inside the band (at least one tick).
    pub fn band_low(&self) -> i64 {
        (self.reference_price - self.band).max(self.tick_size)
    }

    /// Highest price inside the band.
    pub fn band_high(&self) -> i64 {
        self.reference_price.saturating_add(self.band)
    }

    /// Checks a price against the tick grid and band.
    #[inline]
    pub fn check_price(&self, price: Price) -> Result<(), SpecError> {
        let p = price.units();
        // The common tick of 1 skips the division (~20-40 cycles) on every order.
        if self.tick_size != 1 && p % self.tick_size != 0 {
            return Err(SpecError::PriceOffTick);
        }
        if p < self.band_low() || p > self.band_high() {
            return Err(SpecError::PriceOutOfBand);
        }
        Ok(())
    }

    /// Checks a quantity against the lot grid and the limits.
    #[inline]
    pub fn check_qty(&self, qty: Qty) -> Result<(), SpecError> {
        let q = qty.lots();
        if self.lot_size != 1 && q % self.lot_size != 0 {
            return Err(SpecError::QtyOffLot);
        }
        if q < self.min_qty {
            return Err(SpecError::QtyBelowMin);
        }
        if q > self.max_qty {
            return Err(SpecError::QtyAboveMax);
        }
        Ok(())
    }

    /// Converts decimal text to a price, exactly, and checks it against the grid and
    /// band. Off-grid text (`"100.005"` at 2 decimals, or 100.03 with a 0.05 tick) is
    /// an error.
    pub fn parse_price(&self, text: &str) -> Result<Price, SpecError> {
        let units = decimal::parse_scaled(text, self.price_decimals)?;
        let price = Price::new(units).map_err(|_| SpecError::PriceOutOfBand)?;
        self.check_price(price)?;
        Ok(price)
    }

    /// Converts decimal text to a quantity, exactly, and checks it.
    pub fn parse_qty(&self, text: &str) -> Result<Qty, SpecError> {
        let units = decimal::parse_scaled(text, self.qty_decimals)?;
        let qty = Qty::new(units).map_err(|_| SpecError::QtyBelowMin)?;
        self.check_qty(qty)?;
        Ok(qty)
    }

    /// Formats a price as decimal text.
    pub fn format_price(&self, price: Price) -> String {
        decimal::format_scaled(price.units(), self.price_decimals)
    }

    /// Formats a quantity as decimal text.
    pub fn format_qty(&self, qty: Qty) -> String {
        decimal::format_scaled(qty.lots(), self.qty_decimals)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> InstrumentSpec {
        InstrumentSpec {
            tick_size: 5,
            lot_size: 10,
            min_qty: 10,
            max_qty: 1000,
            ..InstrumentSpec::example(1)
        }
    }

    #[test]
    fn example_is_valid() {
        assert_eq!(InstrumentSpec::example(3).validate(), Ok(()));
    }

    #[test]
    fn price_grid_and_band() {
        let s = spec();
        assert_eq!(s.check_price(Price::new(10_005).unwrap()), Ok(()));
        assert_eq!(
            s.check_price(Price::new(10_003).unwrap()),
            Err(SpecError::PriceOffTick)
        );
        assert_eq!(
            s.check_price(Price::new(15_005).unwrap()),
            Err(SpecError::PriceOutOfBand)
        );
        assert_eq!(
            s.check_price(Price::new(4_995).unwrap()),
            Err(SpecError::PriceOutOfBand)
        );
        assert_eq!(s.check_price(Price::new(5_000).unwrap()), Ok(()));
    }

    #[test]
    fn qty_grid_and_limits() {
        let s = spec();
        assert_eq!(s.check_qty(Qty::new(20).unwrap()), Ok(()));
        assert_eq!(
            s.check_qty(Qty::new(25).unwrap()),
            Err(SpecError::QtyOffLot)
        );
        assert_eq!(
            s.check_qty(Qty::new(1010).unwrap()),
            Err(SpecError::QtyAboveMax)
        );
        let s2 = InstrumentSpec {
            min_qty: 30,
            ..spec()
        };
        assert_eq!(
            s2.check_qty(Qty::new(20).unwrap()),
            Err(SpecError::QtyBelowMin)
        );
    }

    #[test]
    fn decimal_text_is_exact() {
        let s = spec();
        assert_eq!(s.parse_price("100.05").unwrap().units(), 10_005);
        assert_eq!(s.parse_price("100.03"), Err(SpecError::PriceOffTick));
        assert!(matches!(
            s.parse_price("100.051"),
            Err(SpecError::Decimal(_))
        ));
        assert_eq!(s.format_price(Price::new(10_005).unwrap()), "100.05");
    }

    #[test]
    fn invalid_specs_are_reported() {
        assert!(InstrumentSpec {
            tick_size: 0,
            ..spec()
        }
        .validate()
        .is_err());
        assert!(InstrumentSpec {
            lot_size: -1,
            ..spec()
        }
        .validate()
        .is_err());
        assert!(InstrumentSpec {
            min_qty: 0,
            ..spec()
        }
        .validate()
        .is_err());
        assert!(InstrumentSpec {
            max_qty: 1,
            ..spec()
        }
        .validate()
        .is_err());
        assert!(InstrumentSpec { band: -1, ..spec() }.validate().is_err());
        assert!(InstrumentSpec {
            reference_price: i64::MAX,
            band: 1,
            ..spec()
        }
        .validate()
        .is_err());
    }
}
