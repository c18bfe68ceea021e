//! The exchange's market data reaches a strategy through the engine: `peregrine
//! exchange` (feed to a free UDP port, recovery service on a free TCP port) and
//! `peregrine engine` (one exchange venue with `feed = { addr, recovery }`) run as
//! processes; this test process attaches a strategy (the SDK's runner over the
//! engine's shared memory) subscribed to the exchange's book, and another account
//! trades at the exchange over TCP. The strategy must see exactly the exchange's
//! book: a bid that rested before the engine started (it comes through the
//! recovery snapshot), then an ask and a trade sent while it watches (live feed).
//! The other accounts log in with protocol v2 (challenge-response with generated
//! keys). Every step waits on a condition under a bounded wait; the whole test runs
//! under a timeout.

mod support;

use std::io::BufRead;
use std::net::SocketAddr;
use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use peregrine_client::keys::KeyFile;
use peregrine_client::order_entry::Connection;
use peregrine_engine::summary::fetch;
use peregrine_queue::WaitStrategy;
use peregrine_strategy::md::{BookView, Trade};
use peregrine_strategy::{run, Api, RunnerConfig, Strategy};
use peregrine_types::{AccountId, InstrumentId, Side, TimeInForce};
use peregrine_wire::orders::NewOrder;
use peregrine_wire::v2::client::LoginParams;
use peregrine_wire::v2::{Outbound, RequestRef};
use support::engine::{control_ready, peregrine, stats, Kid};
use support::order;
use support::wait_until;

/// `peregrine exchange` with `extra` config lines and accounts 1..=3 (keys in
/// `keys`); returns the process and its order-entry address once it listens.
fn exchange(dir: &Path, extra: &str, keys: &KeyFile) -> (Kid, SocketAddr) {
    let config = dir.join("exchange.toml");
    let text = format!(
        "listen = \"127.0.0.1:0\"\nwait = \"park\"\n{extra}\n{}",
        keys.exchange_accounts(&[], &[])
    );
    std::fs::write(&config, text).unwrap();
    let mut child = peregrine()
        .args(["exchange", "--config"])
        .arg(&config)
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(dir.join("exchange.log")).unwrap())
        .spawn()
        .unwrap();
    let mut line = String::new();
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    let kid = Kid(child);
    out.read_line(&mut line).unwrap();
    let addr = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| {
            let log = std::fs::read_to_string(dir.join("exchange.log")).unwrap_or_default();
            panic!("unexpected first line {line:?}; log: {log}")
        })
        .parse()
        .unwrap();
    (kid, addr)
}

/// A logged-in v2 trading session of `account`.
fn trader(addr: SocketAddr, keys: &KeyFile, account: u32) -> Connection {
    let key = keys.key(AccountId(account)).unwrap();
    let params = LoginParams::trading(AccountId(account), 0);
    let (mut c, _) = Connection::connect(addr, params, key, Duration::from_secs(20)).unwrap();
    c.recover(|_| {}).unwrap();
    c
}

/// Sends `o` and waits for its acceptance.
fn place(c: &mut Connection, o: &NewOrder) {
    let answer = c
        .request(o, RequestRef::NewOrder(o.client_order_id), |_| {})
        .unwrap();
    assert!(matches!(answer, Outbound::Accepted(_)), "{answer:?}");
}

/// Best bid and best ask as (price, qty).
type Top = (Option<(i64, i64)>, Option<(i64, i64)>);

/// What the watching strategy saw of venue 0, instrument 1.
#[derive(Debug, Default, Clone)]
struct Seen {
    /// (best bid, best ask) as (price, qty), per `on_book`.
    tops: Vec<Top>,
    /// (price, qty, aggressor) per `on_trade`.
    trades: Vec<(i64, i64, Side)>,
    /// Books with a venue timestamp (the feed's send time).
    stamped: usize,
}

struct Watcher {
    seen: Arc<Mutex<Seen>>,
}

fn top(l: Option<peregrine_strategy::md::Level>) -> Option<(i64, i64)> {
    l.map(|l| (l.price.units(), l.qty.lots()))
}

impl Strategy for Watcher {
    fn on_book(&mut self, _api: &mut Api, instrument: InstrumentId, book: &BookView) {
        if book.venue != 0 || instrument != InstrumentId(1) {
            return;
        }
        let mut s = self.seen.lock().unwrap();
        s.tops.push((top(book.best_bid()), top(book.best_ask())));
        s.stamped += usize::from(book.exchange_ts != 0);
    }

    fn on_trade(&mut self, _api: &mut Api, t: &Trade) {
        if t.venue == 0 && t.instrument == InstrumentId(1) {
            let mut s = self.seen.lock().unwrap();
            s.trades.push((t.price.units(), t.qty.lots(), t.aggressor));
        }
    }
}

