//! Trading endpoints (`SIGNED`): new order (and its test), cancel, query, open
//! orders.
//!
//! A new order is checked here against the symbol's filters (tick, lot, band,
//! quantity limits) before anything reaches the exchange: a request the exchange
//! would refuse never costs it work.

use std::sync::Arc;

use axum::extract::State;
use axum::http::HeaderValue;
use axum::response::Response;

use super::market::symbol;
use super::views::*;
use super::{reply, Req};
use crate::account::order::{parse_side, parse_stp, parse_tif, Order, OrderType};
use crate::account::state::{Draft, Failure, RespType};
use crate::account::Refusal;
use crate::app::App;
use crate::dialect::error::{ApiError, ApiResult, ErrorBody};
use crate::dialect::limits::OrderCounts;
use crate::dialect::params::Params;
use crate::link::{Ext, NewOrder, Stp, Tif};
use crate::market::feed::now_ms;
use crate::market::symbols::{AmountError, Symbol};
use peregrine_types::TriggerKind;

/// `newClientOrderId` and friends: `^[\.A-Z\:/a-z0-9_-]{1,36}$`.
pub fn valid_client_id(s: &str) -> bool {
    (1..=36).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b".:/_-".contains(&b))
}

/// An optional client-id parameter, checked.
pub(crate) fn client_id(p: &mut Params, name: &str) -> ApiResult<Option<String>> {
    match p.opt(name) {
        None => Ok(None),
        Some(v) if valid_client_id(&v) => Ok(Some(v)),
        Some(_) => Err(ApiError::bad(
            -1100,
            format!("Illegal characters found in parameter '{name}'; legal range is '^[\\.A-Z\\:/a-z0-9_-]{{1,36}}$'."),
        )),
    }
}

fn amount(r: Result<i64, AmountError>, name: &str) -> ApiResult<i64> {
    r.map_err(|e| match e {
        AmountError::TooPrecise => ApiError::bad_precision(name),
        AmountError::Malformed => ApiError::illegal_chars(name),
        AmountError::OutOfRange => ApiError::invalid_value(name),
    })
}

/// The exchange's answer mapped to the API's.
pub fn refusal(r: Refusal) -> ApiError {
    match r {
        Refusal::Down | Refusal::Failed(Failure::NotSent) => ApiError::disconnected(),
        Refusal::Busy => ApiError::bad(
            -1008,
            "Server is currently overloaded with other requests. Please try again in a few minutes.",
        )
        .with_status(axum::http::StatusCode::SERVICE_UNAVAILABLE),
        Refusal::Timeout | Refusal::Failed(Failure::Unknown) => ApiError::timeout(),
        Refusal::Failed(Failure::Refused(code)) => reject(code),
    }
}

/// An exchange reject reason as the API's error. The exchange's `busy` (it is at
/// capacity, nothing was entered) is Binance's -1008 "server busy", HTTP 503 with
/// `Retry-After: 1`.
pub fn reject(code: u16) -> ApiError {
    use peregrine_book::RejectReason as R;
    if code == peregrine_wire::reason::RejectCode::Busy.code() {
        let mut e = refusal(Refusal::Busy);
        e.retry_after = Some(1);
        return e;
    }
    match R::from_code(code) {
        Some(R::PriceOffTick | R::PriceOutOfBand | R::InvalidPrice) => {
            ApiError::filter("PRICE_FILTER")
        }
        Some(R::QtyOffLot | R::QtyBelowMin | R::QtyAboveMax | R::InvalidQty) => {
            ApiError::filter("LOT_SIZE")
        }
        Some(R::UnknownInstrument) => ApiError::bad_symbol(),
        Some(R::InstrumentHalted) => ApiError::order_rejected("Market is closed."),
        Some(R::PostOnlyWouldTake) => {
            ApiError::order_rejected("Order would immediately match and take.")
        }
        Some(R::InvalidTif) => ApiError::bad_tif(),
        Some(R::InsufficientBalance) => {
            ApiError::order_rejected("Account has insufficient balance for requested action.")
        }
        Some(R::UnknownOrder | R::NotOwner) => ApiError::unknown_order_cancel(),
        Some(R::StopWouldTrigger) => ApiError::order_rejected("Order would trigger immediately."),
        Some(R::InvalidDisplayQty) => ApiError::filter("ICEBERG_PARTS"),
        Some(R::MmpFrozen) => {
            ApiError::order_rejected("Market-maker protection is active: new orders are refused.")
        }
        Some(R::AuctionPhase) => ApiError::order_rejected(
            "The symbol is in a call auction: IOC, FOK and market orders are refused.",
        ),
        Some(R::UnknownList) => ApiError::bad(-2011, "Unknown order list sent."),
        Some(r) => {
            ApiError::order_rejected(format!("Order rejected by the exchange: {}.", r.as_str()))
        }
        None => {
            ApiError::order_rejected(format!("Order rejected by the exchange (reason {code})."))
        }
    }
}

