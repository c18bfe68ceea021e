//! Order lists (`SIGNED`): `POST /api/v3/orderList/oco` (the new-style above/below
//! parameters), `/oto`, `/otoco`, `DELETE /api/v3/orderList`, `GET /api/v3/orderList`,
//! `openOrderList` and `allOrderList`.
//!
//! Each leg's parameters are read as one order's (`symbol`, `side`, `type`,
//! `price`, `stopPrice`, ...: `check_new`) from the prefixed names Binance uses
//! (`aboveType`, `belowStopPrice`, `workingPrice`, `pendingAboveType`, ...); the
//! exchange enters every leg or none and runs the list's rules (`docs/orders.md`).

use std::sync::Arc;

use axum::extract::State;
use axum::response::Response;
use peregrine_types::{AccountId, ListKind};
use serde::Serialize;
use utoipa::ToSchema;

use super::market::symbol;
use super::trade::{check_new, client_id, refusal, with_counts, Checked};
use super::views::{order_result, NewOrderResponse};
use super::{reply, Req};
use crate::account::lists::{ListDraft, OrderList};
use crate::account::order::Order;
use crate::account::state::{Draft, Failure};
use crate::account::Refusal;
use crate::app::App;
use crate::dialect::error::{ApiError, ApiResult, ErrorBody};
use crate::dialect::params::Params;
use crate::market::feed::now_ms;
use crate::market::symbols::Symbol;

/// One order of a list (`orders`).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListOrderRef {
    /// Symbol.
    pub symbol: String,
    /// Order id.
    pub order_id: u64,
    /// Client order id.
    pub client_order_id: String,
}

/// An order list (`GET /api/v3/orderList`, and with `orderReports` the answer of a
/// new or cancelled list).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OrderListView {
    /// List id.
    pub order_list_id: u64,
    /// `OCO`, `OTO` or `OTOCO`.
    pub contingency_type: &'static str,
    /// `EXEC_STARTED` or `ALL_DONE`.
    pub list_status_type: &'static str,
    /// `EXECUTING` or `ALL_DONE`.
    pub list_order_status: &'static str,
    /// The client's list id.
    pub list_client_order_id: String,
    /// Last change, ms.
    pub transaction_time: u64,
    /// Symbol.
    pub symbol: String,
    /// The legs.
    pub orders: Vec<ListOrderRef>,
    /// New or cancelled list: each leg's state.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub order_reports: Option<Vec<NewOrderResponse>>,
}

/// The view of `l`; with `reports`, each leg's state.
fn view(sym: &Symbol, l: &OrderList, legs: &[Option<Order>], reports: bool) -> OrderListView {
    OrderListView {
        order_list_id: l.list_id,
        contingency_type: l.contingency_type(),
        list_status_type: l.status_type(),
        list_order_status: l.order_status(),
        list_client_order_id: l.client_list_id.clone(),
        transaction_time: l.update_ms,
        symbol: sym.spec.symbol.clone(),
        orders: l
            .legs
            .iter()
            .zip(legs)
            .map(|(&id, o)| ListOrderRef {
                symbol: sym.spec.symbol.clone(),
                order_id: id,
                client_order_id: o
                    .as_ref()
                    .map(|o| o.client_order_id.clone())
                    .unwrap_or_default(),
            })
            .collect(),
        order_reports: reports.then(|| {
            legs.iter()
                .flatten()
                .map(|o| NewOrderResponse {
                    symbol: sym.spec.symbol.clone(),
                    order_id: o.order_id,
                    order_list_id: o.list_id,
                    client_order_id: o.client_order_id.clone(),
                    transact_time: o.update_ms,
                    result: Some(order_result(sym, o)),
                    fills: None,
                })
                .collect()
        }),
    }
}

/// The list's legs as the account knows them now.
fn legs_of(app: &App, account: AccountId, l: &OrderList) -> Vec<Option<Order>> {
    let st = app.accounts.lock(account);
    l.legs.iter().map(|&id| st.order(id).cloned()).collect()
}

