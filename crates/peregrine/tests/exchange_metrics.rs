//! `/metrics` of a real `peregrine exchange`: known activity over the wire (orders
//! that trade, one reject, a cancel, a client sending garbage), then a scrape over a
//! plain `TcpStream` whose values must match that activity exactly (OpenMetrics
//! text from `peregrine-metrics`; `/health` and error answers too).

mod support;

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use peregrine_types::{Side, TimeInForce};
use peregrine_wire::v2::Outbound;
use support::{cancel, order, start, with_timeout, Client, Exchange};

/// Publish interval of the test config, milliseconds.
const PUBLISH_MS: u64 = 50;

fn start_with_metrics(topology: &str) -> (Exchange, SocketAddr, tempfile::TempDir) {
    let journal = tempfile::tempdir().unwrap();
    let ex = start(&format!(
        "topology = \"{topology}\"\n\
         [metrics]\nenabled = true\nlisten = \"127.0.0.1:0\"\npublish_interval_ms = {PUBLISH_MS}\n\
         depth_levels = 3\ndepth_interval_us = 500\n\
         [journal]\ndir = \"{}\"\nfsync = \"batch\"\n\
         [market_data]\nenabled = false",
        journal.path().display()
    ));
    let log = ex.log_text();
    let addr = log
        .lines()
        .find_map(|l| l.split("metrics on http://").nth(1))
        .and_then(|rest| rest.strip_suffix("/metrics"))
        .unwrap_or_else(|| panic!("no metrics address in the log:\n{log}"))
        .parse()
        .unwrap();
    (ex, addr, journal)
}

/// One scrape: status line, headers and body.
fn scrape(addr: SocketAddr) -> (String, String) {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).unwrap();
    let (head, body) = raw.split_once("\r\n\r\n").expect("a header block");
    (head.to_string(), body.to_string())
}

