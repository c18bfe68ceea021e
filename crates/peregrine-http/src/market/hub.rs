//! The publish side of the streams: one bounded broadcast channel per stream name,
//! created at start, and one per account for user data.
//!
//! A message is serialized once and shared (`Arc`) by every subscriber. A subscriber
//! that falls more than `lag_limit` messages behind loses its place in the channel
//! (`Lagged`) and is disconnected by its connection task: a slow client never holds
//! memory or slows anyone else. Publishers check [`Topic::wanted`] first, so a
//! stream nobody watches costs no serialization.

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::ws::Utf8Bytes;
use tokio::sync::broadcast;

use crate::market::kline::Interval;
use crate::market::symbols::Symbols;

/// One message of one stream, serialized once in both forms a connection may
/// want (cloning one is a reference-count increment).
#[derive(Debug)]
pub struct StreamMsg {
    /// The event, JSON (raw streams, `/ws/...`).
    pub raw: Utf8Bytes,
    /// `{"stream":"<name>","data":<event>}` (combined streams, `/stream?...`).
    pub combined: Utf8Bytes,
}

impl StreamMsg {
    /// Event `data` (JSON) of stream `name`, in both forms.
    pub fn new(name: &str, data: String) -> StreamMsg {
        let combined = format!("{{\"stream\":\"{name}\",\"data\":{data}}}");
        StreamMsg {
            raw: data.into(),
            combined: combined.into(),
        }
    }
}

/// A shared message.
pub type Msg = Arc<StreamMsg>;

/// One stream: its name and channel.
#[derive(Debug)]
pub struct Topic {
    /// Name.
    pub name: Arc<str>,
    tx: broadcast::Sender<Msg>,
}

impl Topic {
    fn new(name: String, capacity: usize) -> Topic {
        Topic {
            name: name.into(),
            tx: broadcast::channel(capacity).0,
        }
    }

    /// Anyone subscribed?
    pub fn wanted(&self) -> bool {
        self.tx.receiver_count() > 0
    }

    /// Publishes `data` (JSON) to every subscriber.
    pub fn publish(&self, data: String) {
        let _ = self.tx.send(Arc::new(StreamMsg::new(&self.name, data)));
    }

    /// A new subscription.
    pub fn subscribe(&self) -> broadcast::Receiver<Msg> {
        self.tx.subscribe()
    }
}

/// Depth-diff speeds, in [`crate::market::book::Book::diffs`] order.
pub const DIFF_SPEEDS: [(&str, u64); 3] = [("@0ms", 0), ("@100ms", 100), ("", 1000)];
/// The all-market ticker arrays.
pub const ALL_TICKERS: &str = "!ticker@arr";
/// The all-market mini-ticker arrays.
pub const ALL_MINI_TICKERS: &str = "!miniTicker@arr";
/// Partial-depth levels.
pub const PARTIAL_LEVELS: [usize; 3] = [5, 10, 20];
/// Partial-depth speeds (index 0: 1000 ms, 1: 100 ms).
pub const PARTIAL_SPEEDS: [(&str, u64); 2] = [("", 1000), ("@100ms", 100)];

/// The streams of one symbol.
#[derive(Debug)]
pub struct SymbolTopics {
    /// `@trade`.
    pub trade: Topic,
    /// `@aggTrade` (each trade is its own aggregate).
    pub agg_trade: Topic,
    /// `@ticker` (24 h rolling statistics, every second while they change).
    pub ticker: Topic,
    /// `@miniTicker`.
    pub mini_ticker: Topic,
    /// `@bookTicker`.
    pub book_ticker: Topic,
    /// `@depth@0ms`, `@depth@100ms`, `@depth`.
    pub depth: [Topic; 3],
    /// `@depth5`, `@depth10`, `@depth20`, each at 1000 ms and 100 ms.
    pub partial: [[Topic; 2]; 3],
    /// `@kline_<interval>` in [`Interval::ALL`] order.
    pub kline: Vec<Topic>,
}

/// What a new subscriber of a state stream gets first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Initial {
    /// The best bid and ask (`@bookTicker`).
    Top,
    /// The top levels (`@depth<N>`).
    Levels(usize),
}

/// Every stream.
#[derive(Debug)]
pub struct Hub {
    /// Per symbol, in [`Symbols::all`] order.
    pub symbols: Vec<SymbolTopics>,
    /// `!ticker@arr`: the tickers that changed in the last second, as an array.
    pub all_tickers: Topic,
    /// `!miniTicker@arr`.
    pub all_mini_tickers: Topic,
    by_name: HashMap<String, (usize, Which)>,
    users: HashMap<u32, Topic>,
}

#[derive(Debug, Clone, Copy)]
enum Which {
    Trade,
    AggTrade,
    Ticker,
    MiniTicker,
    BookTicker,
    Depth(usize),
    Partial(usize, usize),
    Kline(usize),
}

