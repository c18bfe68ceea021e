//! Response bodies, with Binance's field names; each derives its OpenAPI schema.
//! Prices and quantities are decimal strings in the instrument's precision.

use serde::Serialize;
use utoipa::ToSchema;

use crate::account::order::{side_name, stp_name, tif_name, Order};
use crate::market::symbols::Symbol;

/// `GET /api/v3/time`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServerTime {
    /// Milliseconds since the Unix epoch.
    pub server_time: u64,
}

/// An empty object (`ping`, `order/test`).
#[derive(Debug, Serialize, ToSchema)]
pub struct Empty {}

/// A rate limit.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RateLimit {
    /// `REQUEST_WEIGHT`, `ORDERS` or `RAW_REQUESTS`.
    pub rate_limit_type: &'static str,
    /// `SECOND`, `MINUTE` or `DAY`.
    pub interval: &'static str,
    /// Number of intervals.
    pub interval_num: u32,
    /// The limit.
    pub limit: u32,
}

/// A symbol filter (`PRICE_FILTER`, `LOT_SIZE`, `MARKET_LOT_SIZE`).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Filter {
    /// Filter type.
    pub filter_type: &'static str,
    /// PRICE_FILTER: lowest price.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_price: Option<String>,
    /// PRICE_FILTER: highest price.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_price: Option<String>,
    /// PRICE_FILTER: tick.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tick_size: Option<String>,
    /// LOT_SIZE: smallest quantity.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_qty: Option<String>,
    /// LOT_SIZE: largest quantity.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_qty: Option<String>,
    /// LOT_SIZE: step.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step_size: Option<String>,
}

/// One symbol in `exchangeInfo`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SymbolInfo {
    /// Symbol.
    pub symbol: String,
    /// `TRADING` or `HALT`.
    pub status: &'static str,
    /// Base asset.
    pub base_asset: String,
    /// Decimals of base quantities.
    pub base_asset_precision: u32,
    /// Quote asset.
    pub quote_asset: String,
    /// Decimals of prices.
    pub quote_precision: u32,
    /// Decimals of quote amounts.
    pub quote_asset_precision: u32,
    /// Decimals of base commissions.
    pub base_commission_precision: u32,
    /// Decimals of quote commissions.
    pub quote_commission_precision: u32,
    /// Order types.
    pub order_types: Vec<&'static str>,
    /// Iceberg orders.
    pub iceberg_allowed: bool,
    /// OCO orders.
    pub oco_allowed: bool,
    /// OTO orders.
    pub oto_allowed: bool,
    /// Market orders by quote quantity.
    pub quote_order_qty_market_allowed: bool,
    /// Trailing stops.
    pub allow_trailing_stop: bool,
    /// Cancel-replace.
    pub cancel_replace_allowed: bool,
    /// Spot trading.
    pub is_spot_trading_allowed: bool,
    /// Margin trading.
    pub is_margin_trading_allowed: bool,
    /// Filters.
    pub filters: Vec<Filter>,
    /// Permissions.
    pub permissions: Vec<&'static str>,
    /// Permission sets.
    pub permission_sets: Vec<Vec<&'static str>>,
    /// Default self-trade prevention mode.
    pub default_self_trade_prevention_mode: &'static str,
    /// Allowed self-trade prevention modes.
    pub allowed_self_trade_prevention_modes: Vec<&'static str>,
}

/// `GET /api/v3/exchangeInfo`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExchangeInfo {
    /// `UTC`.
    pub timezone: &'static str,
    /// Server time, ms.
    pub server_time: u64,
    /// Rate limits.
    pub rate_limits: Vec<RateLimit>,
    /// Exchange filters (none).
    pub exchange_filters: Vec<Filter>,
    /// Symbols.
    pub symbols: Vec<SymbolInfo>,
}

/// `GET /api/v3/depth`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Depth {
    /// Update id of the last change in this book (see the depth stream).
    pub last_update_id: u64,
    /// Bids, best first: [price, quantity].
    pub bids: Vec<[String; 2]>,
    /// Asks, best first.
    pub asks: Vec<[String; 2]>,
}

