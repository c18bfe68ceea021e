//! A child of `peregrine up` dies with it, whichever command it runs (so this lives
//! outside the `up` feature: an exchange-only build is still started by an `up` of a
//! full build in mixed setups, and the check costs nothing otherwise).

use rustix::process::{Pid, Signal};

/// Set by `peregrine up` in its children's environment: its own pid.
pub(crate) const PARENT_ENV: &str = "PEREGRINE_UP_PID";

/// In a child of `peregrine up` (the [`PARENT_ENV`] variable is set): asks the kernel
/// to send SIGTERM when `up` dies, even by `kill -9`, so no exchange, engine or
/// strategy outlives it; exits at once if `up` is already gone. Does nothing in a
/// process started any other way.
pub(crate) fn die_with_parent() {
    let Some(parent) = std::env::var(PARENT_ENV)
        .ok()
        .and_then(|p| p.parse::<i32>().ok())
    else {
        return;
    };
    let _ = rustix::process::set_parent_process_death_signal(Some(Signal::TERM));
    // If `up` died before the call above, this process was already re-parented.
    if rustix::process::getppid()
        .map(Pid::as_raw_nonzero)
        .map(|p| p.get())
        != Some(parent)
    {
        eprintln!("peregrine: the `peregrine up` that started this process is gone; exiting");
        std::process::exit(1);
    }
}
