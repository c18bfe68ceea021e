//! `peregrine gateway http` as a process against a real exchange: the REST round
//! trip, and bad input and abuse, each answered with Binance's documented error (or
//! a dropped connection) without affecting other clients or the exchange.

#[path = "support/http.rs"]
mod http_support;
#[path = "http_gateway/orders.rs"]
mod orders;
mod support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use http_support::{
    get, signed, signed_with, try_request, wait_for, ws, ws_next, Opts, Stack, KEYS,
};
use support::with_timeout;

fn order(stack: &Stack, k: usize, side: &str, qty: u32, price: &str) -> http_support::Resp {
    signed(
        stack.http,
        "POST",
        "/api/v3/order",
        k,
        &format!(
            "symbol=PGN-USD&side={side}&type=LIMIT&timeInForce=GTC&quantity={qty}&price={price}"
        ),
    )
}

#[test]
fn order_round_trip_through_the_cli_process() {
    with_timeout(120, || {
        let stack = Stack::start(Opts::default());
        let r = order(&stack, 0, "SELL", 3, "101.05");
        assert_eq!(r.status, 200, "{}", r.body);
        let sell = r.json();
        assert_eq!(
            (sell["status"].as_str(), sell["price"].as_str()),
            (Some("NEW"), Some("101.05"))
        );
        assert_eq!(r.header("x-mbx-order-count-10s"), Some("1"));
        assert!(r.header("x-mbx-used-weight-1m").is_some());
        let r = order(&stack, 1, "BUY", 2, "102.00");
        let buy = r.json();
        assert_eq!(buy["status"], "FILLED", "{}", r.body);
        assert_eq!(buy["fills"][0]["price"], "101.05");
        let id = sell["orderId"].as_u64().unwrap();
        let got = signed(
            stack.http,
            "GET",
            "/api/v3/order",
            0,
            &format!("symbol=PGN-USD&orderId={id}"),
        )
        .json();
        assert_eq!(
            (got["status"].as_str(), got["executedQty"].as_str()),
            (Some("PARTIALLY_FILLED"), Some("2"))
        );
        let c = signed(
            stack.http,
            "DELETE",
            "/api/v3/order",
            0,
            &format!("symbol=PGN-USD&orderId={id}"),
        );
        assert_eq!(c.json()["status"], "CANCELED", "{}", c.body);
        assert!(wait_for(Duration::from_secs(5), || {
            let t = get(stack.http, "/api/v3/trades?symbol=PGN-USD").json();
            t.as_array()
                .is_some_and(|a| a.len() == 1 && a[0]["qty"] == "2")
        }));
        // A new order the checks refuse never reaches a stage histogram.
        let bad = order(&stack, 0, "SELL", 3, "101.057");
        assert_eq!(bad.status, 400, "{}", bad.body);
        // Both placed orders went through every stage, in /peregrine/status ...
        let st = stack.status();
        let stages = st["order_stages"].as_array().expect("order_stages");
        let names: Vec<&str> = stages.iter().filter_map(|s| s["stage"].as_str()).collect();
        assert_eq!(
            names,
            ["route", "checks", "exchange", "wake", "answer", "total"]
        );
        for s in stages {
            let n: u64 = s["buckets"]
                .as_array()
                .unwrap()
                .iter()
                .map(|b| b[1].as_u64().unwrap())
                .sum();
            assert_eq!(n, 2, "stage {}: {s}", s["stage"]);
        }
        // ... and in /metrics, for Prometheus.
        let m = get(stack.http, "/metrics");
        assert_eq!(m.status, 200);
        assert!(
            m.header("content-type")
                .is_some_and(|c| c.starts_with("application/openmetrics-text")),
            "{:?}",
            m.header("content-type")
        );
        for line in [
            "peregrine_http_order_stage_seconds_count{stage=\"total\"} 2",
            "peregrine_http_order_stage_seconds_count{stage=\"exchange\"} 2",
            "peregrine_http_session_up{account=\"1\"} 1",
            "peregrine_build_info{version=",
        ] {
            assert!(m.body.contains(line), "no {line} in\n{}", m.body);
        }
    });
}