/// A public trade.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Trade {
    /// Trade id.
    pub id: u64,
    /// Price.
    pub price: String,
    /// Quantity.
    pub qty: String,
    /// Price × quantity.
    pub quote_qty: String,
    /// Time, ms.
    pub time: u64,
    /// Was the buyer the maker?
    pub is_buyer_maker: bool,
    /// Always true.
    pub is_best_match: bool,
}

/// An aggregate trade (here: one trade each).
#[derive(Debug, Serialize, ToSchema)]
pub struct AggTrade {
    /// Aggregate trade id (= trade id).
    pub a: u64,
    /// Price.
    pub p: String,
    /// Quantity.
    pub q: String,
    /// First trade id.
    pub f: u64,
    /// Last trade id.
    pub l: u64,
    /// Time.
    #[serde(rename = "T")]
    pub time: u64,
    /// Was the buyer the maker?
    pub m: bool,
    /// Always true.
    #[serde(rename = "M")]
    pub best_match: bool,
}

/// `GET /api/v3/avgPrice`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AvgPrice {
    /// Window, minutes.
    pub mins: u32,
    /// Volume-weighted average price.
    pub price: String,
    /// Time of the last trade in the window.
    pub close_time: u64,
}

/// `GET /api/v3/ticker/price`.
#[derive(Debug, Serialize, ToSchema)]
pub struct PriceTicker {
    /// Symbol.
    pub symbol: String,
    /// Last price.
    pub price: String,
}

/// `GET /api/v3/ticker/bookTicker`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BookTicker {
    /// Symbol.
    pub symbol: String,
    /// Best bid price.
    pub bid_price: String,
    /// Best bid quantity.
    pub bid_qty: String,
    /// Best ask price.
    pub ask_price: String,
    /// Best ask quantity.
    pub ask_qty: String,
}

/// `GET /api/v3/ticker/24hr` (FULL).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Ticker24 {
    /// Symbol.
    pub symbol: String,
    /// Last − open.
    #[schema(required = false)]
    pub price_change: String,
    /// (Last − open) / open × 100.
    #[schema(required = false)]
    pub price_change_percent: String,
    /// Quote volume / volume.
    #[schema(required = false)]
    pub weighted_avg_price: String,
    /// Last price before the window.
    #[schema(required = false)]
    pub prev_close_price: String,
    /// Last price.
    pub last_price: String,
    /// Last quantity.
    #[schema(required = false)]
    pub last_qty: String,
    /// Best bid.
    #[schema(required = false)]
    pub bid_price: String,
    /// Best bid quantity.
    #[schema(required = false)]
    pub bid_qty: String,
    /// Best ask.
    #[schema(required = false)]
    pub ask_price: String,
    /// Best ask quantity.
    #[schema(required = false)]
    pub ask_qty: String,
    /// First price in the window.
    pub open_price: String,
    /// High.
    pub high_price: String,
    /// Low.
    pub low_price: String,
    /// Base volume.
    pub volume: String,
    /// Quote volume.
    pub quote_volume: String,
    /// Window start.
    pub open_time: u64,
    /// Window end.
    pub close_time: u64,
    /// First trade id (-1: none).
    pub first_id: i64,
    /// Last trade id (-1: none).
    pub last_id: i64,
    /// Trades.
    pub count: u64,
}

/// One fill of a new order (`FULL`).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OrderFill {
    /// Price.
    pub price: String,
    /// Quantity.
    pub qty: String,
    /// Commission: the order's fee for this fill, in the quote asset (negative: a
    /// rebate).
    pub commission: String,
    /// Commission asset.
    pub commission_asset: String,
    /// Trade id.
    pub trade_id: u64,
}

/// `POST /api/v3/order` answer (ACK fields always; RESULT adds the state; FULL the
/// fills).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct NewOrderResponse {
    /// Symbol.
    pub symbol: String,
    /// Exchange order id.
    pub order_id: u64,
    /// Order list id (-1).
    pub order_list_id: i64,
    /// Client order id.
    pub client_order_id: String,
    /// Engine time of the acceptance, ms.
    pub transact_time: u64,
    /// RESULT/FULL: the order's state.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub result: Option<OrderResult>,
    /// FULL: fills made on entry.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fills: Option<Vec<OrderFill>>,
}

