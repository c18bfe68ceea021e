//! The history writer: one task that writes trades and klines from the feed and
//! every order change from the accounts, in transactions of up to `batch` items.
//!
//! **Resuming without gap or duplicate.** The feed position written last (session,
//! sequence number) is stored in `feed_cursor` in the same transaction as the rows
//! it covers. On start, and whenever a batch does not follow on from it (a restart,
//! or a batch the feed thread had to drop because this writer fell behind), the
//! missing range is replayed from the exchange's recovery service before the batch
//! is written; what the service no longer holds is recorded in `feed_gaps` and
//! logged. Trades already at or before the cursor are skipped, and every insert is
//! `ON CONFLICT DO NOTHING` on the natural key, so a replayed row can never be
//! written twice; bars are only updated by trades whose row was actually inserted.
//! Order changes are keyed by (order, event) the same way. Each account's report
//! stream position arrives after the changes it covers and is stored in the same
//! transaction as they are (`report_cursor`): the exchange replays what follows it.

use peregrine_types::wall_ns;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use sqlx::{Any, AnyPool, Row, Transaction};
use tokio::sync::mpsc;

use super::{i128_at, i64_at, u64_at, HistoryError};
use crate::account::order::{side_name, stp_name, tif_name, ExecType, Fill};
use crate::account::record::{HistoryRecord, OrderRecord};
use crate::link::recovery;
use crate::market::batch::{FeedBatch, TradeRow};
use crate::market::feed::now_ms;
use crate::market::kline::{Bar, Interval};

/// Intervals stored (the rest are rolled up from these when read).
pub const STORED: [Interval; 3] = [Interval::M1, Interval::H1, Interval::D1];

/// Rows per multi-row statement.
const CHUNK: usize = 500;

/// Counters, readable while the writer runs.
#[derive(Debug, Default)]
pub struct WriterStats {
    /// Trades inserted.
    pub trades: AtomicU64,
    /// Order events inserted.
    pub order_events: AtomicU64,
    /// Transactions committed.
    pub commits: AtomicU64,
    /// Feed ranges replayed.
    pub replays: AtomicU64,
    /// Feed ranges lost (recorded in `feed_gaps`).
    pub gaps: AtomicU64,
    /// Failed transactions.
    pub errors: AtomicU64,
    /// Engine time (ns) of the newest event committed.
    pub last_event_ns: AtomicU64,
    /// Wall time (ns) of the last commit.
    pub last_commit_ns: AtomicU64,
    /// Order records handed over and written.
    pub records: RecordCounts,
}

/// Order records handed to the writer and written, so a history read can wait for
/// the writes its caller's own requests caused (read-your-writes).
#[derive(Debug)]
pub struct RecordCounts {
    /// Handed to the writer.
    pub sent: AtomicU64,
    /// Written (committed, or found already stored, or given up on).
    pub written: tokio::sync::watch::Sender<u64>,
    /// Asks a lingering writer to commit now (a reader is waiting).
    flush: tokio::sync::Notify,
}

impl Default for RecordCounts {
    fn default() -> Self {
        RecordCounts {
            sent: AtomicU64::new(0),
            written: tokio::sync::watch::channel(0).0,
            flush: tokio::sync::Notify::new(),
        }
    }
}

impl RecordCounts {
    /// Waits (at most `max`) until every record handed over so far is written; a
    /// writer lingering for more work commits at once.
    pub async fn settle(&self, max: std::time::Duration) {
        let target = self.sent.load(Ordering::Acquire);
        let mut rx = self.written.subscribe();
        if *rx.borrow() < target {
            self.flush.notify_one();
        }
        let _ = tokio::time::timeout(max, rx.wait_for(|w| *w >= target)).await;
    }
}

/// The writer's state.
pub struct Writer {
    pool: AnyPool,
    recovery: Vec<SocketAddr>,
    batch: usize,
    cursor: Option<(u64, u64)>,
    bars: HashMap<(u32, Interval, i64), Bar>,
    stats: Arc<WriterStats>,
    marks: Marks,
    linger: std::time::Duration,
}

/// How a multi-row insert marks its parameters.
///
/// PostgreSQL needs numbered ones (`$1`). SQLite takes those too, but binding a
/// statement with numbered parameters looks each one's name up in a list as long
/// as the statement's parameters (`sqlite3_bind_parameter_name`): quadratic in the
/// rows of the insert. With 500 rows of 8 columns that was 85% of the writer's CPU
/// and held it to ~12k rows/s (`peregrine gateway bench --only writer`, profiled).
/// Anonymous `?` parameters bind by position with no lookup.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Marks {
    /// `$1, $2, ...` (PostgreSQL).
    Numbered,
    /// `?, ?, ...` (SQLite).
    Anonymous,
}

impl std::fmt::Debug for Writer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Writer")
            .field("cursor", &self.cursor)
            .finish()
    }
}

