//! API errors: Binance's error codes, messages and HTTP statuses.
//!
//! Every error body is `{"code": -NNNN, "msg": "..."}`. The codes and statuses are
//! the ones Binance documents for the spot API ("Error codes"); the table of those the
//! gateway uses is in docs/http.md.

use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use utoipa::ToSchema;

/// The JSON body of every error.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize, ToSchema)]
pub struct ErrorBody {
    /// Binance error code (negative).
    pub code: i32,
    /// Human-readable message.
    pub msg: String,
}

/// An error answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// HTTP status.
    pub status: StatusCode,
    /// Error code.
    pub code: i32,
    /// Message.
    pub msg: String,
    /// Seconds until the client may retry (429).
    pub retry_after: Option<u64>,
}

/// Shorthand.
pub type ApiResult<T> = Result<T, ApiError>;

impl ApiError {
    /// An error with status 400.
    pub fn bad(code: i32, msg: impl Into<String>) -> ApiError {
        ApiError {
            status: StatusCode::BAD_REQUEST,
            code,
            msg: msg.into(),
            retry_after: None,
        }
    }

    /// With another status.
    pub fn with_status(mut self, status: StatusCode) -> ApiError {
        self.status = status;
        self
    }

    /// -1000 UNKNOWN, 500.
    pub fn internal(msg: impl Into<String>) -> ApiError {
        Self::bad(-1000, msg).with_status(StatusCode::INTERNAL_SERVER_ERROR)
    }

    /// -1001 DISCONNECTED: the gateway has no session with the exchange. 503.
    pub fn disconnected() -> ApiError {
        Self::bad(
            -1001,
            "Internal error; unable to process your request. Please try again.",
        )
        .with_status(StatusCode::SERVICE_UNAVAILABLE)
    }

    /// -1003 TOO_MANY_REQUESTS (request weight), 429.
    pub fn too_many_requests(limit: u32, retry_after: u64) -> ApiError {
        let mut e = Self::bad(
            -1003,
            format!(
                "Too many requests; current limit of IP request weight per 1 MINUTE is {limit}. \
                 Please use WebSocket Streams for live updates to avoid bans."
            ),
        )
        .with_status(StatusCode::TOO_MANY_REQUESTS);
        e.retry_after = Some(retry_after);
        e
    }

    /// -1015 TOO_MANY_ORDERS, 429.
    pub fn too_many_orders(limit: u32, per: &str, retry_after: u64) -> ApiError {
        let mut e = Self::bad(
            -1015,
            format!("Too many new orders; current limit is {limit} orders per {per}."),
        )
        .with_status(StatusCode::TOO_MANY_REQUESTS);
        e.retry_after = Some(retry_after);
        e
    }

    /// -1007 TIMEOUT: no answer from the exchange in time. 503 (Binance: execution
    /// status unknown).
    pub fn timeout() -> ApiError {
        Self::bad(
            -1007,
            "Timeout waiting for response from backend server. Send status unknown; execution status unknown.",
        )
        .with_status(StatusCode::SERVICE_UNAVAILABLE)
    }

    /// -1021 INVALID_TIMESTAMP.
    pub fn timestamp_outside() -> ApiError {
        Self::bad(
            -1021,
            "Timestamp for this request is outside of the recvWindow.",
        )
    }

    /// -1021 INVALID_TIMESTAMP, ahead of the server.
    pub fn timestamp_ahead() -> ApiError {
        Self::bad(
            -1021,
            "Timestamp for this request was 1000ms ahead of the server's time.",
        )
    }

    /// -1022 INVALID_SIGNATURE.
    pub fn bad_signature() -> ApiError {
        Self::bad(-1022, "Signature for this request is not valid.")
    }

    /// -1100 ILLEGAL_CHARS.
    pub fn illegal_chars(param: &str) -> ApiError {
        Self::bad(
            -1100,
            format!("Illegal characters found in parameter '{param}'."),
        )
    }

    /// -1101 TOO_MANY_PARAMETERS (duplicates).
    pub fn duplicate(param: &str) -> ApiError {
        Self::bad(-1101, format!("Duplicate values for parameter '{param}'."))
    }

