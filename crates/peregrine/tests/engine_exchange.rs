//! The engine trading on the real exchange: `peregrine exchange` (temp config, free
//! port, no journal, no feed), `peregrine engine` with one exchange venue, and the
//! maker and taker strategies, all real processes over real sockets and shared
//! memory. Every child is killed when its guard drops; the test runs under a timeout;
//! every process parks when idle.

mod support;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use support::engine::{
    cli, control_ready, event_count, fills, outputs, peregrine, row, stats, strategy,
    wait_all_orders_ended, Kid,
};
use support::wait_until;

/// An exchange on a fixed address (so a restart is reachable at the same place), no
/// journal, no feed; returns once it listens.
fn exchange_on(dir: &Path, addr: std::net::SocketAddr) -> Kid {
    let config = dir.join("exchange.toml");
    let text = format!(
        "listen = \"{addr}\"\nwait = \"park\"\nrecovery_listen = \"127.0.0.1:0\"\n\
         [market_data]\nenabled = false\n{}",
        support::account_toml(1, false)
    );
    std::fs::write(&config, text).unwrap();
    let mut child = peregrine()
        .args(["exchange", "--config"])
        .arg(&config)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    let stdout = child.stdout.take().unwrap();
    let kid = Kid(child);
    std::io::BufRead::read_line(&mut std::io::BufReader::new(stdout), &mut line).unwrap();
    assert!(line.starts_with("listening on"), "{line:?}");
    kid
}

fn engine_config(dir: &Path, shm: &Path, addr: std::net::SocketAddr) -> PathBuf {
    let config = dir.join("engine.toml");
    let keys = dir.join("keys.toml");
    support::write_key_file(&keys, &[1]);
    let text = format!(
        r#"
name = "px-test"
shm_dir = "{}"
stats_interval_ms = 50
orchestrator = {{ wait = "park" }}
liveness = {{ heartbeat_timeout_ms = 2000, on_dead = "cancel" }}
[[strategies]]
name = "maker"
limits = {{ max_order_qty = 10, max_open_orders = 50, max_position = 50 }}
[[strategies]]
name = "taker"
limits = {{ max_order_qty = 10, max_open_orders = 500 }}
[[strategies]]
name = "taker2"
limits = {{ max_order_qty = 10, max_open_orders = 500 }}
[[venues]]
name = "px"
thread = {{ wait = "park" }}
exchange = {{ addr = "{addr}", account = 1, key_file = "{keys}", reconnect_ms = 100 }}
[[venues]]
name = "sim"
thread = {{ wait = "park" }}
sim = {{ delay_lo_ns = 2000, delay_hi_ns = 20000, model = {{ kind = "full" }}, seed = 3 }}
"#,
        shm.display(),
        keys = keys.display(),
    );
    std::fs::write(&config, text).unwrap();
    config
}

