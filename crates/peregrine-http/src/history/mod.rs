//! The history store: trades, orders (every state change), the account's fills and
//! klines, in an embedded SQLite file by default or in PostgreSQL when configured,
//! through one query layer (sqlx's `Any` driver with queries built at run time: the
//! same SQL runs on both).
//!
//! * [`writer`]: the history writer, a task fed by the feed thread (trades) and the
//!   accounts (order changes); it resumes where it stopped (see there).
//! * [`read`]: the queries behind the REST history endpoints.
//!
//! **Orders are never lost across a gateway restart.** Each account's report stream
//! position (protocol v2's `report_seq`) is stored in `report_cursor` in the
//! transaction that stores the changes of the reports before it; the next start
//! resumes the account's session there and the exchange replays what came after.
//!
//! Amounts are stored as integers in the instrument's units (`BIGINT`), quote
//! amounts (which can exceed 64 bits) as exact decimal text of their units; ids and
//! times as `BIGINT`; flags as 0/1.

pub mod read;
pub mod writer;

use sqlx::any::{AnyPoolOptions, AnyRow};
use sqlx::{AnyPool, Executor, Row};

/// A history error.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    /// The database.
    #[error("history store: {0}")]
    Db(#[from] sqlx::Error),
    /// Stored data that does not parse.
    #[error("history store: bad stored value: {0}")]
    Corrupt(String),
    /// Another process has the SQLite file open (a second gateway on the same file).
    #[error("history store: {0}")]
    Locked(#[from] peregrine_types::lock::LockError),
}

/// The tables. Portable SQL: SQLite and PostgreSQL both run it.
const SCHEMA: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS trades (
        instrument BIGINT NOT NULL, trade_id BIGINT NOT NULL, price BIGINT NOT NULL,
        qty BIGINT NOT NULL, buyer_maker BIGINT NOT NULL, time_ms BIGINT NOT NULL,
        feed_session BIGINT NOT NULL, feed_seq BIGINT NOT NULL,
        PRIMARY KEY (instrument, trade_id))",
    "CREATE INDEX IF NOT EXISTS trades_by_time ON trades (instrument, time_ms)",
    "CREATE TABLE IF NOT EXISTS klines (
        instrument BIGINT NOT NULL, bar_interval TEXT NOT NULL, open_time BIGINT NOT NULL,
        open BIGINT NOT NULL, high BIGINT NOT NULL, low BIGINT NOT NULL, close BIGINT NOT NULL,
        volume BIGINT NOT NULL, quote_volume TEXT NOT NULL, trades BIGINT NOT NULL,
        taker_buy_volume BIGINT NOT NULL, taker_buy_quote TEXT NOT NULL,
        first_trade BIGINT NOT NULL, last_trade BIGINT NOT NULL,
        PRIMARY KEY (instrument, bar_interval, open_time))",
    "CREATE TABLE IF NOT EXISTS orders (
        account BIGINT NOT NULL, order_id BIGINT NOT NULL, instrument BIGINT NOT NULL,
        client_order_id TEXT NOT NULL, coid BIGINT NOT NULL, side TEXT NOT NULL,
        order_type TEXT NOT NULL, tif TEXT NOT NULL, stp TEXT NOT NULL, price BIGINT NOT NULL,
        orig_qty BIGINT NOT NULL, executed BIGINT NOT NULL, cum_quote TEXT NOT NULL,
        status TEXT NOT NULL, time_ms BIGINT NOT NULL, update_ms BIGINT NOT NULL,
        PRIMARY KEY (account, order_id))",
    "CREATE INDEX IF NOT EXISTS orders_by_client ON orders (account, instrument, client_order_id)",
    "CREATE TABLE IF NOT EXISTS order_events (
        event_key TEXT NOT NULL PRIMARY KEY, account BIGINT NOT NULL, order_id BIGINT NOT NULL,
        exec_type TEXT NOT NULL, status TEXT NOT NULL, executed BIGINT NOT NULL,
        trade_id BIGINT NOT NULL, time_ns BIGINT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS order_events_by_order ON order_events (account, order_id)",
    "CREATE TABLE IF NOT EXISTS my_trades (
        account BIGINT NOT NULL, order_id BIGINT NOT NULL, trade_id BIGINT NOT NULL,
        instrument BIGINT NOT NULL, price BIGINT NOT NULL, qty BIGINT NOT NULL,
        quote_qty TEXT NOT NULL, is_buyer BIGINT NOT NULL, is_maker BIGINT NOT NULL,
        time_ms BIGINT NOT NULL,
        PRIMARY KEY (account, order_id, trade_id))",
    "CREATE INDEX IF NOT EXISTS my_trades_by_time ON my_trades (account, instrument, time_ms)",
    // Added with the conditional orders and fees (issue 31): tables of their own, so
    // a store written before them needs no migration (a missing row means none).
    "CREATE TABLE IF NOT EXISTS order_ext (
        account BIGINT NOT NULL, order_id BIGINT NOT NULL, stop_price BIGINT NOT NULL,
        iceberg_qty BIGINT NOT NULL, trailing_delta BIGINT NOT NULL, list_id BIGINT NOT NULL,
        working_ms BIGINT NOT NULL,
        PRIMARY KEY (account, order_id))",
    "CREATE TABLE IF NOT EXISTS my_trade_fees (
        account BIGINT NOT NULL, order_id BIGINT NOT NULL, trade_id BIGINT NOT NULL,
        fee BIGINT NOT NULL,
        PRIMARY KEY (account, order_id, trade_id))",
    "CREATE TABLE IF NOT EXISTS feed_cursor (
        name TEXT NOT NULL PRIMARY KEY, session BIGINT NOT NULL, seq BIGINT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS report_cursor (
        account BIGINT NOT NULL PRIMARY KEY, next_seq BIGINT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS feed_gaps (
        session BIGINT NOT NULL, from_seq BIGINT NOT NULL, to_seq BIGINT NOT NULL,
        noted_ms BIGINT NOT NULL)",
];

