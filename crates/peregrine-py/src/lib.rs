//! `peregrine._native`: the native half of the `peregrine` Python package
//! (`python/peregrine/__init__.py` is the other): Python strategies over the order
//! engine's shared-memory rings (`live.rs`), and replays of recorded markets with a
//! Python strategy attached (`replay.rs`). docs/python.md.
#![deny(unsafe_code)]

mod adapter;
#[allow(
    unsafe_code,
    reason = "the Api is lent to Python for one callback by pointer"
)]
mod api;
mod live;
mod replay;
mod types;

use pyo3::prelude::*;

/// The module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<api::PyApi>()?;
    m.add_class::<api::PyOrder>()?;
    m.add_class::<types::PyEvent>()?;
    m.add_class::<types::PyBook>()?;
    m.add_class::<types::PyLevel>()?;
    m.add_class::<types::PyTrade>()?;
    m.add_function(wrap_pyfunction!(live::run, m)?)?;
    m.add_function(wrap_pyfunction!(replay::replay, m)?)?;
    Ok(())
}
