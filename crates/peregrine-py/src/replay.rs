//! `peregrine._native.replay`: a replay of recorded data (`peregrine-replay`) with a
//! Python strategy attached: the same [`PyStrategy`] the live runner drives, handed
//! to the replay's harness (its `Api` over a submit ring and a book board, in
//! simulated time). The interpreter stays attached throughout (the replay is one
//! thread of this process); an exception in a callback ends the replay and is
//! re-raised.

use std::path::PathBuf;

use peregrine_replay::attach::{deliver_through, Attached, Delivery, Harness};
use peregrine_replay::config::ReplayConfig;
use peregrine_replay::session::{self, SessionError};
use peregrine_strategy::msg::Request;
use peregrine_strategy::Strategy;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

use crate::adapter::{Mode, PyStrategy};

/// The Python strategy in a replay.
struct PyAttached {
    strategy: PyStrategy,
    harness: Harness,
}

impl Attached for PyAttached {
    fn deliver(&mut self, now: u64, d: Delivery<'_>, out: &mut Vec<Request>) -> Result<(), String> {
        deliver_through(&mut self.harness, &mut self.strategy, now, d, out);
        match &self.strategy.error {
            Some(e) => Err(e.to_string()),
            None => Ok(()),
        }
    }

    fn timer_interval_ns(&self) -> Option<u64> {
        self.strategy
            .has_timer()
            .then(|| self.strategy.timer_interval_ns())
    }

    fn finished(&self) -> bool {
        self.strategy.finished()
    }
}

fn runtime(e: impl std::fmt::Display) -> PyErr {
    PyRuntimeError::new_err(e.to_string())
}

/// Replays the data `config_json` describes (a `ReplayConfig` as JSON) with
/// `strategy` attached (or none); writes the JSON report to `json` and the plots into
/// `plots` when given; returns the report as JSON text and as the text the command
/// line prints.
#[pyfunction]
#[pyo3(signature = (strategy, config_json, *, json = None, plots = None))]
pub(crate) fn replay(
    py: Python<'_>,
    strategy: Option<Py<PyAny>>,
    config_json: &str,
    json: Option<PathBuf>,
    plots: Option<PathBuf>,
) -> PyResult<(String, String)> {
    let cfg: ReplayConfig = serde_json::from_str(config_json)
        .map_err(|e| PyValueError::new_err(format!("replay config: {e}")))?;
    let plan = session::plan(cfg.options().map_err(runtime)?).map_err(runtime)?;
    let mut attached = match strategy {
        Some(obj) => Some(PyAttached {
            strategy: PyStrategy::new(py, obj, Mode::PerEvent)?,
            harness: Harness::new(0, plan.spec.id).map_err(runtime)?,
        }),
        None => None,
    };
    let result = session::run(&plan, attached.as_mut().map(|a| a as &mut dyn Attached));
    let report = match result {
        Ok(r) => r,
        Err(SessionError::Replay(e)) => {
            if let Some(err) = attached.as_mut().and_then(|a| a.strategy.error.take()) {
                return Err(err);
            }
            return Err(runtime(e));
        }
        Err(e) => return Err(runtime(e)),
    };
    let text = serde_json::to_string_pretty(&report).map_err(runtime)?;
    if let Some(j) = &json {
        std::fs::write(j, &text).map_err(|e| runtime(format!("writing {}: {e}", j.display())))?;
    }
    if let Some(dir) = &plots {
        peregrine_replay::report::plot::write_all(&report, dir).map_err(runtime)?;
    }
    Ok((text, report.render()))
}
