use super::*;
use crate::data::itch_l3::ItchL3;
use crate::data::lobster::{LobsterBook, LobsterMessages};
use crate::data::Source;
use crate::recorded::RecordedBook;
use peregrine_book::ReferenceBook;

fn itch(cfg: &SynthConfig) -> Vec<u8> {
    let mut w = ItchWriter::new(Vec::new());
    assert_eq!(generate(cfg, &mut w).unwrap(), cfg.events);
    w.into_inner()
}

fn cfg(seed: u64, events: u64) -> SynthConfig {
    SynthConfig {
        seed,
        events,
        ..SynthConfig::default()
    }
}

#[test]
fn same_seed_same_bytes() {
    let a = itch(&cfg(7, 5_000));
    assert_eq!(a, itch(&cfg(7, 5_000)));
    assert_ne!(a, itch(&cfg(8, 5_000)));
}

/// Every generated message is consistent with the book the file itself describes,
/// and the day has every kind of message.
#[test]
fn itch_day_is_consistent_and_mixed() {
    let c = cfg(3, 20_000);
    let bytes = itch(&c);
    let mut src = ItchL3::new(&bytes[..], &c.symbol);
    let mut rebuilt = RecordedBook::new(ReferenceBook::new(c.spec(), 100_000), InstrumentId(1));
    let mut kinds = [0u64; 8];
    let mut n = 0;
    let mut last_ts = 0;
    while let Some(r) = src.next_msg().unwrap() {
        assert!(r.exch_ts >= last_ts, "time never goes backwards");
        last_ts = r.exch_ts;
        rebuilt.apply(r.exch_ts, &r.msg).unwrap();
        let k = match r.msg {
            L3::Add { .. } => 0,
            L3::Cancel { .. } => 1,
            L3::Delete { .. } => 2,
            L3::Execute { .. } => 3,
            L3::Replace { .. } => 4,
            L3::Trade { .. } => 5,
            L3::ExecuteAt { .. } => 6,
            L3::Halt(_) => 7,
        };
        kinds[k] += 1;
        n += 1;
    }
    assert_eq!(n, 20_000 + 1, "the day, plus the opening trading action");
    for (k, count) in kinds.iter().enumerate().take(6) {
        assert!(*count > 100, "kind {k}: {count}");
    }
    assert!(!rebuilt.is_empty());
}

/// LOBSTER's order book file is the book after each message, as the messages build it.
#[test]
fn lobster_rows_follow_the_messages() {
    let c = cfg(5, 5_000);
    let (mut msgs, mut rows) = (Vec::new(), Vec::new());
    let mut w = LobsterWriter::new(&mut msgs, &mut rows, 5);
    generate(&c, &mut w).unwrap();
    let mut m = LobsterMessages::new(&msgs[..]);
    let mut b = LobsterBook::new(&rows[..]);
    let mut rebuilt =
        RecordedBook::new(OrderBook::<Ladder>::new(c.spec(), 100_000), InstrumentId(1));
    let mut lines = 0;
    while let Some(r) = m.next_msg().unwrap() {
        assert!(b.next_row().unwrap());
        rebuilt.apply(r.exch_ts, &r.msg).unwrap();
        let mut asks = Vec::new();
        rebuilt.book().visit_depth(Side::Sell, 5, &mut |p, q, _| {
            asks.push(Some((p.units(), q.lots())))
        });
        asks.resize(5, None);
        assert_eq!(asks, b.asks, "line {}", lines + 1);
        lines += 1;
    }
    assert!(!b.next_row().unwrap());
    assert!(lines >= 5_000);
}
