//! Account endpoints (`SIGNED`): balances, all orders, the account's trades.
//!
//! `allOrders` and `myTrades` read the history store; they first wait (up to
//! 250 ms) for the writer to commit every order change handed to it so far, so a
//! client sees its own orders and fills right after making them.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::response::Response;

use super::market::symbol;
use super::trade::refusal;
use super::views::*;
use super::{reply, Req};
use crate::app::App;
use crate::dialect::error::{ApiError, ApiResult, ErrorBody};
use crate::history::read;
use crate::market::feed::now_ms;

/// Read-your-writes bound.
const SETTLE: Duration = Duration::from_millis(250);

fn db(e: crate::history::HistoryError) -> ApiError {
    ApiError::internal(e.to_string())
}

/// A fee rate in millionths as Binance's decimal fraction (`"0.00100000"` = 0.1 %).
pub(crate) fn rate(ppm: i64) -> String {
    peregrine_types::decimal::format_scaled(ppm * 100, 8)
}

/// The account's base maker and taker rates (millionths) as `GET /api/v3/account`
/// shows them: Binance has one rate per account, Peregrine one schedule per
/// instrument; the common base rates when every instrument has the same, else the
/// highest of each (what the account pays at most before volume tiers).
pub(crate) fn account_rates(symbols: &[crate::market::symbols::Symbol]) -> (i64, i64) {
    let mut maker = None::<i64>;
    let mut taker = 0;
    for s in symbols {
        let (m, t) = s
            .spec
            .fees
            .as_ref()
            .map_or((0, 0), |f| (f.maker_ppm, f.taker_ppm));
        maker = Some(maker.map_or(m, |x| x.max(m)));
        taker = taker.max(t);
    }
    (maker.unwrap_or(0), taker)
}

/// Account information and balances.
#[utoipa::path(get, path = "/api/v3/account", tag = "account",
    params(("X-MBX-APIKEY" = String, Header, description = "API key"),
           ("omitZeroBalances" = Option<bool>, Query, description = "Leave out zero balances"),
           ("timestamp" = u64, Query, description = "ms"),
           ("signature" = String, Query, description = "HMAC-SHA256")),
    responses((status = 200, body = AccountInfo), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
              (status = 413, body = ErrorBody), (status = 429, body = ErrorBody), (status = 503, body = ErrorBody)))]
pub async fn account(State(app): State<Arc<App>>, req: Req) -> Response {
    let r: ApiResult<AccountInfo> = async {
        let (key, mut p) = app.authenticate(&req)?;
        let omit = match p.opt("omitZeroBalances").as_deref() {
            None | Some("false") => false,
            Some("true") => true,
            Some(_) => return Err(ApiError::invalid_value("omitZeroBalances")),
        };
        p.finish()?;
        let assets = app.accounts.assets().to_vec();
        let answers = futures_util::future::join_all(
            assets
                .iter()
                .map(|a| app.accounts.balance(key.account, a.id)),
        )
        .await;
        let mut balances = Vec::new();
        for (a, r) in assets.iter().zip(answers) {
            let (free, locked) = r.map_err(refusal)?;
            if omit && free == 0 && locked == 0 {
                continue;
            }
            balances.push(Balance {
                asset: a.symbol.clone(),
                free: peregrine_types::decimal::format_scaled(free, a.decimals),
                locked: peregrine_types::decimal::format_scaled(locked, a.decimals),
            });
        }
        let (maker, taker) = account_rates(app.market.symbols.all());
        let zero = "0.00000000".to_owned();
        Ok(AccountInfo {
            maker_commission: maker / 100,
            taker_commission: taker / 100,
            buyer_commission: 0,
            seller_commission: 0,
            commission_rates: CommissionRates {
                maker: rate(maker),
                taker: rate(taker),
                buyer: zero.clone(),
                seller: zero,
            },
            can_trade: app.accounts.is_up(key.account),
            can_withdraw: false,
            can_deposit: false,
            brokered: false,
            require_self_trade_prevention: false,
            prevent_sor: false,
            update_time: now_ms(),
            account_type: "SPOT",
            balances,
            permissions: vec!["SPOT"],
            uid: u64::from(key.account.0),
        })
    }
    .await;
    reply(r)
}