/// Reads one leg: `prefix`ed parameters (`aboveType`, ...) as a new order's.
fn leg(
    app: &App,
    account: AccountId,
    p: &mut Params,
    common: &[(&str, String)],
    prefix: &str,
) -> ApiResult<Checked> {
    let mut pairs: Vec<(String, String)> = common
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.clone()))
        .collect();
    let names = [
        ("Type", "type"),
        ("Price", "price"),
        ("StopPrice", "stopPrice"),
        ("TrailingDelta", "trailingDelta"),
        ("IcebergQty", "icebergQty"),
        ("TimeInForce", "timeInForce"),
        ("ClientOrderId", "newClientOrderId"),
        ("Side", "side"),
        ("Quantity", "quantity"),
    ];
    for (suffix, name) in names {
        if let Some(v) = p.opt(&format!("{prefix}{suffix}")) {
            pairs.push((name.to_owned(), v));
        }
    }
    pairs.push(("newOrderRespType".to_owned(), "ACK".to_owned()));
    let mut lp = Params::from_pairs(pairs);
    // Errors name the parameter as the client sent it.
    let rename = |mut e: ApiError| {
        for (suffix, name) in names {
            let plain = format!("'{name}'");
            if e.msg.contains(&plain) {
                e.msg = e.msg.replace(&plain, &format!("'{prefix}{suffix}'"));
                break;
            }
        }
        e
    };
    let c = check_new(app, account, &mut lp).map_err(rename)?;
    lp.finish().map_err(rename)?;
    Ok(c)
}

const WORKING: &[&str] = &["LIMIT", "LIMIT_MAKER"];
const CONTINGENT: &[&str] = &[
    "STOP_LOSS_LIMIT",
    "STOP_LOSS",
    "LIMIT_MAKER",
    "TAKE_PROFIT",
    "TAKE_PROFIT_LIMIT",
];
const PENDING: &[&str] = &[
    "LIMIT",
    "MARKET",
    "STOP_LOSS",
    "STOP_LOSS_LIMIT",
    "TAKE_PROFIT",
    "TAKE_PROFIT_LIMIT",
    "LIMIT_MAKER",
];

/// Enters a checked list and builds the answer (each leg's state).
async fn place(
    app: &App,
    account: AccountId,
    idx: usize,
    client_list_id: Option<String>,
    kind: ListKind,
    legs: Vec<Checked>,
    counts: &mut Option<crate::dialect::limits::OrderCounts>,
) -> ApiResult<OrderListView> {
    // An order list counts one order per leg, as on Binance.
    for _ in 0..legs.len() {
        *counts = Some(app.limits.charge_order(account.0, now_ms())?);
    }
    let sym = &app.market.symbols.all()[idx];
    let client_list_id = match client_list_id {
        Some(c) => c,
        None => format!("list_{:x}", app.accounts.lock(account).next_id()),
    };
    let draft = ListDraft {
        symbol: idx,
        client_list_id,
        kind,
        leg_coids: Vec::new(),
    };
    let drafts: Vec<Draft> = legs.into_iter().map(|c| c.draft).collect();
    let list = app
        .accounts
        .place_list(account, draft, drafts, kind)
        .await
        .map_err(refusal)?;
    let legs = legs_of(app, account, &list);
    Ok(view(sym, &list, &legs, true))
}

/// The common parameters of a list: `listClientOrderId`, `newOrderRespType`
/// (accepted, the answer is always the legs' state), `selfTradePreventionMode`.
fn common(p: &mut Params) -> ApiResult<(Option<String>, Option<String>)> {
    let client_list_id = client_id(p, "listClientOrderId")?;
    match p.opt("newOrderRespType").as_deref() {
        None | Some("ACK" | "RESULT" | "FULL") => {}
        Some(_) => return Err(ApiError::invalid_value("newOrderRespType")),
    }
    Ok((client_list_id, p.opt("selfTradePreventionMode")))
}

