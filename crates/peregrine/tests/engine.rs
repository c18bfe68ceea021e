//! The engine as a user runs it: real `peregrine engine` and `peregrine strategy`
//! processes, shared memory under a temp dir, the control socket. Every child is
//! killed when its guard drops; every test runs under a timeout; nothing busy-spins.

mod support;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use peregrine_strategy::msg::{reason, EventKind, NewOrder, Request};
use peregrine_strategy::runner::{attach, RunnerConfig};
use peregrine_types::{InstrumentId, Price, Qty, Side};
use support::engine::{cli, control_ready, peregrine, stats, Kid};
use support::{wait_until, with_timeout};

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
    wait_until("the control socket", Duration::from_secs(20), || {
        control_ready(&shm)
    });
    Rig {
        engine: Kid(child),
        shm,
        _tmp: tmp,
    }
}

fn strategy(kind: &str, shm: &Path, secs: &str) -> Kid {
    strategy_with(kind, shm, secs, &[])
}

fn strategy_with(kind: &str, shm: &Path, secs: &str, extra: &[&str]) -> Kid {
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
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap())
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

/// The strategies-table row of `name`: (generation, requests after death, in flight).
fn row_more(stats: &str, name: &str) -> (u64, u64, u64) {
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
        f[6].parse().unwrap(),
        f[7].parse().unwrap(),
        f[8].parse().unwrap(),
    )
}

/// The queue table: (name, pushes, pops, full, depth + discarded) per row.
fn queues(stats: &str) -> Vec<(String, u64, u64, u64, u64)> {
    stats
        .lines()
        .skip_while(|l| !l.starts_with("queue "))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let n = |i: usize| f[f.len() - 5 + i].parse::<u64>().unwrap();
            (f[..f.len() - 5].join(" "), n(0), n(1), n(2), n(3) + n(4))
        })
        .collect()
}

/// How many rejects of reason `name(code)` the stats show.
fn rejects(stats: &str, tag: &str) -> u64 {
    stats
        .lines()
        .find(|l| l.starts_with("rejects:"))
        .and_then(|l| l.split_whitespace().find(|w| w.starts_with(tag)))
        .and_then(|w| w.rsplit('=').next())
        .map_or(0, |n| n.parse().unwrap())
}

/// `n` of a latency row.
fn samples(stats: &str, row_name: &str) -> u64 {
    let line = stats.lines().find(|l| l.starts_with(row_name)).unwrap();
    // Counts are printed with thousands separators.
    line[row_name.len()..]
        .split_whitespace()
        .next()
        .unwrap()
        .replace(',', "")
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
        wait_until("maker quotes resting", Duration::from_secs(30), || {
            row(&stats(&rig.shm), "maker").1 > 0
        });
        let resting = row(&stats(&rig.shm), "maker").1;
        maker.0.kill().unwrap(); // SIGKILL: no chance to clean up
        maker.0.wait().unwrap();
        // Declared dead, its orders cancelled (open counts an order until the venue
        // confirms the cancel), then fresh rings: generation 2, waiting for a process.
        wait_until(
            "maker re-armed after its cancels were confirmed",
            Duration::from_secs(30),
            || {
                let s = stats(&rig.shm);
                let (state, open, _) = row(&s, "maker");
                let (generation, _, in_flight) = row_more(&s, "maker");
                state == "waiting" && open == 0 && in_flight == 0 && generation == 2
            },
        );
        let s = stats(&rig.shm);
        assert_eq!(
            row(&s, "taker").0,
            "alive",
            "the other strategy is unaffected"
        );
        assert_eq!(row_more(&s, "taker").0, 1);
        assert!(resting > 0);
        // Restarted under the same name, it attaches to the fresh rings and trades.
        let _again = strategy("maker", &rig.shm, "60");
        wait_until(
            "the restarted maker quoting",
            Duration::from_secs(30),
            || {
                let s = stats(&rig.shm);
                let (state, open, _) = row(&s, "maker");
                state == "alive" && open > 0
            },
        );
        let s = stats(&rig.shm);
        let submit = queues(&s)
            .into_iter()
            .find(|q| q.0 == "submit maker")
            .unwrap();
        assert!(submit.1 > 0 && submit.1 == submit.2 + submit.4, "{s}");
        assert_eq!(row_more(&s, "maker").0, 2, "{s}");
    });
}

