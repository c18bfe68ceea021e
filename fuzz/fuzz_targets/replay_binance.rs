//! Binance raw stream decoder (`peregrine_replay::data::binance`): never panics,
//! whatever the lines (timestamps, JSON, numbers, update ids). On stable:
//! `prop_binance_never_panics`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use peregrine_replay::data::binance::{infer_units, BinanceL2};
use peregrine_replay::data::{Source, Units};

fuzz_target!(|data: &[u8]| {
    let _ = infer_units(data);
    let units = Units { price_decimals: 2, qty_decimals: 4 };
    let mut s = BinanceL2::new(data, units);
    while let Ok(Some(_)) = s.next_msg() {}
});