fn with(base: &[(&'static str, String)], stp: &Option<String>) -> Vec<(&'static str, String)> {
    let mut v = base.to_vec();
    if let Some(s) = stp {
        v.push(("selfTradePreventionMode", s.clone()));
    }
    v
}

/// One leg of a list kind: its parameters' prefix, the types it may have, and
/// whether it takes the list's shared side and quantity.
struct LegShape {
    prefix: &'static str,
    types: &'static [&'static str],
    shared: bool,
}

/// A list kind as the dialect spells it: the legs in the order the core enters
/// them, and the names of the side and quantity the shared legs take.
struct ListShape {
    kind: ListKind,
    shared: Option<(&'static str, &'static str)>,
    legs: &'static [LegShape],
}

const OCO: ListShape = ListShape {
    kind: ListKind::Oco,
    shared: Some(("side", "quantity")),
    legs: &[
        LegShape {
            prefix: "below",
            types: CONTINGENT,
            shared: true,
        },
        LegShape {
            prefix: "above",
            types: CONTINGENT,
            shared: true,
        },
    ],
};

const OTO: ListShape = ListShape {
    kind: ListKind::Oto,
    shared: None,
    legs: &[
        LegShape {
            prefix: "working",
            types: WORKING,
            shared: false,
        },
        LegShape {
            prefix: "pending",
            types: PENDING,
            shared: false,
        },
    ],
};

const OTOCO: ListShape = ListShape {
    kind: ListKind::Otoco,
    shared: Some(("pendingSide", "pendingQuantity")),
    legs: &[
        LegShape {
            prefix: "working",
            types: WORKING,
            shared: false,
        },
        LegShape {
            prefix: "pendingBelow",
            types: CONTINGENT,
            shared: true,
        },
        LegShape {
            prefix: "pendingAbove",
            types: CONTINGENT,
            shared: true,
        },
    ],
};

/// Reads, checks and enters a new list of `shape`: one implementation behind the
/// three endpoints.
async fn new_list(app: &App, req: Req, shape: &ListShape) -> Response {
    let mut counts = None;
    let r: ApiResult<OrderListView> = async {
        let (key, mut p) = app.authenticate(&req)?;
        let (idx, sym) = symbol(app, &mut p)?;
        let (list_id, stp) = common(&mut p)?;
        let own = with(&[("symbol", sym.spec.symbol.clone())], &stp);
        let shared = match shape.shared {
            Some((side, qty)) => with(
                &[
                    ("symbol", sym.spec.symbol.clone()),
                    ("side", p.req(side)?),
                    ("quantity", p.req(qty)?),
                ],
                &stp,
            ),
            None => own.clone(),
        };
        let mut legs = Vec::with_capacity(shape.legs.len());
        for l in shape.legs {
            let base = if l.shared { &shared } else { &own };
            legs.push(leg(app, key.account, &mut p, base, l.prefix)?);
        }
        p.finish()?;
        for (c, l) in legs.iter().zip(shape.legs) {
            if !l.types.contains(&c.draft.kind.name()) {
                return Err(ApiError::invalid_value(&format!("{}Type", l.prefix)));
            }
        }
        place(
            app,
            key.account,
            idx,
            list_id,
            shape.kind,
            legs,
            &mut counts,
        )
        .await
    }
    .await;
    with_counts(reply(r), counts)
}

/// New OCO (Binance's new-style parameters: `above*` and `below*`).
#[utoipa::path(post, path = "/api/v3/orderList/oco", tag = "trade",
    params(("X-MBX-APIKEY" = String, Header, description = "API key"),
           ("symbol" = String, Query, description = "Symbol"),
           ("listClientOrderId" = Option<String>, Query, description = "Client id of the list"),
           ("side" = String, Query, description = "BUY or SELL (both legs)"),
           ("quantity" = String, Query, description = "Quantity (both legs)"),
           ("aboveType" = String, Query, description = "STOP_LOSS_LIMIT, STOP_LOSS, LIMIT_MAKER, TAKE_PROFIT or TAKE_PROFIT_LIMIT"),
           ("aboveClientOrderId" = Option<String>, Query, description = "Client id of the above leg"),
           ("abovePrice" = Option<String>, Query, description = "Limit price of the above leg"),
           ("aboveStopPrice" = Option<String>, Query, description = "Trigger price of the above leg"),
           ("aboveTrailingDelta" = Option<u32>, Query, description = "Trailing delta of the above leg, bips"),
           ("aboveIcebergQty" = Option<String>, Query, description = "Iceberg quantity of the above leg"),
           ("aboveTimeInForce" = Option<String>, Query, description = "Time in force of the above leg"),
           ("belowType" = String, Query, description = "As aboveType"),
           ("belowClientOrderId" = Option<String>, Query, description = "Client id of the below leg"),
           ("belowPrice" = Option<String>, Query, description = "Limit price of the below leg"),
           ("belowStopPrice" = Option<String>, Query, description = "Trigger price of the below leg"),
           ("belowTrailingDelta" = Option<u32>, Query, description = "Trailing delta of the below leg, bips"),
           ("belowIcebergQty" = Option<String>, Query, description = "Iceberg quantity of the below leg"),
           ("belowTimeInForce" = Option<String>, Query, description = "Time in force of the below leg"),
           ("newOrderRespType" = Option<String>, Query, description = "ACK, RESULT or FULL (the answer carries orderReports)"),
           ("selfTradePreventionMode" = Option<String>, Query, description = "Self-trade prevention mode"),
           ("timestamp" = u64, Query, description = "ms"),
           ("signature" = String, Query, description = "HMAC-SHA256")),
    responses((status = 200, body = OrderListView), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
              (status = 413, body = ErrorBody), (status = 429, body = ErrorBody), (status = 503, body = ErrorBody)))]
