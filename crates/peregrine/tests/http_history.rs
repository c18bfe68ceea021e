//! The history writer resumes where it stopped: the gateway is killed with SIGKILL
//! while another client keeps trading at the exchange, restarted, and the trades
//! table (read back through the REST API) holds every trade exactly once. With
//! SQLite always; with PostgreSQL when `PEREGRINE_TEST_POSTGRES` names a server
//! (`tests/http/setup.sh`, sourced by `scripts/test-all.sh`, starts one and sets it).
//! Under CI (`CI` set, as `.ci/run` is run) a missing server fails the PostgreSQL
//! tests; elsewhere they say loudly (on the terminal, past the test harness's
//! capture) that they did not run. The negative control, on both stores: an exchange
//! that keeps too little for replay, where the same run must report the hole instead
//! of hiding it.

#[path = "support/http.rs"]
mod http_support;
mod support;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use http_support::{get, signed, wait_for, Native, Opts, Stack};
use peregrine_types::{Side, TimeInForce};
use peregrine_wire::v2::Outbound;
use support::{order, with_timeout};

/// Trades continuously as account 4 (both sides, so every pair is one trade) until
/// `stop`; counts the trades.
fn trader(
    stack: &Stack,
    stop: Arc<AtomicBool>,
    trades: Arc<AtomicU64>,
) -> std::thread::JoinHandle<()> {
    let mut c = http_support::Native::login(stack, 4);
    std::thread::spawn(move || {
        let mut id = 1u64;
        while !stop.load(Ordering::Relaxed) {
            c.send(&order(id, Side::Sell, 10_000, 1, TimeInForce::Gtc));
            c.send(&order(id + 1, Side::Buy, 10_000, 1, TimeInForce::Ioc));
            id += 2;
            let mut fills = 0;
            while fills < 2 {
                if let Outbound::Fill(_) = c.recv_report() {
                    fills += 1;
                }
            }
            trades.fetch_add(1, Ordering::Relaxed);
            std::thread::sleep(Duration::from_micros(500));
        }
    })
}

/// Every stored trade id, through `GET /api/v3/historicalTrades` pages.
fn stored_ids(stack: &Stack) -> Vec<u64> {
    let mut ids = Vec::new();
    let mut from = 1;
    loop {
        let r = get(
            stack.http,
            &format!("/api/v3/historicalTrades?symbol=PGN-USD&fromId={from}&limit=1000"),
        );
        assert_eq!(r.status, 200, "{}", r.body);
        let page: Vec<u64> = r
            .json()
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["id"].as_u64().unwrap())
            .collect();
        let n = page.len();
        ids.extend(page);
        match ids.last() {
            Some(&last) if n == 1000 => from = last + 1,
            _ => return ids,
        }
    }
}

/// Trade, kill the gateway, trade on, restart it, stop; returns (trades made, ids
/// stored, gaps the restarted writer reported).
fn kill_and_resume(opts: Opts) -> (u64, Vec<u64>, u64) {
    let mut stack = Stack::start(opts);
    let stop = Arc::new(AtomicBool::new(false));
    let trades = Arc::new(AtomicU64::new(0));
    let t = trader(&stack, Arc::clone(&stop), Arc::clone(&trades));
    assert!(wait_for(Duration::from_secs(20), || trades
        .load(Ordering::Relaxed)
        >= 200));
    stack.kill_gateway();
    let at_kill = trades.load(Ordering::Relaxed);
    assert!(wait_for(Duration::from_secs(20), || trades
        .load(Ordering::Relaxed)
        >= at_kill + 300));
    stack.start_gateway();
    std::thread::sleep(Duration::from_millis(300));
    stop.store(true, Ordering::Relaxed);
    t.join().unwrap();
    let made = trades.load(Ordering::Relaxed);
    // Caught up: the writer has stored the last trade.
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut ids = stored_ids(&stack);
    while ids.last() != Some(&made) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
        ids = stored_ids(&stack);
    }
    let gaps = stack.status()["history"]["gaps"].as_u64().unwrap();
    (made, ids, gaps)
}

