//! What the process-level benches share: children that die with the bench, keys,
//! an exchange started from a config, percentiles.

#![allow(dead_code)] // each bench uses its own subset

pub(crate) mod relay;

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// A child process killed (and reaped) when dropped.
pub(crate) struct Kid(pub Child);

impl Drop for Kid {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Kid {
    /// SIGTERM, then wait for the exit (a graceful stop: journal committed).
    pub(crate) fn terminate(mut self) {
        let pid = rustix::process::Pid::from_child(&self.0);
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
        let _ = self.0.wait();
    }
}

/// This binary (the release build cargo made for the bench).
pub(crate) fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_peregrine")
}

/// The first line the child prints on stdout.
pub(crate) fn first_line(child: &mut Child) -> String {
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("piped stdout"))
        .read_line(&mut line)
        .expect("reading the child's first line");
    line
}

/// `[p50, p90, p99, p99.9, max]` of `v` (nearest rank); `v` must not be empty.
pub(crate) fn percentiles(mut v: Vec<u64>) -> [u64; 5] {
    v.sort_unstable();
    let p = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
    [
        p(0.5),
        p(0.9),
        p(0.99),
        p(0.999),
        *v.last().expect("samples"),
    ]
}

/// `peregrine keygen` for `accounts` (e.g. "1-2") into `dir`: (keys file, accounts file).
pub(crate) fn keygen(dir: &Path, accounts: &str) -> (PathBuf, PathBuf) {
    let keys = dir.join("keys.toml");
    let accts = dir.join("accounts.toml");
    let st = Command::new(bin())
        .args(["keygen", "--accounts", accounts, "--keys-out"])
        .arg(&keys)
        .arg("--accounts-out")
        .arg(&accts)
        .stdout(Stdio::null())
        .status()
        .expect("running peregrine keygen");
    assert!(st.success(), "peregrine keygen");
    (keys, accts)
}

/// Starts `peregrine exchange --config cfg` and returns it with its order-entry address
/// (from its first line, `listening on ADDR`).
pub(crate) fn start_exchange(cfg: &Path) -> (Kid, SocketAddr) {
    let mut x = Command::new(bin())
        .args(["exchange", "--config"])
        .arg(cfg)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("starting the exchange");
    let line = first_line(&mut x);
    let addr = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .parse()
        .expect("an address");
    (Kid(x), addr)
}

/// The 1-minute load average, as `/proc/loadavg` says.
pub(crate) fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .split_whitespace()
        .next()
        .unwrap_or("?")
        .to_owned()
}

/// The value after `--name` on the bench's command line, else `default`.
pub(crate) fn arg(name: &str, default: u64) -> u64 {
    let args: Vec<String> = std::env::args().skip(1).collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A trading login of `account` (its key from `keys`) resuming at `resume`.
pub(crate) fn login(
    addr: SocketAddr,
    keys: &Path,
    account: u32,
    resume: u64,
) -> peregrine_client::order_entry::Connection {
    use peregrine_types::AccountId;
    let key = peregrine_client::keys::KeyFile::key_of(keys, AccountId(account)).expect("key");
    peregrine_client::order_entry::Connection::connect(
        addr,
        peregrine_wire::v2::client::LoginParams::trading(AccountId(account), resume),
        key,
        std::time::Duration::from_secs(60),
    )
    .expect("login")
    .0
}
