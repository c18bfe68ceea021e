//! The feed thread's consumer: applies feed events to the [`Market`], publishes the
//! market streams and passes trades on to the history writer.
//!
//! Real-time streams (`@trade`, `@bookTicker`, `@depth@0ms`) go out per feed packet;
//! `@depth@100ms` and the `@100ms` partial books every 100 ms; `@depth`, the 1 s
//! partial books and the klines every second (a kline also when a trade closes its
//! bar). Diffs are taken from the book whether or not anyone listens, so a new
//! subscriber's first event starts where the last one ended.

use std::sync::Arc;
use std::time::{Duration, Instant};

use peregrine_types::Side;

use super::batch::FeedBatch;
use super::events::{self, DepthEvent, TradeEvent};
use super::kline::Interval;
use super::ticker;
use super::{LastTrade, Market, SymbolState};
use crate::link::feed::FeedSink;
use crate::link::{FeedEvent, FeedPos};
use crate::market::hub::{Hub, SymbolTopics, PARTIAL_LEVELS};

/// Feeds the market.
#[derive(Debug)]
pub struct MarketFeed {
    market: Arc<Market>,
    hub: Arc<Hub>,
    history: Option<tokio::sync::mpsc::Sender<FeedBatch>>,
    last_100: Instant,
    last_1000: Instant,
    touched: Vec<bool>,
}

/// Wall-clock milliseconds.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

impl MarketFeed {
    /// A consumer for `market`, publishing to `hub`, forwarding to `history`.
    pub fn new(
        market: Arc<Market>,
        hub: Arc<Hub>,
        history: Option<tokio::sync::mpsc::Sender<FeedBatch>>,
    ) -> MarketFeed {
        let n = market.symbols.all().len();
        MarketFeed {
            market,
            hub,
            history,
            last_100: Instant::now(),
            last_1000: Instant::now(),
            touched: vec![false; n],
        }
    }

    fn publish_trade(&self, idx: usize, t: &LastTrade, aggressor: Side, now: u64) {
        let sym = &self.market.symbols.all()[idx];
        let agg = &self.hub.symbols[idx].agg_trade;
        if agg.wanted() {
            // Each trade is its own aggregate (as `GET aggTrades` answers).
            let ev = serde_json::json!({
                "e": "aggTrade", "E": now, "s": sym.spec.symbol, "a": t.id,
                "p": sym.price(t.price), "q": sym.qty(t.qty), "f": t.id, "l": t.id,
                "T": t.time_ms, "m": aggressor == Side::Sell, "M": true,
            });
            agg.publish(ev.to_string());
        }
        let topic = &self.hub.symbols[idx].trade;
        if !topic.wanted() {
            return;
        }
        let ev = TradeEvent {
            e: "trade",
            event_time: now,
            s: &sym.spec.symbol,
            t: t.id,
            p: sym.price(t.price),
            q: sym.qty(t.qty),
            trade_time: t.time_ms,
            m: aggressor == Side::Sell,
            best_match: true,
        };
        topic.publish(serde_json::to_string(&ev).unwrap_or_default());
    }

    /// Publishes diff speed `k` of symbol `idx` (and empties it).
    fn flush_diff(&self, idx: usize, st: &mut SymbolState, k: usize, now: u64) {
        let diff = st.book.diffs[k].take();
        let topic = &self.hub.symbols[idx].depth[k];
        if diff.is_empty() || !topic.wanted() {
            return;
        }
        let sym = &self.market.symbols.all()[idx];
        let ev = DepthEvent {
            e: "depthUpdate",
            event_time: now,
            s: &sym.spec.symbol,
            first: diff.first,
            u: diff.last,
            b: events::levels(sym, diff.bids.into_iter().rev()),
            a: events::levels(sym, diff.asks),
        };
        topic.publish(serde_json::to_string(&ev).unwrap_or_default());
    }

    fn flush_partials(&self, idx: usize, st: &mut SymbolState, speed: usize) {
        let topics: &SymbolTopics = &self.hub.symbols[idx];
        let id = st.book.update_id();
        for (l, &levels) in PARTIAL_LEVELS.iter().enumerate() {
            let topic = &topics.partial[l][speed];
            if st.partial_sent[l][speed] == id || !topic.wanted() {
                continue;
            }
            st.partial_sent[l][speed] = id;
            let sym = &self.market.symbols.all()[idx];
            topic.publish(events::partial(sym, &st.book, levels));
        }
    }

    fn publish_top(&self, idx: usize, st: &mut SymbolState) {
        let top = st.book.best();
        if top == st.top_sent {
            return;
        }
        st.top_sent = top;
        let topic = &self.hub.symbols[idx].book_ticker;
        if topic.wanted() {
            topic.publish(events::book_ticker(
                &self.market.symbols.all()[idx],
                &st.book,
            ));
        }
    }

    fn publish_klines(&self, idx: usize, st: &mut SymbolState, now: u64) {
        let sym = &self.market.symbols.all()[idx];
        for (k, iv) in Interval::ALL.iter().enumerate() {
            let Some(bar) = st.bars[k] else { continue };
            let closed = iv.close_time(bar.open_time) < now as i64;
            if !st.bars_dirty[k] && !closed {
                continue;
            }
            st.bars_dirty[k] = false;
            if closed {
                st.bars[k] = None;
            }
            let topic = &self.hub.symbols[idx].kline[k];
            if topic.wanted() {
                topic.publish(events::kline(sym, *iv, &bar, closed, now));
            }
        }
    }