/// A validated new order.
pub(crate) struct Checked {
    pub(crate) idx: usize,
    pub(crate) draft: Draft,
    pub(crate) resp: RespType,
}

/// Reads and checks a new order's parameters (`symbol`, `side`, `type`, ...).
pub(crate) fn check_new(
    app: &App,
    account: peregrine_types::AccountId,
    p: &mut Params,
) -> ApiResult<Checked> {
    let (idx, sym) = symbol(app, p)?;
    let side = parse_side(&p.req("side")?).ok_or_else(ApiError::bad_side)?;
    let kind = OrderType::parse(&p.req("type")?).ok_or_else(ApiError::bad_order_type)?;
    let tif = match (kind, p.opt("timeInForce")) {
        (OrderType::LimitMaker, None) => Tif::Gtc,
        (OrderType::LimitMaker, Some(_)) => return Err(ApiError::not_required("timeInForce")),
        (k, None) if k.has_price() => return Err(ApiError::mandatory("timeInForce")),
        (k, Some(t)) if k.has_price() => parse_tif(&t).ok_or_else(ApiError::bad_tif)?,
        (_, None) => Tif::Ioc,
        (_, Some(_)) => return Err(ApiError::not_required("timeInForce")),
    };
    let by_cost = match (kind, p.opt("quoteOrderQty")) {
        (_, None) => None,
        (OrderType::Market, Some(q)) => Some(quote_amount(sym, &q)?),
        (_, Some(_)) => return Err(ApiError::not_required("quoteOrderQty")),
    };
    let qty_text = match (p.opt("quantity"), by_cost) {
        (Some(_), Some(_)) => {
            return Err(ApiError::bad_combo(
                "quantity and quoteOrderQty cannot be sent together.",
            ))
        }
        (None, None) => return Err(ApiError::mandatory("quantity")),
        (q, _) => q,
    };
    let price = match (kind.has_price(), p.opt("price")) {
        (false, None) => None,
        (false, Some(_)) => return Err(ApiError::not_required("price")),
        (true, None) => return Err(ApiError::mandatory("price")),
        (true, Some(t)) => Some(amount(sym.parse_price(&t), "price")?),
    };
    let ext = check_ext(sym, kind, tif, p)?;
    let client_order_id = client_id(p, "newClientOrderId")?;
    let resp = match p.opt("newOrderRespType").as_deref() {
        // Binance: MARKET and LIMIT default to FULL, every other type to ACK.
        None if !matches!(kind, OrderType::Limit | OrderType::Market) => RespType::Ack,
        None | Some("FULL") => RespType::Full,
        Some("RESULT") => RespType::Result,
        Some("ACK") => RespType::Ack,
        Some(_) => return Err(ApiError::invalid_value("newOrderRespType")),
    };
    let stp = match p.opt("selfTradePreventionMode") {
        None => Stp::None,
        Some(s) => {
            parse_stp(&s).ok_or_else(|| ApiError::invalid_value("selfTradePreventionMode"))?
        }
    };
    // A market order by cost becomes the quantity the book shows for it, and goes
    // no further than the worst price that quantity meets.
    let (qty, limit) = match (qty_text, by_cost) {
        (Some(t), _) => (amount(sym.parse_qty(&t), "quantity")?, None),
        (None, Some(quote)) => {
            let (qty, worst) = app.market.state(idx).book.qty_for_quote(
                side,
                i128::from(quote),
                sym.spec.lot_size,
            );
            match worst {
                Some(w) if qty >= sym.spec.min_qty => (qty, Some(w)),
                _ => {
                    return Err(ApiError::order_rejected(
                        "Order book liquidity is less than LOT_SIZE filter minimum quantity.",
                    ))
                }
            }
        }
        (None, None) => return Err(ApiError::mandatory("quantity")),
    };
    check_filters(sym, price, qty)?;
    if ext.display_qty >= qty {
        return Err(ApiError::order_rejected(
            "Iceberg quantity must be less than the order quantity.",
        ));
    }
    let wire_price = price
        .or(limit)
        .unwrap_or_else(|| protection_price(sym, side));
    let mut st = app.accounts.lock(account);
    let client_order_id = match client_order_id {
        Some(c) => {
            if st.client_id_in_use(idx, &c) {
                return Err(ApiError::order_rejected("Duplicate order sent."));
            }
            c
        }
        None => format!("web_{:x}", st.next_id()),
    };
    drop(st);
    Ok(Checked {
        idx,
        draft: Draft {
            symbol: idx,
            client_order_id,
            kind,
            wire: NewOrder {
                coid: 0,
                instrument: sym.id(),
                side,
                kind: kind.kind(),
                tif,
                price: wire_price,
                qty,
                stp,
                ext,
            },
            shown_price: price.unwrap_or(0),
            orig_quote: by_cost.unwrap_or(0),
        },
        resp,
    })
}