/// Is `url` a SQLite URL?
pub fn is_sqlite(url: &str) -> bool {
    url.starts_with("sqlite:")
}

/// Opens (creating the file and the tables if needed) the store at `url`.
pub async fn open(url: &str) -> Result<AnyPool, HistoryError> {
    sqlx::any::install_default_drivers();
    let sqlite = is_sqlite(url);
    let mut url = url.to_owned();
    if sqlite && !url.contains(":memory:") {
        if let Some(path) = url.strip_prefix("sqlite://") {
            let path = path.split('?').next().unwrap_or(path);
            if let Some(dir) = std::path::Path::new(path).parent() {
                if !dir.as_os_str().is_empty() {
                    let _ = std::fs::create_dir_all(dir);
                }
            }
            // One writer per file: `<file>.lock`, held for the life of the process
            // (the pool has no end the store sees).
            let lock = peregrine_types::lock::FileLock::acquire(std::path::Path::new(&format!(
                "{path}.lock"
            )))?;
            std::mem::forget(lock);
        }
        if !url.contains('?') {
            url.push_str("?mode=rwc");
        }
    }
    let memory = url.contains(":memory:");
    let pool = AnyPoolOptions::new()
        .max_connections(if memory { 1 } else { 8 })
        .after_connect(move |conn, _| {
            Box::pin(async move {
                if sqlite {
                    conn.execute("PRAGMA journal_mode=WAL").await?;
                    conn.execute("PRAGMA synchronous=NORMAL").await?;
                    conn.execute("PRAGMA busy_timeout=5000").await?;
                }
                Ok(())
            })
        })
        .connect(&url)
        .await?;
    for stmt in SCHEMA {
        pool.execute(*stmt).await?;
    }
    Ok(pool)
}

/// Column `i` of `row` as u64 (stored as BIGINT).
pub(crate) fn u64_at(row: &AnyRow, i: usize) -> Result<u64, HistoryError> {
    let v: i64 = row.try_get(i)?;
    u64::try_from(v).map_err(|_| HistoryError::Corrupt(format!("negative id {v}")))
}

/// Column `i` as i64.
pub(crate) fn i64_at(row: &AnyRow, i: usize) -> Result<i64, HistoryError> {
    Ok(row.try_get(i)?)
}

/// Column `i` as text.
pub(crate) fn str_at(row: &AnyRow, i: usize) -> Result<String, HistoryError> {
    Ok(row.try_get(i)?)
}

/// Column `i`: an i128 stored as text.
pub(crate) fn i128_at(row: &AnyRow, i: usize) -> Result<i128, HistoryError> {
    let s: String = row.try_get(i)?;
    s.parse()
        .map_err(|_| HistoryError::Corrupt(format!("not an integer: {s:?}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// In a child process: opens the store named by the variable, says what happened.
    #[test]
    fn child_opens_the_store() {
        let Ok(path) = std::env::var("PEREGRINE_HISTORY_CHILD") else {
            return;
        };
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        match rt.block_on(open(&format!("sqlite://{path}"))) {
            Ok(_) => println!("OPENED"),
            Err(e) => println!("REFUSED {e}"),
        }
    }

    /// Two gateways on one history file would each resume from cursors the other
    /// moves: a second process is refused, naming the first (issue 27, defect 2).
    #[test]
    fn a_second_process_on_the_history_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.db");
        let child = || {
            let out = std::process::Command::new(std::env::current_exe().unwrap())
                .args([
                    "--exact",
                    "history::tests::child_opens_the_store",
                    "--nocapture",
                ])
                .env("PEREGRINE_HISTORY_CHILD", &path)
                .output()
                .unwrap();
            String::from_utf8_lossy(&out.stdout).into_owned()
        };
        // The first (a child: this process would hold the lock to its end) opens it.
        assert!(child().contains("OPENED"), "{}", child());
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let url = format!("sqlite://{}", path.display());
        rt.block_on(open(&url)).unwrap();
        // The same process reopens it.
        rt.block_on(open(&url)).unwrap();
        let refused = child();
        assert!(
            refused.contains("REFUSED") && refused.contains(&format!("pid {}", std::process::id())),
            "{refused}"
        );
    }
}