#[test]
fn sqlite_writer_resumes_without_gap_or_duplicate() {
    with_timeout(180, || {
        let (made, ids, gaps) = kill_and_resume(Opts::default());
        assert!(made >= 500, "only {made} trades made");
        assert_eq!(gaps, 0, "the writer reported lost ranges");
        assert_eq!(
            ids.len() as u64,
            made,
            "stored {} of {made} trades",
            ids.len()
        );
        assert!(
            ids.iter().copied().eq(1..=made),
            "ids are not exactly 1..={made}"
        );
    });
}

#[test]
fn a_range_the_exchange_no_longer_holds_is_reported_not_hidden() {
    with_timeout(180, || {
        // The exchange keeps only 4 feed messages for replay: what was traded while
        // the gateway was down cannot be recovered, and must show as a gap.
        let (made, ids, gaps) = kill_and_resume(Opts {
            market_data: "replay_retain = 4".into(),
            ..Opts::default()
        });
        assert!(gaps >= 1, "a lost range went unreported");
        assert!((ids.len() as u64) < made, "nothing was lost?");
        let unique: std::collections::BTreeSet<u64> = ids.iter().copied().collect();
        assert_eq!(unique.len(), ids.len(), "duplicates");
    });
}

/// Protocol v2 resume: an order of account 1 rests through the gateway, the gateway
/// is killed, account 4 trades against the order (and account 1's second session
/// enters one more order) while it is down; the restarted gateway resumes account
/// 1's report stream from the position its history store persisted, so the fill, the
/// order placed elsewhere and their history rows are all there.
#[test]
fn reports_while_the_gateway_is_down_are_replayed_on_restart() {
    with_timeout(120, || {
        let mut stack = Stack::start(Opts::default());
        let r = signed(
            stack.http,
            "POST",
            "/api/v3/order",
            0,
            "symbol=PGN-USD&side=SELL&type=LIMIT&timeInForce=GTC&quantity=3&price=101.00\
             &newClientOrderId=rests-here",
        );
        assert_eq!(r.status, 200, "{}", r.body);
        let id = r.json()["orderId"].as_u64().unwrap();
        // Stored (and with it the stream position) before the kill.
        assert!(wait_for(Duration::from_secs(10), || {
            let r = signed(stack.http, "GET", "/api/v3/allOrders", 0, "symbol=PGN-USD");
            r.status == 200 && r.json().as_array().is_some_and(|a| a.len() == 1)
        }));
        stack.kill_gateway();
        let mut taker = Native::login(&stack, 4);
        taker.send(&order(1, Side::Buy, 10_100, 2, TimeInForce::Ioc));
        let mut fills = 0;
        while fills == 0 {
            if let Outbound::Fill(_) = taker.recv_report() {
                fills += 1;
            }
        }
        let mut other = Native::login(&stack, 1);
        other.send(&order(77, Side::Sell, 10_200, 1, TimeInForce::Gtc));
        assert!(matches!(other.recv_report(), Outbound::Accepted(_)));
        stack.start_gateway();
        let r = signed(
            stack.http,
            "GET",
            "/api/v3/order",
            0,
            &format!("symbol=PGN-USD&orderId={id}"),
        );
        assert_eq!(r.status, 200, "{}", r.body);
        let o = r.json();
        assert_eq!(
            (o["status"].as_str(), o["executedQty"].as_str()),
            (Some("PARTIALLY_FILLED"), Some("2")),
            "{o}"
        );
        assert!(wait_for(Duration::from_secs(10), || {
            let r = signed(stack.http, "GET", "/api/v3/myTrades", 0, "symbol=PGN-USD");
            r.status == 200 && r.json().as_array().is_some_and(|a| a.len() == 1)
        }));
        let open = signed(stack.http, "GET", "/api/v3/openOrders", 0, "symbol=PGN-USD").json();
        let prices: Vec<&str> = open
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["price"].as_str().unwrap())
            .collect();
        assert_eq!(prices, ["101.00", "102.00"], "{open}");
    });
}

