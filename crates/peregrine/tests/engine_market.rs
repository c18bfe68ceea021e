//! Market data and restart recovery with real processes: `peregrine engine` with the
//! simulated market, strategies that read the book, `kill -9` of the engine and a
//! restart from its journal. Every child is killed when its guard drops; every test
//! runs under a timeout; nothing busy-spins.

mod support;

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use peregrine_engine::summary::{self, EngineSummary, PositionRow};
use support::engine::{cli, peregrine, wait_for, Kid};

fn with_timeout<T: Send + 'static>(secs: u64, body: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(body());
    });
    match rx.recv_timeout(Duration::from_secs(secs)) {
        Ok(v) => v,
        Err(e) => panic!("test did not finish in {secs} s: {e}"),
    }
}

struct Rig {
    shm: PathBuf,
    config: PathBuf,
    tmp: tempfile::TempDir,
}

/// An engine config: one simulated venue with `model` (a TOML table), strategies `maker` and
/// `reverter` subscribed to its book, a journal, and `on_dead`.
fn rig(model: &str, on_dead: &str) -> Rig {
    let tmp = tempfile::tempdir().unwrap();
    let shm = tmp.path().join("shm");
    let config = tmp.path().join("engine.toml");
    let text = format!(
        r#"
name = "mkt"
shm_dir = "{shm}"
stats_interval_ms = 50
orchestrator = {{ wait = "park" }}
market_data = {{ thread = {{ wait = "park" }} }}
liveness = {{ heartbeat_timeout_ms = 2000, on_dead = "{on_dead}" }}
journal = {{ dir = "{journal}" }}
[[strategies]]
name = "maker"
subscribe = [{{ venue = "sim", instrument = 1 }}]
limits = {{ max_order_qty = 10, max_open_orders = 50 }}
[[strategies]]
name = "reverter"
subscribe = [{{ venue = "sim", instrument = 1 }}]
limits = {{ max_order_qty = 10, max_open_orders = 50 }}
[[venues]]
name = "sim"
thread = {{ wait = "park" }}
sim = {{ delay_lo_ns = 2000, delay_hi_ns = 20000, model = {model}, seed = 3 }}
"#,
        shm = shm.display(),
        journal = tmp.path().join("journal").display()
    );
    std::fs::write(&config, text).unwrap();
    Rig { shm, config, tmp }
}

impl Rig {
    fn engine(&self) -> Kid {
        let log = std::fs::File::options()
            .create(true)
            .append(true)
            .open(self.tmp.path().join("engine.log"))
            .unwrap();
        let child = peregrine()
            .args(["engine", "--duration", "120", "--config"])
            .arg(&self.config)
            .stdout(Stdio::from(log.try_clone().unwrap()))
            .stderr(Stdio::from(log))
            .spawn()
            .unwrap();
        let socket = self.shm.join("control.sock");
        wait_for("the engine's summary", 20, || {
            summary::fetch(&socket, Duration::from_secs(2)).is_ok()
        });
        Kid(child)
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.tmp.path().join("engine.log")).unwrap_or_default()
    }

    fn summary(&self) -> EngineSummary {
        summary::fetch(&self.shm.join("control.sock"), Duration::from_secs(5)).unwrap()
    }

    fn strategy(&self, kind: &str, extra: &[&str]) -> Kid {
        Kid(peregrine()
            .args(["strategy", kind, "--dir"])
            .arg(&self.shm)
            .args(["--name", kind, "--wait", "park", "--duration", "60"])
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap())
    }
}

fn positions(s: &EngineSummary) -> Vec<PositionRow> {
    let mut p = s.positions.clone();
    p.sort_by(|a, b| a.strategy.cmp(&b.strategy));
    p
}