/// The trigger (`stopPrice`, `trailingDelta`) and iceberg (`icebergQty`) of a new
/// order of type `kind`, checked against what the type allows and the symbol's
/// filters.
pub(crate) fn check_ext(sym: &Symbol, kind: OrderType, tif: Tif, p: &mut Params) -> ApiResult<Ext> {
    let trigger = kind.trigger();
    let stop = p.opt("stopPrice");
    let trail = p.opt("trailingDelta");
    let iceberg = p.opt("icebergQty");
    let mut ext = Ext {
        trigger,
        ..Ext::NONE
    };
    if trigger == TriggerKind::None {
        if stop.is_some() {
            return Err(ApiError::not_required("stopPrice"));
        }
        if trail.is_some() {
            return Err(ApiError::not_required("trailingDelta"));
        }
    } else {
        match (stop, trail) {
            (None, None) => {
                return Err(ApiError::bad(
                    -1102,
                    "Param 'stopPrice' or 'trailingDelta' must be sent, but both were empty/null!",
                ))
            }
            (Some(_), Some(_)) => {
                return Err(ApiError::order_rejected(
                    "Trailing stops with an activation price (stopPrice with trailingDelta) are not supported.",
                ))
            }
            (Some(t), None) => {
                let sp = amount(sym.parse_price(&t), "stopPrice")?;
                check_filters(sym, Some(sp), sym.spec.min_qty)?;
                ext.stop_price = sp;
            }
            (None, Some(t)) => {
                if trigger == TriggerKind::TakeProfit {
                    return Err(ApiError::order_rejected(
                        "Trailing take-profit orders are not supported.",
                    ));
                }
                match t.parse::<u32>() {
                    Ok(d) if (1..=MAX_TRAILING_DELTA).contains(&d) => ext.trail_bps = d,
                    Ok(_) => return Err(ApiError::filter("TRAILING_DELTA")),
                    Err(_) => return Err(ApiError::invalid_value("trailingDelta")),
                }
            }
        }
    }
    if let Some(t) = iceberg {
        if !kind.has_price() {
            return Err(ApiError::not_required("icebergQty"));
        }
        let d = amount(sym.parse_qty(&t), "icebergQty")?;
        if d != 0 {
            if tif != Tif::Gtc {
                return Err(ApiError::order_rejected(
                    "Iceberg orders must be GTC (they rest).",
                ));
            }
            let s = &sym.spec;
            if d % s.lot_size != 0 || d < s.min_qty {
                return Err(ApiError::filter("LOT_SIZE"));
            }
        }
        ext.display_qty = d;
    }
    Ok(ext)
}