    /// -1102 MANDATORY_PARAM_EMPTY_OR_MALFORMED.
    pub fn mandatory(param: &str) -> ApiError {
        Self::bad(
            -1102,
            format!("Mandatory parameter '{param}' was not sent, was empty/null, or malformed."),
        )
    }

    /// -1104 UNREAD_PARAMETERS.
    pub fn unread(read: usize, sent: usize) -> ApiError {
        Self::bad(
            -1104,
            format!("Not all sent parameters were read; read '{read}' parameter(s) but was sent '{sent}'."),
        )
    }

    /// -1106 PARAM_NOT_REQUIRED.
    pub fn not_required(param: &str) -> ApiError {
        Self::bad(
            -1106,
            format!("Parameter '{param}' sent when not required."),
        )
    }

    /// -1111 BAD_PRECISION.
    pub fn bad_precision(param: &str) -> ApiError {
        Self::bad(
            -1111,
            format!("Parameter '{param}' has too much precision."),
        )
    }

    /// -1115 INVALID_TIMEINFORCE.
    pub fn bad_tif() -> ApiError {
        Self::bad(-1115, "Invalid timeInForce.")
    }

    /// -1116 INVALID_ORDER_TYPE.
    pub fn bad_order_type() -> ApiError {
        Self::bad(-1116, "Invalid orderType.")
    }

    /// -1117 INVALID_SIDE.
    pub fn bad_side() -> ApiError {
        Self::bad(-1117, "Invalid side.")
    }

    /// -1120 BAD_INTERVAL.
    pub fn bad_interval() -> ApiError {
        Self::bad(-1120, "Invalid interval.")
    }

    /// -1121 BAD_SYMBOL.
    pub fn bad_symbol() -> ApiError {
        Self::bad(-1121, "Invalid symbol.")
    }

    /// -1125 INVALID_LISTEN_KEY.
    pub fn bad_listen_key() -> ApiError {
        Self::bad(-1125, "This listenKey does not exist.")
    }

    /// -1128 OPTIONAL_PARAMS_BAD_COMBO.
    pub fn bad_combo(msg: impl Into<String>) -> ApiError {
        Self::bad(-1128, msg)
    }

    /// -1130 INVALID_PARAMETER.
    pub fn invalid_value(param: &str) -> ApiError {
        Self::bad(
            -1130,
            format!("Invalid data sent for a parameter '{param}'."),
        )
    }

    /// -1131 BAD_RECV_WINDOW.
    pub fn bad_recv_window(window: u64) -> ApiError {
        if window == 0 {
            Self::bad(-1131, "recvWindow must be greater than 0.")
        } else {
            Self::bad(-1131, "recvWindow must be less than 60000")
        }
    }

    /// -1013 filter failure.
    pub fn filter(name: &str) -> ApiError {
        Self::bad(-1013, format!("Filter failure: {name}"))
    }

    /// -2010 NEW_ORDER_REJECTED.
    pub fn order_rejected(msg: impl Into<String>) -> ApiError {
        Self::bad(-2010, msg)
    }

    /// -2011 CANCEL_REJECTED.
    pub fn unknown_order_cancel() -> ApiError {
        Self::bad(-2011, "Unknown order sent.")
    }

    /// -2013 NO_SUCH_ORDER.
    pub fn no_such_order() -> ApiError {
        Self::bad(-2013, "Order does not exist.")
    }

    /// -2014 BAD_API_KEY_FMT, 401.
    pub fn api_key_format() -> ApiError {
        Self::bad(-2014, "API-key format invalid.").with_status(StatusCode::UNAUTHORIZED)
    }

    /// -2015 REJECTED_MBX_KEY, 401.
    pub fn bad_api_key() -> ApiError {
        Self::bad(-2015, "Invalid API-key, IP, or permissions for action.")
            .with_status(StatusCode::UNAUTHORIZED)
    }

    /// The JSON body.
    pub fn body(&self) -> ErrorBody {
        ErrorBody {
            code: self.code,
            msg: self.msg.clone(),
        }
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}: {}", self.status.as_u16(), self.code, self.msg)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut r = (self.status, axum::Json(self.body())).into_response();
        if let Some(s) = self.retry_after {
            if let Ok(v) = HeaderValue::from_str(&s.to_string()) {
                r.headers_mut().insert("retry-after", v);
            }
        }
        r
    }
}
