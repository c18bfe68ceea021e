//! The `peregrine-bench` binary as a user runs it (directly, or as `peregrine bench`):
//! real process, real files.

use std::process::Command;

fn bench() -> Command {
    Command::new(env!("CARGO_BIN_EXE_peregrine-bench"))
}

#[test]
fn bench_book_prints_tables_and_writes_json() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("book.json");
    let out = bench()
        .args(["book", "--quick", "--only", "ferrox", "--json"])
        .arg(&json)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    for name in [
        "ferrox_mixed_10k",
        "peregrine",
        "peregrine-pipelined",
        "peregrine-hashids",
        "peregrine-openids",
        "peregrine-btree",
        "lobster",
        "orderbook-rs",
        "p99.9",
    ] {
        assert!(text.contains(name), "missing {name} in:\n{text}");
    }
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let results = v["results"].as_array().unwrap();
    let candidates: Vec<&str> = results
        .iter()
        .map(|r| r["candidate"].as_str().unwrap())
        .collect();
    assert_eq!(
        candidates,
        [
            "peregrine",
            "peregrine-pipelined",
            "peregrine-hashids",
            "peregrine-openids",
            "peregrine-btree",
            "lobster",
            "orderbook-rs"
        ]
    );
    for r in results {
        assert_eq!(r["ops"], 10_000);
        assert!(r["p50"].as_u64().unwrap() <= r["p99"].as_u64().unwrap());
    }
}

#[test]
fn unknown_subcommand_is_a_clear_error() {
    let out = bench().args(["nope"]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("nope"));
}

#[test]
fn bench_balances_runs_every_olympus_shape() {
    let out = bench().args(["balances", "--quick"]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    for name in [
        "match_order resting",
        "match_order crossing",
        "multi-fill sweep 50",
        "match_tick (10 orders)",
        "compute_commitments (10 trades)",
        "continuous",
        "batch",
    ] {
        assert!(text.contains(name), "missing {name} in:\n{text}");
    }
}
