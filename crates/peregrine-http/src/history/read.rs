//! Reads behind the REST endpoints: trades, klines, 24-hour statistics, orders and
//! the account's fills.

use sqlx::any::AnyRow;
use sqlx::AnyPool;

use super::{i128_at, i64_at, str_at, u64_at, HistoryError};
use crate::account::order::{parse_side, parse_stp, parse_tif, Order, OrderType, Status};
use crate::market::batch::TradeRow;
use crate::market::kline::{roll_up, Bar, Interval};

fn trade(r: &AnyRow) -> Result<TradeRow, HistoryError> {
    Ok(TradeRow {
        instrument: u64_at(r, 0)? as u32,
        trade_id: u64_at(r, 1)?,
        price: i64_at(r, 2)?,
        qty: i64_at(r, 3)?,
        buyer_maker: i64_at(r, 4)? != 0,
        time_ms: u64_at(r, 5)?,
        session: u64_at(r, 6)?,
        seq: u64_at(r, 7)?,
    })
}

const TRADE_COLS: &str =
    "instrument, trade_id, price, qty, buyer_maker, time_ms, feed_session, feed_seq";

/// The most recent `limit` trades, oldest first.
pub async fn recent_trades(
    pool: &AnyPool,
    instrument: u32,
    limit: usize,
) -> Result<Vec<TradeRow>, HistoryError> {
    let sql = format!(
        "SELECT {TRADE_COLS} FROM trades WHERE instrument = $1 ORDER BY trade_id DESC LIMIT $2"
    );
    let rows = sqlx::query(&sql)
        .bind(i64::from(instrument))
        .bind(limit as i64)
        .fetch_all(pool)
        .await?;
    let mut v = rows.iter().map(trade).collect::<Result<Vec<_>, _>>()?;
    v.reverse();
    Ok(v)
}

/// Up to `limit` trades in id order, from id `from` on, or within `[start, end]` ms.
pub async fn trades_from(
    pool: &AnyPool,
    instrument: u32,
    from: Option<u64>,
    start: Option<u64>,
    end: Option<u64>,
    limit: usize,
) -> Result<Vec<TradeRow>, HistoryError> {
    let sql = format!(
        "SELECT {TRADE_COLS} FROM trades WHERE instrument = $1 AND trade_id >= $2 \
         AND time_ms >= $3 AND time_ms <= $4 ORDER BY trade_id ASC LIMIT $5"
    );
    let rows = sqlx::query(&sql)
        .bind(i64::from(instrument))
        .bind(from.unwrap_or(0).min(i64::MAX as u64) as i64)
        .bind(start.unwrap_or(0).min(i64::MAX as u64) as i64)
        .bind(end.unwrap_or(i64::MAX as u64).min(i64::MAX as u64) as i64)
        .bind(limit as i64)
        .fetch_all(pool)
        .await?;
    rows.iter().map(trade).collect()
}

/// The latest trade before `before_ms`.
pub async fn last_trade_before(
    pool: &AnyPool,
    instrument: u32,
    before_ms: u64,
) -> Result<Option<TradeRow>, HistoryError> {
    let sql = format!(
        "SELECT {TRADE_COLS} FROM trades WHERE instrument = $1 AND time_ms < $2 ORDER BY time_ms DESC, trade_id DESC LIMIT 1"
    );
    let row = sqlx::query(&sql)
        .bind(i64::from(instrument))
        .bind(before_ms.min(i64::MAX as u64) as i64)
        .fetch_optional(pool)
        .await?;
    row.as_ref().map(trade).transpose()
}

fn bar(r: &AnyRow) -> Result<Bar, HistoryError> {
    Ok(Bar {
        open_time: i64_at(r, 0)?,
        open: i64_at(r, 1)?,
        high: i64_at(r, 2)?,
        low: i64_at(r, 3)?,
        close: i64_at(r, 4)?,
        volume: i64_at(r, 5)?,
        quote_volume: i128_at(r, 6)?,
        trades: u64_at(r, 7)?,
        taker_buy_volume: i64_at(r, 8)?,
        taker_buy_quote: i128_at(r, 9)?,
        first_trade: u64_at(r, 10)?,
        last_trade: u64_at(r, 11)?,
    })
}

