//! The engine as a user runs it: real `peregrine engine` and `peregrine strategy`
//! processes, shared memory under a temp dir, the control socket. Every child is
//! killed when its guard drops; every test runs under a timeout; nothing busy-spins.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use peregrine_strategy::msg::{reason, EventKind, NewOrder, Request};
use peregrine_strategy::runner::{attach, RunnerConfig};
use peregrine_types::{InstrumentId, Price, Qty, Side};

fn peregrine() -> Command {
    Command::new(env!("CARGO_BIN_EXE_peregrine"))
}

/// Kills (SIGKILL) and reaps the child on drop.
struct Kid(Child);

impl Drop for Kid {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

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

fn wait_for(what: &str, secs: u64, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

struct Rig {
    engine: Kid,
    shm: PathBuf,
    _tmp: tempfile::TempDir,
}

/// Starts an engine with strategies `maker` and `taker` and the given fill model.
fn engine(model: &str) -> Rig {
    let tmp = tempfile::tempdir().unwrap();
    let shm = tmp.path().join("shm");
    let config = tmp.path().join("engine.toml");
    let text = format!(
        r#"
name = "test"
shm_dir = "{}"
stats_interval_ms = 50
orchestrator = {{ wait = "park" }}
liveness = {{ heartbeat_timeout_ms = 2000, on_dead = "cancel" }}
[[strategies]]
name = "maker"
limits = {{ max_order_qty = 10, max_open_orders = 50 }}
[[strategies]]
name = "taker"
limits = {{ max_order_qty = 10, max_open_orders = 50 }}
[[venues]]
name = "sim"
thread = {{ wait = "park" }}
sim = {{ delay_lo_ns = 2000, delay_hi_ns = 20000, model = {{ kind = "{model}" }}, seed = 3 }}
"#,
        shm.display()
    );
    std::fs::write(&config, text).unwrap();
    let child = peregrine()
        .args(["engine", "--duration", "60", "--config"])
        .arg(&config)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let socket = shm.join("control.sock");
    wait_for("the control socket", 20, || socket.exists());
    Rig {
        engine: Kid(child),
        shm,
        _tmp: tmp,
    }
}

fn strategy(kind: &str, shm: &Path, secs: &str) -> Kid {
    Kid(peregrine()
        .args([
            "strategy",
            kind,
            "--wait",
            "park",
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

fn cli(shm: &Path, args: &[&str]) -> Output {
    peregrine()
        .arg("engine")
        .arg("--dir")
        .arg(shm)
        .args(args)
        .output()
        .unwrap()
}

fn stats(shm: &Path) -> String {
    let out = cli(shm, &["stats"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The strategies-table row of `name`: (state, open orders, malformed).
fn row(stats: &str, name: &str) -> (String, u64, u64) {
    let f: Vec<&str> = stats
        .lines()
        .find(|l| {
            l.split_whitespace().next() == Some(name)
                && (l.contains(" false ") || l.contains(" true "))
        })
        .unwrap_or_else(|| panic!("no row {name} in\n{stats}"))
        .split_whitespace()
        .collect();
    (
        f[1].to_owned(),
        f[3].parse().unwrap(),
        f[5].parse().unwrap(),
    )
}

/// `n` of a latency row.
fn samples(stats: &str, row_name: &str) -> u64 {
    let line = stats.lines().find(|l| l.starts_with(row_name)).unwrap();
    line[row_name.len()..]
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn two_strategies_fill_and_stats_show_latency_table() {
    with_timeout(120, || {
        let rig = engine("full");
        let maker = strategy("maker", &rig.shm, "2");
        let taker = strategy("taker", &rig.shm, "2");
        for mut k in [maker, taker] {
            let status = k.0.wait().unwrap();
            assert!(status.success());
            let mut out = String::new();
            std::io::Read::read_to_string(k.0.stdout.as_mut().unwrap(), &mut out).unwrap();
            assert!(out.contains("round trip"), "{out}");
        }
        let s = stats(&rig.shm);
        assert!(samples(&s, "round trip  t8-t1") > 10, "{s}");
        assert!(
            s.contains("submit      t1->t2") && s.contains("p99.9"),
            "{s}"
        );
        for name in ["maker", "taker"] {
            let pos = s
                .lines()
                .skip_while(|l| !l.starts_with("position"))
                .find(|l| l.starts_with(name))
                .unwrap_or_else(|| panic!("no position for {name}:\n{s}"));
            let fills: u64 = pos.split_whitespace().nth(3).unwrap().parse().unwrap();
            assert!(fills > 0, "{s}");
        }
        assert!(s.contains("completion"), "{s}");
        drop(rig.engine);
    });
}

#[test]
fn killed_strategy_gets_its_orders_cancelled() {
    with_timeout(120, || {
        let rig = engine("rest");
        let mut maker = strategy("maker", &rig.shm, "60");
        let _taker = strategy("taker", &rig.shm, "60");
        wait_for("maker quotes resting", 30, || {
            row(&stats(&rig.shm), "maker").1 > 0
        });
        maker.0.kill().unwrap();
        maker.0.wait().unwrap();
        wait_for("maker dead with no open orders", 30, || {
            let (state, open, _) = row(&stats(&rig.shm), "maker");
            state == "dead" && open == 0
        });
        let (state, _, _) = row(&stats(&rig.shm), "taker");
        assert_eq!(state, "alive", "the other strategy is unaffected");
    });
}

#[test]
fn engine_kill_cancels_everything_with_confirmation() {
    with_timeout(120, || {
        let rig = engine("rest");
        let _maker = strategy("maker", &rig.shm, "60");
        let _taker = strategy("taker", &rig.shm, "60");
        wait_for("orders resting", 30, || {
            let s = stats(&rig.shm);
            row(&s, "maker").1 > 0 && row(&s, "taker").1 > 0
        });
        let out = cli(&rig.shm, &["kill"]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            text.starts_with("ok") && text.contains("confirmed"),
            "{text}"
        );
        let sent: u64 = text
            .split(" cancels sent")
            .next()
            .and_then(|head| head.rsplit(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no cancel count in {text}"));
        assert!(sent > 0, "resting orders were cancelled: {text}");
        let s = stats(&rig.shm);
        assert_eq!(row(&s, "maker").1, 0, "{s}");
        assert_eq!(row(&s, "taker").1, 0, "{s}");
        assert!(
            s.contains("kill_switch") || row(&s, "maker").0 == "alive",
            "{s}"
        );
        let bad = cli(&rig.shm, &["kill", "--strategy", "nobody"]);
        assert!(!bad.status.success());
        assert!(String::from_utf8_lossy(&bad.stdout).contains("unknown strategy"));
    });
}

#[test]
fn malformed_message_is_rejected_and_counted_without_a_crash() {
    with_timeout(120, || {
        let rig = engine("full");
        let mut cfg = RunnerConfig::new(rig.shm.clone(), "maker");
        cfg.attach_timeout = Duration::from_secs(10);
        let (mut api, mut rx) = attach(&cfg).unwrap();
        let mut bad = Request::cancel(1, 1);
        bad.kind = 0xEE;
        api.send_raw(bad).unwrap();
        let o = NewOrder {
            client_id: 2,
            instrument: InstrumentId(1),
            venue: 0,
            side: Side::Sell,
            price: Price::from_raw(100),
            qty: Qty::from_raw(1),
        };
        api.send_raw(Request::new_order(&o, 1)).unwrap();
        let mut events = Vec::new();
        wait_for("three events", 20, || {
            while let Some(e) = rx.try_pop() {
                events.push(e);
            }
            events.len() >= 3
        });
        assert_eq!(events[0].kind(), Some(EventKind::Reject));
        assert_eq!(events[0].reason, reason::MALFORMED);
        assert_eq!(events[2].kind(), Some(EventKind::Fill));
        wait_for("the counter in stats", 20, || {
            row(&stats(&rig.shm), "maker").2 == 1
        });
        assert!(stats(&rig.shm).contains("malformed(201)=1"));
    });
}