/// The largest `trailingDelta` taken, bips (Binance's TRAILING_DELTA filter goes to
/// 2000 on most symbols; this venue allows the whole price).
pub const MAX_TRAILING_DELTA: u32 = 10_000;

/// A `quoteOrderQty`: positive, with at most the quote amount's decimals (price
/// and quantity decimals together).
fn quote_amount(sym: &Symbol, text: &str) -> ApiResult<i64> {
    if text.is_empty() || text.starts_with(['+', '-']) {
        return Err(ApiError::illegal_chars("quoteOrderQty"));
    }
    match peregrine_types::decimal::parse_scaled(text, sym.quote_decimals()) {
        Ok(v) if v > 0 => Ok(v),
        Ok(_) => Err(ApiError::invalid_value("quoteOrderQty")),
        Err(e) => amount(Err(e.into()), "quoteOrderQty"),
    }
}

/// The symbol's filters: PRICE_FILTER (tick, band) and LOT_SIZE (step, min, max).
pub fn check_filters(sym: &Symbol, price: Option<i64>, qty: i64) -> ApiResult<()> {
    let s = &sym.spec;
    if let Some(p) = price {
        if p % s.tick_size != 0 || p < s.band_low() || p > s.band_high() {
            return Err(ApiError::filter("PRICE_FILTER"));
        }
    }
    if qty % s.lot_size != 0 || qty < s.min_qty || qty > s.max_qty {
        return Err(ApiError::filter("LOT_SIZE"));
    }
    Ok(())
}

/// The protection price of a market order: the far edge of the band, on the tick.
pub fn protection_price(sym: &Symbol, side: peregrine_types::Side) -> i64 {
    let s = &sym.spec;
    let t = s.tick_size;
    match side {
        peregrine_types::Side::Buy => s.band_high().div_euclid(t) * t,
        peregrine_types::Side::Sell => {
            let low = s.band_low();
            low.div_euclid(t) * t + if low % t == 0 { 0 } else { t }
        }
    }
}

/// Adds the order-count headers.
pub(crate) fn with_counts(mut r: Response, c: Option<OrderCounts>) -> Response {
    if let Some(c) = c {
        for (name, v) in [
            ("x-mbx-order-count-10s", c.ten_s),
            ("x-mbx-order-count-1d", c.day),
        ] {
            if let Ok(h) = HeaderValue::from_str(&v.to_string()) {
                r.headers_mut().insert(name, h);
            }
        }
    }
    r
}

fn new_order_response(sym: &Symbol, o: &Order, resp: RespType) -> NewOrderResponse {
    NewOrderResponse {
        symbol: sym.spec.symbol.clone(),
        order_id: o.order_id,
        order_list_id: o.list_id,
        client_order_id: o.client_order_id.clone(),
        transact_time: o.time_ms,
        result: (resp != RespType::Ack).then(|| order_result(sym, o)),
        fills: (resp == RespType::Full).then(|| {
            o.entry_fills
                .iter()
                .map(|f| OrderFill {
                    price: sym.price(f.price),
                    qty: sym.qty(f.qty),
                    commission: sym.quote_amount(i128::from(f.fee)),
                    commission_asset: sym.quote.clone(),
                    trade_id: f.trade_id,
                })
                .collect()
        }),
    }
}