/// Stored bars of `base` with open time in `[from, to]`, in time order.
async fn stored_bars(
    pool: &AnyPool,
    instrument: u32,
    base: Interval,
    from: i64,
    to: i64,
) -> Result<Vec<Bar>, HistoryError> {
    let rows = sqlx::query(
        "SELECT open_time, open, high, low, close, volume, quote_volume, trades, taker_buy_volume, \
         taker_buy_quote, first_trade, last_trade FROM klines \
         WHERE instrument = $1 AND bar_interval = $2 AND open_time >= $3 AND open_time <= $4 \
         ORDER BY open_time ASC",
    )
    .bind(i64::from(instrument))
    .bind(base.name())
    .bind(from)
    .bind(to)
    .fetch_all(pool)
    .await?;
    rows.iter().map(bar).collect()
}

/// Bars of `interval` as Binance's `GET /api/v3/klines` selects them: with
/// `start`, the first `limit` bars opening at or after it; otherwise the last
/// `limit` bars opening at or before `end` (default `now_ms`). Periods without
/// trades have no bar.
pub async fn klines(
    pool: &AnyPool,
    instrument: u32,
    interval: Interval,
    start: Option<i64>,
    end: Option<i64>,
    limit: usize,
    now_ms: i64,
) -> Result<Vec<Bar>, HistoryError> {
    // Longest a bar can be, to bound the window read.
    let len = interval.fixed_ms().unwrap_or(31 * 86_400_000);
    let span = len.saturating_mul(limit as i64 + 1);
    let end = end.unwrap_or(now_ms);
    let (from, to) = match start {
        Some(s) => (interval.open_time(s), end.min(s.saturating_add(span))),
        None => (interval.open_time(end.saturating_sub(span)), end),
    };
    let bars = match interval.stored_base() {
        Some(base) => roll_up(
            interval,
            stored_bars(pool, instrument, base, from, to).await?,
        ),
        None => {
            let trades = trades_from(
                pool,
                instrument,
                None,
                Some(from.max(0) as u64),
                Some(to.max(0) as u64 + 999),
                usize::MAX >> 1,
            )
            .await?;
            roll_up(
                interval,
                trades.iter().map(|t| {
                    Bar::from_trade(t.time_ms as i64, t.trade_id, t.price, t.qty, !t.buyer_maker)
                }),
            )
        }
    };
    let mut bars: Vec<Bar> = bars
        .into_iter()
        .filter(|b| {
            b.open_time >= from
                && b.open_time <= to
                && start.is_none_or(|s| b.open_time >= interval.open_time(s))
        })
        .collect();
    if start.is_some() {
        bars.truncate(limit);
    } else if bars.len() > limit {
        bars.drain(..bars.len() - limit);
    }
    Ok(bars)
}

/// The order columns, in [`order`]'s order.
const ORDER_COLS: &str =
    "o.instrument, o.order_id, o.coid, o.client_order_id, o.side, o.order_type, o.tif, o.stp, o.price, \
     o.orig_qty, o.executed, o.cum_quote, o.status, o.time_ms, o.update_ms, \
     COALESCE(x.stop_price, 0), COALESCE(x.iceberg_qty, 0), COALESCE(x.trailing_delta, 0), \
     COALESCE(x.list_id, -1), COALESCE(x.working_ms, o.time_ms)";

/// The orders with their conditional part (`order_ext`, none for most orders).
const ORDER_FROM: &str =
    "orders o LEFT JOIN order_ext x ON x.account = o.account AND x.order_id = o.order_id";

/// An order row; `symbol_of` maps an instrument id to its symbol index.
fn order(
    r: &AnyRow,
    symbol_of: &(dyn Fn(u32) -> Option<usize> + Sync),
) -> Result<Option<Order>, HistoryError> {
    let instrument = u64_at(r, 0)? as u32;
    let Some(symbol) = symbol_of(instrument) else {
        return Ok(None);
    };
    let bad = |what: &str| HistoryError::Corrupt(what.to_owned());
    let kind = OrderType::parse(&str_at(r, 5)?).ok_or_else(|| bad("order_type"))?;
    let working = i64_at(r, 19)?;
    Ok(Some(Order {
        symbol,
        order_id: u64_at(r, 1)?,
        coid: u64_at(r, 2)?,
        client_order_id: str_at(r, 3)?,
        side: parse_side(&str_at(r, 4)?).ok_or_else(|| bad("side"))?,
        kind,
        tif: parse_tif(&str_at(r, 6)?).ok_or_else(|| bad("tif"))?,
        stp: parse_stp(&str_at(r, 7)?).ok_or_else(|| bad("stp"))?,
        price: i64_at(r, 8)?,
        orig_qty: i64_at(r, 9)?,
        executed: i64_at(r, 10)?,
        cum_quote: i128_at(r, 11)?,
        status: Status::parse(&str_at(r, 12)?).ok_or_else(|| bad("status"))?,
        time_ms: u64_at(r, 13)?,
        update_ms: u64_at(r, 14)?,
        entry_fills: Vec::new(),
        orig_quote: 0,
        ext: crate::link::Ext {
            trigger: kind.trigger(),
            stop_price: i64_at(r, 15)?,
            display_qty: i64_at(r, 16)?,
            trail_bps: u32::try_from(i64_at(r, 17)?).map_err(|_| bad("trailing_delta"))?,
        },
        list_id: i64_at(r, 18)?,
        working_ms: u64::try_from(working).ok(),
    }))
}

