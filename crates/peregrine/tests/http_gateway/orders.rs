//! The exchange's stops, icebergs, order lists and fees through the Binance dialect
//! (issue 31): one stack with a fee-charging instrument, every mapping checked on
//! what the exchange really did.

use std::time::Duration;

use super::http_support::{get, signed, try_request, wait_for, ws, ws_next, Opts, Stack, KEYS};
use super::support::with_timeout;

const SYM: &str = "symbol=PGN-USD";

fn post(stack: &Stack, k: usize, params: &str) -> serde_json::Value {
    let r = signed(
        stack.http,
        "POST",
        "/api/v3/order",
        k,
        &format!("{SYM}&{params}"),
    );
    assert_eq!(r.status, 200, "{params}: {}", r.body);
    r.json()
}

fn order(stack: &Stack, k: usize, id: u64) -> serde_json::Value {
    signed(
        stack.http,
        "GET",
        "/api/v3/order",
        k,
        &format!("{SYM}&orderId={id}"),
    )
    .json()
}

fn limit(stack: &Stack, k: usize, side: &str, qty: u32, price: &str) -> serde_json::Value {
    post(
        stack,
        k,
        &format!("side={side}&type=LIMIT&timeInForce=GTC&quantity={qty}&price={price}&newOrderRespType=FULL"),
    )
}

