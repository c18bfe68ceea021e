//! The HTTP server: the routes, and an accept loop with transport limits.
//!
//! The loop (hyper's HTTP/1.1 connection driver under axum's router, as
//! `axum::serve` does, plus limits it lacks): at most `max_connections` open
//! connections and `max_connections_per_ip` per address (more are closed at
//! accept); a client must send each request head within `header_timeout_ms` (a
//! slow or idle client is dropped, and holds one connection slot meanwhile); bodies
//! are capped at `max_body_bytes` and must arrive within the same time.

use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{middleware, Router};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tower::ServiceExt;

use crate::app::App;
use crate::dialect::error::ApiError;
use crate::dialect::slots::{ConnGuard, PerIp};
use crate::rest::{self, account, lists, market, ops, replace, stream, trade, ClientAddr};
use crate::ws::{api, conn};

/// Every route.
pub fn router(app: Arc<App>) -> Router {
    let api = Router::new()
        .route("/api/v3/ping", get(market::ping))
        .route("/api/v3/time", get(market::time))
        .route("/api/v3/exchangeInfo", get(market::exchange_info))
        .route("/api/v3/depth", get(market::depth))
        .route("/api/v3/trades", get(market::trades))
        .route("/api/v3/historicalTrades", get(market::historical_trades))
        .route("/api/v3/aggTrades", get(market::agg_trades))
        .route("/api/v3/klines", get(market::klines))
        .route("/api/v3/uiKlines", get(market::ui_klines))
        .route("/api/v3/avgPrice", get(market::avg_price))
        .route("/api/v3/ticker/24hr", get(market::ticker_24hr))
        .route("/api/v3/ticker/price", get(market::ticker_price))
        .route("/api/v3/ticker/bookTicker", get(market::book_ticker))
        .route(
            "/api/v3/order",
            post(trade::new_order)
                .delete(trade::cancel_order)
                .get(trade::get_order),
        )
        .route("/api/v3/order/test", post(trade::test_order))
        .route("/api/v3/order/cancelReplace", post(replace::cancel_replace))
        .route("/api/v3/orderList/oco", post(lists::new_oco))
        .route("/api/v3/orderList/oto", post(lists::new_oto))
        .route("/api/v3/orderList/otoco", post(lists::new_otoco))
        .route(
            "/api/v3/orderList",
            get(lists::get_list).delete(lists::cancel_list),
        )
        .route("/api/v3/openOrderList", get(lists::open_lists))
        .route("/api/v3/allOrderList", get(lists::all_lists))
        .route(
            "/api/v3/openOrders",
            get(trade::open_orders).delete(trade::cancel_open_orders),
        )
        .route("/api/v3/allOrders", get(account::all_orders))
        .route("/api/v3/account", get(account::account))
        .route("/api/v3/myTrades", get(account::my_trades))
        .route(
            "/api/v3/userDataStream",
            post(stream::open)
                .put(stream::keepalive)
                .delete(stream::close),
        )
        .route("/api/v3/{*rest}", axum::routing::any(rest::not_found))
        .layer(middleware::from_fn_with_state(
            Arc::clone(&app),
            rest::charge_weight,
        ));
    Router::new()
        .merge(api)
        .route("/ws", get(conn::ws_root))
        .route("/ws/{*path}", get(conn::ws_path))
        .route("/stream", get(conn::combined))
        .route("/ws-api/v3", get(api::ws_api))
        .route("/openapi.json", get(openapi))
        .route("/peregrine/status", get(crate::status::status))
        .route("/metrics", get(crate::status::metrics))
        .route("/ops/api/summary", get(ops::summary))
        .route("/ops/api/limits", get(ops::limits).post(ops::set_limits))
        .route("/ops/api/kill", post(ops::kill))
        .route("/ops/api/release", post(ops::release))
        .merge(crate::ui::routes())
        .fallback(rest::not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .with_state(app)
}

async fn method_not_allowed() -> Response {
    ApiError::bad(-1000, "Method not allowed on this path.")
        .with_status(StatusCode::METHOD_NOT_ALLOWED)
        .into_response()
}

async fn openapi() -> Response {
    let mut r = Response::new(Body::from(rest::openapi::json()));
    r.headers_mut().insert(
        "content-type",
        axum::http::HeaderValue::from_static("application/json"),
    );
    r
}

/// Serves `listener` until the app's stop flag is set.
pub async fn serve(app: Arc<App>, listener: TcpListener) {
    let router = router(Arc::clone(&app));
    let limits = app.config.limits.clone();
    let slots = Arc::new(tokio::sync::Semaphore::new(limits.max_connections));
    let per_ip = Arc::new(PerIp::default());
    let header_timeout = Duration::from_millis(limits.header_timeout_ms);
    let max_body = limits.max_body_bytes;
    loop {
        // Relaxed: a stop flag.
        if app.stop.load(Ordering::Relaxed) {
            return;
        }
        let accepted = tokio::time::timeout(Duration::from_millis(200), listener.accept()).await;
        let (stream, addr) = match accepted {
            Ok(Ok(x)) => x,
            Ok(Err(_)) => {
                // Out of descriptors and the like: back off instead of spinning.
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
            Err(_) => continue,
        };
        // Over max_connections or max_connections_per_ip: closed at once.
        let Some(guard) =
            ConnGuard::take(&slots, &per_ip, addr.ip(), limits.max_connections_per_ip)
        else {
            continue;
        };
        let _ = stream.set_nodelay(true);
        let router = router.clone();
        let guard = Arc::new(guard);
        tokio::spawn(async move {
            let held = Arc::clone(&guard);
            let svc = hyper::service::service_fn(
                move |mut req: hyper::Request<hyper::body::Incoming>| {
                    // A body declared over the limit is answered before any of it
                    // is read (hyper then closes the connection unread).
                    let too_long = req
                        .headers()
                        .get(hyper::header::CONTENT_LENGTH)
                        .and_then(|v| v.to_str().ok()?.parse::<u64>().ok())
                        .is_some_and(|n| n > max_body as u64);
                    if too_long {
                        let r = body_too_large(max_body);
                        return futures_util::future::Either::Left(std::future::ready(Ok(r)));
                    }
                    req.extensions_mut()
                        .insert(crate::telemetry::Arrived(std::time::Instant::now()));
                    req.extensions_mut().insert(ClientAddr(addr));
                    req.extensions_mut().insert(Arc::clone(&guard));
                    futures_util::future::Either::Right(router.clone().oneshot(req.map(Body::new)))
                },
            );
            let mut http = hyper::server::conn::http1::Builder::new();
            http.timer(TokioTimer::new())
                .header_read_timeout(header_timeout)
                .keep_alive(true);
            let _ = http
                .serve_connection(TokioIo::new(stream), svc)
                .with_upgrades()
                .await;
            drop(held);
        });
    }
}

/// The answer to a request whose declared body is over `limit` bytes: 413.
pub fn body_too_large(limit: usize) -> Response {
    let mut r = ApiError::bad(-1000, format!("Request body larger than {limit} bytes."))
        .with_status(StatusCode::PAYLOAD_TOO_LARGE)
        .into_response();
    r.headers_mut().insert(
        axum::http::header::CONNECTION,
        axum::http::HeaderValue::from_static("close"),
    );
    r
}

/// Binds `addr`.
pub async fn bind(addr: SocketAddr) -> std::io::Result<TcpListener> {
    TcpListener::bind(addr).await
}
