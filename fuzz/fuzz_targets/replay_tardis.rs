//! Tardis CSV decoder (`peregrine_replay::data::tardis`): the input split into a book
//! file and a trades file at its first NUL byte; never panics. On stable:
//! `prop_tardis_never_panics`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use peregrine_replay::data::tardis::{infer_units, TardisL2};
use peregrine_replay::data::{Source, Units};

fuzz_target!(|data: &[u8]| {
    let (book, trades) = match data.iter().position(|b| *b == 0) {
        Some(i) => (&data[..i], Some(&data[i + 1..])),
        None => (data, None),
    };
    let mut units = Units { price_decimals: 0, qty_decimals: 0 };
    let _ = infer_units(book, &mut units);
    let units = Units { price_decimals: units.price_decimals.min(18), qty_decimals: units.qty_decimals.min(18) };
    let mut s = TardisL2::new(book, trades, units);
    while let Ok(Some(_)) = s.next_msg() {}
});