impl Writer {
    /// A writer on `pool`; reads its cursor.
    pub async fn new(
        pool: AnyPool,
        recovery: Vec<SocketAddr>,
        batch: usize,
        stats: Arc<WriterStats>,
    ) -> Result<Writer, HistoryError> {
        let row = sqlx::query("SELECT session, seq FROM feed_cursor WHERE name = 'feed'")
            .fetch_optional(&pool)
            .await?;
        let cursor = match row {
            Some(r) => Some((u64_at(&r, 0)?, u64_at(&r, 1)?)),
            None => None,
        };
        let marks = if pool.acquire().await?.backend_name() == "SQLite" {
            Marks::Anonymous
        } else {
            Marks::Numbered
        };
        Ok(Writer {
            pool,
            recovery,
            batch,
            cursor,
            bars: HashMap::new(),
            stats,
            marks,
            linger: std::time::Duration::ZERO,
        })
    }

    /// Waits up to `linger` after the first item of a transaction for more (unless
    /// the batch fills or a reader asks for its writes first). Each transaction costs
    /// the same whatever its size: several statements, each a round trip to the
    /// database thread, and a WAL append of the pages it touched. At a few thousand
    /// orders a second one transaction per order cost the REST path about 60 µs at
    /// p50 on 2 cores (docs/performance.md, "HTTP gateway"). Zero: commit at once.
    pub fn with_linger(mut self, linger: std::time::Duration) -> Writer {
        self.linger = linger;
        self
    }

    /// The stored feed position.
    pub fn cursor(&self) -> Option<(u64, u64)> {
        self.cursor
    }

    /// Runs until both inputs close.
    pub async fn run(
        mut self,
        mut feed: mpsc::Receiver<FeedBatch>,
        mut orders: mpsc::UnboundedReceiver<HistoryRecord>,
    ) {
        let mut feed_open = true;
        let mut orders_open = true;
        while feed_open || orders_open {
            let (mut fb, mut ob, mut n) = (Vec::new(), Vec::new(), 0usize);
            // Block for the first item, then take what is ready, then (lingering)
            // wait for more until the deadline, a reader's flush or a full batch.
            let mut until: Option<tokio::time::Instant> = None;
            loop {
                while n < self.batch {
                    let mut got = false;
                    if let Ok(b) = feed.try_recv() {
                        n += b.trades.len().max(1);
                        fb.push(b);
                        got = true;
                    }
                    if let Ok(o) = orders.try_recv() {
                        n += 1;
                        ob.push(o);
                        got = true;
                    }
                    if !got {
                        break;
                    }
                }
                if n >= self.batch || !(feed_open || orders_open) {
                    break;
                }
                if n > 0 {
                    if self.linger.is_zero() {
                        break;
                    }
                    until.get_or_insert_with(|| tokio::time::Instant::now() + self.linger);
                }
                tokio::select! {
                    _ = tokio::time::sleep_until(until.unwrap_or_else(tokio::time::Instant::now)), if until.is_some() => break,
                    _ = self.stats.records.flush.notified(), if n > 0 => break,
                    b = feed.recv(), if feed_open => match b {
                        Some(b) => {
                            n += b.trades.len().max(1);
                            fb.push(b);
                        }
                        None => feed_open = false,
                    },
                    o = orders.recv(), if orders_open => match o {
                        Some(o) => {
                            n += 1;
                            ob.push(o);
                        }
                        None => orders_open = false,
                    },
                }
            }
            if fb.is_empty() && ob.is_empty() {
                continue;
            }
            self.write(fb, ob).await;
        }
    }

    /// Writes one unit of work (retrying a failed transaction twice).
    pub async fn write(&mut self, feed: Vec<FeedBatch>, records: Vec<HistoryRecord>) {
        let (trades, cursor, gaps) = self.plan(feed).await;
        let handed = records.len() as u64;
        let mut orders = Vec::with_capacity(records.len());
        let mut streams: HashMap<u32, u64> = HashMap::new();
        for r in records {
            match r {
                HistoryRecord::Order(o) => orders.push(o),
                HistoryRecord::Cursor {
                    account,
                    next_report_seq,
                } => {
                    let at = streams.entry(account).or_default();
                    *at = (*at).max(next_report_seq);
                }
            }
        }
        for attempt in 0..3 {
            match self.commit(&trades, cursor, &gaps, &orders, &streams).await {
                Ok(()) => {
                    self.cursor = cursor.or(self.cursor);
                    self.stats.records.written.send_modify(|w| *w += handed);
                    return;
                }
                Err(e) => {
                    self.stats.errors.fetch_add(1, Ordering::Relaxed);
                    self.bars.clear();
                    eprintln!(
                        "gateway: history: write failed (attempt {}): {e}",
                        attempt + 1
                    );
                    tokio::time::sleep(std::time::Duration::from_millis(100 << attempt)).await;
                }
            }
        }
        self.stats.records.written.send_modify(|w| *w += handed);
        eprintln!(
            "gateway: history: dropped {} trade(s) and {} order change(s) after 3 failures \
             (the feed part is replayed on the next batch)",
            trades.len(),
            orders.len()
        );
    }