/// Issue 28: a strategy stops within one heartbeat of its engine's death (at every
/// heartbeat it checks that the engine process named in `engine.pid`, pid and start
/// time, still runs) instead of writing into rings nobody reads until its
/// `--duration` ends. Without the check the maker would run its 300 s.
#[test]
fn strategy_stops_when_the_engine_dies() {
    with_timeout(120, || {
        let mut rig = engine("rest");
        let mut maker = strategy("maker", &rig.shm, "300");
        wait_until("maker quotes resting", Duration::from_secs(30), || {
            row(&stats(&rig.shm), "maker").1 > 0
        });
        rig.engine.0.kill().unwrap(); // SIGKILL: the engine cleans up nothing
        rig.engine.0.wait().unwrap();
        let mut status = None;
        wait_until("the maker to stop", Duration::from_secs(30), || {
            status = maker.0.try_wait().unwrap();
            status.is_some()
        });
        let mut err = String::new();
        std::io::Read::read_to_string(&mut maker.0.stderr.take().unwrap(), &mut err).unwrap();
        assert!(
            !status.unwrap().success(),
            "a strategy whose engine died fails: {err}"
        );
        assert!(err.contains("is gone"), "it says why: {err}");
    });
}

#[test]
fn limits_change_at_run_time_and_bad_changes_are_refused() {
    with_timeout(120, || {
        let rig = engine("full");
        // Pinger as "maker" (max_order_qty 10): qty 5 orders pass at first.
        let _p = strategy_with(
            "pinger",
            &rig.shm,
            "60",
            &["--name", "maker", "--qty", "5", "--count", "200000"],
        );
        wait_until("orders filling", Duration::from_secs(30), || {
            let s = stats(&rig.shm);
            s.lines()
                .skip_while(|l| !l.starts_with("position"))
                .any(|l| l.starts_with("maker"))
        });
        assert_eq!(rejects(&stats(&rig.shm), "max_order_qty(105)"), 0);
        let show = cli(&rig.shm, &["limits"]);
        let text = String::from_utf8_lossy(&show.stdout).to_string();
        assert!(show.status.success(), "{text}");
        assert!(text.contains("maker: max_order_qty=10"), "{text}");
        assert!(text.contains("global: max_order_qty=off"), "{text}");
        // Bad key and bad value: a clear error, nothing changed.
        for bad in ["max_qty=4", "max_order_qty=-4", "max_order_qty=four"] {
            let out = cli(&rig.shm, &["limits", "--strategy", "maker", "--set", bad]);
            assert!(!out.status.success(), "{bad} accepted");
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(
                err.contains("unknown limit") || err.contains("bad value"),
                "{bad}: {err}"
            );
        }
        let out = cli(
            &rig.shm,
            &["limits", "--strategy", "nobody", "--set", "burst=1"],
        );
        assert!(!out.status.success());
        assert!(String::from_utf8_lossy(&out.stdout).contains("unknown strategy"));
        let text = String::from_utf8_lossy(&cli(&rig.shm, &["limits"]).stdout).to_string();
        assert!(
            text.contains("maker: max_order_qty=10"),
            "unchanged: {text}"
        );
        // Lower it at run time: the next orders are rejected with 105.
        let out = cli(
            &rig.shm,
            &[
                "limits",
                "--strategy",
                "maker",
                "--set",
                "max_order_qty=4",
                "--set",
                "price_collar=300",
            ],
        );
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(out.status.success(), "{text}");
        assert!(
            text.contains("max_order_qty=4") && text.contains("price_collar=300"),
            "{text}"
        );
        wait_until(
            "max_order_qty rejects in stats",
            Duration::from_secs(30),
            || rejects(&stats(&rig.shm), "max_order_qty(105)") > 0,
        );
        // And globally.
        let out = cli(&rig.shm, &["limits", "--set", "max_open_orders=100"]);
        assert!(out.status.success());
        assert!(String::from_utf8_lossy(&out.stdout).contains("global: max_order_qty=off"));
    });
}