/// New order.
#[utoipa::path(post, path = "/api/v3/order", tag = "trade",
    params(("X-MBX-APIKEY" = String, Header, description = "API key"),
           ("symbol" = String, Query, description = "Symbol"),
           ("side" = String, Query, description = "BUY or SELL"),
           ("type" = String, Query, description = "LIMIT, MARKET, LIMIT_MAKER, STOP_LOSS, STOP_LOSS_LIMIT, TAKE_PROFIT or TAKE_PROFIT_LIMIT"),
           ("timeInForce" = Option<String>, Query, description = "GTC, IOC or FOK (LIMIT, STOP_LOSS_LIMIT, TAKE_PROFIT_LIMIT)"),
           ("quantity" = String, Query, description = "Quantity"),
           ("quoteOrderQty" = Option<String>, Query, description = "MARKET by quote amount"),
           ("price" = Option<String>, Query, description = "Price (not for MARKET, STOP_LOSS, TAKE_PROFIT)"),
           ("stopPrice" = Option<String>, Query, description = "Trigger price (STOP_LOSS*, TAKE_PROFIT*)"),
           ("trailingDelta" = Option<u32>, Query, description = "Trailing stop offset, bips (STOP_LOSS*; without stopPrice)"),
           ("icebergQty" = Option<String>, Query, description = "Iceberg display quantity (GTC limit types)"),
           ("newClientOrderId" = Option<String>, Query, description = "Client order id"),
           ("newOrderRespType" = Option<String>, Query, description = "ACK, RESULT or FULL"),
           ("selfTradePreventionMode" = Option<String>, Query, description = "NONE, EXPIRE_TAKER, EXPIRE_MAKER, EXPIRE_BOTH, DECREMENT"),
           ("recvWindow" = Option<u64>, Query, description = "ms, at most 60000"),
           ("timestamp" = u64, Query, description = "ms"),
           ("signature" = String, Query, description = "HMAC-SHA256")),
    responses((status = 200, body = NewOrderResponse), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
              (status = 413, body = ErrorBody), (status = 429, body = ErrorBody), (status = 503, body = ErrorBody)))]
pub async fn new_order(State(app): State<Arc<App>>, req: Req) -> Response {
    let entered = std::time::Instant::now();
    let mut counts = None;
    let r: ApiResult<NewOrderResponse> = async {
        let (key, mut p) = app.authenticate(&req)?;
        let c = check_new(&app, key.account, &mut p)?;
        p.finish()?;
        place_checked(&app, key.account, c, (req.arrived, entered), &mut counts).await
    }
    .await;
    with_counts(reply(r), counts)
}

/// Places a checked order: charges the account's order count (left in `counts`),
/// sends it, and builds the answer `c.resp` asks for.
pub(crate) async fn place_checked(
    app: &App,
    account: peregrine_types::AccountId,
    c: Checked,
    stamps: (std::time::Instant, std::time::Instant),
    counts: &mut Option<OrderCounts>,
) -> ApiResult<NewOrderResponse> {
    *counts = Some(app.limits.charge_order(account.0, now_ms())?);
    let sym = &app.market.symbols.all()[c.idx];
    let (order, stamps) = app
        .accounts
        .place(account, c.draft, c.resp, stamps)
        .await
        .map_err(refusal)?;
    let body = new_order_response(sym, &order, c.resp);
    app.accounts
        .stages
        .record(&stamps, std::time::Instant::now());
    Ok(body)
}

