//! WebSocket market and user-data streams, as Binance serves them.
//!
//! * `/ws/<stream>[/<stream>...]`: raw events; `/ws/<listenKey>`: the account's
//!   user-data events; `/ws`: nothing until `SUBSCRIBE`.
//! * `/stream?streams=<a>/<b>`: combined events, `{"stream": name, "data": event}`.
//! * Requests on the socket: `SUBSCRIBE`, `UNSUBSCRIBE`, `LIST_SUBSCRIPTIONS`,
//!   `SET_PROPERTY` / `GET_PROPERTY` (`combined`), answered `{"result": .., "id": ..}`
//!   or `{"code": n, "msg": .., "id": ..}` (Binance's WebSocket error codes 0-3).
//!
//! Limits, each ending only the offending connection: more than
//! `max_incoming_per_second` messages in a second (a flood), more than
//! `max_streams_per_connection` streams, a message over `max_message_bytes`, a
//! subscriber more than `lag_limit` events behind (a slow reader), a write that
//! takes over 5 s, or no frame from the client for 60 s (the server pings every 20 s).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::ws::{CloseFrame, Message, Utf8Bytes, WebSocket, WebSocketUpgrade};
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Response};
use axum::Extension;
use futures_util::stream::{BoxStream, SelectAll, SplitSink};
use futures_util::{FutureExt, SinkExt, StreamExt};
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::sync::broadcast::{self, error::RecvError};

use crate::app::App;
use crate::dialect::slots::ConnGuard;
use crate::market::events;
use crate::market::feed::now_ms;
use crate::market::hub::{Initial, Msg, StreamMsg};

/// Server ping interval.
pub const PING_EVERY: Duration = Duration::from_secs(20);
/// A client silent this long is dropped.
pub const SILENCE: Duration = Duration::from_secs(60);
/// Longest a single write may take.
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(5);
/// The read buffer of a WebSocket connection. tungstenite's default (128 KiB) is
/// zero-filled before every read attempt, ready or not: with 1,000 subscribers that
/// memset was 29% of the gateway's CPU in `peregrine gateway bench --only fanout`
/// (profiled). Clients send small requests; a bigger message grows the buffer.
pub const READ_BUFFER: usize = 4096;

/// Most events one wake of a connection task writes before it flushes.
const BATCH: usize = 64;

/// Whether a write (or flush) of the WebSocket succeeds within [`WRITE_TIMEOUT`].
/// Polled once first: a socket with room completes at once, and then no timer is
/// registered (a timer per frame, armed and cancelled by each of 1,000 connection
/// tasks per event, is work the common case does not need).
async fn in_time<E>(write: impl std::future::Future<Output = Result<(), E>>) -> bool {
    let mut write = std::pin::pin!(write);
    if let Some(done) = write.as_mut().now_or_never() {
        return done.is_ok();
    }
    matches!(tokio::time::timeout(WRITE_TIMEOUT, write).await, Ok(Ok(())))
}

/// What a subscription yields: a message, or "you fell behind".
#[derive(Debug)]
pub enum Item {
    /// An event.
    Msg(Msg),
    /// The subscriber lagged past the channel's capacity.
    Lagged,
}

/// A subscription as a stream, ending when `cancel` is set (checked per message).
pub fn subscription(
    rx: broadcast::Receiver<Msg>,
    cancel: Arc<AtomicBool>,
) -> BoxStream<'static, Item> {
    futures_util::stream::unfold((rx, cancel), |(mut rx, cancel)| async move {
        let item = match rx.recv().await {
            Ok(m) => Item::Msg(m),
            Err(RecvError::Lagged(_)) => Item::Lagged,
            Err(RecvError::Closed) => return None,
        };
        // Relaxed: a cancellation flag, set and read by one connection task.
        if cancel.load(Ordering::Relaxed) {
            return None;
        }
        Some((item, (rx, cancel)))
    })
    .boxed()
}

/// Query of `/stream`.
#[derive(Debug, Deserialize)]
pub struct StreamsQuery {
    /// `a/b/c`.
    #[serde(default)]
    pub streams: String,
}

/// The connection's slot, kept by the WebSocket task so open WebSockets count
/// against the connection limits.
pub type Slot = Option<Extension<Arc<ConnGuard>>>;

