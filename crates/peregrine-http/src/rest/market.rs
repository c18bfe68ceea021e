//! Public market-data endpoints: ping, time, exchangeInfo, depth, trades, klines,
//! tickers.

use std::sync::Arc;

use axum::extract::State;
use axum::response::Response;

use super::views::*;
use super::{reply, Req};
use crate::app::App;
use crate::dialect::error::{ApiError, ApiResult, ErrorBody};
use crate::dialect::params::Params;
use crate::history::read;
use crate::market::feed::now_ms;
use crate::market::kline::{Bar, Interval};
use crate::market::symbols::Symbol;
use crate::market::ticker::{avg, DayStats, DAY_MS};

/// The symbol named by the mandatory `symbol` parameter: (index, symbol).
pub fn symbol<'a>(app: &'a App, p: &mut Params) -> ApiResult<(usize, &'a Symbol)> {
    let name = p.req("symbol")?;
    app.market.find(&name).ok_or_else(ApiError::bad_symbol)
}

/// `symbol` or `symbols` (a JSON array) or neither (all): (indexes, one object?).
fn symbol_set(app: &App, p: &mut Params) -> ApiResult<(Vec<usize>, bool)> {
    match (p.opt("symbol"), p.opt("symbols")) {
        (Some(_), Some(_)) => Err(ApiError::bad_combo(
            "Parameters 'symbol' and 'symbols' cannot be sent together.",
        )),
        (Some(name), None) => {
            let (i, _) = app.market.find(&name).ok_or_else(ApiError::bad_symbol)?;
            Ok((vec![i], true))
        }
        (None, Some(list)) => {
            let names: Vec<String> =
                serde_json::from_str(&list).map_err(|_| ApiError::illegal_chars("symbols"))?;
            if names.is_empty() || names.len() > 100 {
                return Err(ApiError::invalid_value("symbols"));
            }
            let mut out = Vec::new();
            for n in names {
                let (i, _) = app.market.find(&n).ok_or_else(ApiError::bad_symbol)?;
                if !out.contains(&i) {
                    out.push(i);
                }
            }
            Ok((out, false))
        }
        (None, None) => Ok(((0..app.market.symbols.all().len()).collect(), false)),
    }
}

fn db(e: crate::history::HistoryError) -> ApiError {
    ApiError::internal(e.to_string())
}

