//! `peregrine up --python FILE`: one Python strategy (docs/python.md) beside the Rust
//! ones, as its own process over its rings, trading on the simulated venue under the
//! name [`NAME`]. The file is the one `peregrine replay --python FILE` replays: its
//! `peregrine.main(...)` reads the command line given here.

use std::path::{Path, PathBuf};

/// Its name in the engine config, the process list and the summary.
pub(super) const NAME: &str = "py";

/// The engine config section that gives it rings, limits and the simulated market's
/// book (venue `sim`, instrument 1), appended to the engine config of the run.
pub(super) const ENGINE_SECTION: &str = r#"
# The Python strategy of `peregrine up --python FILE` (docs/python.md).
[[strategies]]
name = "py"
subscribe = [{ venue = "sim", instrument = 1 }]
[strategies.limits]
max_order_qty = 10
max_position = 30
max_open_orders = 20
max_orders_per_sec = 1000
price_collar = 500
"#;

/// The Python strategy of a run: its file and the interpreter that runs it.
#[derive(Debug, Clone)]
pub(super) struct PythonStrategy {
    pub file: PathBuf,
    pub interpreter: PathBuf,
}

impl PythonStrategy {
    /// The interpreter's arguments: the file, attached to the engine in `shm`, parked
    /// when idle like the Rust strategies of `up`.
    pub(super) fn args(&self, shm: &Path) -> Vec<String> {
        vec![
            super::path_arg(&self.file),
            "--name".into(),
            NAME.into(),
            "--dir".into(),
            super::path_arg(shm),
            "--wait".into(),
            "park".into(),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_section_is_a_strategy_of_an_engine_config() {
        let base = r#"
name = "up-test"
shm_dir = "/dev/shm/up-test"
instruments = [1]
[orchestrator]
wait = "park"
[[venues]]
name = "sim"
thread = { wait = "park" }
sim = { delay_lo_ns = 20000, delay_hi_ns = 200000, model = { kind = "market" }, seed = 7 }
"#;
        let text = format!("{base}{ENGINE_SECTION}");
        let cfg = peregrine_engine::config::EngineConfig::from_toml(&text, Path::new("e.toml"))
            .expect("a valid engine config");
        let names: Vec<_> = cfg.strategies.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, [NAME]);
    }

    #[test]
    fn the_file_runs_attached_by_name_and_directory() {
        let p = PythonStrategy {
            file: "/x/joiner.py".into(),
            interpreter: "python3".into(),
        };
        assert_eq!(
            p.args(Path::new("/dev/shm/run")),
            [
                "/x/joiner.py",
                "--name",
                "py",
                "--dir",
                "/dev/shm/run",
                "--wait",
                "park"
            ]
        );
    }
}