#[test]
fn signatures_timestamps_keys_and_symbols() {
    with_timeout(120, || {
        let stack = Stack::start(Opts::default());
        let h = stack.http;
        // No key, unknown key, bad secret, stale and future timestamps, no signature.
        let r = try_request(
            h,
            "GET",
            "/api/v3/account?timestamp=1&signature=00",
            &[],
            "",
        )
        .unwrap();
        assert_eq!((r.status, r.code()), (401, -2014));
        let r = signed_with(
            h,
            "GET",
            "/api/v3/account",
            "nobody-has-this-key",
            "x",
            "",
            http_support::now_ms(),
        );
        assert_eq!((r.status, r.code()), (401, -2015));
        let r = signed_with(
            h,
            "GET",
            "/api/v3/account",
            KEYS[0].1,
            "wrong-secret",
            "",
            http_support::now_ms(),
        );
        assert_eq!((r.status, r.code()), (400, -1022));
        let r = signed_with(
            h,
            "GET",
            "/api/v3/account",
            KEYS[0].1,
            KEYS[0].2,
            "",
            http_support::now_ms() - 60_000,
        );
        assert_eq!((r.status, r.code()), (400, -1021));
        let r = signed_with(
            h,
            "GET",
            "/api/v3/account",
            KEYS[0].1,
            KEYS[0].2,
            "",
            http_support::now_ms() + 5_000,
        );
        assert_eq!((r.status, r.code()), (400, -1021));
        let ts = http_support::now_ms();
        let r = try_request(
            h,
            "GET",
            &format!("/api/v3/account?timestamp={ts}"),
            &[("X-MBX-APIKEY", KEYS[0].1)],
            "",
        )
        .unwrap();
        assert_eq!((r.status, r.code()), (400, -1102));
        // A signature over other parameters than those sent.
        let sig = peregrine_http::dialect::auth::sign_hex(
            KEYS[0].2.as_bytes(),
            format!("timestamp={ts}").as_bytes(),
        );
        let r = try_request(
            h,
            "GET",
            &format!("/api/v3/openOrders?symbol=PGN-USD&timestamp={ts}&signature={sig}"),
            &[("X-MBX-APIKEY", KEYS[0].1)],
            "",
        )
        .unwrap();
        assert_eq!(r.code(), -1022);
        // Unknown symbol, off-tick price, lot, precision, unknown parameter, duplicates.
        assert_eq!(order(&stack, 0, "BUY", 1, "100.02").code(), -1013);
        assert_eq!(order(&stack, 0, "BUY", 1, "100.001").code(), -1111);
        assert_eq!(order(&stack, 0, "BUY", 1, "150.05").code(), -1013);
        assert_eq!(order(&stack, 0, "BUY", 100_001, "100.00").code(), -1013);
        let r = signed(
            h,
            "POST",
            "/api/v3/order",
            0,
            "symbol=NOPE&side=BUY&type=LIMIT&timeInForce=GTC&quantity=1&price=100",
        );
        assert_eq!(r.code(), -1121);
        let r = signed(
            h,
            "POST",
            "/api/v3/order",
            0,
            "symbol=PGN-USD&side=BUY&type=LIMIT&timeInForce=GTC&quantity=1&price=100&colour=red",
        );
        assert_eq!(r.code(), -1104);
        let r = signed(
            h,
            "GET",
            "/api/v3/openOrders",
            0,
            "symbol=PGN-USD&symbol=PGN-USD",
        );
        assert_eq!(r.code(), -1101);
        assert_eq!(get(h, "/api/v3/depth?symbol=pgn-usd").code(), -1121);
        assert_eq!(
            get(h, "/api/v3/klines?symbol=PGN-USD&interval=7m").code(),
            -1120
        );
        assert_eq!(get(h, "/api/v3/depth?symbol=PGN-USD&limit=0").code(), -1130);
        // A key reaches only its own account.
        let id = order(&stack, 0, "SELL", 1, "140.00").json()["orderId"]
            .as_u64()
            .unwrap();
        let r = signed(
            h,
            "GET",
            "/api/v3/order",
            1,
            &format!("symbol=PGN-USD&orderId={id}"),
        );
        assert_eq!(r.code(), -2013);
        let r = signed(
            h,
            "DELETE",
            "/api/v3/order",
            1,
            &format!("symbol=PGN-USD&orderId={id}"),
        );
        assert_eq!(r.code(), -2011);
        let r = signed(
            h,
            "GET",
            "/api/v3/order",
            0,
            &format!("symbol=PGN-USD&orderId={id}"),
        );
        assert_eq!(r.json()["status"], "NEW");
        // Nothing of that reached the exchange as a bad order: it is healthy.
        let mut native = http_support::Native::login(&stack, 4);
        native.send(&support::order(
            1,
            peregrine_types::Side::Buy,
            10_000,
            1,
            peregrine_types::TimeInForce::Gtc,
        ));
        assert!(matches!(
            native.recv_report(),
            peregrine_wire::v2::Outbound::Accepted(_)
        ));
    });
}

