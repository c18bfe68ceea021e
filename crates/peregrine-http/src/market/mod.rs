//! The live market: per symbol, the L2 book with update ids ([`book`]), the bars
//! being built ([`kline`]) and the last trade, fed by the feed thread
//! ([`feed::MarketFeed`]) and read by the REST handlers.
//!
//! Each symbol's state sits behind its own mutex; the feed thread holds it for the
//! few microseconds of applying one packet, a REST read for one copy of the top
//! levels.

pub mod batch;
pub mod book;
pub mod events;
pub mod feed;
pub mod hub;
pub mod kline;
pub mod symbols;
pub mod ticker;

use std::sync::{Mutex, MutexGuard};

use book::Book;
use kline::{Bar, Interval};
use symbols::{Symbol, Symbols};

/// The last trade of a symbol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LastTrade {
    /// Trade id.
    pub id: u64,
    /// Price units.
    pub price: i64,
    /// Quantity units.
    pub qty: i64,
    /// Time, ms.
    pub time_ms: u64,
}

/// What is known live about one symbol.
#[derive(Debug, Default)]
pub struct SymbolState {
    /// The book.
    pub book: Book,
    /// The bar being built, per interval ([`Interval::ALL`] order).
    pub bars: [Option<Bar>; 16],
    /// Bars changed since the last kline publication.
    pub bars_dirty: [bool; 16],
    /// Last trade.
    pub last: Option<LastTrade>,
    /// Update id of the last partial-depth publication, per level count and speed.
    pub partial_sent: [[u64; 2]; 3],
    /// Best bid and ask as last published on `@bookTicker`.
    pub top_sent: book::Top,
    /// The feed has delivered this symbol's book at least once.
    pub synced: bool,
    /// The last 24 hours, for the ticker streams.
    pub day: ticker::Rolling,
}

impl SymbolState {
    /// Adds a trade to every interval's bar; returns the bars it closed (a trade in
    /// a later period closes the bar before it).
    pub fn add_trade(&mut self, t: &LastTrade, buyer_taker: bool) -> Vec<(Interval, Bar)> {
        let mut closed = Vec::new();
        let ms = t.time_ms as i64;
        for (k, iv) in Interval::ALL.iter().enumerate() {
            let open = iv.open_time(ms);
            let bar = Bar::from_trade(open, t.id, t.price, t.qty, buyer_taker);
            match &mut self.bars[k] {
                Some(b) if b.open_time == open => b.merge(&bar),
                Some(b) if b.open_time > open => {} // late trade of an older bar
                slot => {
                    if let Some(old) = slot.take() {
                        closed.push((*iv, old));
                    }
                    *slot = Some(bar);
                }
            }
            self.bars_dirty[k] = true;
        }
        self.last = Some(*t);
        self.day.add(t, buyer_taker);
        closed
    }
}

/// The live market of every symbol.
#[derive(Debug)]
pub struct Market {
    /// The symbols.
    pub symbols: Symbols,
    states: Vec<Mutex<SymbolState>>,
}

impl Market {
    /// An empty market.
    pub fn new(symbols: Symbols) -> Market {
        let states = symbols
            .all()
            .iter()
            .map(|_| Mutex::new(SymbolState::default()))
            .collect();
        Market { symbols, states }
    }

    /// The state of the symbol at `index` (see [`Symbols::index_of`]), locked.
    pub fn state(&self, index: usize) -> MutexGuard<'_, SymbolState> {
        self.states[index]
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The symbol called `name` and its index.
    pub fn find(&self, name: &str) -> Option<(usize, &Symbol)> {
        let s = self.symbols.get(name)?;
        Some((self.symbols.index_of(s.id())?, s))
    }
}
