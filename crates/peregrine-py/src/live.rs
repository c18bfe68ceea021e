//! `peregrine.run`: a Python strategy against a running engine, through the SDK's
//! runner (attach to the strategy's rings, heartbeats, receipts, market data, the
//! wait strategy), exactly as a Rust strategy runs. The runner runs with the
//! interpreter released ([`Python::detach`]); callbacks attach to it per event or
//! per batch ([`crate::adapter`]). SIGINT and SIGTERM stop the run (the runner then
//! returns its summary, as `peregrine up` expects of a strategy it stops).

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use peregrine_queue::WaitStrategy;
use peregrine_strategy::{paths, run as run_strategy, RunnerConfig};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::adapter::{Mode, PyStrategy};

pub(crate) fn parse_mode(mode: &str) -> PyResult<Mode> {
    match mode {
        "batched" => Ok(Mode::Batched),
        "per_event" => Ok(Mode::PerEvent),
        other => Err(PyValueError::new_err(format!(
            "mode {other:?}: batched or per_event"
        ))),
    }
}

/// Runs `strategy` until it is finished, `duration` seconds have passed, or SIGINT /
/// SIGTERM; returns the runner's summary as a dict. Re-raises the first exception a
/// callback raised (after the runner stopped).
#[pyfunction]
#[pyo3(signature = (strategy, *, name, engine = "main", dir = None, mode = "batched", wait = "spin-yield", duration = None, receipts = true, core = None, attach_timeout = 5.0))]
#[allow(clippy::too_many_arguments, reason = "Python keyword arguments")]
pub(crate) fn run<'py>(
    py: Python<'py>,
    strategy: Py<PyAny>,
    name: &str,
    engine: &str,
    dir: Option<PathBuf>,
    mode: &str,
    wait: &str,
    duration: Option<f64>,
    receipts: bool,
    core: Option<usize>,
    attach_timeout: f64,
) -> PyResult<Bound<'py, PyDict>> {
    let mut cfg = RunnerConfig::new(dir.unwrap_or_else(|| paths::default_dir(engine)), name);
    cfg.wait = wait
        .parse::<WaitStrategy>()
        .map_err(|e| PyValueError::new_err(format!("wait {wait:?}: {e}")))?;
    cfg.duration = duration.map(Duration::from_secs_f64);
    cfg.receipts = receipts;
    cfg.attach_timeout = Duration::from_secs_f64(attach_timeout.max(0.0));
    let mut adapter = PyStrategy::new(py, strategy, parse_mode(mode)?)?;
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, Arc::clone(&stop))
            .map_err(|e| PyRuntimeError::new_err(format!("signal handler: {e}")))?;
    }
    if let Some(c) = core {
        let cores = peregrine_queue::available_cores();
        let id = cores.get(c).copied();
        eprintln!("{}", peregrine_queue::pin_current(name, id).describe());
    }
    let summary = py
        .detach(|| run_strategy(&mut adapter, &cfg, &stop))
        .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    if let Some(e) = adapter.error.take() {
        return Err(e);
    }
    let d = PyDict::new(py);
    let e = &summary.events;
    d.set_item("acks", e[0])?;
    d.set_item("rejects", e[1])?;
    d.set_item("fills", e[2])?;
    d.set_item("cancelled", e[3])?;
    d.set_item("cancel_rejects", e[4])?;
    d.set_item("replaced", e[6])?;
    d.set_item("replace_rejects", e[7])?;
    d.set_item("sent", summary.sent)?;
    d.set_item("ring_full", summary.full)?;
    d.set_item("books", summary.books)?;
    d.set_item("trades", summary.trades)?;
    d.set_item("detached", summary.detached)?;
    d.set_item("python_calls", adapter.calls)?;
    d.set_item("gil_acquisitions", adapter.attaches)?;
    let rt = &summary.round_trip;
    d.set_item("round_trip_n", rt.len())?;
    for (k, q) in [
        ("round_trip_p50_ns", 0.5),
        ("round_trip_p99_ns", 0.99),
        ("round_trip_p999_ns", 0.999),
    ] {
        d.set_item(k, rt.value_at_quantile(q))?;
    }
    d.set_item("round_trip_max_ns", rt.max())?;
    d.set_item("summary", summary.render())?;
    Ok(d)
}