#[test]
fn request_weight_and_order_rate_limits() {
    with_timeout(120, || {
        let stack = Stack::start(Opts {
            gateway_extra: "[limits]\nrequest_weight_per_minute = 50\norders_per_10s = 3".into(),
            ..Opts::default()
        });
        let h = stack.http;
        let statuses: Vec<u16> = (0..3)
            .map(|_| get(h, "/api/v3/exchangeInfo").status)
            .collect();
        assert_eq!(statuses, [200, 200, 429]);
        let r = get(h, "/api/v3/exchangeInfo");
        assert_eq!((r.status, r.code()), (429, -1003));
        assert!(r
            .header("retry-after")
            .and_then(|v| v.parse::<u64>().ok())
            .is_some_and(|s| (1..=60).contains(&s)));
        assert_eq!(r.header("x-mbx-used-weight-1m"), Some("40"));
        // Orders per account per 10 s (a fresh minute of weight is not needed: 1 each).
        let stack2 = Stack::start(Opts {
            gateway_extra: "[limits]\norders_per_10s = 3".into(),
            ..Opts::default()
        });
        let codes: Vec<i64> = (0..4)
            .map(|i| order(&stack2, 0, "SELL", 1, &format!("14{i}.00")).code())
            .collect();
        assert_eq!(codes, [0, 0, 0, -1015]);
        let r = order(&stack2, 0, "SELL", 1, "145.00");
        assert_eq!(r.status, 429);
        assert_eq!(
            order(&stack2, 1, "SELL", 1, "145.00").status,
            200,
            "another account is not limited"
        );
    });
}

#[test]
fn huge_bodies_slow_clients_and_connection_floods() {
    with_timeout(120, || {
        let stack = Stack::start(Opts {
            gateway_extra: "[limits]\nmax_body_bytes = 4096\nheader_timeout_ms = 500\nmax_connections_per_ip = 40".into(),
            ..Opts::default()
        });
        let h = stack.http;
        // A body over the limit: 413 with a Binance error body.
        let big = "a=".to_owned() + &"x".repeat(100_000);
        let r = try_request(
            h,
            "POST",
            "/api/v3/order",
            &[("X-MBX-APIKEY", KEYS[0].1)],
            &big,
        )
        .unwrap();
        assert_eq!((r.status, r.code()), (413, -1000));
        // A body declared far over the limit is refused before any of it is sent.
        let mut s = TcpStream::connect(h).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s.write_all(
            b"POST /api/v3/order HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 10485760\r\n\r\n",
        )
        .unwrap();
        let mut raw = Vec::new();
        let _ = s.read_to_end(&mut raw);
        let r = http_support::parse_response(&raw).unwrap();
        assert_eq!((r.status, r.code()), (413, -1000), "{}", r.body);
        // Slow clients: 30 connections send half a request head and stall.
        let mut slow: Vec<TcpStream> = (0..30)
            .map(|_| {
                let mut s = TcpStream::connect(h).unwrap();
                s.write_all(b"GET /api/v3/ping HTTP/1.1\r\nHost: x\r\n")
                    .unwrap();
                s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
                s
            })
            .collect();
        // ... while a normal client is served (before the stalled ones are dropped:
        // they hold their slots until the header timeout).
        assert_eq!(get(h, "/api/v3/ping").status, 200);
        // The stalled ones are cut off after the header timeout.
        for s in &mut slow {
            let mut buf = [0u8; 256];
            let n = s.read(&mut buf).unwrap_or(0);
            let text = String::from_utf8_lossy(&buf[..n]);
            assert!(n == 0 || text.starts_with("HTTP/1.1 408"), "{text}");
        }
        assert!(wait_for(Duration::from_secs(5), || try_request(
            h,
            "GET",
            "/api/v3/ping",
            &[],
            ""
        )
        .is_ok_and(|r| r.status == 200)));
    });
}

