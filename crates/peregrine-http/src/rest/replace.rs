//! `POST /api/v3/order/cancelReplace`: cancel an open order and place a new one, as
//! Binance does it (the new order has its own id; ccxt's `edit_order` uses it).
//!
//! The new order's parameters are checked first (a bad one is a plain error and
//! nothing is cancelled); then the cancel; then, unless the cancel failed under
//! `STOP_ON_FAILURE`, the new order. Partial outcomes answer 400 with Binance's
//! composite body: `-2022` (the cancel failed and no new order was placed, or
//! both failed) or `-2021` (one of the two failed), with `data` holding
//! `cancelResult`, `newOrderResult`, `cancelResponse` and `newOrderResponse`.

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::{json, Value};

use super::trade::{cancel_one, check_new, client_id, find_by, place_checked, with_counts};
use super::views::{CancelResponse, NewOrderResponse};
use super::{ok, Req};
use crate::app::App;
use crate::dialect::error::{ApiError, ApiResult, ErrorBody};

/// `cancelReplaceMode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// No new order when the cancel fails.
    StopOnFailure,
    /// The new order is placed whatever the cancel's outcome.
    AllowFailure,
}

impl Mode {
    fn parse(s: &str) -> ApiResult<Mode> {
        match s {
            "STOP_ON_FAILURE" => Ok(Mode::StopOnFailure),
            "ALLOW_FAILURE" => Ok(Mode::AllowFailure),
            _ => Err(ApiError::invalid_value("cancelReplaceMode")),
        }
    }
}

/// The outcome of a cancel-replace, before it becomes an answer.
#[derive(Debug)]
pub(crate) struct Outcome {
    /// The cancel's answer.
    pub(crate) cancel: ApiResult<CancelResponse>,
    /// The new order's answer (`None`: not attempted).
    pub(crate) new: Option<ApiResult<NewOrderResponse>>,
}

fn part<T: Serialize>(r: &ApiResult<T>) -> Value {
    match r {
        Ok(v) => serde_json::to_value(v).unwrap_or(Value::Null),
        Err(e) => json!({"code": e.code, "msg": e.msg}),
    }
}

fn result_name<T>(r: Option<&ApiResult<T>>) -> &'static str {
    match r {
        None => "NOT_ATTEMPTED",
        Some(Ok(_)) => "SUCCESS",
        Some(Err(_)) => "FAILURE",
    }
}

