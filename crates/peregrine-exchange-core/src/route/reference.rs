//! Reference data on the wire: the `InstrumentDefinition` of each configured
//! instrument, sent after every login and on request on the recovery channel
//! (protocol document, sections 4.8 and 6). One place builds it for both.

use peregrine_types::{InstrumentSpec, InstrumentStatus, Price, Qty, Timestamp};
use peregrine_wire::field::Symbol;
use peregrine_wire::v2::reference::InstrumentDefinition;

use crate::balances::AssetConfig;

/// The definitions of `specs` (asset ids from `assets`; 0 without balances), engine
/// position left 0 (filled in when sent). An instrument whose symbol the wire cannot
/// carry (1 to 16 printable ASCII characters) is left out, with a warning.
pub fn definitions(specs: &[InstrumentSpec], assets: &[AssetConfig]) -> Vec<InstrumentDefinition> {
    specs.iter().filter_map(|s| definition(s, assets)).collect()
}

/// The definition of one instrument (see [`definitions`]).
pub fn definition(spec: &InstrumentSpec, assets: &[AssetConfig]) -> Option<InstrumentDefinition> {
    let asset = |symbol: &Option<String>| {
        symbol
            .as_ref()
            .and_then(|s| assets.iter().find(|a| &a.symbol == s))
            .map_or(0, |a| a.id)
    };
    let Some(symbol) = Symbol::new(&spec.symbol) else {
        log::warn!(
            "instrument {}: symbol {:?} is not 1..=16 printable ASCII characters; \
             it is left out of the instrument definitions",
            spec.id,
            spec.symbol
        );
        return None;
    };
    Some(InstrumentDefinition {
        session_seq: 0,
        engine_seq: 0,
        engine_time: Timestamp(0),
        tick_size: Price::from_raw(spec.tick_size),
        lot_size: Qty::from_raw(spec.lot_size),
        min_qty: Qty::from_raw(spec.min_qty),
        max_qty: Qty::from_raw(spec.max_qty),
        reference_price: Price::from_raw(spec.reference_price),
        band: Price::from_raw(spec.band),
        symbol,
        instrument: spec.id,
        base_asset: asset(&spec.base),
        quote_asset: asset(&spec.quote),
        price_decimals: u8::try_from(spec.price_decimals).unwrap_or(u8::MAX),
        qty_decimals: u8::try_from(spec.qty_decimals).unwrap_or(u8::MAX),
        status: spec.status,
    })
}

/// `def` as sent now: the engine's position and the instrument's current trading
/// status (a halt after the start shows).
pub fn stamped(
    def: &InstrumentDefinition,
    engine_seq: u64,
    engine_time: Timestamp,
    status: Option<InstrumentStatus>,
) -> InstrumentDefinition {
    InstrumentDefinition {
        engine_seq,
        engine_time,
        status: status.unwrap_or(def.status),
        ..*def
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use peregrine_types::InstrumentId;

    #[test]
    fn a_definition_names_its_assets_and_a_bad_symbol_is_left_out() {
        let mut spec = InstrumentSpec::example(3);
        spec.base = Some("PGN".into());
        spec.quote = Some("USD".into());
        let assets = [
            AssetConfig {
                id: 1,
                symbol: "USD".into(),
                decimals: 2,
            },
            AssetConfig {
                id: 2,
                symbol: "PGN".into(),
                decimals: 0,
            },
        ];
        let d = definition(&spec, &assets).unwrap();
        assert_eq!(
            (d.instrument, d.base_asset, d.quote_asset),
            (InstrumentId(3), 2, 1)
        );
        assert_eq!(d.symbol.as_str(), spec.symbol);
        let halted = stamped(&d, 7, Timestamp(9), Some(InstrumentStatus::Halted));
        assert_eq!(
            (halted.engine_seq, halted.status),
            (7, InstrumentStatus::Halted)
        );
        spec.symbol = "HAS SPACE".into();
        assert!(definitions(&[spec], &assets).is_empty());
    }
}