/// `series → value` of every sample line.
fn samples(body: &str) -> HashMap<String, String> {
    body.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .filter_map(|l| l.rsplit_once(' '))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// Scrapes until the samples settle on the driven activity (the matching and
/// session threads publish independently, each at most every `PUBLISH_MS`), or
/// fails after 10 s.
fn scrape_settled(addr: SocketAddr) -> HashMap<String, String> {
    let deadline = Instant::now() + Duration::from_secs(10);
    let settled = [
        ("peregrine_exchange_engine_sequence", "6"),
        ("peregrine_exchange_depth_engine_sequence", "6"),
        ("peregrine_exchange_connections_accepted_total", "3"),
        ("peregrine_exchange_sessions_connected", "2"),
    ];
    loop {
        let (head, body) = scrape(addr);
        assert!(head.starts_with("HTTP/1.1 200 OK"), "{head}");
        assert!(
            head.contains("Content-Type: application/openmetrics-text; version=1.0.0"),
            "{head}"
        );
        let s = samples(&body);
        if settled
            .iter()
            .all(|(k, v)| s.get(*k).map(String::as_str) == Some(*v))
        {
            return s;
        }
        assert!(Instant::now() < deadline, "never settled:\n{body}");
        std::thread::sleep(Duration::from_millis(PUBLISH_MS));
    }
}

fn order_id(m: Outbound) -> peregrine_types::OrderId {
    match m {
        Outbound::Accepted(a) => a.order_id,
        other => panic!("expected Accepted, got {other:?}"),
    }
}

/// Drives: a bid of 10 @ 100.00 (A), an IOC sell of 4 that trades against it (B),
/// an ask of 3 @ 100.10 (B), a buy at 200.00 rejected out of band (A), a bid of 2
/// @ 99.50 (A), A's cancel of the rest of its first bid, and a third connection that
/// sends garbage before logging in.
fn drive(addr: SocketAddr) -> (Client, Client) {
    let mut a = Client::login(addr, 1);
    let mut b = Client::login(addr, 2);
    a.send(&order(1, Side::Buy, 10_000, 10, TimeInForce::Gtc));
    let first = order_id(a.recv_report());
    b.send(&order(2, Side::Sell, 10_000, 4, TimeInForce::Ioc));
    order_id(b.recv_report());
    assert!(matches!(b.recv_report(), Outbound::Fill(_)));
    assert!(matches!(a.recv_report(), Outbound::Fill(_)));
    b.send(&order(3, Side::Sell, 10_010, 3, TimeInForce::Gtc));
    order_id(b.recv_report());
    a.send(&order(4, Side::Buy, 20_000, 1, TimeInForce::Gtc));
    match a.recv_report() {
        Outbound::Rejected(r) => assert_eq!(r.reason.0, 4, "price out of band"),
        other => panic!("expected Rejected, got {other:?}"),
    }
    a.send(&order(5, Side::Buy, 9_950, 2, TimeInForce::Gtc));
    order_id(a.recv_report());
    a.send(&cancel(6, first));
    assert!(matches!(a.recv_report(), Outbound::Cancelled(_)));
    let mut bad = Client::connect(addr);
    bad.send_raw(&[0xFF; 64]);
    assert!(bad.closed_by_peer());
    (a, b)
}

fn check_activity(s: &HashMap<String, String>) {
    let want = [
        (
            "peregrine_exchange_orders_received_total{type=\"limit\"}",
            "5",
        ),
        (
            "peregrine_exchange_orders_received_total{type=\"market\"}",
            "0",
        ),
        (
            "peregrine_exchange_requests_received_total{kind=\"new_order\"}",
            "5",
        ),
        (
            "peregrine_exchange_requests_received_total{kind=\"cancel\"}",
            "1",
        ),
        ("peregrine_exchange_orders_accepted_total", "4"),
        ("peregrine_exchange_trades_total", "1"),
        (
            "peregrine_exchange_rejects_total{reason=\"price_out_of_band\",code=\"4\"}",
            "1",
        ),
        (
            "peregrine_exchange_rejects_total{reason=\"invalid_qty\",code=\"1\"}",
            "0",
        ),
        (
            "peregrine_exchange_cancels_total{reason=\"user_requested\"}",
            "1",
        ),
        ("peregrine_exchange_commands_total", "6"),
        ("peregrine_exchange_engine_sequence", "6"),
        (
            "peregrine_exchange_matching_latency_seconds_count{kind=\"new_order\"}",
            "5",
        ),
        (
            "peregrine_exchange_matching_latency_seconds_bucket{le=\"+Inf\",kind=\"cancel\"}",
            "1",
        ),
        ("peregrine_exchange_ticks_total", "0"),
        ("peregrine_exchange_journal_records_total", "6"),
        (
            "peregrine_exchange_resting_orders{instrument=\"PGN-USD\"}",
            "2",
        ),
        (
            "peregrine_exchange_best_bid_price{instrument=\"PGN-USD\"}",
            "99.5",
        ),
        (
            "peregrine_exchange_best_bid_quantity{instrument=\"PGN-USD\"}",
            "2.0",
        ),
        (
            "peregrine_exchange_best_ask_price{instrument=\"PGN-USD\"}",
            "100.1",
        ),
        (
            "peregrine_exchange_best_ask_quantity{instrument=\"PGN-USD\"}",
            "3.0",
        ),
        (
            "peregrine_exchange_book_level_orders{instrument=\"PGN-USD\",side=\"ask\",level=\"1\"}",
            "1",
        ),
        ("peregrine_exchange_depth_engine_sequence", "6"),
        ("peregrine_exchange_sessions_connected", "2"),
        ("peregrine_exchange_sessions_logged_in", "2"),
        ("peregrine_exchange_connections_accepted_total", "3"),
        ("peregrine_exchange_logins_total", "2"),
        (
            "peregrine_exchange_session_disconnects_total{reason=\"bad_input\"}",
            "1",
        ),
        (
            "peregrine_exchange_session_disconnects_total{reason=\"slow_reader\"}",
            "0",
        ),
    ];
    for (series, value) in want {
        assert_eq!(s.get(series).map(String::as_str), Some(value), "{series}");
    }
    let n = |k: &str| s[k].parse::<u64>().unwrap();
    assert!(n("peregrine_exchange_journal_fsyncs_total") >= 1);
    assert!(n("peregrine_exchange_journal_written_bytes_total") >= 6 * 36);
    // The first segment is a plain file; the helper preparing the next ones is fine.
    assert!(n("peregrine_exchange_journal_segments_plain_total") >= 1);
    assert!(s.contains_key("peregrine_exchange_journal_segments_prepared_total"));
    assert_eq!(n("peregrine_exchange_journal_prepare_failed"), 0);
    let batches = n("peregrine_exchange_batches_total");
    assert!((1..=6).contains(&batches), "{batches} batches");
}

#[test]
fn metrics_match_the_activity_compact() {
    with_timeout(60, || {
        let (ex, metrics, _journal) = start_with_metrics("compact");
        let clients = drive(ex.addr);
        let s = scrape_settled(metrics);
        check_activity(&s);
        assert!(
            !s.contains_key("peregrine_exchange_request_ring_depth"),
            "compact has no rings"
        );
        // Server-side order->ack by stage: every one of the 6 requests, every stage.
        let total = "peregrine_exchange_order_ack_seconds_count{stage=\"total\"}";
        let deadline = Instant::now() + Duration::from_secs(10);
        let s = loop {
            let s = samples(&scrape(metrics).1);
            if s.get(total).map(String::as_str) == Some("6") {
                break s;
            }
            assert!(
                Instant::now() < deadline,
                "ack count never reached 6: {:?}",
                s.get(total)
            );
            std::thread::sleep(Duration::from_millis(PUBLISH_MS));
        };
        for stage in [
            "decode", "queue", "append", "match", "encode", "batch", "durable", "write",
        ] {
            let key = format!("peregrine_exchange_order_ack_seconds_count{{stage=\"{stage}\"}}");
            assert_eq!(s[&key], "6", "{stage}");
        }
        let sum = |stage: &str| -> f64 {
            s[&format!("peregrine_exchange_order_ack_seconds_sum{{stage=\"{stage}\"}}")]
                .parse()
                .unwrap()
        };
        assert!(
            sum("durable") > 0.0,
            "fsync = batch: acks waited for a sync"
        );
        let parts: f64 = [
            "decode", "queue", "append", "match", "encode", "batch", "durable", "write",
        ]
        .iter()
        .map(|st| sum(st))
        .sum();
        assert!(
            (parts - sum("total")).abs() < 1e-6,
            "{parts} vs {}",
            sum("total")
        );
        drop(clients);
        // SIGTERM: a graceful stop that prints the same by stage.
        let (status, out) = ex.terminate();
        assert!(status.success(), "{status:?}\n{out}");
        let line = out
            .lines()
            .find(|l| l.starts_with("ack stage total"))
            .unwrap_or_else(|| panic!("no summary in {out:?}"));
        assert!(line.contains("count         6"), "{line}");
    });
}

#[test]
fn metrics_match_the_activity_split() {
    with_timeout(60, || {
        let (ex, metrics, _journal) = start_with_metrics("split");
        let _clients = drive(ex.addr);
        let s = scrape_settled(metrics);
        check_activity(&s);
        assert_eq!(s["peregrine_exchange_request_ring_depth"], "0");
        assert_eq!(s["peregrine_exchange_report_ring_depth"], "0");
    });
}

#[test]
fn other_paths_and_garbage_get_errors_and_the_endpoint_survives() {
    with_timeout(60, || {
        let (_ex, metrics, _journal) = start_with_metrics("compact");
        let ask = |req: &[u8]| {
            let mut s = TcpStream::connect_timeout(&metrics, Duration::from_secs(5)).unwrap();
            s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            let _ = s.write_all(req);
            let mut out = Vec::new();
            let _ = s.read_to_end(&mut out);
            String::from_utf8_lossy(&out).into_owned()
        };
        assert!(ask(b"GET / HTTP/1.1\r\nConnection: close\r\n\r\n").starts_with("HTTP/1.1 404 "));
        // A TLS hello is not ASCII: tiny_http closes the connection without an answer.
        let tls = ask(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n");
        assert!(tls.is_empty() || tls.starts_with("HTTP/1.1 400 "), "{tls}");
        // A request line without a version: 400.
        let bad = ask(b"GET\r\n\r\n");
        assert!(bad.is_empty() || bad.starts_with("HTTP/1.1 400 "), "{bad}");
        assert!(
            ask(b"DELETE /metrics HTTP/1.1\r\nConnection: close\r\n\r\n")
                .starts_with("HTTP/1.1 405 ")
        );
        let health = ask(b"GET /health HTTP/1.1\r\nConnection: close\r\n\r\n");
        assert!(
            health.starts_with("HTTP/1.1 200 ") && health.ends_with("\r\n\r\nok\n"),
            "{health}"
        );
        let (head, body) = scrape(metrics);
        assert!(head.starts_with("HTTP/1.1 200 OK"), "{head}");
        // A full document is over 32 KiB: still one plain body with its length.
        assert!(
            head.to_ascii_lowercase()
                .contains(&format!("content-length: {}", body.len())),
            "{head}"
        );
        assert!(body.contains("# TYPE peregrine_exchange_trades counter\n"));
        assert!(body.contains("\nperegrine_exchange_trades_total 0\n"));
        assert!(body.contains("\nprocess_resident_memory_bytes "), "{body}");
        assert!(body.contains("\nperegrine_build_info{version="), "{body}");
        assert!(
            body.ends_with("# EOF\n"),
            "{} bytes, tail {:?}",
            body.len(),
            &body[body.len().saturating_sub(200)..]
        );
    });
}