impl Outcome {
    /// The answer body and, when something failed, Binance's code and message.
    pub(crate) fn body(&self) -> (Value, Option<(i32, &'static str)>) {
        let data = json!({
            "cancelResult": result_name(Some(&self.cancel)),
            "newOrderResult": result_name(self.new.as_ref()),
            "cancelResponse": part(&self.cancel),
            "newOrderResponse": self.new.as_ref().map_or(Value::Null, part),
        });
        let failed = match (&self.cancel, &self.new) {
            (Ok(_), Some(Ok(_))) => None,
            (Err(_), None | Some(Err(_))) => Some((-2022, "Order cancel-replace failed.")),
            _ => Some((-2021, "Order cancel-replace partially failed.")),
        };
        (data, failed)
    }
}

/// Reads the parameters, cancels, places; `counts` gets the order counts charged.
pub(crate) async fn run(
    app: &App,
    req: &Req,
    params: (
        Arc<crate::dialect::auth::Key>,
        crate::dialect::params::Params,
    ),
    counts: &mut Option<crate::dialect::limits::OrderCounts>,
) -> ApiResult<Outcome> {
    let entered = std::time::Instant::now();
    let (key, mut p) = params;
    let mode = Mode::parse(&p.req("cancelReplaceMode")?)?;
    let cancel_new_id = client_id(&mut p, "cancelNewClientOrderId")?;
    let cancel_order_id = p.opt_u64("cancelOrderId")?;
    let cancel_orig = client_id(&mut p, "cancelOrigClientOrderId")?;
    if cancel_order_id.is_none() && cancel_orig.is_none() {
        return Err(ApiError::mandatory("cancelOrderId"));
    }
    p.ignore("cancelRestrictions");
    p.ignore("orderRateLimitExceededMode");
    let c = check_new(app, key.account, &mut p)?;
    p.finish()?;
    let sym = &app.market.symbols.all()[c.idx];
    let found = find_by(app, key.account, c.idx, cancel_order_id, cancel_orig).await?;
    let cancel = match found.filter(|o| o.status.is_open()) {
        Some(o) => cancel_one(app, key.account, sym, &o, cancel_new_id).await,
        None => Err(ApiError::unknown_order_cancel()),
    };
    if cancel.is_err() && mode == Mode::StopOnFailure {
        return Ok(Outcome { cancel, new: None });
    }
    let new = place_checked(app, key.account, c, (req.arrived, entered), counts).await;
    Ok(Outcome {
        cancel,
        new: Some(new),
    })
}

/// Cancel an open order and place a new one.
#[utoipa::path(post, path = "/api/v3/order/cancelReplace", tag = "trade",
    params(("X-MBX-APIKEY" = String, Header, description = "API key"),
           ("symbol" = String, Query, description = "Symbol"),
           ("side" = String, Query, description = "BUY or SELL"),
           ("type" = String, Query, description = "LIMIT, MARKET or LIMIT_MAKER"),
           ("cancelReplaceMode" = String, Query, description = "STOP_ON_FAILURE or ALLOW_FAILURE"),
           ("cancelOrderId" = Option<u64>, Query, description = "The order to cancel"),
           ("cancelOrigClientOrderId" = Option<String>, Query, description = "Or its client id"),
           ("cancelNewClientOrderId" = Option<String>, Query, description = "Id of the cancel"),
           ("timeInForce" = Option<String>, Query, description = "GTC, IOC or FOK (LIMIT only)"),
           ("quantity" = Option<String>, Query, description = "Quantity"),
           ("quoteOrderQty" = Option<String>, Query, description = "MARKET by cost"),
           ("price" = Option<String>, Query, description = "Price (not for MARKET)"),
           ("newClientOrderId" = Option<String>, Query, description = "Client id of the new order"),
           ("newOrderRespType" = Option<String>, Query, description = "ACK, RESULT or FULL"),
           ("timestamp" = u64, Query, description = "ms"),
           ("signature" = String, Query, description = "HMAC-SHA256")),
    responses((status = 200, body = serde_json::Value), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
              (status = 413, body = ErrorBody), (status = 429, body = ErrorBody), (status = 503, body = ErrorBody)))]
pub async fn cancel_replace(State(app): State<Arc<App>>, req: Req) -> Response {
    let mut counts = None;
    let r = async {
        let params = app.authenticate(&req)?;
        run(&app, &req, params, &mut counts).await
    }
    .await;
    let resp = match r {
        Err(e) => e.into_response(),
        Ok(outcome) => match outcome.body() {
            (data, None) => ok(&data),
            (data, Some((code, msg))) => (
                StatusCode::BAD_REQUEST,
                axum::Json(json!({"code": code, "msg": msg, "data": data})),
            )
                .into_response(),
        },
    };
    with_counts(resp, counts)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cancel_ok() -> ApiResult<CancelResponse> {
        Ok(CancelResponse {
            symbol: "PGN-USD".into(),
            orig_client_order_id: "a".into(),
            order_id: 1,
            order_list_id: -1,
            client_order_id: "b".into(),
            transact_time: 0,
            result: super::super::views::OrderResult::default(),
        })
    }

    #[test]
    fn outcomes_get_binance_codes_and_results() {
        let failed = || Err(ApiError::unknown_order_cancel());
        let o = Outcome {
            cancel: failed(),
            new: None,
        };
        let (data, code) = o.body();
        assert_eq!(code.map(|c| c.0), Some(-2022));
        assert_eq!(data["cancelResult"], "FAILURE");
        assert_eq!(data["newOrderResult"], "NOT_ATTEMPTED");
        assert_eq!(data["cancelResponse"]["code"], -2011);
        assert!(data["newOrderResponse"].is_null());
        let o = Outcome {
            cancel: cancel_ok(),
            new: Some(Err(ApiError::order_rejected("no"))),
        };
        let (data, code) = o.body();
        assert_eq!(code.map(|c| c.0), Some(-2021));
        assert_eq!(data["cancelResult"], "SUCCESS");
        assert_eq!(data["newOrderResult"], "FAILURE");
        assert_eq!(data["cancelResponse"]["orderId"], 1);
        let o = Outcome {
            cancel: failed(),
            new: Some(Err(ApiError::order_rejected("no"))),
        };
        assert_eq!(o.body().1.map(|c| c.0), Some(-2022));
        assert!(Mode::parse("STOP_ON_FAILURE").is_ok() && Mode::parse("x").is_err());
    }
}
