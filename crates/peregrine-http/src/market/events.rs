//! The JSON of the market streams, with Binance's (one-letter) field names.

use serde::Serialize;

use super::kline::{Bar, Interval};
use super::symbols::Symbol;

/// `<symbol>@trade`.
#[derive(Debug, Serialize)]
pub struct TradeEvent<'a> {
    /// `"trade"`.
    pub e: &'static str,
    /// Event time, ms.
    #[serde(rename = "E")]
    pub event_time: u64,
    /// Symbol.
    pub s: &'a str,
    /// Trade id.
    pub t: u64,
    /// Price.
    pub p: String,
    /// Quantity.
    pub q: String,
    /// Trade time, ms.
    #[serde(rename = "T")]
    pub trade_time: u64,
    /// Is the buyer the maker?
    pub m: bool,
    /// Ignore (always true).
    #[serde(rename = "M")]
    pub best_match: bool,
}

/// `<symbol>@depth[@100ms|@0ms]`.
#[derive(Debug, Serialize)]
pub struct DepthEvent<'a> {
    /// `"depthUpdate"`.
    pub e: &'static str,
    /// Event time, ms.
    #[serde(rename = "E")]
    pub event_time: u64,
    /// Symbol.
    pub s: &'a str,
    /// First update id in the event.
    #[serde(rename = "U")]
    pub first: u64,
    /// Last update id in the event.
    pub u: u64,
    /// Bids to update: [price, quantity].
    pub b: Vec<[String; 2]>,
    /// Asks to update.
    pub a: Vec<[String; 2]>,
}

/// `<symbol>@depth<5|10|20>[@100ms]`.
#[derive(Debug, Serialize)]
pub struct PartialDepth {
    /// Last update id in the book shown.
    #[serde(rename = "lastUpdateId")]
    pub last_update_id: u64,
    /// Best bids.
    pub bids: Vec<[String; 2]>,
    /// Best asks.
    pub asks: Vec<[String; 2]>,
}

/// `<symbol>@bookTicker`.
#[derive(Debug, Serialize)]
pub struct BookTickerEvent<'a> {
    /// Order book update id.
    pub u: u64,
    /// Symbol.
    pub s: &'a str,
    /// Best bid price.
    pub b: String,
    /// Best bid quantity.
    #[serde(rename = "B")]
    pub bid_qty: String,
    /// Best ask price.
    pub a: String,
    /// Best ask quantity.
    #[serde(rename = "A")]
    pub ask_qty: String,
}

/// The bar inside a kline event.
#[derive(Debug, Serialize)]
pub struct KlineBody<'a> {
    /// Open time.
    pub t: i64,
    /// Close time.
    #[serde(rename = "T")]
    pub close_time: i64,
    /// Symbol.
    pub s: &'a str,
    /// Interval.
    pub i: &'static str,
    /// First trade id.
    pub f: u64,
    /// Last trade id.
    #[serde(rename = "L")]
    pub last_trade: u64,
    /// Open.
    pub o: String,
    /// Close.
    pub c: String,
    /// High.
    pub h: String,
    /// Low.
    pub l: String,
    /// Base volume.
    pub v: String,
    /// Trades.
    pub n: u64,
    /// Is this bar closed?
    pub x: bool,
    /// Quote volume.
    pub q: String,
    /// Taker buy base volume.
    #[serde(rename = "V")]
    pub taker_base: String,
    /// Taker buy quote volume.
    #[serde(rename = "Q")]
    pub taker_quote: String,
    /// Ignore.
    #[serde(rename = "B")]
    pub ignore: &'static str,
}

/// `<symbol>@kline_<interval>`.
#[derive(Debug, Serialize)]
pub struct KlineEvent<'a> {
    /// `"kline"`.
    pub e: &'static str,
    /// Event time.
    #[serde(rename = "E")]
    pub event_time: u64,
    /// Symbol.
    pub s: &'a str,
    /// The bar.
    pub k: KlineBody<'a>,
}

/// [price, qty] pairs as text.
pub fn levels(sym: &Symbol, levels: impl IntoIterator<Item = (i64, i64)>) -> Vec<[String; 2]> {
    levels
        .into_iter()
        .map(|(p, q)| [sym.price(p), sym.qty(q)])
        .collect()
}

/// A kline event.
pub fn kline(sym: &Symbol, iv: Interval, bar: &Bar, closed: bool, now_ms: u64) -> String {
    let ev = KlineEvent {
        e: "kline",
        event_time: now_ms,
        s: &sym.spec.symbol,
        k: KlineBody {
            t: bar.open_time,
            close_time: iv.close_time(bar.open_time),
            s: &sym.spec.symbol,
            i: iv.name(),
            f: bar.first_trade,
            last_trade: bar.last_trade,
            o: sym.price(bar.open),
            c: sym.price(bar.close),
            h: sym.price(bar.high),
            l: sym.price(bar.low),
            v: sym.qty(bar.volume),
            n: bar.trades,
            x: closed,
            q: sym.quote_amount(bar.quote_volume),
            taker_base: sym.qty(bar.taker_buy_volume),
            taker_quote: sym.quote_amount(bar.taker_buy_quote),
            ignore: "0",
        },
    };
    serde_json::to_string(&ev).unwrap_or_default()
}

/// The `@bookTicker` event of `book`.
pub fn book_ticker(sym: &Symbol, book: &super::book::Book) -> String {
    let (bid, ask) = book.best();
    let side = |l: Option<(i64, i64)>| {
        l.map_or((String::new(), String::new()), |(p, q)| {
            (sym.price(p), sym.qty(q))
        })
    };
    let ((b, bid_qty), (a, ask_qty)) = (side(bid), side(ask));
    let ev = BookTickerEvent {
        u: book.update_id(),
        s: &sym.spec.symbol,
        b,
        bid_qty,
        a,
        ask_qty,
    };
    serde_json::to_string(&ev).unwrap_or_default()
}

/// The `@depth<n>` event of `book`.
pub fn partial(sym: &Symbol, book: &super::book::Book, n: usize) -> String {
    let (bids, asks) = book.top(n);
    let ev = PartialDepth {
        last_update_id: book.update_id(),
        bids: levels(sym, bids),
        asks: levels(sym, asks),
    };
    serde_json::to_string(&ev).unwrap_or_default()
}
