//! Driving a real `peregrine engine` process: the binary, child handles killed on
//! drop, and the engine's control commands.

use std::path::Path;
use std::process::{Child, Command, Output};

/// The `peregrine` binary under test.
pub fn peregrine() -> Command {
    Command::new(env!("CARGO_BIN_EXE_peregrine"))
}

/// Kills (SIGKILL) and reaps the child on drop.
pub struct Kid(pub Child);

impl Drop for Kid {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `peregrine engine --dir SHM ARGS...`.
pub fn cli(shm: &Path, args: &[&str]) -> Output {
    peregrine()
        .arg("engine")
        .arg("--dir")
        .arg(shm)
        .args(args)
        .output()
        .unwrap()
}

/// `peregrine engine stats` of the engine at `shm`; fails the test if it fails.
pub fn stats(shm: &Path) -> String {
    let out = cli(shm, &["stats"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}
