//! Thread pinning.
//!
//! Trap (shared/FACTS.md): `core_affinity::get_core_ids()` returns only the cores the
//! *calling thread* may run on. Called from a thread that is already pinned it returns
//! that one core, and every thread ends up on it. So call [`available_cores`] once, on
//! the main thread before pinning anything, and hand the list to the threads.

pub use core_affinity::CoreId;

/// The cores the calling thread may use. Call once, before any pinning.
pub fn available_cores() -> Vec<CoreId> {
    core_affinity::get_core_ids().unwrap_or_default()
}

/// What happened when a thread asked to be pinned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PinOutcome {
    /// The thread's name.
    pub thread: String,
    /// The core asked for, if pinning was requested and a core was available.
    pub core: Option<usize>,
    /// Whether the OS accepted the pin.
    pub pinned: bool,
}

impl PinOutcome {
    /// One line for logs, loud on failure.
    pub fn describe(&self) -> String {
        match (self.core, self.pinned) {
            (Some(core), true) => format!("{}: pinned to core {core}", self.thread),
            (Some(core), false) => format!("{}: PIN TO CORE {core} FAILED", self.thread),
            (None, _) => format!("{}: not pinned", self.thread),
        }
    }
}

/// Pins the calling thread to `core` (if any) and reports the outcome.
pub fn pin_current(thread: &str, core: Option<CoreId>) -> PinOutcome {
    let pinned = core.is_some_and(core_affinity::set_for_current);
    PinOutcome {
        thread: thread.to_owned(),
        core: core.map(|c| c.id),
        pinned,
    }
}

/// A warning when `spinning` threads that never sleep exceed `cores`: they will steal
/// each other's time slices and the latency tail measures the scheduler.
pub fn spinner_warning(spinning: usize, cores: usize) -> Option<String> {
    (spinning > cores).then(|| {
        format!(
            "{spinning} polling threads that never sleep share {cores} cores: \
             latencies include scheduler time slices; results are NOT COMPARABLE \
             with a machine that has a core per thread"
        )
    })
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn warns_only_when_oversubscribed() {
        assert!(spinner_warning(2, 2).is_none());
        assert!(spinner_warning(3, 2).unwrap().contains("NOT COMPARABLE"));
    }

    #[test]
    #[cfg_attr(miri, ignore = "sched_setaffinity is a foreign call")]
    fn pins_on_a_fresh_thread() {
        let cores = available_cores();
        let first = cores.first().copied();
        let outcome = std::thread::spawn(move || pin_current("t", first))
            .join()
            .unwrap();
        assert_eq!(outcome.pinned, first.is_some());
        assert!(pin_current("u", None).describe().contains("not pinned"));
    }
}
