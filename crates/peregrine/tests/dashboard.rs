//! The Grafana dashboard (`deploy/grafana/peregrine.json`) against real scrapes: a
//! real `peregrine exchange` with some trading and a real `peregrine engine` on its
//! simulated market with two strategies are scraped over HTTP, and every metric
//! name a dashboard query references must be in the scrape of the component that
//! exports it (`peregrine_exchange_*` the exchange, `peregrine_engine_*` the engine,
//! `process_*` and `peregrine_build_info` both). Also `/health` of both.

mod support;

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::Stdio;
use std::time::{Duration, Instant};

use peregrine_types::{Side, TimeInForce};
use support::engine::{peregrine, Kid};
use support::{free_port, order, start, with_timeout, Client};

const DASHBOARD: &str = include_str!("../../../deploy/grafana/peregrine.json");

/// Every metric name the dashboard's queries reference: identifiers in `expr`
/// strings that start with `peregrine_` or `process_` (label names, functions and
/// Grafana variables do not).
fn referenced(dashboard: &str) -> BTreeSet<String> {
    fn exprs(v: &serde_json::Value, out: &mut Vec<String>) {
        match v {
            serde_json::Value::Object(m) => {
                for (k, v) in m {
                    match (k.as_str(), v) {
                        ("expr", serde_json::Value::String(s)) => out.push(s.clone()),
                        _ => exprs(v, out),
                    }
                }
            }
            serde_json::Value::Array(a) => a.iter().for_each(|v| exprs(v, out)),
            _ => {}
        }
    }
    let json: serde_json::Value = serde_json::from_str(dashboard).expect("dashboard JSON");
    let mut all = Vec::new();
    exprs(&json, &mut all);
    assert!(!all.is_empty(), "no queries in the dashboard");
    let mut names = BTreeSet::new();
    for e in &all {
        // Label values in quotes are not names.
        let unquoted: String = e
            .split('"')
            .enumerate()
            .filter(|(i, _)| i % 2 == 0)
            .map(|(_, s)| s)
            .collect::<Vec<_>>()
            .join(" ");
        for word in unquoted.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':')) {
            if word.starts_with("peregrine_") || word.starts_with("process_") {
                names.insert(word.to_string());
            }
        }
    }
    names
}

/// The metric names of a scrape's sample lines.
fn scraped(body: &str) -> BTreeSet<String> {
    body.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .filter_map(|l| l.split(['{', ' ']).next())
        .map(str::to_string)
        .collect()
}

/// The names of `referenced` that `applies` to this component and its scrape lacks.
fn missing(
    referenced: &BTreeSet<String>,
    body: &str,
    applies: impl Fn(&str) -> bool,
) -> Vec<String> {
    let have = scraped(body);
    referenced
        .iter()
        .filter(|n| applies(n) && !have.contains(*n))
        .cloned()
        .collect()
}

fn shared(name: &str) -> bool {
    name.starts_with("process_") || name == "peregrine_build_info"
}

fn exchange_names(name: &str) -> bool {
    shared(name) || name.starts_with("peregrine_exchange_")
}

fn engine_names(name: &str) -> bool {
    shared(name) || name.starts_with("peregrine_engine_")
}

/// `GET path` over a plain socket: the status line and the body.
fn get(addr: SocketAddr, path: &str) -> (String, String) {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).unwrap();
    let (head, body) = raw.split_once("\r\n\r\n").expect("a header block");
    let status = head.lines().next().unwrap_or_default().to_string();
    (status, body.to_string())
}