/// One order of `account` by exchange id, or by client id within an instrument.
pub async fn find_order(
    pool: &AnyPool,
    account: u32,
    instrument: u32,
    order_id: Option<u64>,
    client_id: Option<&str>,
    symbol_of: &(dyn Fn(u32) -> Option<usize> + Sync),
) -> Result<Option<Order>, HistoryError> {
    let sql = format!(
        "SELECT {ORDER_COLS} FROM {ORDER_FROM} WHERE o.account = $1 AND o.instrument = $2 \
         AND ($3 < 0 OR o.order_id = $3) AND ($4 = '' OR o.client_order_id = $4) ORDER BY o.order_id DESC LIMIT 1"
    );
    let row = sqlx::query(&sql)
        .bind(i64::from(account))
        .bind(i64::from(instrument))
        .bind(order_id.map_or(-1, |o| o.min(i64::MAX as u64) as i64))
        .bind(client_id.unwrap_or("").to_owned())
        .fetch_optional(pool)
        .await?;
    match row {
        Some(r) => order(&r, symbol_of),
        None => Ok(None),
    }
}

/// Orders of `account` in an instrument (Binance's `allOrders` selection).
#[allow(clippy::too_many_arguments)]
pub async fn all_orders(
    pool: &AnyPool,
    account: u32,
    instrument: u32,
    from_id: Option<u64>,
    start: Option<u64>,
    end: Option<u64>,
    limit: usize,
    symbol_of: &(dyn Fn(u32) -> Option<usize> + Sync),
) -> Result<Vec<Order>, HistoryError> {
    let (order_by, rev) = if from_id.is_some() || start.is_some() {
        ("ASC", false)
    } else {
        ("DESC", true)
    };
    let sql = format!(
        "SELECT {ORDER_COLS} FROM {ORDER_FROM} WHERE o.account = $1 AND o.instrument = $2 AND o.order_id >= $3 \
         AND o.time_ms >= $4 AND o.time_ms <= $5 ORDER BY o.order_id {order_by} LIMIT $6"
    );
    let rows = sqlx::query(&sql)
        .bind(i64::from(account))
        .bind(i64::from(instrument))
        .bind(from_id.unwrap_or(0).min(i64::MAX as u64) as i64)
        .bind(start.unwrap_or(0).min(i64::MAX as u64) as i64)
        .bind(end.unwrap_or(i64::MAX as u64).min(i64::MAX as u64) as i64)
        .bind(limit as i64)
        .fetch_all(pool)
        .await?;
    let mut v = Vec::new();
    for r in &rows {
        if let Some(o) = order(r, symbol_of)? {
            v.push(o);
        }
    }
    if rev {
        v.reverse();
    }
    Ok(v)
}

/// The stored report stream position of `account` (0: none stored).
pub async fn report_cursor(pool: &AnyPool, account: u32) -> Result<u64, HistoryError> {
    let row = sqlx::query("SELECT next_seq FROM report_cursor WHERE account = $1")
        .bind(i64::from(account))
        .fetch_optional(pool)
        .await?;
    match row {
        Some(r) => u64_at(&r, 0),
        None => Ok(0),
    }
}

