//! `/ws-api/v3`: the part of Binance's WebSocket API that user-data clients use.
//!
//! Requests are `{"id", "method", "params"}`; answers `{"id", "status", "result"}`
//! or `{"id", "status", "error": {"code", "msg"}}`. Methods: `ping`, `time`,
//! `userDataStream.subscribe.signature` (params `apiKey`, `timestamp`,
//! `signature`: the hex HMAC-SHA256 of the other parameters sorted by name as a
//! query string; the answer carries a `subscriptionId`, and the account's events
//! then arrive as `{"subscriptionId", "event"}`), `userDataStream.unsubscribe`.
//! Every request costs one unit of the client IP's request weight.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use axum::extract::ws::{Message, Utf8Bytes, WebSocket, WebSocketUpgrade};
use axum::extract::State;
use axum::response::Response;
use futures_util::stream::{BoxStream, SelectAll};
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Map, Value};

use super::conn::{close, subscription, too_big, Item, WRITE_TIMEOUT};
use super::methods::{self, error};
use crate::app::App;
use crate::dialect::auth;
use crate::dialect::error::ApiError;
use crate::market::feed::now_ms;
use crate::rest::ClientAddr;

/// `/ws-api/v3`.
pub async fn ws_api(
    State(app): State<Arc<App>>,
    addr: Option<axum::Extension<ClientAddr>>,
    slot: super::conn::Slot,
    up: WebSocketUpgrade,
) -> Response {
    let ip = addr.map_or(std::net::IpAddr::from([127, 0, 0, 1]), |a| a.0 .0.ip());
    let max = app.config.ws.max_message_bytes;
    up.max_message_size(max)
        .max_frame_size(max)
        .read_buffer_size(super::conn::READ_BUFFER)
        .on_upgrade(move |socket| async move {
            let _slot = slot;
            run(app, ip, socket).await;
        })
}

struct Session {
    app: Arc<App>,
    subs: SelectAll<BoxStream<'static, (u64, Item)>>,
    cancels: Vec<(u64, Arc<AtomicBool>)>,
    next_sub: u64,
}

impl Session {
    fn handle(&mut self, id: &Value, method: &str, params: &Map<String, Value>) -> Value {
        match method {
            "ping" => json!({"id": id, "status": 200, "result": {}}),
            "time" => json!({"id": id, "status": 200, "result": {"serverTime": now_ms()}}),
            "userDataStream.subscribe.signature" => match self.subscribe(params) {
                Ok(sub) => json!({"id": id, "status": 200, "result": {"subscriptionId": sub}}),
                Err(e) => error(id, &e),
            },
            "userDataStream.unsubscribe" => {
                let target = params.get("subscriptionId").and_then(Value::as_u64);
                for (sub, flag) in &self.cancels {
                    if target.is_none_or(|t| t == *sub) {
                        flag.store(true, std::sync::atomic::Ordering::Relaxed);
                    }
                }
                self.cancels
                    .retain(|(sub, _)| target.is_some_and(|t| t != *sub));
                json!({"id": id, "status": 200, "result": {}})
            }
            _ => error(
                id,
                &ApiError::bad(-1020, "This operation is not supported."),
            ),
        }
    }

    /// Answers one request: the stream methods here, the rest through
    /// [`methods::call`] (which charges the endpoint's weight itself).
    async fn answer(&mut self, ip: std::net::IpAddr, req: Map<String, Value>) -> Value {
        let id = req.get("id").cloned().unwrap_or(Value::Null);
        let method = req.get("method").and_then(Value::as_str).unwrap_or("");
        let empty = Map::new();
        let params = req
            .get("params")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        if methods::known(method) {
            return methods::call(&self.app, ip, &id, method, params).await;
        }
        match self.app.limits.charge_weight(ip, 1, now_ms()) {
            Err(e) => error(&id, &e),
            Ok(_) => self.handle(&id, method, params),
        }
    }

    fn subscribe(&mut self, params: &Map<String, Value>) -> Result<u64, ApiError> {
        let key = self
            .app
            .keys
            .lookup(params.get("apiKey").and_then(Value::as_str))?;
        let sig = params
            .get("signature")
            .and_then(Value::as_str)
            .ok_or_else(|| ApiError::mandatory("signature"))?;
        if !(key.verify(methods::payload(params, false).as_bytes(), sig)
            || key.verify(methods::payload(params, true).as_bytes(), sig))
        {
            return Err(ApiError::bad_signature());
        }
        let ts = params.get("timestamp").map(|v| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        });
        let window = params.get("recvWindow").map(|v| v.to_string());
        auth::check_timestamp(ts.as_deref(), window.as_deref(), now_ms())?;
        let topic = self
            .app
            .hub
            .user(key.account.0)
            .ok_or_else(ApiError::bad_api_key)?;
        let sub = self.next_sub;
        self.next_sub += 1;
        let cancel = Arc::new(AtomicBool::new(false));
        self.cancels.push((sub, Arc::clone(&cancel)));
        self.subs.push(
            subscription(topic.subscribe(), cancel)
                .map(move |i| (sub, i))
                .boxed(),
        );
        Ok(sub)
    }
}

async fn run(app: Arc<App>, ip: std::net::IpAddr, socket: WebSocket) {
    let (mut tx, mut rx) = socket.split();
    let mut s = Session {
        app,
        subs: SelectAll::new(),
        cancels: Vec::new(),
        next_sub: 0,
    };
    loop {
        tokio::select! {
            item = s.subs.next(), if !s.subs.is_empty() => {
                let (sub, msg) = match item {
                    Some((sub, Item::Msg(m))) => (sub, m),
                    Some((_, Item::Lagged)) => return,
                    None => continue,
                };
                let text = format!("{{\"subscriptionId\":{sub},\"event\":{}}}", &*msg.raw);
                if tokio::time::timeout(WRITE_TIMEOUT, tx.send(Message::Text(Utf8Bytes::from(text)))).await.map_or(true, |r| r.is_err()) {
                    return;
                }
            }
            incoming = rx.next() => {
                let text = match incoming {
                    Some(Ok(Message::Text(t))) => t,
                    Some(Ok(Message::Ping(_) | Message::Pong(_))) => continue,
                    Some(Err(e)) if too_big(&e) => {
                        close(&mut tx, 1009, "message too big").await;
                        return;
                    }
                    _ => return,
                };
                let answer = match serde_json::from_str::<Value>(&text) {
                    Ok(Value::Object(req)) => s.answer(ip, req).await,
                    _ => error(&Value::Null, &ApiError::bad(-1000, "Request must be a JSON object.")),
                };
                if tokio::time::timeout(WRITE_TIMEOUT, tx.send(Message::Text(Utf8Bytes::from(answer.to_string())))).await.map_or(true, |r| r.is_err()) {
                    return;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payload_is_sorted_and_excludes_the_signature() {
        let v: Value = serde_json::from_str(
            r#"{"timestamp": 1700000000000, "apiKey": "abc", "signature": "x", "recvWindow": 5000}"#,
        )
        .unwrap();
        assert_eq!(
            methods::payload(v.as_object().unwrap(), false),
            "apiKey=abc&recvWindow=5000&timestamp=1700000000000"
        );
    }
}
