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

/// A fake cluster admin endpoint: answers each of `answers` (status line and JSON
/// body) to one connection, in order, and returns the request lines it read.
fn fake_admin(
    answers: Vec<(&'static str, &'static str)>,
) -> (String, std::thread::JoinHandle<Vec<String>>) {
    use std::io::{BufRead, BufReader, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let server = std::thread::spawn(move || {
        let mut requests = Vec::new();
        for (status, body) in answers {
            let (conn, _) = listener.accept().unwrap();
            conn.set_read_timeout(Some(std::time::Duration::from_secs(10)))
                .unwrap();
            let mut reader = BufReader::new(conn);
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            requests.push(line.trim_end().to_string());
            // The rest of the head.
            loop {
                let mut h = String::new();
                if reader.read_line(&mut h).unwrap() == 0 || h == "\r\n" {
                    break;
                }
            }
            let mut conn = reader.into_inner();
            write!(
                conn,
                "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            )
            .unwrap();
        }
        requests
    });
    (addr, server)
}

#[test]
fn admin_cluster_status_and_a_misdirected_transfer() {
    let status = r#"{"id":2,"role":"leader","term":5,"leader":2,"commit":9,"applied":9,
        "first_index":1,"last_index":9,"snapshot_index":0,"voters":[1,2,3],"learners":[],
        "peers":[],"progress":[{"id":1,"matched":9,"next":10,"state":"replicate","voter":true}],
        "state_hash":null,"hash_checks_ok":3,"hash_mismatches":0,"snapshots_taken":0,
        "snapshots_installed":0,"entries_applied":9,"removed":false,"engine_seq":42,
        "serving":true,"current_state":{"engine_seq":42,"hash":"c0ffee0123"},"transport":{}}"#;
    let (addr, server) = fake_admin(vec![
        ("200 OK", status),
        (
            "421 Misdirected Request",
            r#"{"error":"not the leader","leader":3}"#,
        ),
    ]);
    let exe = env!("CARGO_BIN_EXE_peregrine");
    let out = output(Command::new(exe).args(["admin", "cluster", "status", "--node", &addr]));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains(&format!("node 2 at {addr}: leader, term 5")),
        "{text}"
    );
    assert!(
        text.contains("state hash c0ffee0123 at engine seq 42"),
        "{text}"
    );
    assert!(
        text.contains("peer 1 (voter): matched 9 next 10 replicate"),
        "{text}"
    );

    let out = output(
        Command::new(exe).args(["admin", "cluster", "transfer", "--node", &addr, "--to", "3"]),
    );
    assert!(!out.status.success(), "a 421 is a failure");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not the leader (leader: node 3)"), "{err}");
    assert_eq!(
        server.join().unwrap(),
        [
            "GET /cluster/status HTTP/1.1",
            "POST /cluster/transfer?to=3 HTTP/1.1"
        ]
    );
}

#[path = "cli/documented.rs"]
mod documented;