    /// Decides what to insert: the trades after the cursor, with any missing range
    /// replayed first. Returns (trades, new cursor, lost ranges).
    async fn plan(
        &mut self,
        batches: Vec<FeedBatch>,
    ) -> (Vec<TradeRow>, Option<(u64, u64)>, Vec<(u64, u64, u64)>) {
        let mut cursor = self.cursor;
        let mut out = Vec::new();
        let mut gaps = Vec::new();
        for b in batches {
            if b.books {
                // Books as of `b.to`: the trades between the cursor and it are not
                // in this batch.
                match cursor {
                    Some((s, c)) if s == b.session && c < b.to => {
                        self.heal(s, c + 1, b.to + 1, &mut out, &mut gaps).await;
                    }
                    Some((s, c)) if s != b.session => {
                        // A new feed session (the exchange restarted): its messages up
                        // to the books, and whatever the old session sent after the
                        // cursor, are beyond what protocol v1 can replay here.
                        gaps.push((s, c + 1, u64::MAX));
                        if b.to > 0 {
                            self.heal(b.session, 1, b.to + 1, &mut out, &mut gaps).await;
                        }
                    }
                    _ => {}
                }
                if cursor.is_none_or(|(s, c)| s != b.session || c < b.to) {
                    cursor = Some((b.session, b.to));
                }
                continue;
            }
            let after = match cursor {
                Some((s, c)) if s == b.session => {
                    if b.from > c + 1 {
                        self.heal(s, c + 1, b.from, &mut out, &mut gaps).await;
                    }
                    c
                }
                Some((s, c)) => {
                    gaps.push((s, c + 1, u64::MAX));
                    if b.from > 1 {
                        self.heal(b.session, 1, b.from, &mut out, &mut gaps).await;
                    }
                    0
                }
                None => 0,
            };
            out.extend(b.trades.into_iter().filter(|t| t.seq > after));
            if cursor.is_none_or(|(s, c)| s != b.session || c < b.to) {
                cursor = Some((b.session, b.to));
            }
        }
        (out, cursor, gaps)
    }

    /// Replays `from..to` of `session` for its trades; records a gap if it cannot.
    async fn heal(
        &self,
        session: u64,
        from: u64,
        to: u64,
        out: &mut Vec<TradeRow>,
        gaps: &mut Vec<(u64, u64, u64)>,
    ) {
        if self.recovery.is_empty() {
            gaps.push((session, from, to - 1));
            return;
        }
        let addrs = self.recovery.clone();
        let got =
            tokio::task::spawn_blocking(move || recovery::replay(&addrs, session, from, to)).await;
        match got {
            Ok(Ok(Some(events))) => {
                self.stats.replays.fetch_add(1, Ordering::Relaxed);
                out.extend(
                    events
                        .iter()
                        .filter_map(|(pos, ev)| TradeRow::from_event(*pos, ev)),
                );
            }
            _ => {
                eprintln!(
                    "gateway: history: feed messages {from}..{to} of session {session} could not be \
                     replayed; their trades are missing from the history (recorded in feed_gaps)"
                );
                gaps.push((session, from, to - 1));
            }
        }
    }