/// Strategies on the simulated market see its book: `on_book` runs (market-data
/// latency samples reach `engine stats`), the flow fills their orders, and the
/// metrics name every family.
#[test]
fn strategies_trade_against_the_simulated_market_they_see() {
    with_timeout(120, || {
        let r = rig(r#"{ kind = "market" }"#, "cancel");
        let _engine = r.engine();
        let _maker = r.strategy("maker", &["--qty", "2"]);
        let _reverter = r.strategy("reverter", &[]);
        wait_for("fills and market-data samples", 60, || {
            let s = r.summary();
            let md = s.latency_row("md venue -> on_book").map_or(0, |x| x.n);
            s.fills > 10 && md > 100
        });
        let s = r.summary();
        let pushed: u64 = s.market_data.iter().map(|m| m.pushed).sum();
        assert!(pushed > 100, "{:?}", s.market_data);
        let stats = cli(&r.shm, &["stats"]);
        let text = String::from_utf8_lossy(&stats.stdout);
        assert!(text.contains("md venue -> on_book"), "{text}");
        assert!(
            text.contains(" µs") || text.contains(" ms"),
            "latencies in µs/ms: {text}"
        );
    });
}

/// `kill -9` of the engine, then a restart from its journal: positions, realized PnL,
/// fills, a run-time limit change and a kill switch come back exactly; the orders it
/// had open at the simulated venue (which died with it) are reconciled as cancelled.
#[test]
fn kill_9_and_restart_recover_positions_limits_and_orders_exactly() {
    with_timeout(180, || {
        // Half of each order fills at once, the rest rests: positions move only when a
        // strategy sends, and resting orders stay open after it stops (`leave`).
        let r = rig(r#"{ kind = "partial", percent = 50 }"#, "leave");
        let mut engine = r.engine();
        let mut maker = r.strategy("maker", &["--qty", "2", "--interval-us", "2000"]);
        wait_for("fills", 60, || r.summary().fills >= 20);
        let out = cli(
            &r.shm,
            &[
                "limits",
                "--strategy",
                "reverter",
                "--set",
                "max_order_qty=3",
            ],
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let out = cli(
            &r.shm,
            &["kill", "--strategy", "reverter", "--timeout-ms", "2000"],
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        // Stop trading; let the last reports land.
        let _ = maker.0.kill();
        let _ = maker.0.wait();
        let mut before = r.summary();
        wait_for("quiet", 30, || {
            std::thread::sleep(Duration::from_millis(300));
            let now = r.summary();
            let same = positions(&now) == positions(&before) && now.fills == before.fills;
            before = now;
            same
        });
        assert!(before.open_orders > 0, "resting orders to restore");
        assert!(!positions(&before).is_empty());
        // kill -9.
        engine.0.kill().unwrap();
        engine.0.wait().unwrap();
        let _engine = r.engine();
        wait_for("the restored orders to be reconciled", 30, || {
            r.summary().open_orders == 0
        });
        let after = r.summary();
        assert_eq!(
            positions(&after),
            positions(&before),
            "positions and PnL exactly"
        );
        let limits = cli(&r.shm, &["limits"]);
        let text = String::from_utf8_lossy(&limits.stdout);
        assert!(text.contains("reverter: max_order_qty=3"), "{text}");
        let rev = after
            .strategies
            .iter()
            .find(|s| s.name == "reverter")
            .unwrap();
        assert!(rev.killed, "the kill switch came back");
        let log = r.log();
        assert!(log.contains("recovered"), "{log}");
        // The restarted engine trades on: a new maker gets fills on top of the old
        // position.
        let _maker = r.strategy("maker", &["--qty", "2", "--interval-us", "2000"]);
        wait_for("new fills", 60, || r.summary().fills > after.fills + 5);
    });
}

/// Without a journal nothing survives: the negative control for the test above.
#[test]
fn without_a_journal_a_restart_forgets() {
    with_timeout(120, || {
        let r = rig(r#"{ kind = "partial", percent = 50 }"#, "leave");
        let text = std::fs::read_to_string(&r.config).unwrap();
        let text: String = text
            .lines()
            .filter(|l| !l.starts_with("journal"))
            .map(|l| format!("{l}\n"))
            .collect();
        std::fs::write(&r.config, text).unwrap();
        let mut engine = r.engine();
        let mut maker = r.strategy("maker", &["--qty", "2", "--interval-us", "2000"]);
        wait_for("fills", 60, || r.summary().fills >= 5);
        let _ = maker.0.kill();
        engine.0.kill().unwrap();
        engine.0.wait().unwrap();
        let _engine = r.engine();
        assert!(r.summary().positions.is_empty());
    });
}
