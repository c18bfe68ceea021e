//! The WebSocket API's request methods (`order.place`, `depth`, ...): each is the
//! REST endpoint of the same meaning, run through its own handler.
//!
//! Binance signs a WebSocket API request over its parameters sorted by name
//! (`apiKey` included, `signature` excluded) as `k=v&...`. That signature is checked
//! here (over the values as sent, or form-encoded: clients differ); the request then
//! becomes the REST request it stands for (its parameters as a query string, the
//! API key as the header, signed again with the key's secret so the handler's own
//! checks of key, signature and timestamp run unchanged), and the handler's answer
//! becomes the result (`{"id", "status", "result"}`) or the error
//! (`{"id", "status", "error": {"code", "msg"[, "data"]}}`). Each request is charged
//! the REST endpoint's weight.

use std::net::IpAddr;
use std::sync::Arc;

use axum::extract::State;
use axum::response::Response;
use serde_json::{json, Map, Value};

use crate::app::App;
use crate::dialect::error::ApiError;
use crate::dialect::limits;
use crate::market::feed::now_ms;
use crate::rest::{account, market, replace, trade, Req};

/// A REST handler.
type Handler = fn(State<Arc<App>>, Req) -> futures_util::future::BoxFuture<'static, Response>;

macro_rules! handler {
    ($f:path) => {
        |s, r| Box::pin($f(s, r))
    };
}

/// One method: its name, the REST method and path it stands for, whether it is
/// signed, its handler.
struct Method {
    name: &'static str,
    http: &'static str,
    path: &'static str,
    signed: bool,
    run: Handler,
}

const METHODS: &[Method] = &[
    Method {
        name: "exchangeInfo",
        http: "GET",
        path: "/api/v3/exchangeInfo",
        signed: false,
        run: handler!(market::exchange_info),
    },
    Method {
        name: "depth",
        http: "GET",
        path: "/api/v3/depth",
        signed: false,
        run: handler!(market::depth),
    },
    Method {
        name: "trades.recent",
        http: "GET",
        path: "/api/v3/trades",
        signed: false,
        run: handler!(market::trades),
    },
    Method {
        name: "trades.historical",
        http: "GET",
        path: "/api/v3/historicalTrades",
        signed: false,
        run: handler!(market::historical_trades),
    },
    Method {
        name: "trades.aggregate",
        http: "GET",
        path: "/api/v3/aggTrades",
        signed: false,
        run: handler!(market::agg_trades),
    },
    Method {
        name: "klines",
        http: "GET",
        path: "/api/v3/klines",
        signed: false,
        run: handler!(market::klines),
    },
    Method {
        name: "uiKlines",
        http: "GET",
        path: "/api/v3/uiKlines",
        signed: false,
        run: handler!(market::ui_klines),
    },
    Method {
        name: "avgPrice",
        http: "GET",
        path: "/api/v3/avgPrice",
        signed: false,
        run: handler!(market::avg_price),
    },
    Method {
        name: "ticker.24hr",
        http: "GET",
        path: "/api/v3/ticker/24hr",
        signed: false,
        run: handler!(market::ticker_24hr),
    },
    Method {
        name: "ticker.price",
        http: "GET",
        path: "/api/v3/ticker/price",
        signed: false,
        run: handler!(market::ticker_price),
    },
    Method {
        name: "ticker.book",
        http: "GET",
        path: "/api/v3/ticker/bookTicker",
        signed: false,
        run: handler!(market::book_ticker),
    },
    Method {
        name: "order.place",
        http: "POST",
        path: "/api/v3/order",
        signed: true,
        run: handler!(trade::new_order),
    },
    Method {
        name: "order.test",
        http: "POST",
        path: "/api/v3/order/test",
        signed: true,
        run: handler!(trade::test_order),
    },
    Method {
        name: "order.status",
        http: "GET",
        path: "/api/v3/order",
        signed: true,
        run: handler!(trade::get_order),
    },
    Method {
        name: "order.cancel",
        http: "DELETE",
        path: "/api/v3/order",
        signed: true,
        run: handler!(trade::cancel_order),
    },
    Method {
        name: "order.cancelReplace",
        http: "POST",
        path: "/api/v3/order/cancelReplace",
        signed: true,
        run: handler!(replace::cancel_replace),
    },
    Method {
        name: "openOrders.status",
        http: "GET",
        path: "/api/v3/openOrders",
        signed: true,
        run: handler!(trade::open_orders),
    },
    Method {
        name: "openOrders.cancelAll",
        http: "DELETE",
        path: "/api/v3/openOrders",
        signed: true,
        run: handler!(trade::cancel_open_orders),
    },
    Method {
        name: "allOrders",
        http: "GET",
        path: "/api/v3/allOrders",
        signed: true,
        run: handler!(account::all_orders),
    },
    Method {
        name: "myTrades",
        http: "GET",
        path: "/api/v3/myTrades",
        signed: true,
        run: handler!(account::my_trades),
    },
    Method {
        name: "account.status",
        http: "GET",
        path: "/api/v3/account",
        signed: true,
        run: handler!(account::account),
    },
];

