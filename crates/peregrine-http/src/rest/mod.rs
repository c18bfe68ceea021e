//! The REST API, shaped like Binance's spot API (`/api/v3/...`).
//!
//! Handlers take a [`Req`] (client address, raw query and body, API-key header) and
//! read their parameters through [`Params`] exactly as Binance does;
//! `SIGNED` endpoints go through [`App::authenticate`] first. Every `/api/v3`
//! request is charged its weight by [`charge_weight`] before its handler runs.

pub mod account;
pub mod lists;
pub mod market;
pub mod openapi;
pub mod ops;
pub mod replace;
pub mod stream;
pub mod trade;
pub mod views;

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{FromRequest, Request, State};
use axum::http::{HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use crate::app::App;
use crate::dialect::auth::{self, Key};
use crate::dialect::error::{ApiError, ApiResult};
use crate::dialect::limits;
use crate::dialect::params::Params;
use crate::market::feed::now_ms;

/// The client's address, put in each request's extensions by the server.
#[derive(Debug, Clone, Copy)]
pub struct ClientAddr(pub SocketAddr);

/// One API request: what the handlers need of it.
#[derive(Debug)]
pub struct Req {
    /// Client IP.
    pub ip: IpAddr,
    /// Raw query string.
    pub query: String,
    /// Raw body (form-encoded), empty for GET.
    pub body: String,
    /// `X-MBX-APIKEY`.
    pub api_key: Option<String>,
    /// When hyper handed the request to the service (now, if the server did not say).
    pub arrived: std::time::Instant,
}

impl FromRequest<Arc<App>> for Req {
    type Rejection = Response;

    async fn from_request(req: Request, app: &Arc<App>) -> Result<Self, Self::Rejection> {
        let (parts, body) = req.into_parts();
        let arrived = parts
            .extensions
            .get::<crate::telemetry::Arrived>()
            .map_or_else(std::time::Instant::now, |a| a.0);
        let ip = parts
            .extensions
            .get::<ClientAddr>()
            .map_or(IpAddr::from([127, 0, 0, 1]), |c| c.0.ip());
        let api_key = parts
            .headers
            .get("x-mbx-apikey")
            .map(|v| v.to_str().unwrap_or("\u{0}").to_owned());
        let query = parts.uri.query().unwrap_or("").to_owned();
        let limit = app.config.limits.max_body_bytes;
        let wait = std::time::Duration::from_millis(app.config.limits.header_timeout_ms);
        let bytes = match tokio::time::timeout(wait, axum::body::to_bytes(body, limit)).await {
            Ok(Ok(b)) => b,
            Ok(Err(_)) => {
                return Err(ApiError::bad(
                    -1000,
                    format!("Request body larger than {limit} bytes."),
                )
                .with_status(StatusCode::PAYLOAD_TOO_LARGE)
                .into_response())
            }
            Err(_) => {
                return Err(ApiError::bad(-1000, "Request body not received in time.")
                    .with_status(StatusCode::REQUEST_TIMEOUT)
                    .into_response())
            }
        };
        let body = String::from_utf8(bytes.to_vec()).map_err(|_| {
            ApiError::bad(-1100, "Illegal characters found in the request body.").into_response()
        })?;
        Ok(Req {
            ip,
            query,
            body,
            api_key,
            arrived,
        })
    }
}

/// A JSON answer with status 200.
pub fn ok<T: Serialize>(v: &T) -> Response {
    match serde_json::to_vec(v) {
        Ok(bytes) => {
            let mut r = Response::new(Body::from(bytes));
            r.headers_mut()
                .insert("content-type", HeaderValue::from_static("application/json"));
            r
        }
        Err(e) => ApiError::internal(e.to_string()).into_response(),
    }
}

/// The answer of a handler result.
pub fn reply<T: Serialize>(r: ApiResult<T>) -> Response {
    match r {
        Ok(v) => ok(&v),
        Err(e) => e.into_response(),
    }
}

impl App {
    /// Parameters of an unsigned request.
    pub fn public_params(&self, req: &Req) -> ApiResult<Params> {
        Params::parse(&req.query, &req.body)
    }

    /// Checks a `SIGNED` request (key, signature, timestamp) and returns its key and
    /// parameters (`timestamp`, `recvWindow` and `signature` already read).
    pub fn authenticate(&self, req: &Req) -> ApiResult<(Arc<Key>, Params)> {
        let key = self.keys.lookup(req.api_key.as_deref())?;
        let (payload, signature) = auth::signed_payload(&req.query, &req.body)?;
        if !key.verify(payload.as_bytes(), &signature) {
            return Err(ApiError::bad_signature());
        }
        let mut p = Params::parse(&req.query, &req.body)?;
        p.ignore("signature");
        let ts = p.opt("timestamp");
        let window = p.opt("recvWindow");
        auth::check_timestamp(ts.as_deref(), window.as_deref(), now_ms())?;
        Ok((key, p))
    }

    /// The key of an `USER_STREAM` request (API key only, no signature).
    pub fn api_key_only(&self, req: &Req) -> ApiResult<(Arc<Key>, Params)> {
        let key = self.keys.lookup(req.api_key.as_deref())?;
        Ok((key, Params::parse(&req.query, &req.body)?))
    }
}

/// Middleware: charges each `/api/v3` request its weight (429 when over the limit)
/// and reports the minute's usage in `X-MBX-USED-WEIGHT-1M`.
pub async fn charge_weight(State(app): State<Arc<App>>, req: Request, next: Next) -> Response {
    let ip = req
        .extensions()
        .get::<ClientAddr>()
        .map_or(IpAddr::from([127, 0, 0, 1]), |c| c.0.ip());
    let now = now_ms();
    let w = limits::weight(
        req.method().as_str(),
        req.uri().path(),
        req.uri().query().unwrap_or(""),
    );
    let mut resp = match app.limits.charge_weight(ip, w, now) {
        Ok(_) => next.run(req).await,
        Err(e) => e.into_response(),
    };
    let used = app.limits.used_weight(ip, now);
    if let Ok(v) = HeaderValue::from_str(&used.to_string()) {
        resp.headers_mut().insert("x-mbx-used-weight-1m", v.clone());
        resp.headers_mut().insert("x-mbx-used-weight", v);
    }
    resp
}

/// The answer for an unknown path.
pub async fn not_found() -> Response {
    ApiError::bad(-1000, "Unknown path.")
        .with_status(StatusCode::NOT_FOUND)
        .into_response()
}