/// Test connectivity.
#[utoipa::path(get, path = "/api/v3/ping", tag = "market",
    responses((status = 200, body = Empty), (status = 400, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn ping(State(app): State<Arc<App>>, req: Req) -> Response {
    reply(
        app.public_params(&req)
            .and_then(|p| p.finish())
            .map(|_| Empty {}),
    )
}

/// Server time.
#[utoipa::path(get, path = "/api/v3/time", tag = "market",
    responses((status = 200, body = ServerTime), (status = 400, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn time(State(app): State<Arc<App>>, req: Req) -> Response {
    reply(
        app.public_params(&req)
            .and_then(|p| p.finish())
            .map(|_| ServerTime {
                server_time: now_ms(),
            }),
    )
}

fn symbol_info(s: &Symbol) -> SymbolInfo {
    let spec = &s.spec;
    let tick = spec.tick_size;
    let low = spec.band_low().div_euclid(tick) * tick
        + if spec.band_low() % tick == 0 { 0 } else { tick };
    let high = spec.band_high().div_euclid(tick) * tick;
    SymbolInfo {
        symbol: spec.symbol.clone(),
        status: if s.trading() { "TRADING" } else { "HALT" },
        base_asset: s.base.clone(),
        base_asset_precision: spec.qty_decimals,
        quote_asset: s.quote.clone(),
        quote_precision: spec.price_decimals,
        quote_asset_precision: s.quote_decimals(),
        base_commission_precision: spec.qty_decimals,
        quote_commission_precision: s.quote_decimals(),
        order_types: vec![
            "LIMIT",
            "LIMIT_MAKER",
            "MARKET",
            "STOP_LOSS",
            "STOP_LOSS_LIMIT",
            "TAKE_PROFIT",
            "TAKE_PROFIT_LIMIT",
        ],
        iceberg_allowed: true,
        oco_allowed: true,
        oto_allowed: true,
        quote_order_qty_market_allowed: false,
        allow_trailing_stop: true,
        cancel_replace_allowed: false,
        is_spot_trading_allowed: true,
        is_margin_trading_allowed: false,
        filters: vec![
            Filter {
                filter_type: "PRICE_FILTER",
                min_price: Some(s.price(low)),
                max_price: Some(s.price(high)),
                tick_size: Some(s.price(tick)),
                min_qty: None,
                max_qty: None,
                step_size: None,
            },
            Filter {
                filter_type: "LOT_SIZE",
                min_price: None,
                max_price: None,
                tick_size: None,
                min_qty: Some(s.qty(spec.min_qty)),
                max_qty: Some(s.qty(spec.max_qty)),
                step_size: Some(s.qty(spec.lot_size)),
            },
            Filter {
                filter_type: "MARKET_LOT_SIZE",
                min_price: None,
                max_price: None,
                tick_size: None,
                min_qty: Some(s.qty(spec.min_qty)),
                max_qty: Some(s.qty(spec.max_qty)),
                step_size: Some(s.qty(spec.lot_size)),
            },
        ],
        permissions: vec!["SPOT"],
        permission_sets: vec![vec!["SPOT"]],
        default_self_trade_prevention_mode: "NONE",
        allowed_self_trade_prevention_modes: vec![
            "NONE",
            "EXPIRE_TAKER",
            "EXPIRE_MAKER",
            "EXPIRE_BOTH",
            "DECREMENT",
        ],
    }
}

/// Trading rules and symbols, from the exchange's reference data.
#[utoipa::path(get, path = "/api/v3/exchangeInfo", tag = "market",
    params(("symbol" = Option<String>, Query, description = "One symbol"),
           ("symbols" = Option<String>, Query, description = "JSON array of symbols")),
    responses((status = 200, body = ExchangeInfo), (status = 400, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn exchange_info(State(app): State<Arc<App>>, req: Req) -> Response {
    reply((|| {
        let mut p = app.public_params(&req)?;
        p.ignore("permissions");
        p.ignore("showPermissionSets");
        p.ignore("symbolStatus");
        let (set, _) = symbol_set(&app, &mut p)?;
        p.finish()?;
        let l = app.limits.config();
        Ok(ExchangeInfo {
            timezone: "UTC",
            server_time: now_ms(),
            rate_limits: vec![
                RateLimit {
                    rate_limit_type: "REQUEST_WEIGHT",
                    interval: "MINUTE",
                    interval_num: 1,
                    limit: l.request_weight_per_minute,
                },
                RateLimit {
                    rate_limit_type: "ORDERS",
                    interval: "SECOND",
                    interval_num: 10,
                    limit: l.orders_per_10s,
                },
                RateLimit {
                    rate_limit_type: "ORDERS",
                    interval: "DAY",
                    interval_num: 1,
                    limit: l.orders_per_day,
                },
            ],
            exchange_filters: Vec::new(),
            symbols: set
                .into_iter()
                .map(|i| symbol_info(&app.market.symbols.all()[i]))
                .collect(),
        })
    })())
}

/// The order book, with the update id that the depth stream continues from.
#[utoipa::path(get, path = "/api/v3/depth", tag = "market",
    params(("symbol" = String, Query, description = "Symbol"),
           ("limit" = Option<u32>, Query, description = "Levels per side, 1..=5000, default 100")),
    responses((status = 200, body = Depth), (status = 400, body = ErrorBody), (status = 429, body = ErrorBody),
              (status = 503, body = ErrorBody)))]
pub async fn depth(State(app): State<Arc<App>>, req: Req) -> Response {
    reply((|| {
        let mut p = app.public_params(&req)?;
        let (i, sym) = symbol(&app, &mut p)?;
        let limit = p.limit(100, 5000)?;
        p.finish()?;
        let st = app.market.state(i);
        if !st.synced {
            return Err(ApiError::disconnected());
        }
        let (bids, asks) = st.book.top(limit);
        let id = st.book.update_id();
        drop(st);
        Ok(Depth {
            last_update_id: id,
            bids: crate::market::events::levels(sym, bids),
            asks: crate::market::events::levels(sym, asks),
        })
    })())
}

fn trade_view(sym: &Symbol, t: &crate::market::batch::TradeRow) -> Trade {
    Trade {
        id: t.trade_id,
        price: sym.price(t.price),
        qty: sym.qty(t.qty),
        quote_qty: sym.quote_amount(i128::from(t.price) * i128::from(t.qty)),
        time: t.time_ms,
        is_buyer_maker: t.buyer_maker,
        is_best_match: true,
    }
}

/// Recent trades.
#[utoipa::path(get, path = "/api/v3/trades", tag = "market",
    params(("symbol" = String, Query, description = "Symbol"),
           ("limit" = Option<u32>, Query, description = "1..=1000, default 500")),
    responses((status = 200, body = Vec<Trade>), (status = 400, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn trades(State(app): State<Arc<App>>, req: Req) -> Response {
    let r: ApiResult<Vec<Trade>> = async {
        let mut p = app.public_params(&req)?;
        let (_, sym) = symbol(&app, &mut p)?;
        let limit = p.limit(500, 1000)?;
        p.finish()?;
        let rows = read::recent_trades(&app.pool, sym.id().0, limit)
            .await
            .map_err(db)?;
        Ok(rows.iter().map(|t| trade_view(sym, t)).collect())
    }
    .await;
    reply(r)
}

/// Older trades, from a trade id on.
#[utoipa::path(get, path = "/api/v3/historicalTrades", tag = "market",
    params(("symbol" = String, Query, description = "Symbol"),
           ("limit" = Option<u32>, Query, description = "1..=1000, default 500"),
           ("fromId" = Option<u64>, Query, description = "First trade id (default: the most recent trades)")),
    responses((status = 200, body = Vec<Trade>), (status = 400, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn historical_trades(State(app): State<Arc<App>>, req: Req) -> Response {
    let r: ApiResult<Vec<Trade>> = async {
        let mut p = app.public_params(&req)?;
        let (_, sym) = symbol(&app, &mut p)?;
        let limit = p.limit(500, 1000)?;
        let from = p.opt_u64("fromId")?;
        p.finish()?;
        let rows = match from {
            Some(f) => read::trades_from(&app.pool, sym.id().0, Some(f), None, None, limit).await,
            None => read::recent_trades(&app.pool, sym.id().0, limit).await,
        }
        .map_err(db)?;
        Ok(rows.iter().map(|t| trade_view(sym, t)).collect())
    }
    .await;
    reply(r)
}

/// Aggregate trades (each trade is its own aggregate here).
#[utoipa::path(get, path = "/api/v3/aggTrades", tag = "market",
    params(("symbol" = String, Query, description = "Symbol"),
           ("fromId" = Option<u64>, Query, description = "First id"),
           ("startTime" = Option<u64>, Query, description = "From, ms"),
           ("endTime" = Option<u64>, Query, description = "To, ms"),
           ("limit" = Option<u32>, Query, description = "1..=1000, default 500")),
    responses((status = 200, body = Vec<AggTrade>), (status = 400, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn agg_trades(State(app): State<Arc<App>>, req: Req) -> Response {
    let r: ApiResult<Vec<AggTrade>> = async {
        let mut p = app.public_params(&req)?;
        let (_, sym) = symbol(&app, &mut p)?;
        let from = p.opt_u64("fromId")?;
        let start = p.opt_u64("startTime")?;
        let end = p.opt_u64("endTime")?;
        let limit = p.limit(500, 1000)?;
        p.finish()?;
        let rows = if from.is_none() && start.is_none() && end.is_none() {
            read::recent_trades(&app.pool, sym.id().0, limit).await
        } else {
            read::trades_from(&app.pool, sym.id().0, from, start, end, limit).await
        }
        .map_err(db)?;
        Ok(rows
            .iter()
            .map(|t| AggTrade {
                a: t.trade_id,
                p: sym.price(t.price),
                q: sym.qty(t.qty),
                f: t.trade_id,
                l: t.trade_id,
                time: t.time_ms,
                m: t.buyer_maker,
                best_match: true,
            })
            .collect())
    }
    .await;
    reply(r)
}

/// A kline as Binance's array: [open time, open, high, low, close, volume, close
/// time, quote volume, trades, taker buy base, taker buy quote, "0"].
pub fn kline_row(sym: &Symbol, iv: Interval, b: &Bar) -> serde_json::Value {
    serde_json::json!([
        b.open_time,
        sym.price(b.open),
        sym.price(b.high),
        sym.price(b.low),
        sym.price(b.close),
        sym.qty(b.volume),
        iv.close_time(b.open_time),
        sym.quote_amount(b.quote_volume),
        b.trades,
        sym.qty(b.taker_buy_volume),
        sym.quote_amount(b.taker_buy_quote),
        "0"
    ])
}

async fn klines_common(app: &App, req: &Req) -> ApiResult<Vec<serde_json::Value>> {
    let mut p = app.public_params(req)?;
    let (_, sym) = symbol(app, &mut p)?;
    let iv = Interval::parse(&p.req("interval")?).ok_or_else(ApiError::bad_interval)?;
    let start = p.opt_u64("startTime")?;
    let end = p.opt_u64("endTime")?;
    if let Some(tz) = p.opt("timeZone") {
        if !matches!(
            tz.as_str(),
            "0" | "+0" | "-0" | "00:00" | "+00:00" | "-00:00"
        ) {
            return Err(ApiError::invalid_value("timeZone"));
        }
    }
    let limit = p.limit(500, 1000)?;
    p.finish()?;
    let clamp = |v: Option<u64>| v.map(|v| v.min(i64::MAX as u64 / 2) as i64);
    let bars = read::klines(
        &app.pool,
        sym.id().0,
        iv,
        clamp(start),
        clamp(end),
        limit,
        now_ms() as i64,
    )
    .await
    .map_err(db)?;
    Ok(bars.iter().map(|b| kline_row(sym, iv, b)).collect())
}

/// Klines (candlesticks), from the history store.
#[utoipa::path(get, path = "/api/v3/klines", tag = "market",
    params(("symbol" = String, Query, description = "Symbol"),
           ("interval" = String, Query, description = "1s 1m 3m 5m 15m 30m 1h 2h 4h 6h 8h 12h 1d 3d 1w 1M"),
           ("startTime" = Option<u64>, Query, description = "From, ms"),
           ("endTime" = Option<u64>, Query, description = "To, ms"),
           ("timeZone" = Option<String>, Query, description = "Only UTC (0)"),
           ("limit" = Option<u32>, Query, description = "1..=1000, default 500")),
    responses((status = 200, body = Vec<Vec<serde_json::Value>>), (status = 400, body = ErrorBody),
              (status = 429, body = ErrorBody)))]
pub async fn klines(State(app): State<Arc<App>>, req: Req) -> Response {
    reply(klines_common(&app, &req).await)
}

/// Klines for charts (the same bars).
#[utoipa::path(get, path = "/api/v3/uiKlines", tag = "market",
    params(("symbol" = String, Query, description = "Symbol"),
           ("interval" = String, Query, description = "Interval"),
           ("startTime" = Option<u64>, Query, description = "From, ms"),
           ("endTime" = Option<u64>, Query, description = "To, ms"),
           ("timeZone" = Option<String>, Query, description = "Only UTC (0)"),
           ("limit" = Option<u32>, Query, description = "1..=1000, default 500")),
    responses((status = 200, body = Vec<Vec<serde_json::Value>>), (status = 400, body = ErrorBody),
              (status = 429, body = ErrorBody)))]
pub async fn ui_klines(State(app): State<Arc<App>>, req: Req) -> Response {
    reply(klines_common(&app, &req).await)
}

/// Average price over the last 5 minutes (from 1-minute bars).
#[utoipa::path(get, path = "/api/v3/avgPrice", tag = "market",
    params(("symbol" = String, Query, description = "Symbol")),
    responses((status = 200, body = AvgPrice), (status = 400, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn avg_price(State(app): State<Arc<App>>, req: Req) -> Response {
    let r: ApiResult<AvgPrice> = async {
        let mut p = app.public_params(&req)?;
        let (_, sym) = symbol(&app, &mut p)?;
        p.finish()?;
        let now = now_ms() as i64;
        let bars = read::klines(
            &app.pool,
            sym.id().0,
            Interval::M1,
            Some(now - 5 * 60_000),
            Some(now),
            6,
            now,
        )
        .await
        .map_err(db)?;
        let (q, v) = bars.iter().fold((0i128, 0i64), |(q, v), b| {
            (q + b.quote_volume, v + b.volume)
        });
        Ok(AvgPrice {
            mins: 5,
            price: sym.price(avg(q, v)),
            close_time: bars
                .last()
                .map_or(0, |b| Interval::M1.close_time(b.open_time) as u64),
        })
    }
    .await;
    reply(r)
}

async fn ticker24(app: &App, i: usize) -> ApiResult<Ticker24> {
    let sym = &app.market.symbols.all()[i];
    let now = now_ms() as i64;
    let open_time = now - DAY_MS;
    let bars = read::klines(
        &app.pool,
        sym.id().0,
        Interval::M1,
        Some(open_time),
        Some(now),
        1441,
        now,
    )
    .await
    .map_err(db)?;
    let prev = read::last_trade_before(&app.pool, sym.id().0, open_time.max(0) as u64)
        .await
        .map_err(db)?;
    let s = DayStats::from_bars(bars, prev.map(|t| t.price), now);
    let (bid, ask) = app.market.state(i).book.best();
    let last = app.market.state(i).last;
    let lv = |l: Option<(i64, i64)>| {
        l.map_or((sym.price(0), sym.qty(0)), |(p, q)| {
            (sym.price(p), sym.qty(q))
        })
    };
    let (bp, bq) = lv(bid);
    let (ap, aq) = lv(ask);
    let b = s.day;
    Ok(Ticker24 {
        symbol: sym.spec.symbol.clone(),
        price_change: sym.price(s.change()),
        price_change_percent: s.change_percent(),
        weighted_avg_price: sym.price(s.weighted_avg()),
        prev_close_price: sym.price(s.prev_close.unwrap_or(0)),
        last_price: sym.price(s.last_price()),
        last_qty: sym.qty(b.and(last).map_or(0, |t| t.qty)),
        bid_price: bp,
        bid_qty: bq,
        ask_price: ap,
        ask_qty: aq,
        open_price: sym.price(b.map_or(0, |b| b.open)),
        high_price: sym.price(b.map_or(0, |b| b.high)),
        low_price: sym.price(b.map_or(0, |b| b.low)),
        volume: sym.qty(b.map_or(0, |b| b.volume)),
        quote_volume: sym.quote_amount(b.map_or(0, |b| b.quote_volume)),
        open_time: s.open_time as u64,
        close_time: s.close_time as u64,
        first_id: b.map_or(-1, |b| b.first_trade as i64),
        last_id: b.map_or(-1, |b| b.last_trade as i64),
        count: b.map_or(0, |b| b.trades),
    })
}

fn one_or_many<T: serde::Serialize>(mut v: Vec<T>, one: bool) -> ApiResult<serde_json::Value> {
    let r = if one {
        serde_json::to_value(v.remove(0))
    } else {
        serde_json::to_value(v)
    };
    r.map_err(|e| ApiError::internal(e.to_string()))
}

/// 24-hour rolling statistics (from 1-minute bars and the live book).
#[utoipa::path(get, path = "/api/v3/ticker/24hr", tag = "market",
    params(("symbol" = Option<String>, Query, description = "One symbol (an object answer)"),
           ("symbols" = Option<String>, Query, description = "JSON array of symbols"),
           ("type" = Option<String>, Query, description = "FULL (default) or MINI")),
    responses((status = 200, body = Ticker24Answer), (status = 400, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn ticker_24hr(State(app): State<Arc<App>>, req: Req) -> Response {
    let r: ApiResult<serde_json::Value> = async {
        let mut p = app.public_params(&req)?;
        let (set, one) = symbol_set(&app, &mut p)?;
        let mini = match p.opt("type").as_deref() {
            None | Some("FULL") => false,
            Some("MINI") => true,
            Some(_) => return Err(ApiError::invalid_value("type")),
        };
        p.finish()?;
        let mut out = Vec::new();
        for i in set {
            let mut v = serde_json::to_value(ticker24(&app, i).await?)
                .map_err(|e| ApiError::internal(e.to_string()))?;
            if mini {
                if let Some(o) = v.as_object_mut() {
                    for k in [
                        "priceChange",
                        "priceChangePercent",
                        "weightedAvgPrice",
                        "prevClosePrice",
                        "lastQty",
                        "bidPrice",
                        "bidQty",
                        "askPrice",
                        "askQty",
                    ] {
                        o.remove(k);
                    }
                }
            }
            out.push(v);
        }
        one_or_many(out, one)
    }
    .await;
    reply(r)
}

/// Last price.
#[utoipa::path(get, path = "/api/v3/ticker/price", tag = "market",
    params(("symbol" = Option<String>, Query, description = "One symbol (an object answer)"),
           ("symbols" = Option<String>, Query, description = "JSON array of symbols")),
    responses((status = 200, body = PriceTickerAnswer), (status = 400, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn ticker_price(State(app): State<Arc<App>>, req: Req) -> Response {
    let r: ApiResult<serde_json::Value> = async {
        let mut p = app.public_params(&req)?;
        let (set, one) = symbol_set(&app, &mut p)?;
        p.finish()?;
        let mut out = Vec::new();
        for i in set {
            let sym = &app.market.symbols.all()[i];
            let live = app.market.state(i).last.map(|t| t.price);
            let price = match live {
                Some(p) => p,
                None => read::recent_trades(&app.pool, sym.id().0, 1)
                    .await
                    .map_err(db)?
                    .first()
                    .map_or(0, |t| t.price),
            };
            out.push(PriceTicker {
                symbol: sym.spec.symbol.clone(),
                price: sym.price(price),
            });
        }
        one_or_many(out, one)
    }
    .await;
    reply(r)
}

/// Best bid and ask.
#[utoipa::path(get, path = "/api/v3/ticker/bookTicker", tag = "market",
    params(("symbol" = Option<String>, Query, description = "One symbol (an object answer)"),
           ("symbols" = Option<String>, Query, description = "JSON array of symbols")),
    responses((status = 200, body = BookTickerAnswer), (status = 400, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn book_ticker(State(app): State<Arc<App>>, req: Req) -> Response {
    reply((|| {
        let mut p = app.public_params(&req)?;
        let (set, one) = symbol_set(&app, &mut p)?;
        p.finish()?;
        let out: Vec<BookTicker> = set
            .into_iter()
            .map(|i| {
                let sym = &app.market.symbols.all()[i];
                let (bid, ask) = app.market.state(i).book.best();
                let lv = |l: Option<(i64, i64)>| {
                    l.map_or((sym.price(0), sym.qty(0)), |(p, q)| {
                        (sym.price(p), sym.qty(q))
                    })
                };
                let ((bp, bq), (ap, aq)) = (lv(bid), lv(ask));
                BookTicker {
                    symbol: sym.spec.symbol.clone(),
                    bid_price: bp,
                    bid_qty: bq,
                    ask_price: ap,
                    ask_qty: aq,
                }
            })
            .collect();
        one_or_many(out, one)
    })())
}