/// A WebSocket API error answer.
pub fn error(id: &Value, e: &ApiError) -> Value {
    json!({"id": id, "status": e.status.as_u16(), "error": {"code": e.code, "msg": e.msg}})
}

/// Is `name` one of these methods?
pub fn known(name: &str) -> bool {
    METHODS.iter().any(|m| m.name == name)
}

/// A parameter's value as text (strings as they are, numbers and booleans as JSON).
fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The sorted `k=v&...` over `params` but `signature`: values as sent (`raw`) or
/// form-encoded.
pub fn payload(params: &Map<String, Value>, raw: bool) -> String {
    let mut keys: Vec<&String> = params.keys().filter(|k| *k != "signature").collect();
    keys.sort();
    if raw {
        let parts: Vec<String> = keys
            .iter()
            .map(|k| format!("{k}={}", text(&params[*k])))
            .collect();
        return parts.join("&");
    }
    let mut ser = form_urlencoded::Serializer::new(String::new());
    for k in keys {
        ser.append_pair(k, &text(&params[k]));
    }
    ser.finish()
}

/// Runs `name` with `params`; the answer to send.
pub async fn call(
    app: &Arc<App>,
    ip: IpAddr,
    id: &Value,
    name: &str,
    params: &Map<String, Value>,
) -> Value {
    let Some(m) = METHODS.iter().find(|m| m.name == name) else {
        return error(
            id,
            &ApiError::bad(-1020, "This operation is not supported."),
        );
    };
    let mut rest: Map<String, Value> = params.clone();
    rest.remove("returnRateLimits");
    let api_key = rest.remove("apiKey").map(|v| text(&v));
    let signature = rest.remove("signature").map(|v| text(&v));
    let mut query = {
        let mut ser = form_urlencoded::Serializer::new(String::new());
        for (k, v) in &rest {
            ser.append_pair(k, &text(v));
        }
        ser.finish()
    };
    if m.signed {
        let key = match app.keys.lookup(api_key.as_deref()) {
            Ok(k) => k,
            Err(e) => return error(id, &e),
        };
        let Some(sig) = signature else {
            return error(id, &ApiError::mandatory("signature"));
        };
        if !(key.verify(payload(params, true).as_bytes(), &sig)
            || key.verify(payload(params, false).as_bytes(), &sig))
        {
            return error(id, &ApiError::bad_signature());
        }
        let sig = key.sign(query.as_bytes());
        query.push_str(if query.is_empty() {
            "signature="
        } else {
            "&signature="
        });
        query.push_str(&sig);
    }
    if let Err(e) = app
        .limits
        .charge_weight(ip, limits::weight(m.http, m.path, &query), now_ms())
    {
        return error(id, &e);
    }
    let req = Req {
        ip,
        query,
        body: String::new(),
        api_key,
        arrived: std::time::Instant::now(),
    };
    let resp = (m.run)(State(Arc::clone(app)), req).await;
    let status = resp.status().as_u16();
    let body = axum::body::to_bytes(resp.into_body(), usize::MAX)
        .await
        .ok()
        .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
        .unwrap_or(Value::Null);
    if status == 200 {
        json!({"id": id, "status": 200, "result": body})
    } else {
        json!({"id": id, "status": status, "error": body})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_are_sorted_without_the_signature() {
        let v: Value = serde_json::from_str(
            r#"{"timestamp": 1700000000000, "apiKey": "abc", "signature": "x", "symbol": "PGN-USD", "price": "1.5", "returnRateLimits": false}"#,
        )
        .unwrap();
        let m = v.as_object().unwrap();
        assert_eq!(
            payload(m, true),
            "apiKey=abc&price=1.5&returnRateLimits=false&symbol=PGN-USD&timestamp=1700000000000"
        );
        let v: Value = serde_json::from_str(r#"{"newClientOrderId": "a:b/c"}"#).unwrap();
        let m = v.as_object().unwrap();
        assert_eq!(payload(m, true), "newClientOrderId=a:b/c");
        assert_eq!(payload(m, false), "newClientOrderId=a%3Ab%2Fc");
    }

    #[test]
    fn every_method_is_named_once_and_not_a_stream_method() {
        let mut names: Vec<&str> = METHODS.iter().map(|m| m.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), METHODS.len());
        assert!(known("order.place") && !known("userDataStream.subscribe.signature"));
    }
}
