//! The web pages: a trading page (`/`) and an operations page (`/ops`), plain
//! HTML, CSS and JavaScript modules compiled into the binary (no build step, no
//! Node at build or run time), talking to the gateway's own REST and WebSocket API.
//! Charts are small canvas drawings of our own (`assets/charts.js`).

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
    crate::rest::ok(&serde_json::json!({
        "prefill": prefill,
        "engine": app.engine.is_some(),
    }))
}

/// The page routes.
pub fn routes() -> Router<Arc<App>> {
    Router::new()
        .route("/", get(index))
        .route("/ops", get(ops_page))
        .route("/ui/config.json", get(config))
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
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '.' || *c == '_')
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
