//! History writer lag at a given order rate, in process, on a fresh SQLite file:
//! every order is accepted and filled (two order changes, one account fill, one
//! public trade), pushed to the writer as the gateway would.

use peregrine_types::wall_ns;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use peregrine_types::Side;

use super::report::{hist, Row, Table};
use super::BenchError;
use peregrine_http::account::order::{ExecType, Fill, Order, OrderType, Status};
use peregrine_http::account::record::{HistoryRecord, OrderRecord};
use peregrine_http::account::state::Change;
use peregrine_http::history::writer::{Writer, WriterStats};
use peregrine_http::link::{Stp, Tif};
use peregrine_http::market::batch::{FeedBatch, TradeRow};

/// Runs the writer at `rate` orders/s for `secs`.
pub fn run(rate: u64, secs: f64) -> Result<Table, BenchError> {
    let dir = std::env::temp_dir().join(format!("peregrine-writer-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let url = format!("sqlite://{}/history.db", dir.display());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()?;
    let stats = Arc::new(WriterStats::default());
    let (feed_tx, feed_rx) = tokio::sync::mpsc::channel::<FeedBatch>(1 << 16);
    let (orders_tx, orders_rx) = tokio::sync::mpsc::unbounded_channel::<HistoryRecord>();
    let writer = rt
        .block_on(async {
            let pool = peregrine_http::history::open(&url).await?;
            Writer::new(pool, Vec::new(), 4096, Arc::clone(&stats)).await
        })
        .map_err(|e| BenchError::Other(e.to_string()))?;
    let task = rt.spawn(writer.run(feed_rx, orders_rx));
    // Lag sampler.
    let sampler_stats = Arc::clone(&stats);
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let sampler_stop = Arc::clone(&stop);
    let sampler = std::thread::spawn(move || {
        let mut h = hist();
        while !sampler_stop.load(Ordering::Relaxed) {
            let last = sampler_stats.last_event_ns.load(Ordering::Relaxed);
            if last > 0 {
                h.record(wall_ns().saturating_sub(last).max(1)).ok();
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        h
    });
    let start = Instant::now();
    let end = start + Duration::from_secs_f64(secs);
    let per_ms = (rate / 1000).max(1);
    let mut id = 0u64;
    let mut tick = start;
    let (mut produced, mut produced_at) = (0u64, start);
    while Instant::now() < end {
        tick += Duration::from_millis(1);
        let now = wall_ns();
        let mut trades = Vec::with_capacity(per_ms as usize);
        for _ in 0..per_ms {
            id += 1;
            let mut o = Order {
                symbol: 0,
                order_id: id,
                coid: id,
                client_order_id: format!("w{id}"),
                side: Side::Buy,
                kind: OrderType::Limit,
                tif: Tif::Gtc,
                stp: Stp::None,
                price: 10_000,
                orig_qty: 1,
                executed: 0,
                cum_quote: 0,
                status: Status::New,
                time_ms: now / 1_000_000,
                update_ms: now / 1_000_000,
                entry_fills: Vec::new(),
                orig_quote: 0,
                ext: Default::default(),
                list_id: -1,
                working_ms: Some(now / 1_000_000),
            };
            let _ = orders_tx.send(HistoryRecord::Order(OrderRecord {
                account: 1,
                instrument: 1,
                change: Change {
                    order: o.clone(),
                    exec: ExecType::New,
                    fill: None,
                    cancel_client_id: None,
                    time_ns: now,
                },
            }));
            let f = Fill {
                trade_id: id,
                price: 10_000,
                qty: 1,
                maker: false,
                time_ms: now / 1_000_000,
                fee: 0,
            };
            o.fill(f, 0, true);
            let _ = orders_tx.send(HistoryRecord::Order(OrderRecord {
                account: 1,
                instrument: 1,
                change: Change {
                    order: o,
                    exec: ExecType::Trade,
                    fill: Some(f),
                    cancel_client_id: None,
                    time_ns: now,
                },
            }));
            trades.push(TradeRow {
                instrument: 1,
                trade_id: id,
                price: 10_000,
                qty: 1,
                buyer_maker: false,
                time_ms: now / 1_000_000,
                session: 1,
                seq: id,
            });
        }
        let _ = feed_tx.try_send(FeedBatch {
            session: 1,
            from: id + 1 - per_ms,
            to: id,
            books: false,
            trades,
        });
        produced = id;
        produced_at = Instant::now();
        while Instant::now() < tick {
            std::thread::sleep(Duration::from_micros(200));
        }
    }
    let elapsed = start.elapsed().as_secs_f64();
    // Drain: until every order change is written.
    let target = produced * 2;
    let drain_deadline = Instant::now() + Duration::from_secs(120);
    while *stats.records.written.borrow() < target && Instant::now() < drain_deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    let caught_up = produced_at.elapsed();
    stop.store(true, Ordering::Relaxed);
    let h = sampler
        .join()
        .map_err(|_| BenchError::Other("sampler".into()))?;
    drop(orders_tx);
    drop(feed_tx);
    let _ = rt.block_on(task);
    let _ = std::fs::remove_dir_all(&dir);
    let r = Ordering::Relaxed;
    Ok(Table {
        title: format!("History writer lag, SQLite, {rate} orders/s (each: 2 order changes, 1 fill, 1 public trade), {secs} s"),
        rows: vec![Row::from_hist("writer: now − newest committed event (sampled 1 ms)", &h, elapsed)],
        notes: vec![
            format!(
                "{produced} orders in {elapsed:.2} s ({:.0}/s offered); {} order events and {} trades written in {} commits",
                produced as f64 / elapsed,
                stats.order_events.load(r),
                stats.trades.load(r),
                stats.commits.load(r)
            ),
            format!("all written {:.0} ms after the last order was produced", caught_up.as_secs_f64() * 1000.0),
        ],
    })
}