/// More connections from one address than `max_connections_per_ip`: the extra one is
/// closed unanswered, and served once the others are gone. The held connections have
/// each been answered once (so the gateway has counted them) and stay open on
/// keep-alive; the header timeout is far longer than the test, so no clock decides
/// anything.
#[test]
fn connections_over_the_per_address_limit_are_closed() {
    with_timeout(120, || {
        let stack = Stack::start(Opts {
            gateway_extra: "[limits]\nheader_timeout_ms = 600000\nmax_connections_per_ip = 40"
                .into(),
            ..Opts::default()
        });
        let h = stack.http;
        let ping = b"GET /api/v3/ping HTTP/1.1\r\nHost: x\r\n\r\n";
        let held: Vec<TcpStream> = (0..40)
            .map(|i| {
                let mut s = TcpStream::connect(h).unwrap();
                s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
                s.write_all(ping).unwrap();
                let mut buf = [0u8; 512];
                let n = s.read(&mut buf).unwrap();
                let text = String::from_utf8_lossy(&buf[..n]);
                assert!(text.starts_with("HTTP/1.1 200"), "connection {i}: {text}");
                s
            })
            .collect();
        let mut extra = TcpStream::connect(h).unwrap();
        extra
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        let _ = extra.write_all(ping);
        let mut buf = [0u8; 64];
        let n = extra.read(&mut buf).unwrap_or(0);
        assert_eq!(
            n,
            0,
            "over the per-address limit yet answered: {}",
            String::from_utf8_lossy(&buf[..n])
        );
        drop(held);
        assert!(wait_for(Duration::from_secs(30), || try_request(
            h,
            "GET",
            "/api/v3/ping",
            &[],
            ""
        )
        .is_ok_and(|r| r.status == 200)));
    });
}

#[test]
fn websocket_floods_and_slow_readers_are_cut_off_alone() {
    with_timeout(120, || {
        let stack = Stack::start(Opts {
            gateway_extra: "[ws]\nlag_limit = 16\nmax_incoming_per_second = 5".into(),
            ..Opts::default()
        });
        let h = stack.http;
        let mut good = ws(h, "/ws/pgn-usd@depth@0ms");
        let mut slow = ws(h, "/ws/pgn-usd@depth@0ms");
        let mut flood = ws(h, "/ws");
        for i in 0..20 {
            let msg = format!("{{\"method\":\"LIST_SUBSCRIPTIONS\",\"id\":{i}}}");
            if flood.send(tungstenite::Message::Text(msg.into())).is_err() {
                break;
            }
        }
        let mut answers = 0;
        loop {
            match flood.read() {
                Ok(tungstenite::Message::Text(_)) => answers += 1,
                Ok(tungstenite::Message::Close(f)) => {
                    assert_eq!(f.map(|f| u16::from(f.code)), Some(1008));
                    break;
                }
                Ok(_) => {}
                Err(_) => break,
            }
        }
        assert!(answers <= 5, "{answers} answers to a flood");
        // 40 book changes; the good subscriber reads each; the slow one reads nothing.
        for i in 0..40 {
            let r = order(
                &stack,
                0,
                "SELL",
                1,
                &format!("{}.{:02}", 120 + i / 20, (i % 20) * 5),
            );
            assert_eq!(r.status, 200, "{}", r.body);
            let ev = ws_next(&mut good).expect("the good subscriber was cut off");
            assert_eq!(ev["e"], "depthUpdate");
        }
        // The slow reader lost its place: the server closed it.
        let mut closed = false;
        for _ in 0..100 {
            match slow.read() {
                Ok(tungstenite::Message::Close(_)) | Err(_) => {
                    closed = true;
                    break;
                }
                Ok(_) => {}
            }
        }
        assert!(
            closed,
            "a reader 40 events behind with lag_limit 16 is still connected"
        );
        // The gateway and the exchange serve on.
        assert_eq!(order(&stack, 1, "BUY", 1, "119.00").status, 200);
    });
}