impl Hub {
    /// Channels for every stream of `symbols` and for every account in `accounts`,
    /// each holding `capacity` messages.
    pub fn new(symbols: &Symbols, accounts: &[u32], capacity: usize) -> Hub {
        let mut by_name = HashMap::new();
        let mut list = Vec::new();
        for (i, s) in symbols.all().iter().enumerate() {
            let base = &s.lower;
            let mk = |suffix: String, w: Which, by_name: &mut HashMap<String, (usize, Which)>| {
                let name = format!("{base}@{suffix}");
                by_name.insert(name.clone(), (i, w));
                Topic::new(name, capacity)
            };
            let trade = mk("trade".into(), Which::Trade, &mut by_name);
            let agg_trade = mk("aggTrade".into(), Which::AggTrade, &mut by_name);
            let ticker = mk("ticker".into(), Which::Ticker, &mut by_name);
            let mini_ticker = mk("miniTicker".into(), Which::MiniTicker, &mut by_name);
            let book_ticker = mk("bookTicker".into(), Which::BookTicker, &mut by_name);
            let depth = [0, 1, 2].map(|k| {
                mk(
                    format!("depth{}", DIFF_SPEEDS[k].0),
                    Which::Depth(k),
                    &mut by_name,
                )
            });
            let partial = [0, 1, 2].map(|l| {
                [0, 1].map(|sp| {
                    mk(
                        format!("depth{}{}", PARTIAL_LEVELS[l], PARTIAL_SPEEDS[sp].0),
                        Which::Partial(l, sp),
                        &mut by_name,
                    )
                })
            });
            let kline = Interval::ALL
                .iter()
                .enumerate()
                .map(|(k, iv)| {
                    mk(
                        format!("kline_{}", iv.name()),
                        Which::Kline(k),
                        &mut by_name,
                    )
                })
                .collect();
            list.push(SymbolTopics {
                trade,
                agg_trade,
                ticker,
                mini_ticker,
                book_ticker,
                depth,
                partial,
                kline,
            });
        }
        let users = accounts
            .iter()
            .map(|&a| (a, Topic::new(format!("user:{a}"), capacity)))
            .collect();
        Hub {
            symbols: list,
            all_tickers: Topic::new(ALL_TICKERS.into(), capacity),
            all_mini_tickers: Topic::new(ALL_MINI_TICKERS.into(), capacity),
            by_name,
            users,
        }
    }

    /// The stream called `name` (as a client writes it, lower-case symbol).
    pub fn topic(&self, name: &str) -> Option<&Topic> {
        match name {
            ALL_TICKERS => return Some(&self.all_tickers),
            ALL_MINI_TICKERS => return Some(&self.all_mini_tickers),
            _ => {}
        }
        let &(i, w) = self.by_name.get(name)?;
        let s = &self.symbols[i];
        Some(match w {
            Which::Trade => &s.trade,
            Which::AggTrade => &s.agg_trade,
            Which::Ticker => &s.ticker,
            Which::MiniTicker => &s.mini_ticker,
            Which::BookTicker => &s.book_ticker,
            Which::Depth(k) => &s.depth[k],
            Which::Partial(l, sp) => &s.partial[l][sp],
            Which::Kline(k) => &s.kline[k],
        })
    }

    /// For a stream whose events are states (`@bookTicker`, `@depth<N>`), the
    /// symbol index and what a new subscriber is sent at once: a quiet market would
    /// otherwise leave it waiting for the next change.
    pub fn initial_state(&self, name: &str) -> Option<(usize, Initial)> {
        match self.by_name.get(name)? {
            (i, Which::BookTicker) => Some((*i, Initial::Top)),
            (i, Which::Partial(l, _)) => Some((*i, Initial::Levels(PARTIAL_LEVELS[*l]))),
            _ => None,
        }
    }

    /// The user-data stream of `account`.
    pub fn user(&self, account: u32) -> Option<&Topic> {
        self.users.get(&account)
    }

    /// Number of stream names.
    pub fn len(&self) -> usize {
        self.by_name.len() + 2
    }

    /// No streams?
    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use peregrine_types::InstrumentSpec;

    #[test]
    fn binance_stream_names() {
        let mut spec = InstrumentSpec::example(1);
        spec.symbol = "PGN-USD".into();
        let hub = Hub::new(&Symbols::new(&[spec]), &[1], 16);
        for name in [
            "pgn-usd@trade",
            "pgn-usd@aggTrade",
            "pgn-usd@ticker",
            "pgn-usd@miniTicker",
            "!ticker@arr",
            "!miniTicker@arr",
            "pgn-usd@bookTicker",
            "pgn-usd@depth",
            "pgn-usd@depth@100ms",
            "pgn-usd@depth@0ms",
            "pgn-usd@depth5",
            "pgn-usd@depth10@100ms",
            "pgn-usd@depth20",
            "pgn-usd@kline_1m",
            "pgn-usd@kline_1M",
            "pgn-usd@kline_1s",
        ] {
            assert_eq!(hub.topic(name).map(|t| &*t.name), Some(name));
        }
        assert!(hub.topic("PGN-USD@trade").is_none());
        assert!(hub.topic("pgn-usd@depth7").is_none());
        assert!(hub.user(1).is_some() && hub.user(2).is_none());
        assert_eq!(hub.len(), 5 + 3 + 6 + 16 + 2);
    }
}
