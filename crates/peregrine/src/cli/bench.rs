//! `peregrine bench ...`: runs the separate `peregrine-bench` binary that sits next
//! to this one. The benchmarks (and the published order books they compare against,
//! with their async runtimes) are not linked into `peregrine`, so the binary that
//! runs the exchange carries none of them.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::process::Command;

use anyhow::bail;

/// Arguments passed to `peregrine-bench` unchanged.
#[derive(Debug, Clone, clap::Args)]
#[command(disable_help_flag = true)]
pub(crate) struct BenchArgs {
    /// The benchmark and its options: `book`, `balances`, `dispatch`, `handoff`,
    /// `http` (`peregrine bench --help` lists them).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
    pub args: Vec<OsString>,
}

/// Replaces this process with `peregrine-bench ARGS` (same directory as this
/// executable); fails with how to build it when it is missing.
pub(crate) fn run(args: BenchArgs) -> anyhow::Result<()> {
    let exe = std::env::current_exe()?;
    let sibling = exe.with_file_name("peregrine-bench");
    if !sibling.is_file() {
        bail!(
            "`peregrine bench` runs the separate `peregrine-bench` binary, expected at {}, \
             which is not there. Build it next to this one with \
             `cargo build --release -p peregrine-bench` (or run it directly: \
             `cargo run --release -p peregrine-bench -- book`)",
            sibling.display()
        );
    }
    let err = Command::new(&sibling).args(&args.args).exec();
    bail!("running {}: {err}", sibling.display())
}