/// `/ws` (no streams yet).
pub async fn ws_root(State(app): State<Arc<App>>, slot: Slot, up: WebSocketUpgrade) -> Response {
    upgrade(app, up, Vec::new(), false, None, slot)
}

/// `/ws/<streams or listen key>`. As Binance: any path is accepted; the names that
/// are streams are subscribed, the others (ccxt.pro's `/ws/0`, a connection it then
/// fills with `SUBSCRIBE`) are ignored.
pub async fn ws_path(
    State(app): State<Arc<App>>,
    Path(path): Path<String>,
    slot: Slot,
    up: WebSocketUpgrade,
) -> Response {
    if let Some(account) = app.listen_keys.account(&path) {
        return upgrade(app, up, Vec::new(), false, Some((path, account)), slot);
    }
    let names = known(&app, &path);
    upgrade(app, up, names, false, None, slot)
}

/// `/stream?streams=...` (also with no streams, then `SUBSCRIBE`).
pub async fn combined(
    State(app): State<Arc<App>>,
    Query(q): Query<StreamsQuery>,
    slot: Slot,
    up: WebSocketUpgrade,
) -> Response {
    let names = known(&app, &q.streams);
    upgrade(app, up, names, true, None, slot)
}

/// The stream names in `a/b/c` that exist (at most one more than the limit, so an
/// over-long list is refused, not cut).
fn known(app: &App, list: &str) -> Vec<String> {
    list.split('/')
        .filter(|s| app.hub.topic(s).is_some())
        .take(app.config.ws.max_streams_per_connection + 1)
        .map(str::to_owned)
        .collect()
}

fn bad_request(msg: &str) -> Response {
    (
        axum::http::StatusCode::BAD_REQUEST,
        axum::Json(json!({"code": -1121, "msg": msg})),
    )
        .into_response()
}

fn upgrade(
    app: Arc<App>,
    up: WebSocketUpgrade,
    names: Vec<String>,
    combined: bool,
    user: Option<(String, u32)>,
    slot: Slot,
) -> Response {
    let w = &app.config.ws;
    if names.len() > w.max_streams_per_connection {
        return bad_request("Too many streams requested.");
    }
    let max = w.max_message_bytes;
    up.max_message_size(max)
        .max_frame_size(max)
        .read_buffer_size(READ_BUFFER)
        .on_upgrade(move |socket| async move {
            let _slot = slot;
            let mut c = Conn::new(app, combined);
            for n in &names {
                c.subscribe(n);
            }
            if let Some((key, account)) = user {
                c.user = Some(key);
                if let Some(t) = c.app.hub.user(account) {
                    c.subs.push(subscription(
                        t.subscribe(),
                        Arc::new(AtomicBool::new(false)),
                    ));
                }
            }
            c.run(socket).await;
        })
}

/// Whether a read failed because the client's message was over the size limit
/// (answered with close code 1009, "message too big").
pub fn too_big(e: &axum::Error) -> bool {
    use tokio_tungstenite::tungstenite::Error;
    std::error::Error::source(e)
        .and_then(|inner| inner.downcast_ref::<Error>())
        .is_some_and(|e| matches!(e, Error::Capacity(_)))
}

/// Sends a close frame (best effort, bounded).
pub async fn close(tx: &mut SplitSink<WebSocket, Message>, code: u16, why: &str) {
    let _ = tokio::time::timeout(
        Duration::from_millis(500),
        tx.send(Message::Close(Some(CloseFrame {
            code,
            reason: Utf8Bytes::from(why),
        }))),
    )
    .await;
}

struct Conn {
    app: Arc<App>,
    combined: bool,
    names: HashMap<String, Arc<AtomicBool>>,
    subs: SelectAll<BoxStream<'static, Item>>,
    user: Option<String>,
    window_start: Instant,
    in_window: u32,
}

impl Conn {
    fn new(app: Arc<App>, combined: bool) -> Conn {
        Conn {
            app,
            combined,
            names: HashMap::new(),
            subs: SelectAll::new(),
            user: None,
            window_start: Instant::now(),
            in_window: 0,
        }
    }

