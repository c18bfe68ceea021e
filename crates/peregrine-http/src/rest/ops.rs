//! The operations API behind the operations page: the order engine's control
//! socket (docs/engine.md, "Control") reached over HTTP. `SIGNED`, and only for
//! API keys with `operator = true`.
//!
//! * `GET /ops/api/summary`: the engine's `summary` (strategies, positions and PnL,
//!   the 7-segment latency table, rejects) as JSON.
//! * `GET /ops/api/limits`: the risk limits (the engine's text).
//! * `POST /ops/api/limits` `strategy`, `set` (`key=value key=value`): change limits.
//! * `POST /ops/api/kill` `strategy` (optional), `confirm=KILL`: the kill switch;
//!   answers when the engine confirmed every cancel or gave up.
//! * `POST /ops/api/release` `strategy` (optional): the kill switch off (without a
//!   strategy: every strategy's and the global one).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use serde::Serialize;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::{ok, reply, Req};
use crate::app::App;
use crate::dialect::error::{ApiError, ApiResult};

/// Longest engine answer read.
const MAX_REPLY: u64 = 1 << 20;

/// An engine command's answer.
#[derive(Debug, Serialize)]
pub struct EngineReply {
    /// The engine said `ok`.
    pub ok: bool,
    /// Its text.
    pub reply: String,
}

/// Sends one control line and reads the reply to the end.
pub async fn request(socket: &Path, line: &str, timeout: Duration) -> std::io::Result<String> {
    let work = async {
        let mut s = tokio::net::UnixStream::connect(socket).await?;
        s.write_all(line.as_bytes()).await?;
        s.write_all(b"\n").await?;
        let mut out = String::new();
        s.take(MAX_REPLY).read_to_string(&mut out).await?;
        Ok(out)
    };
    tokio::time::timeout(timeout, work)
        .await
        .unwrap_or_else(|_| Err(std::io::ErrorKind::TimedOut.into()))
}

fn operator(app: &App, req: &Req) -> ApiResult<crate::dialect::params::Params> {
    let (key, p) = app.authenticate(req)?;
    if !key.operator {
        return Err(ApiError::bad_api_key());
    }
    Ok(p)
}

fn engine(app: &App) -> ApiResult<&Path> {
    app.engine.as_deref().ok_or_else(|| {
        ApiError::bad(
            -1000,
            "No order engine is configured ([engine] control_socket).",
        )
        .with_status(StatusCode::SERVICE_UNAVAILABLE)
    })
}

fn unreachable(e: std::io::Error) -> ApiError {
    ApiError::bad(-1001, format!("The order engine did not answer: {e}"))
        .with_status(StatusCode::SERVICE_UNAVAILABLE)
}

/// A strategy name as the engine accepts it (`*`: all).
fn strategy_ok(s: &str) -> bool {
    s == "*"
        || ((1..=64).contains(&s.len())
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'))
}

/// A `key=value` limit change as the engine accepts it.
fn change_ok(w: &str) -> bool {
    match w.split_once('=') {
        Some((k, v)) => {
            !k.is_empty()
                && k.len() <= 32
                && k.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
                && (v == "off"
                    || (!v.is_empty() && v.len() <= 20 && v.bytes().all(|b| b.is_ascii_digit())))
        }
        None => false,
    }
}

/// `GET /ops/api/summary`.
pub async fn summary(State(app): State<Arc<App>>, req: Req) -> Response {
    let r: ApiResult<Response> = async {
        let p = operator(&app, &req)?;
        p.finish()?;
        let text = request(engine(&app)?, "summary", Duration::from_secs(3))
            .await
            .map_err(unreachable)?;
        let v: serde_json::Value = serde_json::from_str(text.trim()).map_err(|_| {
            ApiError::bad(-1000, format!("The engine answered: {}", text.trim()))
                .with_status(StatusCode::SERVICE_UNAVAILABLE)
        })?;
        Ok(ok(&v))
    }
    .await;
    r.unwrap_or_else(axum::response::IntoResponse::into_response)
}

/// `GET /ops/api/limits`.
pub async fn limits(State(app): State<Arc<App>>, req: Req) -> Response {
    let r: ApiResult<EngineReply> = async {
        let p = operator(&app, &req)?;
        p.finish()?;
        let text = request(engine(&app)?, "limits", Duration::from_secs(3))
            .await
            .map_err(unreachable)?;
        Ok(EngineReply {
            ok: !text.starts_with("error"),
            reply: text,
        })
    }
    .await;
    reply(r)
}

/// `POST /ops/api/limits`.
pub async fn set_limits(State(app): State<Arc<App>>, req: Req) -> Response {
    let r: ApiResult<EngineReply> = async {
        let mut p = operator(&app, &req)?;
        let strategy = p.opt("strategy").unwrap_or_else(|| "*".into());
        let set = p.req("set")?;
        p.finish()?;
        if !strategy_ok(&strategy) {
            return Err(ApiError::invalid_value("strategy"));
        }
        let words: Vec<&str> = set.split_whitespace().collect();
        if words.is_empty() || words.len() > 16 || !words.iter().all(|w| change_ok(w)) {
            return Err(ApiError::invalid_value("set"));
        }
        let line = format!("limits {strategy} {}", words.join(" "));
        let text = request(engine(&app)?, &line, Duration::from_secs(5))
            .await
            .map_err(unreachable)?;
        Ok(EngineReply {
            ok: !text.starts_with("error"),
            reply: text,
        })
    }
    .await;
    reply(r)
}

/// `POST /ops/api/kill`.
pub async fn kill(State(app): State<Arc<App>>, req: Req) -> Response {
    let r: ApiResult<EngineReply> = async {
        let mut p = operator(&app, &req)?;
        let strategy = p.opt("strategy").unwrap_or_else(|| "*".into());
        let confirm = p.req("confirm")?;
        p.finish()?;
        if confirm != "KILL" {
            return Err(ApiError::invalid_value("confirm"));
        }
        if !strategy_ok(&strategy) {
            return Err(ApiError::invalid_value("strategy"));
        }
        let text = request(
            engine(&app)?,
            &format!("kill {strategy} 5000"),
            Duration::from_secs(8),
        )
        .await
        .map_err(unreachable)?;
        Ok(EngineReply {
            ok: text.starts_with("ok"),
            reply: text,
        })
    }
    .await;
    reply(r)
}

/// `POST /ops/api/release`: the kill switch off (one strategy, or every one).
pub async fn release(State(app): State<Arc<App>>, req: Req) -> Response {
    let r: ApiResult<EngineReply> = async {
        let mut p = operator(&app, &req)?;
        let strategy = p.opt("strategy").unwrap_or_else(|| "*".into());
        p.finish()?;
        if !strategy_ok(&strategy) {
            return Err(ApiError::invalid_value("strategy"));
        }
        let text = request(
            engine(&app)?,
            &format!("release {strategy}"),
            Duration::from_secs(5),
        )
        .await
        .map_err(unreachable)?;
        Ok(EngineReply {
            ok: text.starts_with("ok"),
            reply: text,
        })
    }
    .await;
    reply(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_the_engine_accepts() {
        assert!(strategy_ok("maker") && strategy_ok("sim-maker") && strategy_ok("*"));
        assert!(!strategy_ok("a b") && !strategy_ok("") && !strategy_ok("x\nshutdown"));
        assert!(change_ok("max_order_qty=5") && change_ok("max_loss=off"));
        assert!(!change_ok("max_order_qty=-5") && !change_ok("=5") && !change_ok("shutdown"));
    }
}