#[test]
fn maker_and_taker_trade_on_the_exchange_through_the_engine() {
    support::with_timeout(180, || {
        let exchange = support::start("[market_data]\nenabled = false\n");
        let tmp = tempfile::tempdir().unwrap();
        let shm = tmp.path().join("shm");
        let config = engine_config(tmp.path(), &shm, exchange.addr);
        let engine_log = tmp.path().join("engine.log");
        let engine = Kid(peregrine()
            .args(["engine", "--duration", "120", "--config"])
            .arg(&config)
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&engine_log).unwrap())
            .spawn()
            .unwrap());
        wait_until("the control socket", Duration::from_secs(30), || {
            control_ready(&shm)
        });
        let log = || std::fs::read_to_string(&engine_log).unwrap_or_default();
        assert!(log().contains("venue px: logged in"), "{}", log());

        let maker = strategy("maker", "maker", &shm, "3", "0");
        let taker = strategy("taker", "taker", &shm, "3", "0");
        let outs = outputs(vec![maker, taker]);
        let (maker_out, taker_out) = (&outs[0], &outs[1]);
        for out in [maker_out, taker_out] {
            assert!(event_count(out, "ack") > 0, "{out}");
            assert!(event_count(out, "fill") > 0, "{out}");
        }
        // The maker moves its quotes with replaces. The taker takes every quote at
        // the touch, so on a loaded machine a replace can lose every race with the
        // fill of its quote (answered replace_reject); an answer either way shows the
        // replace went through the engine (the adapter's replace is tested end to end
        // in `venue::exchange::tests`).
        assert!(
            event_count(maker_out, "replaced") + event_count(maker_out, "replace_reject") > 0,
            "the maker moves its quotes with replaces: {maker_out}"
        );

        // Both strategies exited: the engine declares them dead and cancels their
        // resting orders at the exchange; every order ends with a venue report.
        wait_all_orders_ended(&shm, &["maker", "taker"], Duration::from_secs(30));
        let s = stats(&shm);
        assert!(fills(&s, "maker") > 0 && fills(&s, "taker") > 0, "{s}");
        // (`unknown_order` replace rejects are expected: the maker re-quotes on every
        // fill and book change, so a replace can race the fill of its quote; the
        // adapter's own unknown reports are checked in the log below.)
        for bad in ["venue_down", "gateway_busy", "malformed(201)"] {
            assert!(!s.contains(bad), "{bad} in\n{s}");
        }
        let out = cli(&shm, &["shutdown"]);
        assert!(out.status.success());
        let mut engine = engine;
        wait_until("the engine to exit", Duration::from_secs(30), || {
            engine.0.try_wait().unwrap().is_some()
        });
        let log = log();
        assert!(!log.contains("disconnected"), "{log}");
        assert!(!log.contains("unknown id"), "{log}");
        assert!(
            !exchange.log_text().contains("malformed"),
            "{}",
            exchange.log_text()
        );
    });
}

#[test]
fn a_lost_exchange_stalls_only_its_venue_and_reconnects_with_reconciliation() {
    support::with_timeout(180, || {
        let tmp = tempfile::tempdir().unwrap();
        let addr: std::net::SocketAddr = format!("127.0.0.1:{}", support::free_port())
            .parse()
            .unwrap();
        let exchange = exchange_on(tmp.path(), addr);
        let shm = tmp.path().join("shm");
        let config = engine_config(tmp.path(), &shm, addr);
        let engine_log = tmp.path().join("engine.log");
        let _engine = Kid(peregrine()
            .args(["engine", "--duration", "120", "--config"])
            .arg(&config)
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&engine_log).unwrap())
            .spawn()
            .unwrap());
        let log = || std::fs::read_to_string(&engine_log).unwrap_or_default();
        wait_until("the control socket", Duration::from_secs(30), || {
            control_ready(&shm)
        });
        // The maker quotes at the exchange (nobody trades with it: its quotes rest).
        let _maker = strategy("maker", "maker", &shm, "60", "0");
        wait_until(
            "maker quotes resting at the exchange",
            Duration::from_secs(30),
            || row(&stats(&shm), "maker").1 > 0,
        );
        drop(exchange);
        wait_until(
            "the engine to see the exchange gone",
            Duration::from_secs(30),
            || log().contains("disconnected"),
        );
        // The other venue is unaffected.
        let mut taker = strategy("taker", "taker", &shm, "2", "1");
        assert!(taker.0.wait().unwrap().success());
        // Orders for the lost exchange are refused at once as venue down.
        let mut refused = strategy("taker", "taker2", &shm, "1", "0");
        assert!(refused.0.wait().unwrap().success());
        wait_until(
            "orders for the lost exchange refused as venue down",
            Duration::from_secs(30),
            || stats(&shm).contains("venue_down(207)"),
        );
        let s = stats(&shm);
        assert!(fills(&s, "taker") > 0, "{s}");
        assert!(row(&s, "maker").1 > 0, "quotes in doubt stay open: {s}");
        // The exchange comes back empty: the adapter logs in again, the reconciliation
        // finds the quotes gone and settles them, and the maker quotes again.
        let _exchange = exchange_on(tmp.path(), addr);
        wait_until("the reconciliation", Duration::from_secs(30), || {
            log().matches("venue px: logged in").count() >= 2 && log().contains("no longer resting")
        });
        // Trading resumes at the new exchange: a second taker (the first one exited
        // and is dead for this engine) gets fills there.
        let mut taker = strategy("taker", "taker2", &shm, "2", "0");
        assert!(taker.0.wait().unwrap().success());
        wait_until(
            "taker2 fills at the new exchange",
            Duration::from_secs(30),
            || fills(&stats(&shm), "taker2") > 0,
        );
        assert!(!log().contains("panicked"), "{}", log());
    });
}