#[test]
fn a_strategy_sees_the_exchange_book_through_the_engine() {
    support::with_timeout(180, || {
        let md_port = std::net::UdpSocket::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let recovery_port = support::free_port();
        let tmp = tempfile::tempdir().unwrap();
        let keys = KeyFile::generate(&[AccountId(1), AccountId(2), AccountId(3)]).unwrap();
        let (_exchange, exchange_addr) = exchange(
            tmp.path(),
            &format!(
                "recovery_listen = \"127.0.0.1:{recovery_port}\"\n\
                 [market_data]\ntarget = \"127.0.0.1:{md_port}\"\nheartbeat_ms = 100\n"
            ),
            &keys,
        );
        // Resting before the engine exists: only a snapshot can show it.
        let mut seller = trader(exchange_addr, &keys, 2);
        place(
            &mut seller,
            &order(1, Side::Buy, 9_990, 3, TimeInForce::Gtc),
        );

        let shm = tmp.path().join("shm");
        let key_file = tmp.path().join("keys.toml");
        keys.save_new(&key_file).unwrap();
        let config = tmp.path().join("engine.toml");
        std::fs::write(
            &config,
            format!(
                r#"
name = "md-test"
shm_dir = "{shm}"
stats_interval_ms = 50
instruments = [1]
orchestrator = {{ wait = "park" }}
market_data = {{ thread = {{ wait = "park" }} }}
[[strategies]]
name = "watcher"
subscribe = [{{ venue = "px", instrument = 1 }}]
[[venues]]
name = "px"
thread = {{ wait = "park" }}
exchange = {{ addr = "{addr}", account = 1, key_file = "{keys}", feed = {{ addr = "127.0.0.1:{md_port}", recovery = "127.0.0.1:{recovery_port}" }} }}
"#,
                shm = shm.display(),
                addr = exchange_addr,
                keys = key_file.display(),
            ),
        )
        .unwrap();
        let engine_log = tmp.path().join("engine.log");
        let _engine = Kid(peregrine()
            .args(["engine", "--duration", "150", "--config"])
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&engine_log).unwrap())
            .spawn()
            .unwrap());
        let socket = shm.join("control.sock");
        wait_until("the control socket", Duration::from_secs(30), || {
            control_ready(&shm)
        });

        let seen = Arc::new(Mutex::new(Seen::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let runner = {
            let (seen, stop, shm) = (Arc::clone(&seen), Arc::clone(&stop), shm.clone());
            std::thread::spawn(move || {
                let mut cfg = RunnerConfig::new(shm, "watcher");
                cfg.wait = WaitStrategy::SpinThenPark;
                cfg.attach_timeout = Duration::from_secs(20);
                let mut w = Watcher { seen };
                run(&mut w, &cfg, &stop).unwrap()
            })
        };
        let log = || std::fs::read_to_string(&engine_log).unwrap_or_default();
        let has_top = |bid: Option<(i64, i64)>, ask: Option<(i64, i64)>| {
            seen.lock().unwrap().tops.contains(&(bid, ask))
        };
        wait_until(
            "the snapshot's bid at the strategy",
            Duration::from_secs(60),
            || has_top(Some((9_990, 3)), None),
        );
        assert!(log().contains("from a snapshot"), "{}", log());

        // Live: an ask, then another account lifts one lot of it.
        place(
            &mut seller,
            &order(2, Side::Sell, 10_010, 4, TimeInForce::Gtc),
        );
        wait_until("the ask at the strategy", Duration::from_secs(60), || {
            has_top(Some((9_990, 3)), Some((10_010, 4)))
        });
        let mut buyer = trader(exchange_addr, &keys, 3);
        place(
            &mut buyer,
            &order(1, Side::Buy, 10_010, 1, TimeInForce::Ioc),
        );
        wait_until(
            "the trade and the new top at the strategy",
            Duration::from_secs(60),
            || {
                has_top(Some((9_990, 3)), Some((10_010, 3)))
                    && !seen.lock().unwrap().trades.is_empty()
            },
        );
        wait_until(
            "feed latency samples in the engine",
            Duration::from_secs(30),
            || {
                fetch(&socket, Duration::from_secs(5))
                    .ok()
                    .and_then(|s| s.latency_row("md exch send -> on_book").map(|r| r.n))
                    .is_some_and(|n| n > 0)
            },
        );
        stop.store(true, Ordering::Relaxed);
        let summary = runner.join().unwrap();
        let s = seen.lock().unwrap().clone();
        assert_eq!(s.trades, [(10_010, 1, Side::Buy)], "{s:?}");
        // Every version the strategy saw was the exchange's book at some point.
        for t in &s.tops {
            assert!(
                [
                    (Some((9_990, 3)), None),
                    (Some((9_990, 3)), Some((10_010, 4))),
                    (Some((9_990, 3)), Some((10_010, 3))),
                ]
                .contains(t),
                "a book the exchange never had: {t:?} in {s:?}"
            );
        }
        assert!(
            s.stamped > 0,
            "live versions carry the feed's send time: {s:?}"
        );
        assert!(summary.books > 0);
        let text = stats(&shm);
        assert!(text.contains("md exch send -> on_book"), "{text}");
        assert!(!log().contains("recovery failed"), "{}", log());
    });
}