pub async fn new_oco(State(app): State<Arc<App>>, req: Req) -> Response {
    new_list(&app, req, &OCO).await
}

/// New OTO: a working order and a pending one entered when it fills.
#[utoipa::path(post, path = "/api/v3/orderList/oto", tag = "trade",
    params(("X-MBX-APIKEY" = String, Header, description = "API key"),
           ("symbol" = String, Query, description = "Symbol"),
           ("listClientOrderId" = Option<String>, Query, description = "Client id of the list"),
           ("workingType" = String, Query, description = "LIMIT or LIMIT_MAKER"),
           ("workingSide" = String, Query, description = "BUY or SELL"),
           ("workingPrice" = String, Query, description = "Price"),
           ("workingQuantity" = String, Query, description = "Quantity"),
           ("workingClientOrderId" = Option<String>, Query, description = "Client id"),
           ("workingIcebergQty" = Option<String>, Query, description = "Iceberg quantity"),
           ("workingTimeInForce" = Option<String>, Query, description = "Time in force (LIMIT)"),
           ("pendingType" = String, Query, description = "Any order type"),
           ("pendingSide" = String, Query, description = "BUY or SELL"),
           ("pendingQuantity" = String, Query, description = "Quantity"),
           ("pendingPrice" = Option<String>, Query, description = "Price"),
           ("pendingStopPrice" = Option<String>, Query, description = "Trigger price"),
           ("pendingTrailingDelta" = Option<u32>, Query, description = "Trailing delta, bips"),
           ("pendingClientOrderId" = Option<String>, Query, description = "Client id"),
           ("pendingIcebergQty" = Option<String>, Query, description = "Iceberg quantity"),
           ("pendingTimeInForce" = Option<String>, Query, description = "Time in force"),
           ("newOrderRespType" = Option<String>, Query, description = "ACK, RESULT or FULL"),
           ("selfTradePreventionMode" = Option<String>, Query, description = "Self-trade prevention mode"),
           ("timestamp" = u64, Query, description = "ms"),
           ("signature" = String, Query, description = "HMAC-SHA256")),
    responses((status = 200, body = OrderListView), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
              (status = 413, body = ErrorBody), (status = 429, body = ErrorBody), (status = 503, body = ErrorBody)))]
pub async fn new_oto(State(app): State<Arc<App>>, req: Req) -> Response {
    new_list(&app, req, &OTO).await
}