/// Waits (heartbeating) for `want` events about `client_id` from the engine, keeping
/// every event seen.
fn events_of(
    api: &mut peregrine_strategy::Api,
    rx: &mut peregrine_queue::shm::ShmSpscConsumer<peregrine_strategy::msg::Event>,
    seen: &mut Vec<peregrine_strategy::msg::Event>,
    client_id: u64,
    want: &[peregrine_strategy::msg::EventKind],
) {
    use peregrine_strategy::msg::{EventKind, Request};
    let pid = std::process::id();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let mut last_hb = std::time::Instant::now() - Duration::from_secs(1);
    loop {
        let kinds: Vec<_> = seen
            .iter()
            .filter(|e| e.client_id == client_id)
            .map(|e| (e.kind(), e.reason))
            .collect();
        if want
            .iter()
            .all(|k| kinds.iter().any(|(s, _)| *s == Some(*k)))
        {
            return;
        }
        let refused = kinds.iter().any(|(s, _)| *s == Some(EventKind::Reject));
        assert!(
            std::time::Instant::now() < deadline && !refused,
            "order {client_id}: want {want:?}, seen (kind, reason) {kinds:?}"
        );
        if last_hb.elapsed() >= Duration::from_millis(100) {
            let _ = api.send_raw(Request::heartbeat(pid, api.now_ns()));
            last_hb = std::time::Instant::now();
        }
        match rx.try_pop() {
            Some(ev) => seen.push(ev),
            None => std::thread::sleep(Duration::from_millis(2)),
        }
    }
}

