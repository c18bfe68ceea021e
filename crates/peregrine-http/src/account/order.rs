//! An order as the Binance API shows it: its enums, its state, and how exchange
//! reports move it.

use peregrine_types::Side;
use serde::Serialize;
use utoipa::ToSchema;

use crate::link::{CancelCause, Ext, Kind, Stp, Tif};
use peregrine_types::TriggerKind;

/// `BUY` / `SELL`.
pub fn side_name(s: Side) -> &'static str {
    match s {
        Side::Buy => "BUY",
        Side::Sell => "SELL",
    }
}

/// Parses `BUY` / `SELL`.
pub fn parse_side(s: &str) -> Option<Side> {
    match s {
        "BUY" => Some(Side::Buy),
        "SELL" => Some(Side::Sell),
        _ => None,
    }
}

/// The API's order type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OrderType {
    /// `LIMIT`
    Limit,
    /// `MARKET`
    Market,
    /// `LIMIT_MAKER` (post-only)
    LimitMaker,
    /// `STOP_LOSS`: a market order parked until its stop-loss trigger.
    StopLoss,
    /// `STOP_LOSS_LIMIT`: a limit order parked until its stop-loss trigger.
    StopLossLimit,
    /// `TAKE_PROFIT`: a market order parked until its take-profit trigger.
    TakeProfit,
    /// `TAKE_PROFIT_LIMIT`: a limit order parked until its take-profit trigger.
    TakeProfitLimit,
}

impl OrderType {
    /// Name.
    pub fn name(self) -> &'static str {
        match self {
            OrderType::Limit => "LIMIT",
            OrderType::Market => "MARKET",
            OrderType::LimitMaker => "LIMIT_MAKER",
            OrderType::StopLoss => "STOP_LOSS",
            OrderType::StopLossLimit => "STOP_LOSS_LIMIT",
            OrderType::TakeProfit => "TAKE_PROFIT",
            OrderType::TakeProfitLimit => "TAKE_PROFIT_LIMIT",
        }
    }

    /// Parses a name (`None` for types the venue does not offer).
    pub fn parse(s: &str) -> Option<OrderType> {
        match s {
            "LIMIT" => Some(OrderType::Limit),
            "MARKET" => Some(OrderType::Market),
            "LIMIT_MAKER" => Some(OrderType::LimitMaker),
            "STOP_LOSS" => Some(OrderType::StopLoss),
            "STOP_LOSS_LIMIT" => Some(OrderType::StopLossLimit),
            "TAKE_PROFIT" => Some(OrderType::TakeProfit),
            "TAKE_PROFIT_LIMIT" => Some(OrderType::TakeProfitLimit),
            _ => None,
        }
    }

    /// The exchange's kind.
    pub fn kind(self) -> Kind {
        match self {
            OrderType::Limit | OrderType::StopLossLimit | OrderType::TakeProfitLimit => Kind::Limit,
            OrderType::Market | OrderType::StopLoss | OrderType::TakeProfit => Kind::Market,
            OrderType::LimitMaker => Kind::PostOnly,
        }
    }

    /// The exchange's trigger kind.
    pub fn trigger(self) -> TriggerKind {
        match self {
            OrderType::StopLoss | OrderType::StopLossLimit => TriggerKind::StopLoss,
            OrderType::TakeProfit | OrderType::TakeProfitLimit => TriggerKind::TakeProfit,
            _ => TriggerKind::None,
        }
    }

    /// Has a limit price?
    pub fn has_price(self) -> bool {
        !matches!(
            self,
            OrderType::Market | OrderType::StopLoss | OrderType::TakeProfit
        )
    }

    /// The API type of an exchange order (`kind` and `trigger`).
    pub fn of(kind: Kind, trigger: TriggerKind) -> OrderType {
        match (kind, trigger) {
            (Kind::Limit, TriggerKind::None) => OrderType::Limit,
            (Kind::Market, TriggerKind::None) => OrderType::Market,
            (Kind::PostOnly, _) => OrderType::LimitMaker,
            (Kind::Limit, TriggerKind::StopLoss) => OrderType::StopLossLimit,
            (Kind::Market, TriggerKind::StopLoss) => OrderType::StopLoss,
            (Kind::Limit, TriggerKind::TakeProfit) => OrderType::TakeProfitLimit,
            (Kind::Market, TriggerKind::TakeProfit) => OrderType::TakeProfit,
        }
    }
}

/// Time in force name.
pub fn tif_name(t: Tif) -> &'static str {
    match t {
        Tif::Gtc => "GTC",
        Tif::Ioc => "IOC",
        Tif::Fok => "FOK",
    }
}

/// Parses a time in force.
pub fn parse_tif(s: &str) -> Option<Tif> {
    match s {
        "GTC" => Some(Tif::Gtc),
        "IOC" => Some(Tif::Ioc),
        "FOK" => Some(Tif::Fok),
        _ => None,
    }
}

/// Self-trade prevention mode name.
pub fn stp_name(s: Stp) -> &'static str {
    match s {
        Stp::None => "NONE",
        Stp::CancelNewest => "EXPIRE_TAKER",
        Stp::CancelOldest => "EXPIRE_MAKER",
        Stp::CancelBoth => "EXPIRE_BOTH",
        Stp::Decrement => "DECREMENT",
    }
}

/// Parses a self-trade prevention mode.
pub fn parse_stp(s: &str) -> Option<Stp> {
    match s {
        "NONE" => Some(Stp::None),
        "EXPIRE_TAKER" => Some(Stp::CancelNewest),
        "EXPIRE_MAKER" => Some(Stp::CancelOldest),
        "EXPIRE_BOTH" => Some(Stp::CancelBoth),
        "DECREMENT" => Some(Stp::Decrement),
        _ => None,
    }
}

