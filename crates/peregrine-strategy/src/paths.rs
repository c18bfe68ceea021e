//! Where an engine's shared-memory files live.
//!
//! One directory per engine (default `/dev/shm/peregrine-<engine name>/`), holding per
//! strategy `<strategy>.submit` (strategy → engine ring of [`Request`](crate::Request))
//! and `<strategy>.return` (engine → strategy ring of [`Event`](crate::Event)), plus the
//! engine's control socket `control.sock`.

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

/// The engine's control socket.
pub fn control_socket(dir: &Path) -> PathBuf {
    dir.join("control.sock")
}