/// Issue 31 from a strategy: a stop-limit placed through the engine on the real
/// exchange is parked (acknowledged), triggered by a trade, reported `Triggered` with
/// its trigger and last prices, and then filled with the same client id; the same stop
/// to the simulated venue (which has no stops) is refused `UNSUPPORTED`, not sent as
/// a plain order.
#[test]
fn a_strategy_stop_is_triggered_by_a_trade_on_the_exchange() {
    use peregrine_strategy::msg::{reason, EventKind, NewOrder};
    use peregrine_types::{InstrumentId, Price, Qty, Side};
    support::with_timeout(180, || {
        let exchange = support::start("[market_data]\nenabled = false\n");
        let tmp = tempfile::tempdir().unwrap();
        let shm = tmp.path().join("shm");
        let config = engine_config(tmp.path(), &shm, exchange.addr);
        let engine_log = tmp.path().join("engine.log");
        let _engine = Kid(peregrine()
            .args(["engine", "--duration", "120", "--config"])
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&engine_log).unwrap())
            .spawn()
            .unwrap());
        wait_until("the control socket", Duration::from_secs(30), || {
            control_ready(&shm)
        });
        let log = || std::fs::read_to_string(&engine_log).unwrap_or_default();
        wait_until("the venue login", Duration::from_secs(30), || {
            log().contains("venue px: logged in")
        });
        let cfg = peregrine_strategy::RunnerConfig::new(shm.clone(), "maker");
        let (mut api, mut rx) = peregrine_strategy::runner::attach(&cfg).unwrap();
        let mut seen = Vec::new();
        let order = |venue, side, price: i64, qty: i64| {
            NewOrder::limit(
                venue,
                InstrumentId(1),
                side,
                Price::from_raw(price),
                Qty::from_raw(qty),
            )
        };
        // A sell stop-limit: triggers when the last trade falls to 99.00, then
        // sells at 90.00 or better.
        let stop = order(0, Side::Sell, 9000, 1).stop(Price::from_raw(9900));
        let stop_id = api.send(stop).unwrap();
        events_of(&mut api, &mut rx, &mut seen, stop_id, &[EventKind::Ack]);
        // The same stop to the simulated venue: refused by the engine, typed.
        let sim_id = api.send(NewOrder { venue: 1, ..stop }).unwrap();
        events_of(&mut api, &mut rx, &mut seen, sim_id, &[EventKind::Reject]);
        let r = seen.iter().find(|e| e.client_id == sim_id).unwrap();
        assert_eq!(r.reason, reason::UNSUPPORTED);
        // A resting bid of 2 at 99.00 and a sell of 1 into it: the trade triggers
        // the stop, which sells into the rest of the bid.
        let bid = api.send(order(0, Side::Buy, 9900, 2)).unwrap();
        events_of(&mut api, &mut rx, &mut seen, bid, &[EventKind::Ack]);
        let hit = api.send(order(0, Side::Sell, 9900, 1).ioc()).unwrap();
        events_of(&mut api, &mut rx, &mut seen, hit, &[EventKind::Fill]);
        events_of(
            &mut api,
            &mut rx,
            &mut seen,
            stop_id,
            &[EventKind::Triggered, EventKind::Fill],
        );
        let of_stop: Vec<_> = seen.iter().filter(|e| e.client_id == stop_id).collect();
        let kinds: Vec<_> = of_stop.iter().filter_map(|e| e.kind()).collect();
        assert_eq!(
            kinds,
            vec![EventKind::Ack, EventKind::Triggered, EventKind::Fill],
            "{of_stop:?}"
        );
        assert_eq!(
            (of_stop[1].price, of_stop[1].qty),
            (9900, 9900),
            "trigger, last"
        );
        assert_eq!(
            (of_stop[2].price, of_stop[2].qty, of_stop[2].leaves),
            (9900, 1, 0)
        );
        // The bid's second fill (the stop's trade) may come after the stop's own.
        let bid_fills = |seen: &[peregrine_strategy::msg::Event]| -> i64 {
            seen.iter()
                .filter(|e| e.client_id == bid && e.kind() == Some(EventKind::Fill))
                .map(|e| e.qty)
                .sum()
        };
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while bid_fills(&seen) < 2 && std::time::Instant::now() < deadline {
            match rx.try_pop() {
                Some(ev) => seen.push(ev),
                None => std::thread::sleep(Duration::from_millis(2)),
            }
        }
        assert_eq!(
            bid_fills(&seen),
            2,
            "the bid traded with the sell and the stop"
        );
        assert!(!log().contains("unknown id"), "{}", log());
    });
}

