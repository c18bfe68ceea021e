//! Driving a real `peregrine engine` process: the binary, child handles killed on
//! drop, and the engine's control commands.

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};

/// The `peregrine` binary under test.
pub(crate) fn peregrine() -> Command {
    Command::new(env!("CARGO_BIN_EXE_peregrine"))
}

/// Kills (SIGKILL) and reaps the child on drop.
pub(crate) struct Kid(pub Child);

impl Drop for Kid {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Whether the engine at `shm` answers on its control socket. The socket file
/// exists a moment before the engine accepts on it (a connect then is refused), so
/// tests wait for an answer, not for the file.
pub(crate) fn control_ready(shm: &Path) -> bool {
    cli(shm, &["stats"]).status.success()
}

/// `peregrine engine --dir SHM ARGS...`.
pub(crate) fn cli(shm: &Path, args: &[&str]) -> Output {
    peregrine()
        .arg("engine")
        .arg("--dir")
        .arg(shm)
        .args(args)
        .output()
        .unwrap()
}

/// `peregrine engine stats` of the engine at `shm`; fails the test if it fails.
pub(crate) fn stats(shm: &Path) -> String {
    let out = cli(shm, &["stats"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The strategies-table row of `name`: (state, open orders).
pub(crate) fn row(stats: &str, name: &str) -> (String, u64) {
    let f: Vec<&str> = stats
        .lines()
        .find(|l| {
            l.split_whitespace().next() == Some(name)
                && (l.contains(" false ") || l.contains(" true "))
        })
        .unwrap_or_else(|| panic!("no row {name} in\n{stats}"))
        .split_whitespace()
        .collect();
    (f[1].to_owned(), f[3].parse().unwrap())
}

/// Fills in the positions table for `name`.
pub(crate) fn fills(stats: &str, name: &str) -> u64 {
    stats
        .lines()
        .skip_while(|l| !l.starts_with("position"))
        .find(|l| l.starts_with(name))
        .and_then(|l| l.split_whitespace().nth(3))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// `name N` in a strategy's "events:" line.
pub(crate) fn event_count(out: &str, name: &str) -> u64 {
    let line = out
        .lines()
        .find(|l| l.starts_with("events:"))
        .unwrap_or_else(|| panic!("no events line in {out}"));
    let words: Vec<&str> = line.split_whitespace().collect();
    let i = words
        .iter()
        .position(|w| *w == name)
        .unwrap_or_else(|| panic!("no {name} in {line}"));
    words[i + 1].parse().unwrap()
}

/// `peregrine strategy KIND --name NAME --venue VENUE --duration SECS`.
pub(crate) fn strategy(kind: &str, name: &str, shm: &Path, secs: &str, venue: &str) -> Kid {
    Kid(peregrine()
        .args([
            "strategy",
            kind,
            "--name",
            name,
            "--wait",
            "park",
            "--venue",
            venue,
            "--duration",
            secs,
            "--dir",
        ])
        .arg(shm)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap())
}

/// Waits for each strategy process to exit, asserts it succeeded, and returns what
/// each printed, in order.
pub(crate) fn outputs(kids: Vec<Kid>) -> Vec<String> {
    kids.into_iter()
        .map(|mut k| {
            let status = k.0.wait().unwrap();
            let mut out = String::new();
            std::io::Read::read_to_string(k.0.stdout.as_mut().unwrap(), &mut out).unwrap();
            assert!(status.success(), "{out}");
            out
        })
        .collect()
}

/// Waits until the strategies `names` have exited (dead, or waiting on fresh rings for
/// a restart) with no open order and nothing is in flight: every order ended with a
/// venue report.
pub(crate) fn wait_all_orders_ended(shm: &Path, names: &[&str], timeout: std::time::Duration) {
    let mut last = String::new();
    let ended = super::eventually(timeout, || {
        last = stats(shm);
        last.contains("orders in flight 0")
            && names.iter().all(|name| {
                let (state, open) = row(&last, name);
                (state == "dead" || state == "waiting") && open == 0
            })
    });
    assert!(
        ended,
        "timed out after {timeout:?} waiting for every order finished at the venue; \
         the engine's last stats:\n{last}"
    );
}