    fn subscribe(&mut self, name: &str) -> bool {
        if self.names.contains_key(name) {
            return true;
        }
        let Some(topic) = self.app.hub.topic(name) else {
            return false;
        };
        let cancel = Arc::new(AtomicBool::new(false));
        self.subs
            .push(subscription(topic.subscribe(), Arc::clone(&cancel)));
        self.names.insert(name.to_owned(), cancel);
        // A state stream starts with the current state (taken after subscribing, so
        // no change falls between the two).
        if let Some((idx, initial)) = self.app.hub.initial_state(name) {
            let sym = &self.app.market.symbols.all()[idx];
            let st = self.app.market.state(idx);
            let data = match initial {
                Initial::Top => events::book_ticker(sym, &st.book),
                Initial::Levels(n) => events::partial(sym, &st.book, n),
            };
            drop(st);
            let msg = Arc::new(StreamMsg::new(name, data));
            self.subs
                .push(futures_util::stream::once(async move { Item::Msg(msg) }).boxed());
        }
        true
    }

    fn unsubscribe(&mut self, name: &str) {
        if let Some(c) = self.names.remove(name) {
            c.store(true, Ordering::Relaxed);
        }
    }

    /// Handles one request; the answer, or `Err` to close.
    fn request(&mut self, text: &str) -> Result<Value, &'static str> {
        #[derive(Deserialize)]
        struct Req {
            method: Value,
            #[serde(default)]
            params: Value,
            #[serde(default)]
            id: Value,
        }
        let Ok(req) = serde_json::from_str::<Req>(text) else {
            return Ok(
                json!({"code": 3, "msg": "Invalid JSON: expected an object with method, params and id"}),
            );
        };
        let id = req.id;
        if !(id.is_u64() || id.is_string() || id.is_null()) {
            return Ok(
                json!({"code": 2, "msg": "Invalid request: request ID must be an unsigned integer or a string", "id": id}),
            );
        }
        let Some(method) = req.method.as_str() else {
            return Ok(
                json!({"code": 2, "msg": "Invalid request: method must be a string", "id": id}),
            );
        };
        let names = || -> Option<Vec<String>> {
            req.params
                .as_array()?
                .iter()
                .map(|v| v.as_str().map(str::to_owned))
                .collect()
        };
        match method {
            "SUBSCRIBE" => {
                let Some(names) = names() else {
                    return Ok(
                        json!({"code": 2, "msg": "Invalid request: params must be an array of stream names", "id": id}),
                    );
                };
                if self.names.len() + names.len() > self.app.config.ws.max_streams_per_connection {
                    return Err("too many streams");
                }
                for n in &names {
                    if self.app.hub.topic(n).is_none() {
                        return Ok(
                            json!({"code": 2, "msg": format!("Invalid request: unknown stream {n:?}"), "id": id}),
                        );
                    }
                }
                for n in &names {
                    self.subscribe(n);
                }
                Ok(json!({"result": null, "id": id}))
            }
            "UNSUBSCRIBE" => {
                let Some(names) = names() else {
                    return Ok(
                        json!({"code": 2, "msg": "Invalid request: params must be an array of stream names", "id": id}),
                    );
                };
                for n in &names {
                    self.unsubscribe(n);
                }
                Ok(json!({"result": null, "id": id}))
            }
            "LIST_SUBSCRIPTIONS" => {
                let mut v: Vec<&String> = self.names.keys().collect();
                v.sort();
                Ok(json!({"result": v, "id": id}))
            }
            "SET_PROPERTY" => match req.params.as_array().map(Vec::as_slice) {
                Some([Value::String(p), Value::Bool(b)]) if p == "combined" => {
                    self.combined = *b;
                    Ok(json!({"result": null, "id": id}))
                }
                Some([Value::String(p), _]) if p == "combined" => {
                    Ok(json!({"code": 1, "msg": "Invalid value type: expected Boolean", "id": id}))
                }
                _ => Ok(json!({"code": 0, "msg": "Unknown property", "id": id})),
            },
            "GET_PROPERTY" => match req.params.as_array().map(Vec::as_slice) {
                Some([Value::String(p)]) if p == "combined" => {
                    Ok(json!({"result": self.combined, "id": id}))
                }
                _ => Ok(json!({"code": 0, "msg": "Unknown property", "id": id})),
            },
            _ => Ok(json!({"code": 2, "msg": "Invalid request: unknown method", "id": id})),
        }
    }

    /// Counts an incoming message; false when over the per-second limit.
    fn admit(&mut self) -> bool {
        let now = Instant::now();
        if now.duration_since(self.window_start) >= Duration::from_secs(1) {
            self.window_start = now;
            self.in_window = 0;
        }
        self.in_window += 1;
        self.in_window <= self.app.config.ws.max_incoming_per_second
    }

    /// Writes `msg` and every event already waiting behind it (up to [`BATCH`]) with
    /// one flush: one write when they fit the socket. The reason to end the
    /// connection, if there is one.
    async fn write_ready(
        &mut self,
        tx: &mut SplitSink<WebSocket, Message>,
        mut msg: Msg,
    ) -> Option<&'static str> {
        for written in 1..=BATCH {
            let text = if self.combined && self.user.is_none() {
                msg.combined.clone()
            } else {
                msg.raw.clone()
            };
            if !in_time(tx.feed(Message::Text(text))).await {
                return Some("write failed or too slow");
            }
            if written == BATCH {
                break; // the rest waits for the next wake
            }
            match self.subs.next().now_or_never() {
                Some(Some(Item::Msg(m))) => msg = m,
                Some(Some(Item::Lagged)) => return Some("slow reader: fell too far behind"),
                _ => break,
            }
        }
        (!in_time(tx.flush()).await).then_some("write failed or too slow")
    }

    async fn run(mut self, socket: WebSocket) {
        let (mut tx, mut rx) = socket.split();
        let mut ping = tokio::time::interval(PING_EVERY);
        ping.tick().await;
        let mut check = tokio::time::interval(Duration::from_secs(1));
        let mut heard = Instant::now();
        let why: &str = loop {
            tokio::select! {
                item = self.subs.next(), if !self.subs.is_empty() => {
                    let msg = match item {
                        Some(Item::Msg(m)) => m,
                        Some(Item::Lagged) => break "slow reader: fell too far behind",
                        None => continue,
                    };
                    if let Some(why) = self.write_ready(&mut tx, msg).await {
                        break why;
                    }
                }
                incoming = rx.next() => {
                    heard = Instant::now();
                    let text = match incoming {
                        Some(Ok(Message::Text(t))) => t,
                        Some(Ok(Message::Binary(_))) => break "binary frames are not accepted",
                        Some(Err(e)) if too_big(&e) => {
                            close(&mut tx, 1009, "message too big").await;
                            return;
                        }
                        Some(Ok(Message::Close(_))) | None | Some(Err(_)) => return,
                        Some(Ok(_)) => continue,
                    };
                    if !self.admit() {
                        break "too many messages";
                    }
                    let answer = match self.request(&text) {
                        Ok(a) => a,
                        Err(e) => break e,
                    };
                    let out = Message::Text(Utf8Bytes::from(answer.to_string()));
                    if tokio::time::timeout(WRITE_TIMEOUT, tx.send(out)).await.map_or(true, |r| r.is_err()) {
                        return;
                    }
                }
                _ = ping.tick() => {
                    if heard.elapsed() > SILENCE {
                        break "no pong";
                    }
                    if tokio::time::timeout(WRITE_TIMEOUT, tx.send(Message::Ping(Default::default()))).await.map_or(true, |r| r.is_err()) {
                        return;
                    }
                }
                _ = check.tick(), if self.user.is_some() => {
                    let key = self.user.clone().unwrap_or_default();
                    if self.app.listen_keys.account(&key).is_none() {
                        let ev = json!({"e": "listenKeyExpired", "E": now_ms(), "listenKey": key});
                        let _ = tx.send(Message::Text(Utf8Bytes::from(ev.to_string()))).await;
                        break "listen key expired";
                    }
                }
            }
        };
        close(&mut tx, 1008, why).await;
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn combined_form_wraps_the_event() {
        let hub = crate::market::hub::Hub::new(
            &crate::market::symbols::Symbols::new(&[{
                let mut s = peregrine_types::InstrumentSpec::example(1);
                s.symbol = "PGN-USD".into();
                s
            }]),
            &[],
            8,
        );
        let t = hub.topic("pgn-usd@trade").unwrap();
        let mut rx = t.subscribe();
        t.publish("{\"e\":\"trade\"}".into());
        let m = rx.try_recv().unwrap();
        assert_eq!(&*m.raw, "{\"e\":\"trade\"}");
        assert_eq!(
            &*m.combined,
            "{\"stream\":\"pgn-usd@trade\",\"data\":{\"e\":\"trade\"}}"
        );
        let v: serde_json::Value = serde_json::from_str(&m.combined).unwrap();
        assert_eq!(v["data"]["e"], "trade");
    }
}