    async fn commit(
        &mut self,
        trades: &[TradeRow],
        cursor: Option<(u64, u64)>,
        gaps: &[(u64, u64, u64)],
        orders: &[OrderRecord],
        streams: &HashMap<u32, u64>,
    ) -> Result<(), HistoryError> {
        let mut tx = self.pool.begin().await?;
        let inserted = insert_trades(&mut tx, trades, self.marks).await?;
        self.update_bars(&mut tx, trades, &inserted).await?;
        let events = write_orders(&mut tx, orders, self.marks).await?;
        if let Some((s, q)) = cursor {
            sqlx::query(
                "INSERT INTO feed_cursor (name, session, seq) VALUES ('feed', $1, $2) \
                 ON CONFLICT (name) DO UPDATE SET session = excluded.session, seq = excluded.seq",
            )
            .bind(s as i64)
            .bind(q as i64)
            .execute(&mut *tx)
            .await?;
        }
        for (&account, &next) in streams {
            sqlx::query(
                "INSERT INTO report_cursor (account, next_seq) VALUES ($1, $2) \
                 ON CONFLICT (account) DO UPDATE SET next_seq = excluded.next_seq",
            )
            .bind(i64::from(account))
            .bind(next.min(i64::MAX as u64) as i64)
            .execute(&mut *tx)
            .await?;
        }
        for &(s, from, to) in gaps {
            sqlx::query("INSERT INTO feed_gaps (session, from_seq, to_seq, noted_ms) VALUES ($1, $2, $3, $4)")
                .bind(s as i64)
                .bind(from as i64)
                .bind(to.min(i64::MAX as u64) as i64)
                .bind(now_ms() as i64)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        let newest = trades
            .iter()
            .map(|t| t.time_ms * 1_000_000)
            .chain(orders.iter().map(|o| o.change.time_ns))
            .max()
            .unwrap_or(0);
        let s = &self.stats;
        s.trades.fetch_add(inserted.len() as u64, Ordering::Relaxed);
        s.order_events.fetch_add(events, Ordering::Relaxed);
        s.gaps.fetch_add(gaps.len() as u64, Ordering::Relaxed);
        s.commits.fetch_add(1, Ordering::Relaxed);
        s.last_event_ns.fetch_max(newest, Ordering::Relaxed);
        s.last_commit_ns.store(wall_ns(), Ordering::Relaxed);
        Ok(())
    }

    async fn update_bars(
        &mut self,
        tx: &mut Transaction<'static, Any>,
        trades: &[TradeRow],
        inserted: &std::collections::HashSet<(u32, u64)>,
    ) -> Result<(), HistoryError> {
        let mut touched: Vec<(u32, Interval, i64)> = Vec::new();
        for t in trades
            .iter()
            .filter(|t| inserted.contains(&(t.instrument, t.trade_id)))
        {
            for iv in STORED {
                let open = iv.open_time(t.time_ms as i64);
                let key = (t.instrument, iv, open);
                let bar = Bar::from_trade(open, t.trade_id, t.price, t.qty, !t.buyer_maker);
                if let std::collections::hash_map::Entry::Vacant(slot) = self.bars.entry(key) {
                    if let Some(stored) = load_bar(tx, key).await? {
                        slot.insert(stored);
                    }
                }
                match self.bars.get_mut(&key) {
                    Some(b) => b.merge(&bar),
                    None => {
                        self.bars.insert(key, bar);
                    }
                }
                if !touched.contains(&key) {
                    touched.push(key);
                }
            }
        }
        for key in &touched {
            let b = self.bars[key];
            sqlx::query(
                "INSERT INTO klines (instrument, bar_interval, open_time, open, high, low, close, volume, \
                 quote_volume, trades, taker_buy_volume, taker_buy_quote, first_trade, last_trade) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) \
                 ON CONFLICT (instrument, bar_interval, open_time) DO UPDATE SET \
                 open = excluded.open, high = excluded.high, low = excluded.low, close = excluded.close, \
                 volume = excluded.volume, quote_volume = excluded.quote_volume, trades = excluded.trades, \
                 taker_buy_volume = excluded.taker_buy_volume, taker_buy_quote = excluded.taker_buy_quote, \
                 first_trade = excluded.first_trade, last_trade = excluded.last_trade",
            )
            .bind(i64::from(key.0))
            .bind(key.1.name())
            .bind(key.2)
            .bind(b.open)
            .bind(b.high)
            .bind(b.low)
            .bind(b.close)
            .bind(b.volume)
            .bind(b.quote_volume.to_string())
            .bind(b.trades as i64)
            .bind(b.taker_buy_volume)
            .bind(b.taker_buy_quote.to_string())
            .bind(b.first_trade as i64)
            .bind(b.last_trade as i64)
            .execute(&mut **tx)
            .await?;
        }
        // Keep the cache to the bars still open.
        if self.bars.len() > 4_096 {
            let newest: HashMap<(u32, Interval), i64> =
                self.bars.keys().fold(HashMap::new(), |mut m, k| {
                    let e = m.entry((k.0, k.1)).or_insert(k.2);
                    *e = (*e).max(k.2);
                    m
                });
            self.bars
                .retain(|k, _| newest.get(&(k.0, k.1)) == Some(&k.2));
        }
        Ok(())
    }
}

/// Reads one stored bar.
async fn load_bar(
    tx: &mut Transaction<'static, Any>,
    key: (u32, Interval, i64),
) -> Result<Option<Bar>, HistoryError> {
    let row = sqlx::query(
        "SELECT open, high, low, close, volume, quote_volume, trades, taker_buy_volume, \
         taker_buy_quote, first_trade, last_trade FROM klines \
         WHERE instrument = $1 AND bar_interval = $2 AND open_time = $3",
    )
    .bind(i64::from(key.0))
    .bind(key.1.name())
    .bind(key.2)
    .fetch_optional(&mut **tx)
    .await?;
    let Some(r) = row else { return Ok(None) };
    Ok(Some(Bar {
        open_time: key.2,
        open: i64_at(&r, 0)?,
        high: i64_at(&r, 1)?,
        low: i64_at(&r, 2)?,
        close: i64_at(&r, 3)?,
        volume: i64_at(&r, 4)?,
        quote_volume: i128_at(&r, 5)?,
        trades: u64_at(&r, 6)?,
        taker_buy_volume: i64_at(&r, 7)?,
        taker_buy_quote: i128_at(&r, 8)?,
        first_trade: u64_at(&r, 9)?,
        last_trade: u64_at(&r, 10)?,
    }))
}

/// `($1, $2, ...), (...)` (or `(?, ?, ...), (...)`) for `rows` rows of `cols` columns.
fn placeholders(rows: usize, cols: usize, marks: Marks) -> String {
    let mut s = String::with_capacity(rows * cols * 5);
    for r in 0..rows {
        if r > 0 {
            s.push_str(", ");
        }
        s.push('(');
        for c in 0..cols {
            if c > 0 {
                s.push_str(", ");
            }
            match marks {
                Marks::Numbered => {
                    s.push('$');
                    s.push_str(&(r * cols + c + 1).to_string());
                }
                Marks::Anonymous => s.push('?'),
            }
        }
        s.push(')');
    }
    s
}

/// Inserts trades; returns the keys actually inserted (not already stored).
async fn insert_trades(
    tx: &mut Transaction<'static, Any>,
    trades: &[TradeRow],
    marks: Marks,
) -> Result<std::collections::HashSet<(u32, u64)>, HistoryError> {
    let mut inserted = std::collections::HashSet::new();
    for chunk in trades.chunks(CHUNK) {
        let sql = format!(
            "INSERT INTO trades (instrument, trade_id, price, qty, buyer_maker, time_ms, feed_session, feed_seq) \
             VALUES {} ON CONFLICT (instrument, trade_id) DO NOTHING",
            placeholders(chunk.len(), 8, marks)
        );
        let bind = |sql| {
            let mut q = sqlx::query(sql);
            for t in chunk {
                q = q
                    .bind(i64::from(t.instrument))
                    .bind(t.trade_id as i64)
                    .bind(t.price)
                    .bind(t.qty)
                    .bind(i64::from(t.buyer_maker))
                    .bind(t.time_ms as i64)
                    .bind(t.session as i64)
                    .bind(t.seq as i64);
            }
            q
        };
        match insert_fresh(tx, chunk.len(), bind(&sql)).await? {
            Fresh::All => inserted.extend(chunk.iter().map(|t| (t.instrument, t.trade_id))),
            Fresh::Some => {
                let sql = format!("{sql} RETURNING instrument, trade_id");
                for row in bind(&sql).fetch_all(&mut **tx).await? {
                    inserted.insert((u64_at(&row, 0)? as u32, u64_at(&row, 1)?));
                }
            }
        }
    }
    Ok(inserted)
}

/// What [`insert_fresh`] found.
enum Fresh {
    /// Every row was new and is inserted.
    All,
    /// Some were stored already; nothing is inserted: insert again with `RETURNING`
    /// to learn which rows are new.
    Some,
}

/// Runs `insert` (an `INSERT ... ON CONFLICT DO NOTHING` of `rows` rows) under a
/// savepoint. If every row went in, that is kept ([`Fresh::All`]); if any was already
/// stored (a replay after a restart), it is rolled back ([`Fresh::Some`]).
///
/// Why not always `RETURNING`: each returned row comes back through sqlx's row
/// machinery (a `String` per order-event key), and at 100,000 orders/s that cost the
/// writer a third of its rate (`peregrine gateway bench --only writer`: all written
/// 4.6–4.9 s after the last order with `RETURNING` on every insert, 1.5–1.7 s with
/// none, 2026-11-24). Rows already stored are rare: only after a restart does the
/// writer meet them, so the common case is one plain insert and two savepoint
/// statements.
async fn insert_fresh<'q>(
    tx: &mut Transaction<'static, Any>,
    rows: usize,
    insert: sqlx::query::Query<'q, Any, sqlx::any::AnyArguments<'q>>,
) -> Result<Fresh, HistoryError> {
    sqlx::query("SAVEPOINT fresh").execute(&mut **tx).await?;
    let done = insert.execute(&mut **tx).await?.rows_affected();
    if done == rows as u64 {
        sqlx::query("RELEASE SAVEPOINT fresh")
            .execute(&mut **tx)
            .await?;
        return Ok(Fresh::All);
    }
    sqlx::query("ROLLBACK TO SAVEPOINT fresh")
        .execute(&mut **tx)
        .await?;
    sqlx::query("RELEASE SAVEPOINT fresh")
        .execute(&mut **tx)
        .await?;
    Ok(Fresh::Some)
}

