//! User-data stream listen keys (`USER_STREAM`: API key, no signature).

use std::sync::Arc;

use axum::extract::State;
use axum::response::Response;

use super::views::{Empty, ListenKey};
use super::{reply, Req};
use crate::app::App;
use crate::dialect::error::{ApiError, ApiResult, ErrorBody};

/// Open (or extend) the account's listen key.
#[utoipa::path(post, path = "/api/v3/userDataStream", tag = "stream",
    params(("X-MBX-APIKEY" = String, Header, description = "API key")),
    responses((status = 200, body = ListenKey), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
              (status = 413, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn open(State(app): State<Arc<App>>, req: Req) -> Response {
    reply((|| {
        let (key, p) = app.api_key_only(&req)?;
        p.finish()?;
        Ok(ListenKey {
            listen_key: app.listen_keys.open(key.account.0),
        })
    })())
}

fn with_key(app: &App, req: &Req, f: impl Fn(u32, &str) -> bool) -> ApiResult<Empty> {
    let (key, mut p) = app.api_key_only(req)?;
    let listen = p.req("listenKey")?;
    p.finish()?;
    if f(key.account.0, &listen) {
        Ok(Empty {})
    } else {
        Err(ApiError::bad_listen_key())
    }
}

/// Keep a listen key alive.
#[utoipa::path(put, path = "/api/v3/userDataStream", tag = "stream",
    params(("X-MBX-APIKEY" = String, Header, description = "API key"),
           ("listenKey" = String, Query, description = "The key")),
    responses((status = 200, body = Empty), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
              (status = 413, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn keepalive(State(app): State<Arc<App>>, req: Req) -> Response {
    reply(with_key(&app, &req, |a, k| app.listen_keys.keepalive(a, k)))
}

/// Close a listen key (its streams end).
#[utoipa::path(delete, path = "/api/v3/userDataStream", tag = "stream",
    params(("X-MBX-APIKEY" = String, Header, description = "API key"),
           ("listenKey" = String, Query, description = "The key")),
    responses((status = 200, body = Empty), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
              (status = 413, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn close(State(app): State<Arc<App>>, req: Req) -> Response {
    reply(with_key(&app, &req, |a, k| app.listen_keys.close(a, k)))
}