/// Test a new order: every check, nothing sent.
#[utoipa::path(post, path = "/api/v3/order/test", tag = "trade",
    params(("X-MBX-APIKEY" = String, Header, description = "API key"),
           ("symbol" = String, Query, description = "Symbol"),
           ("side" = String, Query, description = "BUY or SELL"),
           ("type" = String, Query, description = "LIMIT, MARKET or LIMIT_MAKER"),
           ("quantity" = String, Query, description = "Quantity"),
           ("timestamp" = u64, Query, description = "ms"),
           ("signature" = String, Query, description = "HMAC-SHA256")),
    responses((status = 200, body = Empty), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
              (status = 413, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn test_order(State(app): State<Arc<App>>, req: Req) -> Response {
    reply((|| {
        let (key, mut p) = app.authenticate(&req)?;
        p.ignore("computeCommissionRates");
        check_new(&app, key.account, &mut p)?;
        p.finish()?;
        Ok(Empty {})
    })())
}

/// The order named by `orderId` or `origClientOrderId`, from live state or history.
async fn find(
    app: &App,
    account: peregrine_types::AccountId,
    idx: usize,
    p: &mut Params,
) -> ApiResult<Option<Order>> {
    let order_id = p.opt_u64("orderId")?;
    let orig = client_id(p, "origClientOrderId")?;
    if order_id.is_none() && orig.is_none() {
        return Err(ApiError::mandatory("orderId"));
    }
    find_by(app, account, idx, order_id, orig).await
}

/// The order with `order_id` (or, without one, client id `orig`; with both, both
/// must match) of symbol `idx`, from live state or history.
pub(crate) async fn find_by(
    app: &App,
    account: peregrine_types::AccountId,
    idx: usize,
    order_id: Option<u64>,
    orig: Option<String>,
) -> ApiResult<Option<Order>> {
    let live = {
        let st = app.accounts.lock(account);
        match (order_id, &orig) {
            (Some(id), _) => st.order(id).filter(|o| o.symbol == idx).cloned(),
            (None, Some(c)) => st.order_by_client_id(idx, c).cloned(),
            (None, None) => None,
        }
    };
    let live = live.filter(|o| orig.as_ref().is_none_or(|c| *c == o.client_order_id));
    if live.is_some() {
        return Ok(live);
    }
    let instrument = app.market.symbols.all()[idx].id().0;
    let symbols = &app.market.symbols;
    let symbol_of = |id: u32| symbols.index_of(peregrine_types::InstrumentId(id));
    crate::history::read::find_order(
        &app.pool,
        account.0,
        instrument,
        order_id,
        orig.as_deref(),
        &symbol_of,
    )
    .await
    .map_err(|e| ApiError::internal(e.to_string()))
}

/// Cancel an order.
#[utoipa::path(delete, path = "/api/v3/order", tag = "trade",
    params(("X-MBX-APIKEY" = String, Header, description = "API key"),
           ("symbol" = String, Query, description = "Symbol"),
           ("orderId" = Option<u64>, Query, description = "Order id"),
           ("origClientOrderId" = Option<String>, Query, description = "Client order id"),
           ("newClientOrderId" = Option<String>, Query, description = "Id of this cancel"),
           ("timestamp" = u64, Query, description = "ms"),
           ("signature" = String, Query, description = "HMAC-SHA256")),
    responses((status = 200, body = CancelResponse), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
              (status = 413, body = ErrorBody), (status = 429, body = ErrorBody), (status = 503, body = ErrorBody)))]
pub async fn cancel_order(State(app): State<Arc<App>>, req: Req) -> Response {
    let r: ApiResult<CancelResponse> = async {
        let (key, mut p) = app.authenticate(&req)?;
        let (idx, sym) = symbol(&app, &mut p)?;
        let new_id = client_id(&mut p, "newClientOrderId")?;
        p.ignore("cancelRestrictions");
        let found = find(&app, key.account, idx, &mut p).await?;
        p.finish()?;
        let order = found
            .filter(|o| o.status.is_open())
            .ok_or_else(ApiError::unknown_order_cancel)?;
        cancel_one(&app, key.account, sym, &order, new_id).await
    }
    .await;
    reply(r)
}

/// Cancels one open order; the answer Binance gives for it.
pub(crate) async fn cancel_one(
    app: &App,
    account: peregrine_types::AccountId,
    sym: &Symbol,
    order: &Order,
    new_id: Option<String>,
) -> ApiResult<CancelResponse> {
    let cancel_id = new_id.unwrap_or_else(|| format!("cancel_{:x}", order.order_id));
    let after = app
        .accounts
        .cancel(account, order, cancel_id.clone())
        .await
        .map_err(|r| match r {
            Refusal::Failed(Failure::Refused(_)) => ApiError::unknown_order_cancel(),
            other => refusal(other),
        })?;
    Ok(CancelResponse {
        symbol: sym.spec.symbol.clone(),
        orig_client_order_id: after.client_order_id.clone(),
        order_id: after.order_id,
        order_list_id: -1,
        client_order_id: cancel_id,
        transact_time: after.update_ms,
        result: order_result(sym, &after),
    })
}