/// Every order of the account in a symbol (history, plus live changes not yet
/// written).
#[utoipa::path(get, path = "/api/v3/allOrders", tag = "account",
    params(("X-MBX-APIKEY" = String, Header, description = "API key"),
           ("symbol" = String, Query, description = "Symbol"),
           ("orderId" = Option<u64>, Query, description = "From this order id on"),
           ("startTime" = Option<u64>, Query, description = "From, ms"),
           ("endTime" = Option<u64>, Query, description = "To, ms"),
           ("limit" = Option<u32>, Query, description = "1..=1000, default 500"),
           ("timestamp" = u64, Query, description = "ms"),
           ("signature" = String, Query, description = "HMAC-SHA256")),
    responses((status = 200, body = Vec<OrderView>), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
              (status = 413, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn all_orders(State(app): State<Arc<App>>, req: Req) -> Response {
    let r: ApiResult<Vec<OrderView>> = async {
        let (key, mut p) = app.authenticate(&req)?;
        let (idx, sym) = symbol(&app, &mut p)?;
        let from = p.opt_u64("orderId")?;
        let start = p.opt_u64("startTime")?;
        let end = p.opt_u64("endTime")?;
        let limit = p.limit(500, 1000)?;
        p.finish()?;
        app.accounts.sync(key.account).await;
        app.writer.records.settle(SETTLE).await;
        let symbols = &app.market.symbols;
        let symbol_of = |id: u32| symbols.index_of(peregrine_types::InstrumentId(id));
        let mut orders = read::all_orders(
            &app.pool,
            key.account.0,
            sym.id().0,
            from,
            start,
            end,
            limit,
            &symbol_of,
        )
        .await
        .map_err(db)?;
        // Open orders are always current in memory.
        let open = app.accounts.lock(key.account).open_orders(Some(idx));
        for o in open {
            let fits = from.is_none_or(|f| o.order_id >= f)
                && start.is_none_or(|s| o.time_ms >= s)
                && end.is_none_or(|e| o.time_ms <= e);
            if !fits {
                continue;
            }
            match orders.iter_mut().find(|x| x.order_id == o.order_id) {
                Some(x) => *x = o,
                None => orders.push(o),
            }
        }
        orders.sort_by_key(|o| o.order_id);
        if from.is_some() || start.is_some() {
            orders.truncate(limit);
        } else if orders.len() > limit {
            orders.drain(..orders.len() - limit);
        }
        Ok(orders.iter().map(|o| order_view(sym, o)).collect())
    }
    .await;
    reply(r)
}

/// The account's trades in a symbol.
#[utoipa::path(get, path = "/api/v3/myTrades", tag = "account",
    params(("X-MBX-APIKEY" = String, Header, description = "API key"),
           ("symbol" = String, Query, description = "Symbol"),
           ("orderId" = Option<u64>, Query, description = "Only this order's"),
           ("fromId" = Option<u64>, Query, description = "From this trade id on"),
           ("startTime" = Option<u64>, Query, description = "From, ms"),
           ("endTime" = Option<u64>, Query, description = "To, ms"),
           ("limit" = Option<u32>, Query, description = "1..=1000, default 500"),
           ("timestamp" = u64, Query, description = "ms"),
           ("signature" = String, Query, description = "HMAC-SHA256")),
    responses((status = 200, body = Vec<MyTradeView>), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
              (status = 413, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn my_trades(State(app): State<Arc<App>>, req: Req) -> Response {
    let r: ApiResult<Vec<MyTradeView>> = async {
        let (key, mut p) = app.authenticate(&req)?;
        let (_, sym) = symbol(&app, &mut p)?;
        let order_id = p.opt_u64("orderId")?;
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
        app.writer.records.settle(SETTLE).await;
        let rows = read::my_trades(&app.pool, key.account.0, sym.id().0, order_id, from, start, end, limit)
            .await
            .map_err(db)?;
        Ok(rows
            .iter()
            .map(|t| MyTradeView {
                symbol: sym.spec.symbol.clone(),
                id: t.trade_id,
                order_id: t.order_id,
                order_list_id: t.list_id,
                price: sym.price(t.price),
                qty: sym.qty(t.qty),
                quote_qty: sym.quote_amount(t.quote),
                commission: sym.quote_amount(i128::from(t.fee)),
                commission_asset: sym.quote.clone(),
                time: t.time_ms,
                is_buyer: t.is_buyer,
                is_maker: t.is_maker,
                is_best_match: true,
            })
            .collect())
    }
    .await;
    reply(r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::market::symbols::Symbol;
    use peregrine_types::{FeeSchedule, InstrumentSpec};

    fn with_fees(id: u32, maker: i64, taker: i64) -> Symbol {
        let mut spec = InstrumentSpec::example(id);
        spec.fees = Some(FeeSchedule {
            maker_ppm: maker,
            taker_ppm: taker,
            tiers: Vec::new(),
        });
        Symbol::new(spec)
    }

    #[test]
    fn rates_are_binance_fractions_of_the_fee_schedule() {
        assert_eq!(rate(500), "0.00050000");
        assert_eq!(rate(-20), "-0.00002000");
        assert_eq!(account_rates(&[]), (0, 0));
        // The highest of each over the instruments (an instrument without fees: 0).
        let syms = [
            with_fees(1, -20, 50),
            with_fees(2, 10, 40),
            Symbol::new(InstrumentSpec::example(3)),
        ];
        assert_eq!(account_rates(&syms), (10, 50));
        assert_eq!(account_rates(&syms[..1]), (-20, 50));
    }
}