/// Whether a test with a real counterpart runs: `Ok(Some(value))` of its variable;
/// `Ok(None)` (skip) when it is unset outside CI; `Err` when it is unset under CI,
/// where every counterpart must be there.
fn counterpart(value: Option<String>, ci: Option<String>) -> Result<Option<String>, String> {
    match (value, ci) {
        (Some(v), _) if !v.is_empty() => Ok(Some(v)),
        (_, Some(ci)) if !ci.is_empty() && ci != "false" && ci != "0" => Err(
            "PEREGRINE_TEST_POSTGRES is not set under CI: tests/http/setup.sh (sourced by \
             scripts/test-all.sh) installs and starts PostgreSQL and sets it"
                .into(),
        ),
        _ => Ok(None),
    }
}

#[test]
fn a_missing_counterpart_fails_under_ci_and_is_skipped_elsewhere() {
    let pg = || Some("postgres://x/y".to_owned());
    assert_eq!(counterpart(pg(), None), Ok(pg()));
    assert_eq!(counterpart(pg(), Some("true".into())), Ok(pg()));
    assert!(counterpart(None, Some("true".into())).is_err());
    assert!(counterpart(Some(String::new()), Some("1".into())).is_err());
    assert_eq!(counterpart(None, None), Ok(None));
    assert_eq!(counterpart(None, Some("false".into())), Ok(None));
}

/// A fresh database on the server named by `PEREGRINE_TEST_POSTGRES` (see
/// [`counterpart`] for when it is missing).
fn postgres_db(test: &str) -> Option<String> {
    let env = |k: &str| std::env::var(k).ok();
    // Under CI either way: the runner's `CI`, or `PEREGRINE_CI` (scripts/test-all.sh).
    let ci = ["CI", "PEREGRINE_CI"]
        .into_iter()
        .filter_map(env)
        .find(|v| !v.is_empty() && v != "false" && v != "0");
    let base = match counterpart(env("PEREGRINE_TEST_POSTGRES"), ci) {
        Ok(Some(b)) => b,
        Ok(None) => {
            // Straight to stderr, not through the harness's capture: a skip is seen.
            use std::io::Write;
            let _ = writeln!(
                std::io::stderr(),
                "\n*** SKIPPED {test}: PEREGRINE_TEST_POSTGRES is not set; it did NOT run \
                 (source tests/http/setup.sh to start PostgreSQL) ***"
            );
            return None;
        }
        Err(e) => panic!("{e}"),
    };
    let name = format!(
        "peregrine_http_{}_{}",
        std::process::id(),
        http_support::now_ms() % 1_000_000
    );
    let out = std::process::Command::new("psql")
        .args([
            base.as_str(),
            "-v",
            "ON_ERROR_STOP=1",
            "-c",
            &format!("CREATE DATABASE {name}"),
        ])
        .output()
        .expect("psql");
    assert!(
        out.status.success(),
        "creating {name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (prefix, _) = base.rsplit_once('/').expect("postgres://.../db");
    Some(format!("{prefix}/{name}"))
}

#[test]
fn postgres_writer_resumes_without_gap_or_duplicate() {
    let Some(url) = postgres_db("postgres_writer_resumes_without_gap_or_duplicate") else {
        return;
    };
    with_timeout(180, move || {
        let (made, ids, gaps) = kill_and_resume(Opts {
            history: Some(url),
            ..Opts::default()
        });
        assert!(made >= 500, "only {made} trades made");
        assert_eq!(gaps, 0);
        assert_eq!(ids.len() as u64, made);
        assert!(ids.iter().copied().eq(1..=made));
    });
}

/// The negative control on PostgreSQL: the same run against an exchange that keeps
/// too little for replay must show the hole.
#[test]
fn postgres_a_range_the_exchange_no_longer_holds_is_reported_not_hidden() {
    let Some(url) =
        postgres_db("postgres_a_range_the_exchange_no_longer_holds_is_reported_not_hidden")
    else {
        return;
    };
    with_timeout(180, move || {
        let (made, ids, gaps) = kill_and_resume(Opts {
            history: Some(url),
            market_data: "replay_retain = 4".into(),
            ..Opts::default()
        });
        assert!(gaps >= 1, "a lost range went unreported");
        assert!((ids.len() as u64) < made, "nothing was lost?");
    });
}