/// New OTOCO: a working order and a pending OCO entered when it fills.
#[utoipa::path(post, path = "/api/v3/orderList/otoco", tag = "trade",
    params(("X-MBX-APIKEY" = String, Header, description = "API key"),
           ("symbol" = String, Query, description = "Symbol"),
           ("listClientOrderId" = Option<String>, Query, description = "Client id of the list"),
           ("workingType" = String, Query, description = "LIMIT or LIMIT_MAKER"),
           ("workingSide" = String, Query, description = "BUY or SELL"),
           ("workingPrice" = String, Query, description = "Price"),
           ("workingQuantity" = String, Query, description = "Quantity"),
           ("workingClientOrderId" = Option<String>, Query, description = "Client id"),
           ("workingIcebergQty" = Option<String>, Query, description = "Iceberg quantity"),
           ("workingTimeInForce" = Option<String>, Query, description = "Time in force (LIMIT)"),
           ("pendingSide" = String, Query, description = "BUY or SELL (both pending legs)"),
           ("pendingQuantity" = String, Query, description = "Quantity (both pending legs)"),
           ("pendingAboveType" = String, Query, description = "As the OCO's aboveType"),
           ("pendingAbovePrice" = Option<String>, Query, description = "Price"),
           ("pendingAboveStopPrice" = Option<String>, Query, description = "Trigger price"),
           ("pendingAboveTrailingDelta" = Option<u32>, Query, description = "Trailing delta, bips"),
           ("pendingAboveClientOrderId" = Option<String>, Query, description = "Client id"),
           ("pendingAboveIcebergQty" = Option<String>, Query, description = "Iceberg quantity"),
           ("pendingAboveTimeInForce" = Option<String>, Query, description = "Time in force"),
           ("pendingBelowType" = Option<String>, Query, description = "As the OCO's belowType"),
           ("pendingBelowPrice" = Option<String>, Query, description = "Price"),
           ("pendingBelowStopPrice" = Option<String>, Query, description = "Trigger price"),
           ("pendingBelowTrailingDelta" = Option<u32>, Query, description = "Trailing delta, bips"),
           ("pendingBelowClientOrderId" = Option<String>, Query, description = "Client id"),
           ("pendingBelowIcebergQty" = Option<String>, Query, description = "Iceberg quantity"),
           ("pendingBelowTimeInForce" = Option<String>, Query, description = "Time in force"),
           ("newOrderRespType" = Option<String>, Query, description = "ACK, RESULT or FULL"),
           ("selfTradePreventionMode" = Option<String>, Query, description = "Self-trade prevention mode"),
           ("timestamp" = u64, Query, description = "ms"),
           ("signature" = String, Query, description = "HMAC-SHA256")),
    responses((status = 200, body = OrderListView), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
              (status = 413, body = ErrorBody), (status = 429, body = ErrorBody), (status = 503, body = ErrorBody)))]
pub async fn new_otoco(State(app): State<Arc<App>>, req: Req) -> Response {
    new_list(&app, req, &OTOCO).await
}

/// The list named by `orderListId` or `listClientOrderId` (`origClientOrderId` on
/// the queries).
fn find(
    app: &App,
    account: AccountId,
    p: &mut Params,
    client_param: &str,
) -> ApiResult<Option<OrderList>> {
    let id = p.opt_u64("orderListId")?;
    let client = client_id(p, client_param)?;
    let st = app.accounts.lock(account);
    Ok(match (id, client) {
        (Some(id), c) => st
            .list(id)
            .filter(|l| c.as_ref().is_none_or(|c| *c == l.client_list_id))
            .cloned(),
        (None, Some(c)) => st.list_by_client_id(&c).cloned(),
        (None, None) => return Err(ApiError::mandatory("orderListId")),
    })
}

/// Cancel an order list (every live leg).
#[utoipa::path(delete, path = "/api/v3/orderList", tag = "trade",
    params(("X-MBX-APIKEY" = String, Header, description = "API key"),
           ("symbol" = String, Query, description = "Symbol"),
           ("orderListId" = Option<u64>, Query, description = "List id"),
           ("listClientOrderId" = Option<String>, Query, description = "Client id of the list"),
           ("newClientOrderId" = Option<String>, Query, description = "Id of this cancel"),
           ("timestamp" = u64, Query, description = "ms"),
           ("signature" = String, Query, description = "HMAC-SHA256")),
    responses((status = 200, body = OrderListView), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
              (status = 413, body = ErrorBody), (status = 429, body = ErrorBody), (status = 503, body = ErrorBody)))]
pub async fn cancel_list(State(app): State<Arc<App>>, req: Req) -> Response {
    let r: ApiResult<OrderListView> = async {
        let (key, mut p) = app.authenticate(&req)?;
        let (idx, sym) = symbol(&app, &mut p)?;
        let _ = client_id(&mut p, "newClientOrderId")?;
        let list = find(&app, key.account, &mut p, "listClientOrderId")?;
        p.finish()?;
        let list = list
            .filter(|l| l.symbol == idx && !l.done)
            .ok_or_else(|| ApiError::bad(-2011, "Order list does not exist."))?;
        let done = app
            .accounts
            .cancel_list(key.account, &list)
            .await
            .map_err(|r| match r {
                Refusal::Failed(Failure::Refused(_)) => {
                    ApiError::bad(-2011, "Order list does not exist.")
                }
                other => refusal(other),
            })?;
        let legs = legs_of(&app, key.account, &done);
        Ok(view(sym, &done, &legs, true))
    }
    .await;
    reply(r)
}