/// Issue 31 from a strategy: an OCO sent through the engine reaches the real exchange
/// as one `NewOrderList` (the list accepted, each leg acknowledged); a buy takes the
/// resting leg, the exchange cancels its sibling (the parked stop), and the strategy
/// sees the list done. The same OCO to the simulated venue (no lists) is refused leg
/// by leg (`UNSUPPORTED`), never sent as two orders. A cancel of one leg of another
/// OCO cancels both legs and ends the list.
#[test]
fn a_strategy_oco_on_the_exchange_cancels_the_sibling_when_a_leg_fills() {
    use peregrine_strategy::msg::{reason, EventKind, NewOrder};
    use peregrine_types::{InstrumentId, ListKind, Price, Qty, Side};
    support::with_timeout(180, || {
        let exchange = support::start("[market_data]\nenabled = false\n");
        let tmp = tempfile::tempdir().unwrap();
        let shm = tmp.path().join("shm");
        let config = engine_config(tmp.path(), &shm, exchange.addr);
        let engine_log = tmp.path().join("engine.log");
        let _engine = Kid(peregrine()
            .args(["engine", "--duration", "120", "--config"])
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&engine_log).unwrap())
            .spawn()
            .unwrap());
        wait_until("the control socket", Duration::from_secs(30), || {
            control_ready(&shm)
        });
        let log = || std::fs::read_to_string(&engine_log).unwrap_or_default();
        wait_until("the venue login", Duration::from_secs(30), || {
            log().contains("venue px: logged in")
        });
        let cfg = peregrine_strategy::RunnerConfig::new(shm.clone(), "maker");
        let (mut api, mut rx) = peregrine_strategy::runner::attach(&cfg).unwrap();
        let mut seen = Vec::new();
        let order = |venue, side, price: i64, qty: i64| {
            NewOrder::limit(
                venue,
                InstrumentId(1),
                side,
                Price::from_raw(price),
                Qty::from_raw(qty),
            )
        };
        // Take profit at 101.00 (rests), or stop out once the last trade falls to
        // 98.00 (sell at 97.00 or better; parked).
        let oco = [
            order(0, Side::Sell, 10100, 1),
            order(0, Side::Sell, 9700, 1).stop(Price::from_raw(9800)),
        ];
        let ids = api.send_list(ListKind::Oco, &oco).unwrap();
        let (profit, stop) = (ids.start, ids.start + 1);
        events_of(
            &mut api,
            &mut rx,
            &mut seen,
            profit,
            &[EventKind::ListStatus, EventKind::Ack],
        );
        events_of(&mut api, &mut rx, &mut seen, stop, &[EventKind::Ack]);
        // The same list to the simulated venue: every leg refused, typed.
        let sim = api
            .send_list(ListKind::Oco, &oco.map(|o| NewOrder { venue: 1, ..o }))
            .unwrap();
        for id in sim.clone() {
            events_of(&mut api, &mut rx, &mut seen, id, &[EventKind::Reject]);
            let r = seen.iter().find(|e| e.client_id == id).unwrap();
            assert_eq!(r.reason, reason::UNSUPPORTED);
        }
        // A buy of 1 at 101.00 takes the resting leg; the exchange cancels the stop.
        let buy = api.send(order(0, Side::Buy, 10100, 1).ioc()).unwrap();
        events_of(&mut api, &mut rx, &mut seen, buy, &[EventKind::Fill]);
        events_of(&mut api, &mut rx, &mut seen, profit, &[EventKind::Fill]);
        events_of(&mut api, &mut rx, &mut seen, stop, &[EventKind::Cancelled]);
        // The list's status, about its leg 0: accepted (0), then done (2).
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        let statuses = |seen: &[peregrine_strategy::msg::Event]| -> Vec<i64> {
            seen.iter()
                .filter(|e| e.client_id == profit && e.kind() == Some(EventKind::ListStatus))
                .map(|e| e.qty)
                .collect()
        };
        while statuses(&seen).len() < 2 && std::time::Instant::now() < deadline {
            match rx.try_pop() {
                Some(ev) => seen.push(ev),
                None => std::thread::sleep(Duration::from_millis(2)),
            }
        }
        assert_eq!(statuses(&seen), vec![0, 2], "{seen:?}");
        let of = |id| -> Vec<_> {
            seen.iter()
                .filter(|e| e.client_id == id)
                .filter_map(|e| e.kind())
                .filter(|k| *k != EventKind::ListStatus)
                .collect()
        };
        assert_eq!(of(profit), vec![EventKind::Ack, EventKind::Fill]);
        assert_eq!(of(stop), vec![EventKind::Ack, EventKind::Cancelled]);
        // Cancelling one leg of a list cancels the list: both legs, then done.
        let ids = api.send_list(ListKind::Oco, &oco).unwrap();
        let (a, b) = (ids.start, ids.start + 1);
        events_of(&mut api, &mut rx, &mut seen, a, &[EventKind::Ack]);
        events_of(&mut api, &mut rx, &mut seen, b, &[EventKind::Ack]);
        api.cancel(b).unwrap();
        events_of(&mut api, &mut rx, &mut seen, b, &[EventKind::Cancelled]);
        events_of(&mut api, &mut rx, &mut seen, a, &[EventKind::Cancelled]);
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        let done = |seen: &[peregrine_strategy::msg::Event]| {
            seen.iter()
                .any(|e| e.client_id == a && e.kind() == Some(EventKind::ListStatus) && e.qty == 2)
        };
        while !done(&seen) && std::time::Instant::now() < deadline {
            match rx.try_pop() {
                Some(ev) => seen.push(ev),
                None => std::thread::sleep(Duration::from_millis(2)),
            }
        }
        assert!(done(&seen), "the cancelled list is done: {seen:?}");
        assert!(!log().contains("unknown id"), "{}", log());
    });
}
