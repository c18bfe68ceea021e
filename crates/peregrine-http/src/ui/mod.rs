//! The web pages: a trading page (`/`) and an operations page (`/ops`), plain
//! HTML, CSS and JavaScript modules compiled into the binary, talking to the
//! gateway's own REST and WebSocket API. The price chart is TradingView's
//! Lightweight Charts, which the build fetches from npm (`build.rs`; empty when the
//! build had no npm, and the page then draws its own canvas candles); the depth chart
//! is a small canvas drawing of our own (`assets/charts.js`).

use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use std::sync::Arc;

use crate::app::App;

/// (name, content type, bytes) of every asset.
pub const ASSETS: &[(&str, &str, &str)] = &[
    (
        "index.html",
        "text/html; charset=utf-8",
        include_str!("assets/index.html"),
    ),
    (
        "ops.html",
        "text/html; charset=utf-8",
        include_str!("assets/ops.html"),
    ),
    (
        "style.css",
        "text/css; charset=utf-8",
        include_str!("assets/style.css"),
    ),
    (
        "api.js",
        "text/javascript; charset=utf-8",
        include_str!("assets/api.js"),
    ),
    (
        "charts.js",
        "text/javascript; charset=utf-8",
        include_str!("assets/charts.js"),
    ),
    (
        "trade.js",
        "text/javascript; charset=utf-8",
        include_str!("assets/trade.js"),
    ),
    (
        "book.js",
        "text/javascript; charset=utf-8",
        include_str!("assets/book.js"),
    ),
    (
        "pricechart.js",
        "text/javascript; charset=utf-8",
        include_str!("assets/pricechart.js"),
    ),
    (
        "entry.js",
        "text/javascript; charset=utf-8",
        include_str!("assets/entry.js"),
    ),
    (
        "account.js",
        "text/javascript; charset=utf-8",
        include_str!("assets/account.js"),
    ),
    (
        "lightweight-charts.js",
        "text/javascript; charset=utf-8",
        include_str!(concat!(env!("OUT_DIR"), "/lightweight-charts.js")),
    ),
    (
        "ops.js",
        "text/javascript; charset=utf-8",
        include_str!("assets/ops.js"),
    ),
];

fn asset(name: &str) -> Response {
    match ASSETS.iter().find(|(n, _, _)| *n == name) {
        Some((_, ctype, body)) => {
            let mut r = Response::new(Body::from(*body));
            r.headers_mut()
                .insert(header::CONTENT_TYPE, HeaderValue::from_static(ctype));
            r.headers_mut()
                .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
            r
        }
        None => (StatusCode::NOT_FOUND, "not found").into_response(),
    }
}

async fn index() -> Response {
    asset("index.html")
}

async fn ops_page() -> Response {
    asset("ops.html")
}

async fn file(Path(name): Path<String>) -> Response {
    asset(&name)
}

/// `/ui/config.json`: what the pages need to start (and the demo key, if the
/// operator configured `ui.prefill_api_key`).
async fn config(State(app): State<Arc<App>>) -> Response {
    let prefill = app.config.ui.prefill_api_key.as_ref().and_then(|k| {
        app.config
            .api_keys
            .iter()
            .find(|a| &a.api_key == k)
            .map(|a| serde_json::json!({"apiKey": a.api_key, "secretKey": a.secret_key, "operator": a.operator}))
    });
    // Instruments by id, for the operations page (the engine reports ids and units).
    let instruments: Vec<serde_json::Value> = app
        .market
        .symbols
        .all()
        .iter()
        .map(|s| {
            serde_json::json!({
                "id": s.id().0, "symbol": s.spec.symbol, "base": s.base, "quote": s.quote,
                "priceDecimals": s.spec.price_decimals, "qtyDecimals": s.spec.qty_decimals,
            })
        })
        .collect();
    crate::rest::ok(&serde_json::json!({
        "prefill": prefill,
        "engine": app.engine.is_some(),
        "instruments": instruments,
    }))
}

/// The page routes.
pub fn routes() -> Router<Arc<App>> {
    Router::new()
        .route("/", get(index))
        .route("/ops", get(ops_page))
        .route("/ui/config.json", get(config))
        .route("/favicon.ico", get(|| async { StatusCode::NO_CONTENT }))
        .route("/ui/{name}", get(file))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_asset_is_referenced_and_every_reference_exists() {
        let all: String = ASSETS.iter().map(|(_, _, b)| *b).collect();
        for (name, _, _) in ASSETS {
            if name.ends_with(".html") {
                continue;
            }
            assert!(
                all.contains(&format!("/ui/{name}")) || all.contains(&format!("./{name}")),
                "{name} unused"
            );
        }
        for part in all.split("/ui/").skip(1) {
            let name: String = part
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || ".-_".contains(*c))
                .collect();
            if name.is_empty() || name == "config.json" {
                continue;
            }
            assert!(
                ASSETS.iter().any(|(n, _, _)| *n == name),
                "/ui/{name} referenced but missing"
            );
        }
    }
}