/// Order status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Status {
    /// Accepted, resting, nothing filled.
    New,
    /// Partly filled, the rest open.
    PartiallyFilled,
    /// Completely filled.
    Filled,
    /// Cancelled by its owner.
    Canceled,
    /// Refused by the exchange.
    Rejected,
    /// Cancelled by the exchange (IOC/FOK/market remainder, expiry).
    Expired,
    /// Cancelled by self-trade prevention.
    ExpiredInMatch,
}

impl Status {
    /// Name.
    pub fn name(self) -> &'static str {
        match self {
            Status::New => "NEW",
            Status::PartiallyFilled => "PARTIALLY_FILLED",
            Status::Filled => "FILLED",
            Status::Canceled => "CANCELED",
            Status::Rejected => "REJECTED",
            Status::Expired => "EXPIRED",
            Status::ExpiredInMatch => "EXPIRED_IN_MATCH",
        }
    }

    /// Parses a name (for rows read back from history).
    pub fn parse(s: &str) -> Option<Status> {
        [
            Status::New,
            Status::PartiallyFilled,
            Status::Filled,
            Status::Canceled,
            Status::Rejected,
            Status::Expired,
            Status::ExpiredInMatch,
        ]
        .into_iter()
        .find(|x| x.name() == s)
    }

    /// Still on the book?
    pub fn is_open(self) -> bool {
        matches!(self, Status::New | Status::PartiallyFilled)
    }
}

/// Execution type of a user-data event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExecType {
    /// Accepted.
    New,
    /// Cancelled.
    Canceled,
    /// Price/quantity changed.
    Replaced,
    /// Traded.
    Trade,
    /// Cancelled by the exchange.
    Expired,
    /// Cancelled by self-trade prevention.
    TradePrevention,
    /// A parked order started working (its trigger was reached, or its list
    /// released it). Binance reports it as `NEW` with `w` (isWorking) true.
    Working,
}

impl ExecType {
    /// Name.
    pub fn name(self) -> &'static str {
        match self {
            ExecType::New | ExecType::Working => "NEW",
            ExecType::Canceled => "CANCELED",
            ExecType::Replaced => "REPLACED",
            ExecType::Trade => "TRADE",
            ExecType::Expired => "EXPIRED",
            ExecType::TradePrevention => "TRADE_PREVENTION",
        }
    }
}

/// One fill of an order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fill {
    /// Trade id.
    pub trade_id: u64,
    /// Price units.
    pub price: i64,
    /// Quantity units.
    pub qty: i64,
    /// The order was resting.
    pub maker: bool,
    /// The order's fee in the quote asset's smallest unit (negative: a rebate).
    pub fee: i64,
    /// Time, ms.
    pub time_ms: u64,
}

/// An order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Order {
    /// Index of its symbol.
    pub symbol: usize,
    /// Exchange order id.
    pub order_id: u64,
    /// The gateway's session id for it.
    pub coid: u64,
    /// The client's id (`clientOrderId`).
    pub client_order_id: String,
    /// Side.
    pub side: Side,
    /// Type.
    pub kind: OrderType,
    /// Time in force.
    pub tif: Tif,
    /// Self-trade prevention.
    pub stp: Stp,
    /// Limit price (0 for market orders), price units.
    pub price: i64,
    /// Quantity ordered.
    pub orig_qty: i64,
    /// Quantity filled.
    pub executed: i64,
    /// Sum of price × quantity over fills.
    pub cum_quote: i128,
    /// Status.
    pub status: Status,
    /// Accepted at, ms.
    pub time_ms: u64,
    /// Last change, ms.
    pub update_ms: u64,
    /// Fills made on entry (for `newOrderRespType=FULL`).
    pub entry_fills: Vec<Fill>,
    /// A market order by cost: the quote amount asked for (`quoteOrderQty`, price
    /// units × quantity units; 0 otherwise). Kept while the gateway holds the order.
    pub orig_quote: i64,
    /// Trigger (`stopPrice`, `trailingDelta`) and iceberg (`icebergQty`).
    pub ext: Ext,
    /// The order list it is a leg of (-1: none).
    pub list_id: i64,
    /// When it started working (in the book, or triggered), ms; `None` while it is
    /// parked (a stop waiting for its trigger, a pending list leg).
    pub working_ms: Option<u64>,
}

impl Order {
    /// Applies a fill (`leaves`: the exchange's open quantity after it).
    pub fn fill(&mut self, f: Fill, leaves: i64, on_entry: bool) {
        self.executed += f.qty;
        self.cum_quote += i128::from(f.price) * i128::from(f.qty);
        self.status = if leaves == 0 {
            Status::Filled
        } else {
            Status::PartiallyFilled
        };
        self.update_ms = f.time_ms;
        if on_entry {
            self.entry_fills.push(f);
        }
    }

    /// Applies a cancel; returns the execution type to report.
    pub fn cancel(&mut self, cause: CancelCause, time_ms: u64) -> ExecType {
        let (status, exec) = match cause {
            CancelCause::Requested | CancelCause::Mass => (Status::Canceled, ExecType::Canceled),
            CancelCause::SelfTrade => (Status::ExpiredInMatch, ExecType::TradePrevention),
            CancelCause::Unfilled
            | CancelCause::FokUnfillable
            | CancelCause::Expired
            | CancelCause::ListCancelled
            | CancelCause::Other(_) => (Status::Expired, ExecType::Expired),
        };
        self.status = status;
        self.update_ms = time_ms;
        exec
    }
}