/// The key of an order event: unique per (account, order, what happened).
pub fn event_key(r: &OrderRecord) -> String {
    let o = &r.change.order;
    match (r.change.exec, r.change.fill) {
        (ExecType::Trade, Some(f)) => format!("{}:{}:T{}", r.account, o.order_id, f.trade_id),
        (ExecType::Replaced, _) => format!("{}:{}:R{}", r.account, o.order_id, r.change.time_ns),
        (ExecType::Working, _) => format!("{}:{}:W", r.account, o.order_id),
        (e, _) => format!("{}:{}:{}", r.account, o.order_id, e.name()),
    }
}

/// Inserts order events; for the new ones, the order's row and the account's fills.
/// Returns how many events were new.
async fn write_orders(
    tx: &mut Transaction<'static, Any>,
    orders: &[OrderRecord],
    marks: Marks,
) -> Result<u64, HistoryError> {
    if orders.is_empty() {
        return Ok(0);
    }
    let keys: Vec<String> = orders.iter().map(event_key).collect();
    // Per order: its event was not stored before.
    let mut fresh = vec![false; orders.len()];
    for (n, (chunk, kchunk)) in orders.chunks(CHUNK).zip(keys.chunks(CHUNK)).enumerate() {
        let fresh = &mut fresh[n * CHUNK..n * CHUNK + chunk.len()];
        let sql = format!(
            "INSERT INTO order_events (event_key, account, order_id, exec_type, status, executed, trade_id, time_ns) \
             VALUES {} ON CONFLICT (event_key) DO NOTHING",
            placeholders(chunk.len(), 8, marks)
        );
        let bind = |sql| {
            let mut q = sqlx::query(sql);
            for (r, k) in chunk.iter().zip(kchunk) {
                let o = &r.change.order;
                q = q
                    .bind(k.clone())
                    .bind(i64::from(r.account))
                    .bind(o.order_id as i64)
                    .bind(r.change.exec.name())
                    .bind(o.status.name())
                    .bind(o.executed)
                    .bind(r.change.fill.map_or(-1, |f| f.trade_id as i64))
                    .bind(r.change.time_ns as i64);
            }
            q
        };
        match insert_fresh(tx, chunk.len(), bind(&sql)).await? {
            Fresh::All => fresh.fill(true),
            Fresh::Some => {
                let sql = format!("{sql} RETURNING event_key");
                let mut new = std::collections::HashSet::new();
                for row in bind(&sql).fetch_all(&mut **tx).await? {
                    new.insert(row.try_get::<String, _>(0)?);
                }
                for (f, k) in fresh.iter_mut().zip(kchunk) {
                    *f = new.contains(k);
                }
            }
        }
    }
    // The latest new state of each order, and the new fills.
    let mut latest: HashMap<(u32, u64), &OrderRecord> = HashMap::new();
    let mut fills = Vec::new();
    for (r, _) in orders.iter().zip(&fresh).filter(|(_, f)| **f) {
        latest.insert((r.account, r.change.order.order_id), r);
        if let Some(f) = r.change.fill {
            fills.push((r, f));
        }
    }
    let latest: Vec<&OrderRecord> = latest.into_values().collect();
    for chunk in latest.chunks(CHUNK / 2) {
        let sql = format!(
            "INSERT INTO orders (account, order_id, instrument, client_order_id, coid, side, order_type, tif, stp, \
             price, orig_qty, executed, cum_quote, status, time_ms, update_ms) VALUES {} \
             ON CONFLICT (account, order_id) DO UPDATE SET coid = excluded.coid, price = excluded.price, \
             orig_qty = excluded.orig_qty, executed = excluded.executed, cum_quote = excluded.cum_quote, \
             status = excluded.status, update_ms = excluded.update_ms",
            placeholders(chunk.len(), 16, marks)
        );
        let mut q = sqlx::query(&sql);
        for r in chunk {
            let o = &r.change.order;
            q = q
                .bind(i64::from(r.account))
                .bind(o.order_id as i64)
                .bind(i64::from(r.instrument))
                .bind(o.client_order_id.clone())
                .bind(o.coid as i64)
                .bind(side_name(o.side))
                .bind(o.kind.name())
                .bind(tif_name(o.tif))
                .bind(stp_name(o.stp))
                .bind(o.price)
                .bind(o.orig_qty)
                .bind(o.executed)
                .bind(o.cum_quote.to_string())
                .bind(o.status.name())
                .bind(o.time_ms as i64)
                .bind(o.update_ms as i64);
        }
        q.execute(&mut **tx).await?;
    }
    // The conditional part of the orders that have one.
    let ext: Vec<&&OrderRecord> = latest
        .iter()
        .filter(|r| {
            let o = &r.change.order;
            !o.ext.is_none() || o.list_id >= 0 || o.working_ms.is_none()
        })
        .collect();
    for chunk in ext.chunks(CHUNK / 2) {
        let sql = format!(
            "INSERT INTO order_ext (account, order_id, stop_price, iceberg_qty, trailing_delta, list_id, working_ms) \
             VALUES {} ON CONFLICT (account, order_id) DO UPDATE SET working_ms = excluded.working_ms",
            placeholders(chunk.len(), 7, marks)
        );
        let mut q = sqlx::query(&sql);
        for r in chunk {
            let o = &r.change.order;
            q = q
                .bind(i64::from(r.account))
                .bind(o.order_id as i64)
                .bind(o.ext.stop_price)
                .bind(o.ext.display_qty)
                .bind(i64::from(o.ext.trail_bps))
                .bind(o.list_id)
                .bind(o.working_ms.map_or(-1, |w| w as i64));
        }
        q.execute(&mut **tx).await?;
    }
    let fees: Vec<&(&OrderRecord, Fill)> = fills.iter().filter(|(_, f)| f.fee != 0).collect();
    for chunk in fees.chunks(CHUNK) {
        let sql = format!(
            "INSERT INTO my_trade_fees (account, order_id, trade_id, fee) VALUES {} \
             ON CONFLICT (account, order_id, trade_id) DO NOTHING",
            placeholders(chunk.len(), 4, marks)
        );
        let mut q = sqlx::query(&sql);
        for (r, f) in chunk {
            q = q
                .bind(i64::from(r.account))
                .bind(r.change.order.order_id as i64)
                .bind(f.trade_id as i64)
                .bind(f.fee);
        }
        q.execute(&mut **tx).await?;
    }
    for chunk in fills.chunks(CHUNK) {
        let sql = format!(
            "INSERT INTO my_trades (account, order_id, trade_id, instrument, price, qty, quote_qty, is_buyer, is_maker, time_ms) \
             VALUES {} ON CONFLICT (account, order_id, trade_id) DO NOTHING",
            placeholders(chunk.len(), 10, marks)
        );
        let mut q = sqlx::query(&sql);
        for (r, f) in chunk {
            let o = &r.change.order;
            q = q
                .bind(i64::from(r.account))
                .bind(o.order_id as i64)
                .bind(f.trade_id as i64)
                .bind(i64::from(r.instrument))
                .bind(f.price)
                .bind(f.qty)
                .bind((i128::from(f.price) * i128::from(f.qty)).to_string())
                .bind(i64::from(o.side == peregrine_types::Side::Buy))
                .bind(i64::from(f.maker))
                .bind(f.time_ms as i64);
        }
        q.execute(&mut **tx).await?;
    }
    Ok(fresh.iter().filter(|f| **f).count() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A running writer on `pool` with `linger`: its stats, its order input, its task.
    async fn lingering(
        pool: &AnyPool,
        linger: std::time::Duration,
    ) -> (
        Arc<WriterStats>,
        mpsc::UnboundedSender<HistoryRecord>,
        tokio::task::JoinHandle<()>,
    ) {
        let stats = Arc::new(WriterStats::default());
        let w = Writer::new(pool.clone(), Vec::new(), 64, Arc::clone(&stats))
            .await
            .unwrap()
            .with_linger(linger);
        let (feed_tx, feed_rx) = mpsc::channel::<FeedBatch>(8);
        let (tx, rx) = mpsc::unbounded_channel::<HistoryRecord>();
        let task = tokio::spawn(async move {
            let _feed = feed_tx; // the feed input stays open
            w.run(feed_rx, rx).await;
        });
        (stats, tx, task)
    }

    /// Runs `test` on a fresh in-memory store, on a current-thread runtime.
    fn with_memory_store<F: std::future::Future<Output = ()>>(test: impl FnOnce(AnyPool) -> F) {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let pool = super::super::open("sqlite::memory:").await.unwrap();
            test(pool).await;
        });
    }

    #[test]
    fn a_lingering_writer_commits_when_a_reader_waits_and_when_the_linger_ends() {
        with_memory_store(|pool| async move {
            let cursor = |next_report_seq| HistoryRecord::Cursor {
                account: 1,
                next_report_seq,
            };
            // A linger far longer than the reader's wait: only the flush can end it.
            let (stats, tx, task) = lingering(&pool, std::time::Duration::from_secs(600)).await;
            tx.send(cursor(7)).unwrap();
            stats.records.sent.fetch_add(1, Ordering::AcqRel);
            stats
                .records
                .settle(std::time::Duration::from_secs(30))
                .await;
            assert_eq!(*stats.records.written.borrow(), 1, "the reader's flush");
            assert_eq!(
                super::super::read::report_cursor(&pool, 1).await.unwrap(),
                7
            );
            task.abort();

            // With no reader, the linger's end commits.
            let (stats, tx, task) = lingering(&pool, std::time::Duration::from_millis(20)).await;
            tx.send(cursor(9)).unwrap();
            let mut written = stats.records.written.subscribe();
            tokio::time::timeout(
                std::time::Duration::from_secs(30),
                written.wait_for(|w| *w >= 1),
            )
            .await
            .expect("committed after the linger")
            .unwrap();
            assert_eq!(
                super::super::read::report_cursor(&pool, 1).await.unwrap(),
                9
            );
            task.abort();
        });
    }

    #[test]
    fn placeholders_are_numbered_for_postgres_and_anonymous_for_sqlite() {
        assert_eq!(placeholders(2, 2, Marks::Numbered), "($1, $2), ($3, $4)");
        assert_eq!(placeholders(2, 2, Marks::Anonymous), "(?, ?), (?, ?)");
    }

    #[test]
    fn the_report_stream_position_is_stored_and_only_moves_forward_in_a_batch() {
        with_memory_store(|pool| async move {
            assert_eq!(
                super::super::read::report_cursor(&pool, 1).await.unwrap(),
                0
            );
            let stats = Arc::new(WriterStats::default());
            let mut w = Writer::new(pool.clone(), Vec::new(), 64, stats)
                .await
                .unwrap();
            let cursor = |account, next_report_seq| HistoryRecord::Cursor {
                account,
                next_report_seq,
            };
            w.write(Vec::new(), vec![cursor(1, 5), cursor(2, 3), cursor(1, 9)])
                .await;
            assert_eq!(
                super::super::read::report_cursor(&pool, 1).await.unwrap(),
                9
            );
            assert_eq!(
                super::super::read::report_cursor(&pool, 2).await.unwrap(),
                3
            );
            w.write(Vec::new(), vec![cursor(1, 12)]).await;
            assert_eq!(
                super::super::read::report_cursor(&pool, 1).await.unwrap(),
                12
            );
        });
    }

    fn new_order(id: u64) -> HistoryRecord {
        use crate::account::order::{Order, OrderType, Status};
        use crate::account::state::Change;
        let order = Order {
            symbol: 0,
            order_id: id,
            coid: id,
            client_order_id: format!("c{id}"),
            side: peregrine_types::Side::Buy,
            kind: OrderType::Limit,
            tif: crate::link::Tif::Gtc,
            stp: crate::link::Stp::None,
            price: 10_000,
            orig_qty: 1,
            executed: 0,
            cum_quote: 0,
            status: Status::New,
            time_ms: 1_000,
            update_ms: 1_000,
            entry_fills: Vec::new(),
            orig_quote: 0,
            ext: crate::link::Ext::NONE,
            list_id: -1,
            working_ms: Some(0),
        };
        HistoryRecord::Order(OrderRecord {
            account: 1,
            instrument: 1,
            change: Change {
                order,
                exec: ExecType::New,
                fill: None,
                cancel_client_id: None,
                time_ns: 1_000_000_000,
            },
        })
    }

    fn trades(session: u64, ids: std::ops::RangeInclusive<u64>) -> FeedBatch {
        let rows: Vec<TradeRow> = ids
            .map(|id| TradeRow {
                instrument: 1,
                trade_id: id,
                price: 10_000,
                qty: 1,
                buyer_maker: false,
                time_ms: 60_000,
                session,
                seq: id,
            })
            .collect();
        FeedBatch {
            session,
            from: rows[0].seq,
            to: rows[rows.len() - 1].seq,
            books: false,
            trades: rows,
        }
    }

    #[test]
    fn rows_already_stored_are_skipped_and_counted_once_beside_new_ones() {
        with_memory_store(|pool| async move {
            let stats = Arc::new(WriterStats::default());
            let mut w = Writer::new(pool.clone(), Vec::new(), 64, Arc::clone(&stats))
                .await
                .unwrap();
            // All new: the plain insert path.
            w.write(vec![trades(1, 1..=3)], (1..=3).map(new_order).collect())
                .await;
            // A new feed session replays trade 3 (the exchange restarted) and the
            // accounts replay order 3's event: one row of each is already stored, so
            // the chunk is rolled back and inserted again with RETURNING.
            w.write(vec![trades(2, 3..=5)], (3..=5).map(new_order).collect())
                .await;
            assert_eq!(stats.errors.load(Ordering::Relaxed), 0);
            assert_eq!(stats.trades.load(Ordering::Relaxed), 5);
            assert_eq!(stats.order_events.load(Ordering::Relaxed), 5);
            let count = |sql: &'static str| {
                let pool = pool.clone();
                async move {
                    let row = sqlx::query(sql).fetch_one(&pool).await.unwrap();
                    i64_at(&row, 0).unwrap()
                }
            };
            assert_eq!(count("SELECT COUNT(*) FROM trades").await, 5);
            assert_eq!(count("SELECT COUNT(*) FROM order_events").await, 5);
            assert_eq!(count("SELECT COUNT(*) FROM orders").await, 5);
            // The bar counts each trade once: the duplicate did not touch it.
            assert_eq!(
                count("SELECT trades FROM klines WHERE bar_interval = '1m'").await,
                5
            );
        });
    }
}
