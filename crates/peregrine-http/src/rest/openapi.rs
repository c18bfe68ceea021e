//! The OpenAPI document, generated from the handlers' annotations and the response
//! types' schemas (utoipa), served at `/openapi.json`.

use utoipa::OpenApi;

use super::lists::{ListOrderRef, OrderListView};
use super::views::*;
use super::{account, lists, market, replace, stream, trade};
use crate::dialect::error::ErrorBody;

/// The document.
#[derive(Debug, OpenApi)]
#[openapi(
    info(
        title = "Peregrine HTTP gateway",
        description = "A Binance-spot-style REST API over the Peregrine exchange. Signed endpoints take \
                       `timestamp`, optional `recvWindow` and `signature` (hex HMAC-SHA256 of the query \
                       string followed by the form body) and the `X-MBX-APIKEY` header. See docs/http.md."
    ),
    paths(
        market::ping, market::time, market::exchange_info, market::depth, market::trades,
        market::historical_trades, market::agg_trades, market::klines, market::ui_klines,
        market::avg_price, market::ticker_24hr, market::ticker_price, market::book_ticker,
        trade::new_order, trade::test_order, trade::cancel_order, trade::get_order,
        trade::open_orders, trade::cancel_open_orders, replace::cancel_replace,
        lists::new_oco, lists::new_oto, lists::new_otoco, lists::cancel_list, lists::get_list,
        lists::open_lists, lists::all_lists,
        account::account, account::all_orders, account::my_trades,
        stream::open, stream::keepalive, stream::close,
    ),
    components(schemas(
        ErrorBody, Empty, ServerTime, ExchangeInfo, SymbolInfo, Filter, RateLimit, Depth, Trade, AggTrade,
        AvgPrice, PriceTicker, BookTicker, Ticker24, NewOrderResponse, OrderResult, OrderFill, OrderView,
        CancelResponse, AccountInfo, Balance, CommissionRates, MyTradeView, ListenKey, Ticker24Answer,
        PriceTickerAnswer, BookTickerAnswer, OrderListView, ListOrderRef,
    )),
    tags(
        (name = "market", description = "Public market data"),
        (name = "trade", description = "Orders (SIGNED)"),
        (name = "account", description = "Account and history (SIGNED)"),
        (name = "stream", description = "User-data stream listen keys (API key)"),
    )
)]
pub struct ApiDoc;

/// The document as JSON text.
pub fn json() -> String {
    ApiDoc::openapi()
        .to_pretty_json()
        .unwrap_or_else(|_| "{}".into())
}