/// Query an order list.
#[utoipa::path(get, path = "/api/v3/orderList", tag = "trade",
    params(("X-MBX-APIKEY" = String, Header, description = "API key"),
           ("orderListId" = Option<u64>, Query, description = "List id"),
           ("origClientOrderId" = Option<String>, Query, description = "Client id of the list"),
           ("timestamp" = u64, Query, description = "ms"),
           ("signature" = String, Query, description = "HMAC-SHA256")),
    responses((status = 200, body = OrderListView), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
              (status = 413, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn get_list(State(app): State<Arc<App>>, req: Req) -> Response {
    let r: ApiResult<OrderListView> = async {
        let (key, mut p) = app.authenticate(&req)?;
        app.accounts.sync(key.account).await;
        let list = find(&app, key.account, &mut p, "origClientOrderId")?;
        p.finish()?;
        let l = list.ok_or_else(|| ApiError::bad(-2011, "Order list does not exist."))?;
        let legs = legs_of(&app, key.account, &l);
        Ok(view(&app.market.symbols.all()[l.symbol], &l, &legs, false))
    }
    .await;
    reply(r)
}

/// Open order lists.
#[utoipa::path(get, path = "/api/v3/openOrderList", tag = "trade",
    params(("X-MBX-APIKEY" = String, Header, description = "API key"),
           ("timestamp" = u64, Query, description = "ms"),
           ("signature" = String, Query, description = "HMAC-SHA256")),
    responses((status = 200, body = Vec<OrderListView>), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
              (status = 413, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn open_lists(State(app): State<Arc<App>>, req: Req) -> Response {
    let r: ApiResult<Vec<OrderListView>> = async {
        let (key, p) = app.authenticate(&req)?;
        p.finish()?;
        app.accounts.sync(key.account).await;
        let lists = app.accounts.lock(key.account).lists();
        Ok(lists
            .iter()
            .filter(|l| !l.done)
            .map(|l| {
                let legs = legs_of(&app, key.account, l);
                view(&app.market.symbols.all()[l.symbol], l, &legs, false)
            })
            .collect())
    }
    .await;
    reply(r)
}

/// Every order list the gateway keeps (the newest 1024 per account, since it
/// started: lists are not in the history store).
#[utoipa::path(get, path = "/api/v3/allOrderList", tag = "trade",
    params(("X-MBX-APIKEY" = String, Header, description = "API key"),
           ("fromId" = Option<u64>, Query, description = "From this list id on"),
           ("startTime" = Option<u64>, Query, description = "From, ms"),
           ("endTime" = Option<u64>, Query, description = "To, ms"),
           ("limit" = Option<u32>, Query, description = "1..=1000, default 500"),
           ("timestamp" = u64, Query, description = "ms"),
           ("signature" = String, Query, description = "HMAC-SHA256")),
    responses((status = 200, body = Vec<OrderListView>), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
              (status = 413, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn all_lists(State(app): State<Arc<App>>, req: Req) -> Response {
    let r: ApiResult<Vec<OrderListView>> = async {
        let (key, mut p) = app.authenticate(&req)?;
        let from = p.opt_u64("fromId")?;
        let start = p.opt_u64("startTime")?;
        let end = p.opt_u64("endTime")?;
        let limit = p.limit(500, 1000)?;
        p.finish()?;
        if from.is_some() && (start.is_some() || end.is_some()) {
            return Err(ApiError::bad_combo(
                "Combination of optional parameters invalid: fromId cannot be sent with startTime or endTime.",
            ));
        }
        app.accounts.sync(key.account).await;
        let lists = app.accounts.lock(key.account).lists();
        let mut chosen: Vec<&OrderList> = lists
            .iter()
            .filter(|l| from.is_none_or(|f| l.list_id >= f))
            .filter(|l| start.is_none_or(|s| l.time_ms >= s))
            .filter(|l| end.is_none_or(|e| l.time_ms <= e))
            .collect();
        if from.is_some() || start.is_some() {
            chosen.truncate(limit);
        } else {
            let skip = chosen.len().saturating_sub(limit);
            chosen.drain(..skip);
        }
        Ok(chosen
            .into_iter()
            .map(|l| {
                let legs = legs_of(&app, key.account, l);
                view(&app.market.symbols.all()[l.symbol], l, &legs, false)
            })
            .collect())
    }
    .await;
    reply(r)
}
