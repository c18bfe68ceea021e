//! L2 replays: the real Binance sample (samples/) with a strategy under each queue
//! model, a Tardis CSV, and the comparison of the models with exact L3 fills.

use std::path::PathBuf;

use peregrine_replay::attach::InProcess;
use peregrine_replay::compare::{self, CompareConfig};
use peregrine_replay::joiner::{Joiner, JoinerConfig};
use peregrine_replay::l2::QueueModel;
use peregrine_replay::latency::LatencyModel;
use peregrine_replay::session::{plan, run, Input, Options};
use peregrine_types::InstrumentId;

fn sample() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../samples/binance-ethusdt-20240808-60s.gz")
}

fn joiner(qty: i64, tick: i64) -> Joiner {
    Joiner::new(JoinerConfig {
        venue: 0,
        instrument: InstrumentId(1),
        qty,
        tolerance: 2 * tick,
        max_position: 10 * qty,
    })
}

#[test]
fn binance_sample_replays_with_each_queue_model() {
    let mut hashes = Vec::new();
    for model in [
        QueueModel::RiskAverse,
        QueueModel::Power(2.0),
        QueueModel::Log,
    ] {
        let mut o = Options::new(Input::Binance { path: sample() });
        o.queue = model;
        o.latency = LatencyModel::Constant {
            entry_ns: 2_000_000,
            response_ns: 2_000_000,
        };
        o.settings.feed_latency_ns = 1_000_000;
        let p = plan(o).unwrap();
        assert_eq!((p.units.price_decimals, p.units.qty_decimals), (2, 4));
        assert_eq!(p.spec.tick_size, 1);
        let mut s = InProcess::new(joiner(100, p.spec.tick_size), 0, InstrumentId(1)).unwrap();
        let r = run(&p, Some(&mut s)).unwrap();
        let l2 = r.l2.unwrap();
        assert_eq!(l2.clears, 1, "one snapshot starts the book");
        assert_eq!(l2.refused, 0);
        assert!(l2.trades > 500, "{}", l2.trades);
        let st = r.strategy.unwrap();
        assert!(st.book_updates > 100);
        hashes.push((model.name(), st.fills, st.fills_hash));
    }
    // Risk-averse never moves the order up on cancels: no more fills than the others.
    assert!(hashes[0].1 <= hashes[1].1.max(hashes[2].1), "{hashes:?}");
}

#[test]
fn binance_replay_is_deterministic() {
    let run_once = || {
        let mut o = Options::new(Input::Binance { path: sample() });
        o.queue = QueueModel::Log;
        let p = plan(o).unwrap();
        let mut s = InProcess::new(joiner(100, 1), 0, InstrumentId(1)).unwrap();
        run(&p, Some(&mut s)).unwrap().strategy.unwrap().fills_hash
    };
    assert_eq!(run_once(), run_once());
}

#[test]
fn tardis_csv_replays() {
    let dir = tempfile::tempdir().unwrap();
    let book = dir.path().join("incremental_book_L2.csv");
    let trades = dir.path().join("trades.csv");
    let mut b =
        String::from("exchange,symbol,timestamp,local_timestamp,is_snapshot,side,price,amount\n");
    let mut t = String::from("exchange,symbol,timestamp,local_timestamp,id,side,price,amount\n");
    for i in 0..5 {
        b += &format!("deribit,X,{},{},true,bid,{}.5,10\n", 1_000, 1_100, 100 - i);
        b += &format!("deribit,X,{},{},true,ask,{}.5,10\n", 1_000, 1_100, 101 + i);
    }
    for k in 1..200u64 {
        let ts = 2_000 + k * 1_000;
        b += &format!(
            "deribit,X,{ts},{},false,bid,100.5,{}\n",
            ts + 100,
            10 + k % 7
        );
        if k % 3 == 0 {
            t += &format!("deribit,X,{},{},t{k},sell,100.5,2\n", ts + 10, ts + 150);
        }
    }
    std::fs::write(&book, b).unwrap();
    std::fs::write(&trades, t).unwrap();
    let p = plan(Options::new(Input::Tardis {
        book,
        trades: Some(trades),
    }))
    .unwrap();
    assert_eq!(p.units.price_decimals, 1);
    let mut s = InProcess::new(joiner(1, p.spec.tick_size), 0, InstrumentId(1)).unwrap();
    let r = run(&p, Some(&mut s)).unwrap();
    let st = r.strategy.unwrap();
    assert!(
        st.fills > 0,
        "trades at the bid fill the joined bid: {st:?}"
    );
    assert_eq!(r.l2.unwrap().trades, 66);
}

#[test]
fn queue_models_against_exact_fills() {
    let cmp = compare::run(&CompareConfig {
        events: 30_000,
        seed: 2,
        qty: 100,
        entry_latency_ns: 50_000,
        models: compare::default_models(),
    })
    .unwrap();
    assert_eq!(cmp.lines.len(), 5);
    assert_eq!(cmp.lines[0].replay, "L3 (exact)");
    assert!(cmp.lines[0].fills > 10);
    for l in &cmp.lines {
        assert!(l.fills > 0, "{}", cmp.render());
    }
}
