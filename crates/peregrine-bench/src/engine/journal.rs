//! `peregrine engine bench-journal`: what the engine journal costs per order, and how
//! long recovery takes for a journal of N events.
//!
//! The append phase writes orders the way the orchestrator does: per order a `Sent`
//! record and a commit (one `write(2)`: the write-ahead before the order leaves), then
//! its `Ack` and `Fill` (committed with the next order's write), with the same
//! buffered journal and fsync setting as the engine. Each order's `Sent` + commit is
//! timed (HdrHistogram). The replay phase opens the journal as a restarting engine
//! does and replays every record through the risk engine (`durable::replay`).

use std::path::Path;
use std::time::Instant;

use hdrhistogram::Histogram;
use peregrine_types::{InstrumentId, OrderType, Price, Qty, Side, StpMode, TimeInForce};

use peregrine_engine::config::{EngineConfig, StrategyConfig};
use peregrine_engine::durable::{replay, EngineJournal, Rec, SentOrder};

/// What the bench measured.
#[derive(Debug)]
pub struct JournalBench {
    /// Events (records) written.
    pub events: u64,
    /// Per order: `Sent` append + commit, ns.
    pub per_order: Histogram<u64>,
    /// Whole append phase, s.
    pub append_s: f64,
    /// Opening and replaying the journal, s.
    pub recovery_s: f64,
    /// Records the replay saw.
    pub replayed: u64,
}

/// Writes about `events` records (3 per order) into `dir` and replays them.
pub fn run(dir: &Path, events: u64, fsync: bool) -> Result<JournalBench, String> {
    let cfg = EngineConfig {
        strategies: vec![StrategyConfig::new("s")],
        ..EngineConfig::default()
    };
    let mut j = EngineJournal::new(EngineJournal::open(dir, fsync).map_err(|e| e.to_string())?);
    let roster = Rec::Roster {
        strategies: vec!["s".into()],
        venues: vec!["sim".into()],
    };
    j.append(&roster, 0);
    let mut per_order =
        Histogram::new_with_bounds(1, 60_000_000_000, 3).map_err(|e| e.to_string())?;
    let orders = events / 3;
    let started = Instant::now();
    for i in 1..=orders {
        let side = if i % 2 == 0 { Side::Buy } else { Side::Sell };
        let sent = Rec::Sent(SentOrder {
            engine_id: i,
            strategy: 0,
            venue: 0,
            client_id: i,
            instrument: InstrumentId(1),
            side,
            order_type: OrderType::Limit,
            tif: TimeInForce::Gtc,
            stp: StpMode::None,
            price: Price::from_raw(10_000),
            qty: Qty::from_raw(1),
            expire_at: 0,
        });
        let t = Instant::now();
        j.append(&sent, i);
        j.commit();
        per_order.saturating_record(t.elapsed().as_nanos() as u64);
        j.append(
            &Rec::Ack {
                engine_id: i,
                venue_id: i,
            },
            i,
        );
        j.append(
            &Rec::Fill {
                engine_id: i,
                price: 10_000 + (i % 7) as i64,
                qty: 1,
                leaves: 0,
            },
            i,
        );
    }
    j.commit();
    if let Some(e) = &j.failed {
        return Err(e.clone());
    }
    let append_s = started.elapsed().as_secs_f64();
    drop(j);
    let t = Instant::now();
    let mut journal = EngineJournal::open(dir, fsync).map_err(|e| e.to_string())?;
    let rec = replay(&mut journal, &cfg.core(), 0).map_err(|e| e.to_string())?;
    let recovery_s = t.elapsed().as_secs_f64();
    Ok(JournalBench {
        events: orders * 3 + 1,
        per_order,
        append_s,
        recovery_s,
        replayed: rec.records,
    })
}