#[test]
fn engine_kill_cancels_everything_with_confirmation() {
    with_timeout(120, || {
        let rig = engine("rest");
        let _maker = strategy("maker", &rig.shm, "60");
        let _taker = strategy("taker", &rig.shm, "60");
        wait_until("orders resting", Duration::from_secs(30), || {
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
        // Nothing in flight at a venue now: every hand-off's counts add up.
        let q = queues(&s);
        assert_eq!(q.len(), 6, "{s}");
        for (name, pushes, pops, _full, depth) in &q {
            assert_eq!(*pushes, pops + depth, "{name} in\n{s}");
        }
        let get = |n: &str| q.iter().find(|r| r.0 == n).unwrap().clone();
        assert!(
            get("submit maker").1 > 0 && get("return maker").1 > 0,
            "{s}"
        );
        assert!(get("inbox sim").1 > 0, "{s}");
        assert_eq!(get("completion").1, get("completion").2, "{s}");
        assert!(s.contains("orders in flight 0"), "{s}");
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
            ..NewOrder::limit(
                0,
                InstrumentId(1),
                Side::Sell,
                Price::from_raw(100),
                Qty::from_raw(1),
            )
        };
        api.send_raw(Request::new_order(&o, 1)).unwrap();
        let mut events = Vec::new();
        wait_until("three events", Duration::from_secs(20), || {
            while let Some(e) = rx.try_pop() {
                events.push(e);
            }
            events.len() >= 3
        });
        assert_eq!(events[0].kind(), Some(EventKind::Reject));
        assert_eq!(events[0].reason, reason::MALFORMED);
        assert_eq!(events[2].kind(), Some(EventKind::Fill));
        wait_until("the counter in stats", Duration::from_secs(20), || {
            row(&stats(&rig.shm), "maker").2 == 1
        });
        assert!(stats(&rig.shm).contains("malformed(201)=1"));
        // Bad fields: zero and negative qty, unknown instrument, bad venue index.
        let mut cases = Vec::new();
        for (i, qty) in [0, -3].into_iter().enumerate() {
            cases.push((
                NewOrder {
                    client_id: 10 + i as u64,
                    qty: Qty::from_raw(qty),
                    ..o
                },
                101,
            ));
        }
        cases.push((
            NewOrder {
                client_id: 12,
                instrument: InstrumentId(99),
                ..o
            },
            203,
        ));
        cases.push((
            NewOrder {
                client_id: 13,
                venue: 9,
                ..o
            },
            202,
        ));
        for (order, _) in &cases {
            api.send_raw(Request::new_order(order, 1)).unwrap();
        }
        let mut answers = Vec::new();
        wait_until("four rejects", Duration::from_secs(20), || {
            while let Some(e) = rx.try_pop() {
                answers.push(e);
            }
            answers.len() >= 4
        });
        for (ev, (order, code)) in answers.iter().zip(&cases) {
            assert_eq!(ev.kind(), Some(EventKind::Reject));
            assert_eq!((ev.client_id, ev.reason), (order.client_id, *code));
        }
        wait_until("the bad fields in stats", Duration::from_secs(20), || {
            let s = stats(&rig.shm);
            rejects(&s, "invalid_order(101)") == 2
                && rejects(&s, "unknown_instrument(203)") == 1
                && rejects(&s, "unknown_venue(202)") == 1
        });
    });
}
