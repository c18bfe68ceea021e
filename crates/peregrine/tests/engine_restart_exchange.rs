//! The engine survives its own restart against the real exchange: `kill -9` of the
//! engine while its maker's quotes rest at the exchange, another account trading
//! against them, a restart from the engine's journal; the engine's positions must
//! equal what the exchange says its account traded (here: minus what the other
//! account, the only counterparty, traded).

mod support;

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use peregrine_engine::summary::{self, EngineSummary};
use peregrine_types::{Side, TimeInForce};
use peregrine_wire::v2::Outbound;
use support::engine::{peregrine, wait_for, Kid};
use support::{order, Client};

struct Rig {
    shm: PathBuf,
    config: PathBuf,
    tmp: tempfile::TempDir,
}

fn rig(exchange: std::net::SocketAddr) -> Rig {
    let tmp = tempfile::tempdir().unwrap();
    let shm = tmp.path().join("shm");
    let config = tmp.path().join("engine.toml");
    let keys = tmp.path().join("keys.toml");
    support::write_key_file(&keys, &[1]);
    let text = format!(
        r#"
name = "rx"
shm_dir = "{shm}"
stats_interval_ms = 50
orchestrator = {{ wait = "park" }}
market_data = {{ thread = {{ wait = "park" }} }}
liveness = {{ heartbeat_timeout_ms = 2000, on_dead = "leave" }}
journal = {{ dir = "{journal}" }}
[[strategies]]
name = "maker"
limits = {{ max_order_qty = 10, max_open_orders = 50 }}
[[venues]]
name = "px"
thread = {{ wait = "park" }}
exchange = {{ addr = "{exchange}", account = 1, key_file = "{keys}", reconnect_ms = 200 }}
"#,
        shm = shm.display(),
        journal = tmp.path().join("journal").display(),
        keys = keys.display(),
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
        wait_for("the engine's summary", 20, || self.try_summary().is_some());
        Kid(child)
    }

    fn try_summary(&self) -> Option<EngineSummary> {
        summary::fetch(&self.shm.join("control.sock"), Duration::from_secs(2)).ok()
    }

    fn summary(&self) -> EngineSummary {
        self.try_summary().unwrap()
    }

    fn net(&self) -> i64 {
        self.summary().positions.iter().map(|p| p.net).sum()
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.tmp.path().join("engine.log")).unwrap_or_default()
    }
}

/// Account 2 sends an IOC that crosses the maker's quote on `side`; returns the
/// signed quantity it traded.
fn take(c: &mut Client, id: u64, side: Side) -> i64 {
    let price = if side == Side::Buy { 10_100 } else { 9_900 };
    c.send(&order(id, side, price, 1, TimeInForce::Ioc));
    let mut traded = 0;
    loop {
        match c.recv_report() {
            Outbound::Fill(f) => {
                traded += f.qty.lots();
                if f.leaves_qty.is_zero() {
                    break;
                }
            }
            Outbound::Cancelled(_) | Outbound::Rejected(_) => break,
            _ => {}
        }
    }
    if side == Side::Buy {
        traded
    } else {
        -traded
    }
}

fn run(trade_while_down: bool) {
    let exchange = support::start("");
    let r = rig(exchange.addr);
    let mut engine = r.engine();
    let mut maker = Kid(peregrine()
        .args(["strategy", "maker", "--dir"])
        .arg(&r.shm)
        .args([
            "--name", "maker", "--wait", "park", "--venue", "0", "--qty", "2",
        ])
        .args([
            "--mid",
            "10000",
            "--interval-us",
            "2000",
            "--duration",
            "60",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap());
    wait_for("both quotes resting", 30, || r.summary().open_orders == 2);
    let mut other = Client::login(exchange.addr, 2);
    let mut other_net = 0;
    for (i, side) in [Side::Buy, Side::Sell, Side::Buy].into_iter().enumerate() {
        other_net += take(&mut other, i as u64 + 1, side);
        wait_for("the maker to re-quote", 30, || r.summary().open_orders == 2);
    }
    // The maker stops; its quotes stay (`on_dead = "leave"`).
    let _ = maker.0.kill();
    let _ = maker.0.wait();
    wait_for("the engine to agree with the exchange", 30, || {
        r.net() == -other_net
    });
    assert_ne!(other_net, 0);
    engine.0.kill().unwrap();
    engine.0.wait().unwrap();
    if trade_while_down {
        // The engine is down; its quotes still rest at the exchange.
        let traded = take(&mut other, 100, Side::Buy);
        assert_eq!(traded, 1, "a quote was resting");
        other_net += traded;
    }
    let _engine = r.engine();
    wait_for("the login reconciliation", 30, || {
        r.summary().open_orders == 0
    });
    let log = r.log();
    assert!(log.contains("recovered"), "{log}");
    assert_eq!(
        r.net(),
        -other_net,
        "the engine's positions equal what its account traded at the exchange\n{log}"
    );
}

#[test]
fn kill_9_restart_keeps_positions_against_the_exchange() {
    support::with_timeout(180, || run(false));
}

/// Protocol v2 (issue 12): the restarted engine's adapter resumes its account's
/// report stream from the position kept beside the engine journal, so the fill made
/// while the engine was down is replayed and counted before the login
/// reconciliation cancels what still rests.
#[test]
fn kill_9_restart_learns_fills_made_while_the_engine_was_down() {
    support::with_timeout(180, || run(true));
}