/// Sends `{"method", "params", "id"}` and returns the answer with that id (events
/// that arrive first are skipped).
fn ws_call(
    w: &mut http_support::Ws,
    method: &str,
    params: serde_json::Value,
    id: u64,
) -> serde_json::Value {
    let msg = serde_json::json!({"method": method, "params": params, "id": id}).to_string();
    w.send(tungstenite::Message::Text(msg.into())).unwrap();
    loop {
        let v = ws_next(w).expect("closed before answering");
        if v["id"] == id {
            return v;
        }
    }
}

/// The next event on `w` for which `pred` holds.
fn ws_until(
    w: &mut http_support::Ws,
    pred: impl Fn(&serde_json::Value) -> bool,
) -> serde_json::Value {
    loop {
        let v = ws_next(w).expect("closed while waiting for an event");
        if pred(&v) {
            return v;
        }
    }
}

/// What ccxt.pro and freqtrade need of the dialect: `/ws/<anything>` and `/stream`
/// with no streams, then `SUBSCRIBE`; the state streams' first event at once; the
/// `@aggTrade`, `@ticker`, `@miniTicker` and all-market ticker streams; a message
/// over the limit closed with 1009; cancel-replace; a market buy by cost; and
/// `recvWindow=0`'s message.
#[test]
fn binance_stream_forms_new_streams_and_endpoints() {
    with_timeout(120, || {
        let stack = Stack::start(Opts::default());
        let h = stack.http;
        // ccxt.pro opens /ws/<number> and subscribes by message.
        let mut a = ws(h, "/ws/0");
        let r = ws_call(
            &mut a,
            "SUBSCRIBE",
            serde_json::json!(["pgn-usd@bookTicker", "pgn-usd@aggTrade", "pgn-usd@ticker"]),
            1,
        );
        assert!(r["result"].is_null(), "{r}");
        // A quiet book: the ticker's state comes at once.
        let top = ws_until(&mut a, |v| v.get("u").is_some() && v.get("b").is_some());
        assert_eq!(top["s"], "PGN-USD");
        let list = ws_call(&mut a, "LIST_SUBSCRIPTIONS", serde_json::Value::Null, 2);
        assert_eq!(
            list["result"],
            serde_json::json!(["pgn-usd@aggTrade", "pgn-usd@bookTicker", "pgn-usd@ticker"])
        );
        let mut b = ws(h, "/stream");
        let r = ws_call(
            &mut b,
            "SUBSCRIBE",
            serde_json::json!(["!miniTicker@arr"]),
            3,
        );
        assert!(r["result"].is_null(), "{r}");
        // Unknown names in a path are ignored, as Binance does.
        let mut c = ws(h, "/ws/nothing@here/pgn-usd@trade");
        let list = ws_call(&mut c, "LIST_SUBSCRIPTIONS", serde_json::Value::Null, 4);
        assert_eq!(list["result"], serde_json::json!(["pgn-usd@trade"]));

        assert_eq!(order(&stack, 0, "SELL", 5, "101.00").status, 200);
        // The gateway's book (which a buy by cost is priced from) follows the feed.
        ws_until(&mut a, |v| v["a"] == "101.00");
        // Three bought by cost: 303.00 at 101.00.
        let r = signed(
            h,
            "POST",
            "/api/v3/order",
            1,
            "symbol=PGN-USD&side=BUY&type=MARKET&quoteOrderQty=303.00",
        );
        assert_eq!(r.status, 200, "{}", r.body);
        let o = r.json();
        assert_eq!(
            (
                o["status"].as_str(),
                o["executedQty"].as_str(),
                o["cummulativeQuoteQty"].as_str()
            ),
            (Some("FILLED"), Some("3"), Some("303.00"))
        );
        assert_eq!(o["origQuoteOrderQty"], "303.00");
        let agg = ws_until(&mut a, |v| v["e"] == "aggTrade");
        assert_eq!(
            (agg["p"].as_str(), agg["q"].as_str()),
            (Some("101.00"), Some("3"))
        );
        assert_eq!(agg["a"], agg["f"]);
        let t = ws_until(&mut a, |v| v["e"] == "24hrTicker" && v["c"] == "101.00");
        assert_eq!(
            (t["v"].as_str(), t["a"].as_str(), t["A"].as_str()),
            (Some("3"), Some("101.00"), Some("2"))
        );
        assert_eq!(t["n"], 1);
        let m = ws_until(&mut b, |v| v["stream"] == "!miniTicker@arr");
        assert_eq!(m["data"][0]["e"], "24hrMiniTicker");
        assert_eq!(m["data"][0]["c"], "101.00");
        // A market buy for less than one lot: refused, nothing sent.
        let r = signed(
            h,
            "POST",
            "/api/v3/order",
            1,
            "symbol=PGN-USD&side=BUY&type=MARKET&quoteOrderQty=1.00",
        );
        assert_eq!(r.code(), -2010, "{}", r.body);
        let r = signed(
            h,
            "POST",
            "/api/v3/order",
            1,
            "symbol=PGN-USD&side=BUY&type=MARKET&quoteOrderQty=1&quantity=1",
        );
        assert_eq!(r.code(), -1128, "{}", r.body);

        // Cancel-replace: the rest of the sell moves to 102.00 as a new order.
        let id = o["orderId"].as_u64().unwrap() - 1;
        let r = signed(
            h,
            "POST",
            "/api/v3/order/cancelReplace",
            0,
            &format!(
                "symbol=PGN-USD&side=SELL&type=LIMIT&timeInForce=GTC&quantity=2&price=102.00\
                 &cancelReplaceMode=STOP_ON_FAILURE&cancelOrderId={id}"
            ),
        );
        assert_eq!(r.status, 200, "{}", r.body);
        let v = r.json();
        assert_eq!(
            (v["cancelResult"].as_str(), v["newOrderResult"].as_str()),
            (Some("SUCCESS"), Some("SUCCESS"))
        );
        assert_eq!(v["cancelResponse"]["orderId"].as_u64(), Some(id));
        assert_eq!(v["newOrderResponse"]["price"], "102.00");
        // Again: the old order is gone, so the cancel fails and nothing is placed.
        let r = signed(
            h,
            "POST",
            "/api/v3/order/cancelReplace",
            0,
            &format!(
                "symbol=PGN-USD&side=SELL&type=LIMIT&timeInForce=GTC&quantity=2&price=103.00\
                 &cancelReplaceMode=STOP_ON_FAILURE&cancelOrderId={id}"
            ),
        );
        assert_eq!((r.status, r.code()), (400, -2022), "{}", r.body);
        let v = r.json();
        assert_eq!(v["data"]["newOrderResult"], "NOT_ATTEMPTED");
        assert_eq!(v["data"]["cancelResponse"]["code"], -2011);
        let open = signed(h, "GET", "/api/v3/openOrders", 0, "symbol=PGN-USD").json();
        assert_eq!(open.as_array().map(Vec::len), Some(1), "{open}");

        let r = signed(h, "GET", "/api/v3/openOrders", 0, "recvWindow=0");
        assert_eq!(
            (r.code(), r.json()["msg"].as_str()),
            (-1131, Some("recvWindow must be greater than 0."))
        );

        // A message over ws.max_message_bytes (4096): closed with 1009.
        a.send(tungstenite::Message::Text("x".repeat(5000).into()))
            .unwrap();
        let code = loop {
            match a.read() {
                Ok(tungstenite::Message::Close(f)) => break f.map(|f| u16::from(f.code)),
                Ok(_) => {}
                Err(_) => break None,
            }
        };
        assert_eq!(code, Some(1009));
    });
}

