//! `GET /peregrine/status`: the gateway's own health, for operators and tests:
//! exchange sessions, feed state per symbol, history writer counters and lag.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use axum::extract::State;
use axum::response::Response;
use serde::Serialize;

use crate::app::App;

/// One account's session.
#[derive(Debug, Serialize)]
pub struct SessionStatus {
    /// Account.
    pub account: u32,
    /// Logged in at the exchange.
    pub up: bool,
}

/// One symbol's feed state.
#[derive(Debug, Serialize)]
pub struct FeedStatus {
    /// Symbol.
    pub symbol: String,
    /// The book was received at least once.
    pub synced: bool,
    /// Last update id.
    pub update_id: u64,
    /// Last trade id seen.
    pub last_trade_id: u64,
}

/// The history writer.
#[derive(Debug, Serialize)]
pub struct WriterStatus {
    /// Trades inserted.
    pub trades: u64,
    /// Order events inserted.
    pub order_events: u64,
    /// Transactions.
    pub commits: u64,
    /// Feed ranges replayed.
    pub replays: u64,
    /// Feed ranges lost.
    pub gaps: u64,
    /// Failed transactions.
    pub errors: u64,
    /// Engine time (ns) of the newest event committed.
    pub last_event_ns: u64,
    /// Wall time (ns) of the last commit.
    pub last_commit_ns: u64,
    /// Order records handed to the writer.
    pub records_sent: u64,
    /// Order records written.
    pub records_written: u64,
}

/// The whole status.
#[derive(Debug, Serialize)]
pub struct Status {
    /// Seconds since start.
    pub uptime_s: u64,
    /// Sessions.
    pub sessions: Vec<SessionStatus>,
    /// Feed.
    pub feed: Vec<FeedStatus>,
    /// Writer.
    pub history: WriterStatus,
}

/// The handler.
pub async fn status(State(app): State<Arc<App>>) -> Response {
    let mut sessions: Vec<SessionStatus> = app
        .config
        .api_keys
        .iter()
        .map(|k| SessionStatus {
            account: k.account,
            up: app.accounts.is_up(peregrine_types::AccountId(k.account)),
        })
        .collect();
    sessions.sort_by_key(|s| s.account);
    let feed = app
        .market
        .symbols
        .all()
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let st = app.market.state(i);
            FeedStatus {
                symbol: s.spec.symbol.clone(),
                synced: st.synced,
                update_id: st.book.update_id(),
                last_trade_id: st.last.map_or(0, |t| t.id),
            }
        })
        .collect();
    let w = &app.writer;
    let r = Ordering::Relaxed;
    crate::rest::ok(&Status {
        uptime_s: app.started.elapsed().as_secs(),
        sessions,
        feed,
        history: WriterStatus {
            trades: w.trades.load(r),
            order_events: w.order_events.load(r),
            commits: w.commits.load(r),
            replays: w.replays.load(r),
            gaps: w.gaps.load(r),
            errors: w.errors.load(r),
            last_event_ns: w.last_event_ns.load(r),
            last_commit_ns: w.last_commit_ns.load(r),
            records_sent: w.records.sent.load(r),
            records_written: *w.records.written.borrow(),
        },
    })
}