#[test]
fn stops_icebergs_order_lists_and_fees_through_the_binance_dialect() {
    with_timeout(180, || {
        let stack = Stack::start(Opts {
            instrument_extra: "[instruments.fees]\nmaker_ppm = 100\ntaker_ppm = 500\n".into(),
            ..Opts::default()
        });
        // Fees: the taker pays 500 ppm of 100.00 x 1 = 0.05 USD (exact integers).
        limit(&stack, 0, "SELL", 1, "100.00");
        let buy = limit(&stack, 1, "BUY", 1, "100.00");
        assert_eq!(buy["status"], "FILLED", "{buy}");
        assert_eq!(
            (
                buy["fills"][0]["commission"].as_str(),
                buy["fills"][0]["commissionAsset"].as_str()
            ),
            (Some("0.05"), Some("USD")),
            "{buy}"
        );
        let acct = signed(stack.http, "GET", "/api/v3/account", 0, "").json();
        assert_eq!(acct["commissionRates"]["taker"], "0.00050000", "{acct}");
        assert_eq!(acct["commissionRates"]["maker"], "0.00010000", "{acct}");
        assert!(wait_for(Duration::from_secs(5), || {
            let t = signed(stack.http, "GET", "/api/v3/myTrades", 0, SYM).json();
            t[0]["commission"] == "0.01" && t[0]["commissionAsset"] == "USD"
        }));

        // A stop-limit: parked (not working), then triggered by a trade at 99.00.
        let bad = signed(
            stack.http,
            "POST",
            "/api/v3/order",
            1,
            &format!("{SYM}&side=SELL&type=STOP_LOSS_LIMIT&timeInForce=GTC&quantity=2&price=98.50&stopPrice=101.00"),
        );
        assert_eq!((bad.status, bad.code()), (400, -2010), "{}", bad.body);
        assert!(bad.body.contains("trigger immediately"), "{}", bad.body);
        for (params, code) in [
            (
                "side=SELL&type=STOP_LOSS_LIMIT&timeInForce=GTC&quantity=2&price=98.50",
                -1102,
            ),
            (
                "side=SELL&type=LIMIT&timeInForce=GTC&quantity=2&price=98.50&stopPrice=99.00",
                -1106,
            ),
            (
                "side=SELL&type=STOP_LOSS&quantity=2&stopPrice=99.00&trailingDelta=50",
                -2010,
            ),
            ("side=SELL&type=MARKET&quantity=2&icebergQty=1", -1106),
            (
                "side=SELL&type=LIMIT&timeInForce=GTC&quantity=2&price=98.50&icebergQty=2",
                -2010,
            ),
        ] {
            let r = signed(
                stack.http,
                "POST",
                "/api/v3/order",
                1,
                &format!("{SYM}&{params}"),
            );
            assert_eq!((r.status, r.code()), (400, code), "{params}: {}", r.body);
        }
        let stop = post(
            &stack,
            1,
            "side=SELL&type=STOP_LOSS_LIMIT&timeInForce=GTC&quantity=2&price=98.50&stopPrice=99.00&newOrderRespType=RESULT",
        );
        let stop_id = stop["orderId"].as_u64().unwrap();
        assert_eq!(
            (stop["status"].as_str(), stop["workingTime"].as_i64()),
            (Some("NEW"), Some(-1)),
            "{stop}"
        );
        let o = order(&stack, 1, stop_id);
        assert_eq!(
            (
                o["type"].as_str(),
                o["stopPrice"].as_str(),
                o["isWorking"].as_bool()
            ),
            (Some("STOP_LOSS_LIMIT"), Some("99.00"), Some(false)),
            "{o}"
        );
        // Not in the book.
        let d = get(stack.http, "/api/v3/depth?symbol=PGN-USD").json();
        assert_eq!(d["asks"].as_array().map(Vec::len), Some(0), "{d}");
        limit(&stack, 2, "BUY", 1, "99.00");
        limit(&stack, 0, "SELL", 1, "99.00");
        assert!(wait_for(Duration::from_secs(5), || {
            order(&stack, 1, stop_id)["isWorking"] == true
        }));
        let o = order(&stack, 1, stop_id);
        assert!(o["workingTime"].as_i64().unwrap() > 0, "{o}");
        assert_eq!(o["status"], "NEW", "{o}");
        // Triggered, it rests at its limit and trades as a limit order.
        let take = limit(&stack, 2, "BUY", 2, "98.50");
        assert_eq!(take["status"], "FILLED", "{take}");
        assert_eq!(order(&stack, 1, stop_id)["status"], "FILLED");

        // An iceberg shows its display quantity only.
        let ice = post(
            &stack,
            0,
            "side=SELL&type=LIMIT&timeInForce=GTC&quantity=10&price=105.00&icebergQty=2&newOrderRespType=RESULT",
        );
        assert_eq!(ice["icebergQty"], "2", "{ice}");
        assert!(wait_for(Duration::from_secs(5), || {
            let d = get(stack.http, "/api/v3/depth?symbol=PGN-USD").json();
            d["asks"][0][0] == "105.00" && d["asks"][0][1] == "2"
        }));
        let ice_id = ice["orderId"].as_u64().unwrap();
        assert_eq!(order(&stack, 0, ice_id)["icebergQty"], "2");

        // An OCO: the limit-maker leg fills, the stop leg expires, the list is done;
        // the owner's user-data stream says so.
        let key = try_request(
            stack.http,
            "POST",
            "/api/v3/userDataStream",
            &[("X-MBX-APIKEY", KEYS[1].1)],
            "",
        )
        .unwrap()
        .json()["listenKey"]
            .as_str()
            .unwrap()
            .to_owned();
        let mut user = ws(stack.http, &format!("/ws/{key}"));
        let r = signed(
            stack.http,
            "POST",
            "/api/v3/orderList/oco",
            1,
            &format!(
                "{SYM}&side=SELL&quantity=1&listClientOrderId=my-oco&aboveType=LIMIT_MAKER&abovePrice=104.00\
                 &belowType=STOP_LOSS_LIMIT&belowStopPrice=90.00&belowPrice=89.00&belowTimeInForce=GTC"
            ),
        );
        assert_eq!(r.status, 200, "{}", r.body);
        let oco = r.json();
        assert_eq!(
            (
                oco["contingencyType"].as_str(),
                oco["listStatusType"].as_str(),
                oco["listClientOrderId"].as_str()
            ),
            (Some("OCO"), Some("EXEC_STARTED"), Some("my-oco")),
            "{oco}"
        );
        let list_id = oco["orderListId"].as_u64().unwrap();
        let reports = oco["orderReports"].as_array().unwrap();
        assert_eq!(reports.len(), 2, "{oco}");
        let types: Vec<&str> = reports
            .iter()
            .map(|o| o["type"].as_str().unwrap())
            .collect();
        assert_eq!(types, ["STOP_LOSS_LIMIT", "LIMIT_MAKER"]);
        assert!(reports
            .iter()
            .all(|o| o["orderListId"].as_u64() == Some(list_id)));
        let open = signed(stack.http, "GET", "/api/v3/openOrderList", 1, "").json();
        assert_eq!(open.as_array().map(Vec::len), Some(1), "{open}");
        let fill = limit(&stack, 2, "BUY", 1, "104.00");
        assert_eq!(fill["status"], "FILLED", "{fill}");
        assert!(wait_for(Duration::from_secs(5), || {
            signed(
                stack.http,
                "GET",
                "/api/v3/orderList",
                1,
                &format!("orderListId={list_id}"),
            )
            .json()["listOrderStatus"]
                == "ALL_DONE"
        }));
        let stop_leg = reports[0]["orderId"].as_u64().unwrap();
        let limit_leg = reports[1]["orderId"].as_u64().unwrap();
        assert_eq!(order(&stack, 1, limit_leg)["status"], "FILLED");
        assert_eq!(
            order(&stack, 1, stop_leg)["status"],
            "EXPIRED",
            "the other leg expires, as on Binance"
        );
        let open = signed(stack.http, "GET", "/api/v3/openOrderList", 1, "").json();
        assert_eq!(open.as_array().map(Vec::len), Some(0), "{open}");
        let mut seen = Vec::new();
        while let Some(ev) = ws_next(&mut user) {
            let done = ev["e"] == "listStatus" && ev["L"] == "ALL_DONE";
            seen.push(ev);
            if done {
                break;
            }
        }
        let starts: Vec<&serde_json::Value> =
            seen.iter().filter(|e| e["e"] == "listStatus").collect();
        assert_eq!(starts.len(), 2, "{seen:?}");
        assert_eq!(
            (
                starts[0]["l"].as_str(),
                starts[0]["c"].as_str(),
                starts[0]["C"].as_str()
            ),
            (Some("EXEC_STARTED"), Some("OCO"), Some("my-oco"))
        );
        assert_eq!(starts[0]["O"].as_array().map(Vec::len), Some(2), "{seen:?}");
        let stop_new = seen
            .iter()
            .find(|e| e["e"] == "executionReport" && e["i"].as_u64() == Some(stop_leg))
            .expect("the stop leg's executionReport");
        assert_eq!(
            (
                stop_new["o"].as_str(),
                stop_new["P"].as_str(),
                stop_new["w"].as_bool(),
                stop_new["g"].as_u64()
            ),
            (
                Some("STOP_LOSS_LIMIT"),
                Some("90.00"),
                Some(false),
                Some(list_id)
            ),
            "{stop_new}"
        );
        let trade = seen
            .iter()
            .find(|e| e["e"] == "executionReport" && e["x"] == "TRADE")
            .expect("the limit leg's trade");
        // 100 ppm maker fee of 104.00.
        assert_eq!(
            (trade["n"].as_str(), trade["N"].as_str()),
            (Some("0.01"), Some("USD")),
            "{trade}"
        );

        // Another list, cancelled as a whole.
        let r = signed(
            stack.http,
            "POST",
            "/api/v3/orderList/oco",
            1,
            &format!(
                "{SYM}&side=SELL&quantity=1&aboveType=LIMIT_MAKER&abovePrice=120.00\
                 &belowType=STOP_LOSS&belowStopPrice=80.00"
            ),
        );
        assert_eq!(r.status, 200, "{}", r.body);
        let id = r.json()["orderListId"].as_u64().unwrap();
        let c = signed(
            stack.http,
            "DELETE",
            "/api/v3/orderList",
            1,
            &format!("{SYM}&orderListId={id}"),
        );
        assert_eq!(c.status, 200, "{}", c.body);
        let c = c.json();
        assert_eq!(c["listOrderStatus"], "ALL_DONE", "{c}");
        let statuses: Vec<&str> = c["orderReports"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["status"].as_str().unwrap())
            .collect();
        assert_eq!(statuses, ["CANCELED", "CANCELED"], "{c}");
        let all = signed(stack.http, "GET", "/api/v3/allOrderList", 1, "").json();
        assert_eq!(all.as_array().map(Vec::len), Some(2), "{all}");
        let again = signed(
            stack.http,
            "DELETE",
            "/api/v3/orderList",
            1,
            &format!("{SYM}&orderListId={id}"),
        );
        assert_eq!((again.status, again.code()), (400, -2011), "{}", again.body);

        // An OTO: the pending leg is parked until the working leg fills.
        let r = signed(
            stack.http,
            "POST",
            "/api/v3/orderList/oto",
            2,
            &format!(
                "{SYM}&workingType=LIMIT&workingSide=BUY&workingPrice=95.00&workingQuantity=1&workingTimeInForce=GTC\
                 &pendingType=LIMIT_MAKER&pendingSide=SELL&pendingPrice=130.00&pendingQuantity=1"
            ),
        );
        assert_eq!(r.status, 200, "{}", r.body);
        let oto = r.json();
        let pending = oto["orderReports"][1]["orderId"].as_u64().unwrap();
        assert_eq!(order(&stack, 2, pending)["isWorking"], false);
        limit(&stack, 0, "SELL", 1, "95.00");
        assert!(wait_for(Duration::from_secs(5), || {
            order(&stack, 2, pending)["isWorking"] == true
        }));
    });
}