#[test]
fn depth_stream_continues_the_rest_snapshot() {
    with_timeout(120, || {
        let stack = Stack::start(Opts::default());
        let h = stack.http;
        let mut stream = ws(h, "/stream?streams=pgn-usd@depth@0ms");
        order(&stack, 0, "SELL", 2, "101.00");
        let snap = get(h, "/api/v3/depth?symbol=PGN-USD&limit=1000").json();
        let last = snap["lastUpdateId"].as_u64().unwrap();
        for (k, p) in [(1, "99.00"), (2, "99.50"), (1, "102.00")] {
            order(
                &stack,
                k,
                if p.starts_with("99") { "BUY" } else { "SELL" },
                1,
                p,
            );
        }
        let mut asks: std::collections::BTreeMap<String, String> = snap["asks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| (l[0].as_str().unwrap().into(), l[1].as_str().unwrap().into()))
            .collect();
        let mut bids = std::collections::BTreeMap::<String, String>::new();
        let mut prev: Option<u64> = None;
        while bids.len() < 2 || !asks.contains_key("102.00") {
            let m = ws_next(&mut stream).expect("stream closed");
            assert_eq!(m["stream"], "pgn-usd@depth@0ms");
            let d = &m["data"];
            let (first, u) = (d["U"].as_u64().unwrap(), d["u"].as_u64().unwrap());
            if u <= last {
                continue;
            }
            match prev {
                None => assert!(first <= last + 1 && u > last),
                Some(p) => assert_eq!(first, p + 1),
            }
            prev = Some(u);
            for (side, key) in [(&mut bids, "b"), (&mut asks, "a")] {
                for l in d[key].as_array().unwrap() {
                    let (p, q) = (
                        l[0].as_str().unwrap().to_owned(),
                        l[1].as_str().unwrap().to_owned(),
                    );
                    if q == "0" {
                        side.remove(&p);
                    } else {
                        side.insert(p, q);
                    }
                }
            }
        }
        let book = get(h, "/api/v3/depth?symbol=PGN-USD").json();
        let rest_asks: Vec<(String, String)> = book["asks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| (l[0].as_str().unwrap().into(), l[1].as_str().unwrap().into()))
            .collect();
        assert_eq!(asks.into_iter().collect::<Vec<_>>(), rest_asks);
        assert_eq!(bids.len(), 2);
    });
}

#[test]
fn peregrine_up_starts_the_gateway_and_prints_its_url() {
    with_timeout(180, || {
        use std::io::BufRead;
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_peregrine"))
            .args(["up", "--duration", "8", "--quiet"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
        let url = loop {
            let line = lines
                .next()
                .expect("up ended before printing the gateway")
                .unwrap();
            if let Some(rest) = line.split("trade by hand: ").nth(1) {
                break rest
                    .split_whitespace()
                    .next()
                    .unwrap()
                    .trim_end_matches('/')
                    .to_owned();
            }
        };
        let addr: std::net::SocketAddr = url.trim_start_matches("http://").parse().unwrap();
        assert!(wait_for(Duration::from_secs(20), || {
            try_request(addr, "GET", "/peregrine/status", &[], "")
                .is_ok_and(|r| r.body.contains("\"up\":true") && r.body.contains("\"synced\":true"))
        }));
        assert_eq!(get(addr, "/api/v3/depth?symbol=PGN-USD").status, 200);
        assert_eq!(get(addr, "/").status, 200);
        for _ in lines.by_ref() {}
        assert!(child.wait().unwrap().success(), "peregrine up failed");
    });
}