/// The state part of an order answer.
#[derive(Debug, Default, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OrderResult {
    /// Limit price (0 for market orders).
    pub price: String,
    /// Quantity ordered.
    pub orig_qty: String,
    /// Quantity filled.
    pub executed_qty: String,
    /// Quote order quantity (not used: 0).
    pub orig_quote_order_qty: String,
    /// Sum of price × quantity filled (Binance's spelling).
    pub cummulative_quote_qty: String,
    /// Status.
    pub status: &'static str,
    /// Time in force.
    pub time_in_force: &'static str,
    /// Type.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// Side.
    pub side: &'static str,
    /// Stop price (stop and take-profit orders only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop_price: Option<String>,
    /// Iceberg quantity (icebergs only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iceberg_qty: Option<String>,
    /// Trailing delta, bips (trailing stops only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trailing_delta: Option<u32>,
    /// When it started working, ms (-1 while a stop waits for its trigger).
    pub working_time: i64,
    /// Self-trade prevention mode.
    pub self_trade_prevention_mode: &'static str,
}

/// An order (`GET /api/v3/order`, `openOrders`, `allOrders`).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OrderView {
    /// Symbol.
    pub symbol: String,
    /// Exchange order id.
    pub order_id: u64,
    /// Order list id (-1).
    pub order_list_id: i64,
    /// Client order id.
    pub client_order_id: String,
    /// Limit price.
    pub price: String,
    /// Quantity ordered.
    pub orig_qty: String,
    /// Quantity filled.
    pub executed_qty: String,
    /// Sum of price × quantity filled.
    pub cummulative_quote_qty: String,
    /// Status.
    pub status: &'static str,
    /// Time in force.
    pub time_in_force: &'static str,
    /// Type.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// Side.
    pub side: &'static str,
    /// Stop price (0: none).
    pub stop_price: String,
    /// Iceberg quantity (0: not an iceberg).
    pub iceberg_qty: String,
    /// Trailing delta, bips (trailing stops only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trailing_delta: Option<u32>,
    /// Accepted, ms.
    pub time: u64,
    /// Last change, ms.
    pub update_time: u64,
    /// Working (in the book, or triggered)? False while a stop waits.
    pub is_working: bool,
    /// When it started working, ms (-1 while a stop waits for its trigger).
    pub working_time: i64,
    /// Quote order quantity (0).
    pub orig_quote_order_qty: String,
    /// Self-trade prevention mode.
    pub self_trade_prevention_mode: &'static str,
}

/// `DELETE /api/v3/order` answer.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CancelResponse {
    /// Symbol.
    pub symbol: String,
    /// The cancelled order's client id.
    pub orig_client_order_id: String,
    /// Exchange order id.
    pub order_id: u64,
    /// Order list id (-1).
    pub order_list_id: i64,
    /// The cancel's client id.
    pub client_order_id: String,
    /// Engine time of the cancel, ms.
    pub transact_time: u64,
    /// The order's state after the cancel.
    #[serde(flatten)]
    pub result: OrderResult,
}

/// A balance.
#[derive(Debug, Serialize, ToSchema)]
pub struct Balance {
    /// Asset.
    pub asset: String,
    /// Available.
    pub free: String,
    /// Held by open orders.
    pub locked: String,
}

/// Commission rates (the fee schedule's base rates: see `account_rates`).
#[derive(Debug, Serialize, ToSchema)]
pub struct CommissionRates {
    /// Maker.
    pub maker: String,
    /// Taker.
    pub taker: String,
    /// Buyer.
    pub buyer: String,
    /// Seller.
    pub seller: String,
}

/// `GET /api/v3/account`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AccountInfo {
    /// Maker commission, basis points.
    pub maker_commission: i64,
    /// Taker commission.
    pub taker_commission: i64,
    /// Buyer commission.
    pub buyer_commission: i64,
    /// Seller commission.
    pub seller_commission: i64,
    /// Commission rates.
    pub commission_rates: CommissionRates,
    /// May trade.
    pub can_trade: bool,
    /// May withdraw (no: the exchange's admin does that).
    pub can_withdraw: bool,
    /// May deposit (no).
    pub can_deposit: bool,
    /// Brokered.
    pub brokered: bool,
    /// Self-trade prevention required.
    pub require_self_trade_prevention: bool,
    /// SOR prevented.
    pub prevent_sor: bool,
    /// Time, ms.
    pub update_time: u64,
    /// `SPOT`.
    pub account_type: &'static str,
    /// Balances (empty when the exchange keeps none).
    pub balances: Vec<Balance>,
    /// Permissions.
    pub permissions: Vec<&'static str>,
    /// The exchange account id.
    pub uid: u64,
}

