//! `GET /peregrine/status`: the gateway's own health, for operators and tests:
//! exchange sessions, feed state per symbol, history writer counters and lag, and
//! the new-order stage histograms ([`crate::telemetry`]). `GET /metrics`: the same,
//! for Prometheus.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use peregrine_metrics::{labels, Families, Kind};
use serde::Serialize;

use crate::app::App;
use crate::telemetry::StageSnapshot;

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
    /// Where new orders' time went inside the gateway, since start.
    pub order_stages: Vec<StageSnapshot>,
}

/// The handler.
pub async fn status(State(app): State<Arc<App>>) -> Response {
    crate::rest::ok(&Status {
        uptime_s: app.started.elapsed().as_secs(),
        sessions: sessions(&app),
        feed: feed(&app),
        history: writer(&app),
        order_stages: app.accounts.stages.snapshot(),
    })
}

/// Every account's session, by account.
fn sessions(app: &App) -> Vec<SessionStatus> {
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
    sessions
}

/// Every symbol's feed state.
fn feed(app: &App) -> Vec<FeedStatus> {
    app.market
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
        .collect()
}

/// The history writer's counters.
fn writer(app: &App) -> WriterStatus {
    let w = &app.writer;
    let r = Ordering::Relaxed;
    WriterStatus {
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
    }
}

/// Latency buckets of the order stages: `le` = 2^e and 1.5 × 2^e ns for these `e`
/// (1 µs … 1.6 s).
const STAGE_EXPS: std::ops::RangeInclusive<u32> = 10..=30;

/// `GET /metrics`: the Prometheus text document (`peregrine_build_info`,
/// `process_*`, and the gateway's own under `peregrine_http_`).
pub async fn metrics(State(app): State<Arc<App>>) -> Response {
    let body = peregrine_metrics::document("http", |reg| {
        reg.register_collector(Box::new(families(&app)));
    });
    (
        [(
            axum::http::header::CONTENT_TYPE,
            peregrine_metrics::CONTENT_TYPE,
        )],
        body,
    )
        .into_response()
}

/// The gateway's families: what `/peregrine/status` shows, read the same way.
fn families(app: &App) -> Families {
    let mut f = Families::new();
    f.family(
        "session_up",
        Kind::Gauge,
        "1 while the account's order-entry session to the exchange is logged in.",
    );
    for s in sessions(app) {
        let account = s.account.to_string();
        f.gauge(labels(&[("account", &account)]), i64::from(s.up));
    }
    f.family(
        "feed_synced",
        Kind::Gauge,
        "1 once the symbol's book has been received from the feed.",
    );
    for s in feed(app) {
        f.gauge(labels(&[("symbol", &s.symbol)]), i64::from(s.synced));
    }
    let w = writer(app);
    for (name, help, v) in [
        (
            "history_trades",
            "Trades the history writer inserted.",
            w.trades,
        ),
        (
            "history_order_events",
            "Order events the history writer inserted.",
            w.order_events,
        ),
        (
            "history_commits",
            "History transactions committed.",
            w.commits,
        ),
        (
            "history_errors",
            "History transactions that failed.",
            w.errors,
        ),
        ("history_gaps", "Feed ranges the history lost.", w.gaps),
        (
            "history_records_sent",
            "Order records handed to the history writer.",
            w.records_sent,
        ),
    ] {
        f.single_counter(name, help, v);
    }
    f.family(
        "order_stage_seconds",
        Kind::Histogram,
        "Time of a POST /api/v3/order inside the gateway, by stage: route (routing, body, \
         extractors), checks (signature, parameters, limits), exchange (session, exchange \
         round trip, reports applied), wake (answer to handler running), answer (response \
         built), total.",
    );
    for (stage, l) in app.accounts.stages.all() {
        f.histogram(labels(&[("stage", stage)]), l.prometheus(STAGE_EXPS));
    }
    f
}
