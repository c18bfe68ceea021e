//! Where an engine's shared-memory files live.
//!
//! One directory per engine (default `/dev/shm/peregrine-<engine name>/`), holding per
//! strategy `<strategy>.submit` (strategy → engine ring of [`Request`](crate::Request))
//! and `<strategy>.return` (engine → strategy ring of [`Event`](crate::Event)), plus the
//! engine's control socket `control.sock`, its process id and start time
//! `engine.pid`, and per strategy declared dead the reason, `<strategy>.dead`.

use std::path::{Path, PathBuf};

/// The default directory of the engine called `engine`.
pub fn default_dir(engine: &str) -> PathBuf {
    PathBuf::from(format!("/dev/shm/peregrine-{engine}"))
}

/// The submit ring of `strategy`.
pub fn submit_ring(dir: &Path, strategy: &str) -> PathBuf {
    dir.join(format!("{strategy}.submit"))
}

/// The return ring of `strategy`.
pub fn return_ring(dir: &Path, strategy: &str) -> PathBuf {
    dir.join(format!("{strategy}.return"))
}

/// The engine's doorbell ([`crate::doorbell`]): strategies ring it after a push so an
/// idle orchestrator sleeps instead of polling.
pub fn doorbell(dir: &Path) -> PathBuf {
    dir.join("doorbell")
}

/// The engine's control socket.
pub fn control_socket(dir: &Path) -> PathBuf {
    dir.join("control.sock")
}

/// The engine's process id and start time (`<pid> <start>`; the start is field 22 of
/// `/proc/<pid>/stat`, clock ticks since boot), written at start, removed at exit.
pub fn engine_pid(dir: &Path) -> PathBuf {
    dir.join("engine.pid")
}

/// Why the engine declared `strategy` dead (one line), written when it unlinks the
/// strategy's rings.
pub fn dead_note(dir: &Path, strategy: &str) -> PathBuf {
    dir.join(format!("{strategy}.dead"))
}

/// The start time of process `pid` (field 22 of `/proc/<pid>/stat`), if it runs and
/// is not a zombie.
pub fn process_start(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The fields after the parenthesised command name: state is field 3.
    let (_, rest) = stat.rsplit_once(')')?;
    let mut fields = rest.split_whitespace();
    let state = fields.next()?;
    if state == "Z" || state == "X" {
        return None;
    }
    // Field 22 is the 20th after the state (field 3).
    fields.nth(18)?.parse().ok()
}