/// One of the account's fills.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MyTradeView {
    /// Symbol.
    pub symbol: String,
    /// Trade id.
    pub id: u64,
    /// Order id.
    pub order_id: u64,
    /// Order list id (-1).
    pub order_list_id: i64,
    /// Price.
    pub price: String,
    /// Quantity.
    pub qty: String,
    /// Price × quantity.
    pub quote_qty: String,
    /// Commission (none).
    pub commission: String,
    /// Commission asset.
    pub commission_asset: String,
    /// Time, ms.
    pub time: u64,
    /// Bought?
    pub is_buyer: bool,
    /// Resting order?
    pub is_maker: bool,
    /// Always true.
    pub is_best_match: bool,
}

/// `POST /api/v3/userDataStream`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListenKey {
    /// The key: connect to `/ws/<listenKey>`.
    pub listen_key: String,
}

/// The state part of an order.
pub fn order_result(sym: &Symbol, o: &Order) -> OrderResult {
    OrderResult {
        price: sym.price(o.price),
        orig_qty: sym.qty(o.orig_qty),
        executed_qty: sym.qty(o.executed),
        orig_quote_order_qty: sym.quote_amount(i128::from(o.orig_quote)),
        cummulative_quote_qty: sym.quote_amount(o.cum_quote),
        status: o.status.name(),
        time_in_force: tif_name(o.tif),
        kind: o.kind.name(),
        side: side_name(o.side),
        stop_price: (o.ext.trigger != peregrine_types::TriggerKind::None)
            .then(|| sym.price(o.ext.stop_price)),
        iceberg_qty: (o.ext.display_qty != 0).then(|| sym.qty(o.ext.display_qty)),
        trailing_delta: (o.ext.trail_bps != 0).then_some(o.ext.trail_bps),
        working_time: working_time(o),
        self_trade_prevention_mode: stp_name(o.stp),
    }
}

/// Binance's `workingTime`: when the order started working, -1 while parked.
pub fn working_time(o: &Order) -> i64 {
    o.working_ms.map_or(-1, |w| w as i64)
}

/// An order as `GET /api/v3/order` shows it.
pub fn order_view(sym: &Symbol, o: &Order) -> OrderView {
    OrderView {
        symbol: sym.spec.symbol.clone(),
        order_id: o.order_id,
        order_list_id: o.list_id,
        client_order_id: o.client_order_id.clone(),
        price: sym.price(o.price),
        orig_qty: sym.qty(o.orig_qty),
        executed_qty: sym.qty(o.executed),
        cummulative_quote_qty: sym.quote_amount(o.cum_quote),
        status: o.status.name(),
        time_in_force: tif_name(o.tif),
        kind: o.kind.name(),
        side: side_name(o.side),
        stop_price: sym.price(o.ext.stop_price),
        iceberg_qty: sym.qty(o.ext.display_qty),
        trailing_delta: (o.ext.trail_bps != 0).then_some(o.ext.trail_bps),
        time: o.time_ms,
        update_time: o.update_ms,
        is_working: o.status.is_open() && o.working_ms.is_some(),
        working_time: working_time(o),
        orig_quote_order_qty: sym.quote_amount(i128::from(o.orig_quote)),
        self_trade_prevention_mode: stp_name(o.stp),
    }
}

/// An answer that is one object with `symbol`, or a list without it.
macro_rules! one_or_many {
    ($name:ident, $t:ty) => {
        /// One object (with `symbol`) or a list (with `symbols` or neither).
        #[derive(Debug, Serialize, ToSchema)]
        #[serde(untagged)]
        pub enum $name {
            /// `symbol` was given.
            One(Box<$t>),
            /// `symbols` or neither.
            Many(Vec<$t>),
        }
    };
}

one_or_many!(Ticker24Answer, Ticker24);
one_or_many!(PriceTickerAnswer, PriceTicker);
one_or_many!(BookTickerAnswer, BookTicker);