/// Query an order.
#[utoipa::path(get, path = "/api/v3/order", tag = "trade",
    params(("X-MBX-APIKEY" = String, Header, description = "API key"),
           ("symbol" = String, Query, description = "Symbol"),
           ("orderId" = Option<u64>, Query, description = "Order id"),
           ("origClientOrderId" = Option<String>, Query, description = "Client order id"),
           ("timestamp" = u64, Query, description = "ms"),
           ("signature" = String, Query, description = "HMAC-SHA256")),
    responses((status = 200, body = OrderView), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
              (status = 413, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn get_order(State(app): State<Arc<App>>, req: Req) -> Response {
    let r: ApiResult<OrderView> = async {
        let (key, mut p) = app.authenticate(&req)?;
        let (idx, sym) = symbol(&app, &mut p)?;
        app.accounts.sync(key.account).await;
        let found = find(&app, key.account, idx, &mut p).await?;
        p.finish()?;
        let o = found.ok_or_else(ApiError::no_such_order)?;
        Ok(order_view(sym, &o))
    }
    .await;
    reply(r)
}

/// Open orders (one symbol, or all).
#[utoipa::path(get, path = "/api/v3/openOrders", tag = "trade",
    params(("X-MBX-APIKEY" = String, Header, description = "API key"),
           ("symbol" = Option<String>, Query, description = "Symbol (default: all)"),
           ("timestamp" = u64, Query, description = "ms"),
           ("signature" = String, Query, description = "HMAC-SHA256")),
    responses((status = 200, body = Vec<OrderView>), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
              (status = 413, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn open_orders(State(app): State<Arc<App>>, req: Req) -> Response {
    let r: ApiResult<Vec<OrderView>> = async {
        let (key, mut p) = app.authenticate(&req)?;
        let idx = match p.opt("symbol") {
            Some(name) => Some(app.market.find(&name).ok_or_else(ApiError::bad_symbol)?.0),
            None => None,
        };
        p.finish()?;
        app.accounts.sync(key.account).await;
        let orders = app.accounts.lock(key.account).open_orders(idx);
        Ok(orders
            .iter()
            .map(|o| order_view(&app.market.symbols.all()[o.symbol], o))
            .collect())
    }
    .await;
    reply(r)
}

/// Cancel every open order of a symbol.
#[utoipa::path(delete, path = "/api/v3/openOrders", tag = "trade",
    params(("X-MBX-APIKEY" = String, Header, description = "API key"),
           ("symbol" = String, Query, description = "Symbol"),
           ("timestamp" = u64, Query, description = "ms"),
           ("signature" = String, Query, description = "HMAC-SHA256")),
    responses((status = 200, body = Vec<CancelResponse>), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
              (status = 413, body = ErrorBody), (status = 429, body = ErrorBody), (status = 503, body = ErrorBody)))]
pub async fn cancel_open_orders(State(app): State<Arc<App>>, req: Req) -> Response {
    let r: ApiResult<Vec<CancelResponse>> = async {
        let (key, mut p) = app.authenticate(&req)?;
        let (idx, sym) = symbol(&app, &mut p)?;
        p.finish()?;
        let open = app.accounts.lock(key.account).open_orders(Some(idx));
        // One cancel per order, all in flight at once: each gets exactly one answer.
        let answers = futures_util::future::join_all(
            open.iter()
                .map(|o| cancel_one(&app, key.account, sym, o, None)),
        )
        .await;
        let mut out = Vec::new();
        for a in answers {
            match a {
                Ok(c) => out.push(c),
                // Filled or cancelled meanwhile: not in the list.
                Err(e) if e.code == -2011 => {}
                Err(e) => return Err(e),
            }
        }
        Ok(out)
    }
    .await;
    reply(r)
}

#[cfg(test)]
mod busy_tests {
    use super::*;

    #[test]
    fn the_exchanges_busy_is_a_503_server_busy_with_retry_after() {
        let e = reject(peregrine_wire::reason::RejectCode::Busy.code());
        assert_eq!(e.status, axum::http::StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(e.code, -1008);
        assert_eq!(e.retry_after, Some(1));
        // Other reasons keep their mapping.
        assert_eq!(reject(8).code, ApiError::bad_symbol().code);
    }
}
