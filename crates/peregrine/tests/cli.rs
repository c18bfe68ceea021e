//! The CLI as a user runs it: real process, real files. The benchmarks themselves are
//! tested in `crates/peregrine-bench/tests/cli.rs`; here, that `peregrine bench` runs
//! the `peregrine-bench` binary beside it, and says how to build it when it is missing.

use std::path::Path;
use std::process::Command;

/// Runs `cmd`, retrying while exec fails with ETXTBSY: a file this test process just
/// wrote can still be open for writing in a child another test thread forked at that
/// moment (the fd is inherited until that child's exec closes it).
fn output(cmd: &mut Command) -> std::process::Output {
    for _ in 0..100 {
        match cmd.output() {
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy => {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            other => return other.unwrap(),
        }
    }
    panic!("exec kept failing with ETXTBSY");
}

/// A copy of the `peregrine` binary alone in a fresh directory.
fn lone_peregrine(dir: &Path) -> std::path::PathBuf {
    let exe = dir.join("peregrine");
    std::fs::copy(env!("CARGO_BIN_EXE_peregrine"), &exe).unwrap();
    exe
}

#[test]
fn bench_runs_the_sibling_binary_with_every_argument() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let exe = lone_peregrine(dir.path());
    // A stand-in `peregrine-bench` that echoes what it was given.
    let sibling = dir.path().join("peregrine-bench");
    std::fs::write(&sibling, "#!/bin/sh\necho \"bench got: $*\"\nexit 3\n").unwrap();
    std::fs::set_permissions(&sibling, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out =
        output(Command::new(&exe).args(["bench", "book", "--quick", "--only", "ferrox", "--help"]));
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.trim(), "bench got: book --quick --only ferrox --help");
    assert_eq!(out.status.code(), Some(3), "its exit status is the bench's");
}

#[test]
fn bench_without_its_binary_says_how_to_build_it() {
    let dir = tempfile::tempdir().unwrap();
    let exe = lone_peregrine(dir.path());
    let out = output(Command::new(&exe).args(["bench", "book"]));
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cargo build --release -p peregrine-bench"),
        "{err}"
    );
}