/// Open orders of `account` (for the start-up restore).
pub async fn open_orders(
    pool: &AnyPool,
    account: u32,
    symbol_of: &(dyn Fn(u32) -> Option<usize> + Sync),
) -> Result<Vec<Order>, HistoryError> {
    let sql = format!(
        "SELECT {ORDER_COLS} FROM {ORDER_FROM} WHERE o.account = $1 AND o.status IN ('NEW', 'PARTIALLY_FILLED') ORDER BY o.order_id"
    );
    let rows = sqlx::query(&sql)
        .bind(i64::from(account))
        .fetch_all(pool)
        .await?;
    let mut v = Vec::new();
    for r in &rows {
        if let Some(o) = order(r, symbol_of)? {
            v.push(o);
        }
    }
    Ok(v)
}

/// One of the account's fills.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MyTrade {
    /// Order id.
    pub order_id: u64,
    /// Trade id.
    pub trade_id: u64,
    /// Price units.
    pub price: i64,
    /// Quantity units.
    pub qty: i64,
    /// Quote amount.
    pub quote: i128,
    /// The account bought.
    pub is_buyer: bool,
    /// The order was resting.
    pub is_maker: bool,
    /// Time, ms.
    pub time_ms: u64,
    /// The fee, quote asset's smallest unit (negative: a rebate).
    pub fee: i64,
    /// The order list of its order (-1: none).
    pub list_id: i64,
}

/// The account's fills in an instrument (Binance's `myTrades` selection).
#[allow(clippy::too_many_arguments)]
pub async fn my_trades(
    pool: &AnyPool,
    account: u32,
    instrument: u32,
    order_id: Option<u64>,
    from_id: Option<u64>,
    start: Option<u64>,
    end: Option<u64>,
    limit: usize,
) -> Result<Vec<MyTrade>, HistoryError> {
    let rev = from_id.is_none() && start.is_none();
    let sql = format!(
        "SELECT t.order_id, t.trade_id, t.price, t.qty, t.quote_qty, t.is_buyer, t.is_maker, t.time_ms, \
         COALESCE(f.fee, 0), COALESCE(x.list_id, -1) FROM my_trades t LEFT JOIN my_trade_fees f \
         ON f.account = t.account AND f.order_id = t.order_id AND f.trade_id = t.trade_id \
         LEFT JOIN order_ext x ON x.account = t.account AND x.order_id = t.order_id \
         WHERE t.account = $1 AND t.instrument = $2 AND ($3 < 0 OR t.order_id = $3) AND t.trade_id >= $4 \
         AND t.time_ms >= $5 AND t.time_ms <= $6 ORDER BY t.trade_id {}, t.order_id LIMIT $7",
        if rev { "DESC" } else { "ASC" }
    );
    let rows = sqlx::query(&sql)
        .bind(i64::from(account))
        .bind(i64::from(instrument))
        .bind(order_id.map_or(-1, |o| o.min(i64::MAX as u64) as i64))
        .bind(from_id.unwrap_or(0).min(i64::MAX as u64) as i64)
        .bind(start.unwrap_or(0).min(i64::MAX as u64) as i64)
        .bind(end.unwrap_or(i64::MAX as u64).min(i64::MAX as u64) as i64)
        .bind(limit as i64)
        .fetch_all(pool)
        .await?;
    let mut v = rows
        .iter()
        .map(|r| {
            Ok(MyTrade {
                order_id: u64_at(r, 0)?,
                trade_id: u64_at(r, 1)?,
                price: i64_at(r, 2)?,
                qty: i64_at(r, 3)?,
                quote: i128_at(r, 4)?,
                is_buyer: i64_at(r, 5)? != 0,
                is_maker: i64_at(r, 6)? != 0,
                time_ms: u64_at(r, 7)?,
                fee: i64_at(r, 8)?,
                list_id: i64_at(r, 9)?,
            })
        })
        .collect::<Result<Vec<_>, HistoryError>>()?;
    if rev {
        v.reverse();
    }
    Ok(v)
}

/// Number of trades and the lowest and highest trade id stored for `instrument`.
pub async fn trade_id_span(
    pool: &AnyPool,
    instrument: u32,
) -> Result<(u64, u64, u64), HistoryError> {
    let r = sqlx::query("SELECT COUNT(*), COALESCE(MIN(trade_id), 0), COALESCE(MAX(trade_id), 0) FROM trades WHERE instrument = $1")
        .bind(i64::from(instrument))
        .fetch_one(pool)
        .await?;
    Ok((u64_at(&r, 0)?, u64_at(&r, 1)?, u64_at(&r, 2)?))
}