    /// `@ticker`, `@miniTicker` and the all-market arrays: every second, to whoever
    /// listens (so a new subscriber has its first ticker within a second, trades or
    /// not).
    fn publish_tickers(&self, now: u64) {
        let arr = self.hub.all_tickers.wanted();
        let mini_arr = self.hub.all_mini_tickers.wanted();
        let (mut full, mut mini) = (Vec::new(), Vec::new());
        for (idx, sym) in self.market.symbols.all().iter().enumerate() {
            let topics = &self.hub.symbols[idx];
            let mut st = self.market.state(idx);
            st.day.advance(now as i64);
            if !(arr || mini_arr || topics.ticker.wanted() || topics.mini_ticker.wanted()) {
                continue;
            }
            let stats = st.day.stats(now as i64);
            if arr || topics.ticker.wanted() {
                let ev = ticker::event(sym, &stats, st.book.best(), st.last, false, now);
                if topics.ticker.wanted() {
                    topics.ticker.publish(ev.to_string());
                }
                full.push(ev);
            }
            if mini_arr || topics.mini_ticker.wanted() {
                let ev = ticker::event(sym, &stats, st.book.best(), st.last, true, now);
                if topics.mini_ticker.wanted() {
                    topics.mini_ticker.publish(ev.to_string());
                }
                mini.push(ev);
            }
        }
        if arr && !full.is_empty() {
            self.hub
                .all_tickers
                .publish(serde_json::Value::from(full).to_string());
        }
        if mini_arr && !mini.is_empty() {
            self.hub
                .all_mini_tickers
                .publish(serde_json::Value::from(mini).to_string());
        }
    }

    fn forward(&mut self, events: &[(FeedPos, FeedEvent)]) {
        let Some(tx) = &self.history else { return };
        let batch = FeedBatch::from_events(events);
        if batch.is_empty() {
            return;
        }
        // A full queue drops the batch: the writer sees the jump in sequence numbers
        // and replays the range from the recovery service.
        let _ = tx.try_send(batch);
    }
}

impl FeedSink for MarketFeed {
    fn on_events(&mut self, evs: &[(FeedPos, FeedEvent)]) {
        let now = now_ms();
        for (_, ev) in evs {
            let id = match ev {
                FeedEvent::Trade { instrument, .. }
                | FeedEvent::Level { instrument, .. }
                | FeedEvent::Book { instrument, .. } => *instrument,
            };
            let Some(idx) = self.market.symbols.index_of(id) else {
                continue;
            };
            self.touched[idx] = true;
            let mut st = self.market.state(idx);
            match ev {
                FeedEvent::Trade {
                    trade_id,
                    price,
                    qty,
                    aggressor,
                    time_ns,
                    ..
                } => {
                    let t = LastTrade {
                        id: *trade_id,
                        price: *price,
                        qty: *qty,
                        time_ms: time_ns / 1_000_000,
                    };
                    let closed = st.add_trade(&t, *aggressor == Side::Buy);
                    let sym = &self.market.symbols.all()[idx];
                    for (iv, bar) in closed {
                        let k = Interval::ALL.iter().position(|i| *i == iv).unwrap_or(0);
                        let topic = &self.hub.symbols[idx].kline[k];
                        if topic.wanted() {
                            topic.publish(events::kline(sym, iv, &bar, true, now));
                        }
                    }
                    drop(st);
                    self.publish_trade(idx, &t, *aggressor, now);
                }
                FeedEvent::Level {
                    side, price, qty, ..
                } => st.book.set(*side, *price, *qty),
                FeedEvent::Book { bids, asks, .. } => {
                    st.book.replace(bids, asks);
                    st.synced = true;
                }
            }
        }
        for idx in 0..self.touched.len() {
            if std::mem::take(&mut self.touched[idx]) {
                let mut st = self.market.state(idx);
                self.flush_diff(idx, &mut st, 0, now);
                self.publish_top(idx, &mut st);
            }
        }
        self.forward(evs);
    }

    fn tick(&mut self, at: Instant) {
        let fast = at.duration_since(self.last_100) >= Duration::from_millis(100);
        let slow = at.duration_since(self.last_1000) >= Duration::from_secs(1);
        if !fast && !slow {
            return;
        }
        let now = now_ms();
        if fast {
            self.last_100 = at;
        }
        if slow {
            self.last_1000 = at;
        }
        for idx in 0..self.market.symbols.all().len() {
            let mut st = self.market.state(idx);
            if fast {
                self.flush_diff(idx, &mut st, 1, now);
                self.flush_partials(idx, &mut st, 1);
            }
            if slow {
                self.flush_diff(idx, &mut st, 2, now);
                self.flush_partials(idx, &mut st, 0);
                self.publish_klines(idx, &mut st, now);
            }
        }
        if slow {
            self.publish_tickers(now);
        }
    }
}