/// Scrapes until nothing the dashboard needs from this component is missing, or
/// fails after `secs` naming what is.
fn settle(addr: SocketAddr, names: &BTreeSet<String>, applies: fn(&str) -> bool, secs: u64) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        let (status, body) = get(addr, "/metrics");
        assert!(status.starts_with("HTTP/1.1 200"), "{status}");
        let gone = missing(names, &body, applies);
        if gone.is_empty() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the dashboard references metrics {addr} does not export: {gone:?}\n{body}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn the_checker_flags_a_made_up_metric() {
    let dash = r#"{"panels":[{"targets":[
        {"expr": "rate(peregrine_exchange_trades_total[1m]) + peregrine_exchange_made_up{side=\"peregrine_x\"}"},
        {"expr": "process_threads"}]}]}"#;
    let names = referenced(dash);
    assert_eq!(
        names.iter().map(String::as_str).collect::<Vec<_>>(),
        [
            "peregrine_exchange_made_up",
            "peregrine_exchange_trades_total",
            "process_threads"
        ]
    );
    let scrape = "# TYPE peregrine_exchange_trades counter\n\
                  peregrine_exchange_trades_total 3\nprocess_threads 9\n# EOF\n";
    assert_eq!(
        missing(&names, scrape, exchange_names),
        ["peregrine_exchange_made_up"]
    );
    assert!(missing(&names, scrape, engine_names).is_empty());
    // The real dashboard names something of each component.
    let real = referenced(DASHBOARD);
    assert!(real.iter().any(|n| n.starts_with("peregrine_exchange_")));
    assert!(real.iter().any(|n| n.starts_with("peregrine_engine_")));
    assert!(real.contains("process_cpu_seconds_total"));
}

#[test]
fn every_dashboard_metric_is_exported_by_the_real_exchange() {
    with_timeout(90, || {
        let journal = tempfile::tempdir().unwrap();
        let ex = start(&format!(
            "[metrics]\nenabled = true\nlisten = \"127.0.0.1:0\"\npublish_interval_ms = 50\n\
             [journal]\ndir = \"{}\"\nfsync = \"batch\"\n[market_data]\nenabled = false",
            journal.path().display()
        ));
        let log = ex.log_with("metrics on http://");
        let addr: SocketAddr = log
            .lines()
            .find_map(|l| l.split("metrics on http://").nth(1))
            .and_then(|rest| rest.strip_suffix("/metrics"))
            .unwrap_or_else(|| panic!("no metrics address in the log:\n{log}"))
            .parse()
            .unwrap();
        let mut a = Client::login(ex.addr, 1);
        let mut b = Client::login(ex.addr, 2);
        a.send(&order(1, Side::Buy, 10_000, 10, TimeInForce::Gtc));
        a.recv_report();
        b.send(&order(2, Side::Sell, 10_000, 4, TimeInForce::Ioc));
        b.recv_report();
        let names = referenced(DASHBOARD);
        settle(addr, &names, exchange_names, 30);
        let (status, body) = get(addr, "/health");
        assert!(status.starts_with("HTTP/1.1 200"), "{status}");
        assert_eq!(body, "ok\n");
    });
}

#[test]
fn every_dashboard_metric_is_exported_by_the_real_engine() {
    with_timeout(120, || {
        let tmp = tempfile::tempdir().unwrap();
        let shm = tmp.path().join("shm");
        let config = tmp.path().join("engine.toml");
        let port = free_port();
        std::fs::write(
            &config,
            format!(
                r#"
name = "dash"
shm_dir = "{shm}"
stats_interval_ms = 50
orchestrator = {{ wait = "park" }}
market_data = {{ thread = {{ wait = "park" }} }}
metrics = {{ enabled = true, listen = "127.0.0.1:{port}" }}
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
sim = {{ delay_lo_ns = 2000, delay_hi_ns = 20000, model = {{ kind = "market" }}, seed = 3 }}
"#,
                shm = shm.display()
            ),
        )
        .unwrap();
        let _engine = Kid(peregrine()
            .args(["engine", "--duration", "100", "--config"])
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap());
        let addr: SocketAddr = ([127, 0, 0, 1], port).into();
        support::wait_until("the engine's /health", Duration::from_secs(30), || {
            TcpStream::connect_timeout(&addr, Duration::from_secs(1)).is_ok()
        });
        let (status, body) = get(addr, "/health");
        assert!(status.starts_with("HTTP/1.1 200"), "{status}");
        assert_eq!(body, "ok\n");
        let strategy = |kind: &str| {
            Kid(peregrine()
                .args(["strategy", kind, "--dir"])
                .arg(&shm)
                .args(["--name", kind, "--wait", "park", "--duration", "60"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap())
        };
        let _maker = strategy("maker");
        let _reverter = strategy("reverter");
        let names = referenced(DASHBOARD);
        settle(addr, &names, engine_names, 90);
    });
}
