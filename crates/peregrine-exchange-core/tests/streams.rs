//! The per-account report streams of protocol version 2, through the core: every
//! request gets exactly one terminal answer; each account's stream is numbered
//! 1, 2, 3, ... without gaps; and a fresh core that replays the journal (from the
//! start, or from a snapshot plus the tail) rebuilds exactly the same streams, so a
//! client resuming after an exchange restart is replayed what it missed, byte for
//! byte.

use std::collections::BTreeMap;
use std::path::Path;

use peregrine_book::MatchingEngine;
use peregrine_exchange_core::journal::{JournalLog, JournalSection};
use peregrine_exchange_core::replay::{open_journal, restore};
use peregrine_exchange_core::reports::Retention;
use peregrine_exchange_core::{Clock, Core, Outbox, SessionKey};
use peregrine_journal::{FsyncPolicy, LossPolicy, SnapshotStore};
use peregrine_types::{
    AccountId, ClientOrderId, InstrumentId, InstrumentSpec, OrderId, OrderType, Price, Qty, Side,
    StpMode, TimeInForce, Timestamp,
};
use peregrine_wire::orders::{Cancel, MassCancel, NewOrder, Replace};
use peregrine_wire::reason::RejectCode;
use peregrine_wire::v2::queries::OrderStatusRequest;
use peregrine_wire::v2::{Inbound, Outbound, RequestRef};
use proptest::prelude::*;

/// Everything the core sent, in order.
#[derive(Default)]
struct Recorder {
    reports: Vec<(AccountId, Outbound)>,
    answers: Vec<(SessionKey, Outbound)>,
}

impl Outbox for Recorder {
    fn report(&mut self, account: AccountId, msg: Outbound, _requester: SessionKey) {
        self.reports.push((account, msg));
    }
    fn answer(&mut self, to: SessionKey, msg: Outbound) {
        self.answers.push((to, msg));
    }
}

fn specs() -> Vec<InstrumentSpec> {
    vec![InstrumentSpec::example(1), InstrumentSpec::example(2)]
}

fn section(dir: &Path) -> JournalSection {
    JournalSection {
        fsync: FsyncPolicy::None,
        segment_bytes: 64 << 10,
        ..JournalSection::new(dir)
    }
}

fn core(dir: &Path) -> Core<JournalLog> {
    let (journal, _) = open_journal(&section(dir), LossPolicy::Refuse).unwrap();
    let engine = MatchingEngine::new(&specs(), 4096).unwrap();
    Core::new(engine, 4096, JournalLog::new(journal), Clock::monotonic())
}

/// A request and the reference of its terminal answer.
fn request(kind: u8, i: u64, x: u64) -> (Inbound, Option<RequestRef>) {
    let cid = ClientOrderId(i + 1);
    let instrument = InstrumentId(1 + (x % 2) as u32);
    let side = if x.is_multiple_of(3) {
        Side::Buy
    } else {
        Side::Sell
    };
    match kind % 6 {
        0 | 1 => (
            Inbound::NewOrder(NewOrder {
                client_order_id: cid,
                price: Price::from_raw(9_995 + (x % 11) as i64),
                qty: Qty::from_raw(1 + (x % 4) as i64),
                expire_at: Timestamp(0),
                instrument,
                side,
                order_type: OrderType::Limit,
                tif: if x.is_multiple_of(5) {
                    TimeInForce::Ioc
                } else {
                    TimeInForce::Gtc
                },
                stp: StpMode::None,
            }),
            Some(RequestRef::NewOrder(cid)),
        ),
        2 => (
            Inbound::Cancel(Cancel {
                client_order_id: cid,
                order_id: OrderId(1 + x % (i + 1)),
                instrument,
            }),
            Some(RequestRef::Cancel(cid)),
        ),
        3 => (
            Inbound::Replace(Replace {
                client_order_id: cid,
                order_id: OrderId(1 + x % (i + 1)),
                new_price: Price::from_raw(9_990 + (x % 21) as i64),
                new_qty: Qty::from_raw(1 + (x % 3) as i64),
                instrument,
            }),
            Some(RequestRef::Replace(cid)),
        ),
        4 => (
            Inbound::MassCancel(MassCancel {
                client_order_id: cid,
                instrument: (!x.is_multiple_of(3)).then_some(instrument),
                side: (x.is_multiple_of(2)).then_some(side),
            }),
            Some(RequestRef::MassCancel(cid)),
        ),
        _ => (
            Inbound::OrderStatusRequest(OrderStatusRequest {
                request_id: i + 1,
                order_id: OrderId(1 + x % (i + 1)),
                client_order_id: ClientOrderId(0),
                instrument,
            }),
            Some(RequestRef::Query(i + 1)),
        ),
    }
}

/// Runs `ops` (kind, account, seed) through `core`, committing every 7; returns what
/// was sent and the terminal reference of each request.
fn drive(core: &mut Core<JournalLog>, ops: &[(u8, u32, u64)]) -> (Recorder, Vec<RequestRef>) {
    let mut out = Recorder::default();
    let mut refs = Vec::new();
    for (i, &(kind, a, x)) in ops.iter().enumerate() {
        let account = AccountId(1 + a % 4);
        let (msg, r) = request(kind, i as u64, x);
        core.handle(SessionKey::new(account.0, 0), account, &msg, &mut out)
            .unwrap();
        refs.extend(r);
        if i % 7 == 6 {
            core.end_batch().unwrap();
        }
    }
    core.end_batch().unwrap();
    (out, refs)
}

fn terminal_counts(out: &Recorder) -> BTreeMap<RequestRef, usize> {
    let mut n = BTreeMap::new();
    for m in out
        .reports
        .iter()
        .map(|(_, m)| m)
        .chain(out.answers.iter().map(|(_, m)| m))
    {
        if let Some(r) = m.terminal() {
            *n.entry(r).or_insert(0) += 1;
        }
    }
    n
}

fn ops() -> impl Strategy<Value = Vec<(u8, u32, u64)>> {
    prop::collection::vec((any::<u8>(), 0u32..4, any::<u64>()), 1..120)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn prop_one_terminal_answer_gap_free_streams_and_a_replay_rebuilds_them(ops in ops()) {
        let dir = tempfile::tempdir().unwrap();
        let (live, refs) = drive(&mut core(dir.path()), &ops);

        // Exactly one terminal answer per request.
        let counts = terminal_counts(&live);
        for r in &refs {
            prop_assert_eq!(counts.get(r).copied(), Some(1), "{:?}", r);
        }
        prop_assert_eq!(counts.len(), refs.len());

        // Each account's stream: 1, 2, 3, ... in emission order, its own account.
        let mut next: BTreeMap<AccountId, u64> = BTreeMap::new();
        for (account, m) in &live.reports {
            let (a, seq) = m.report().expect("stamped");
            prop_assert_eq!(a, *account);
            let n = next.entry(a).or_insert(1);
            prop_assert_eq!(seq, *n);
            *n += 1;
        }
        // Answers outside the stream carry no report number.
        prop_assert!(live.answers.iter().all(|(_, m)| m.report().is_none()));

        // A restart: replaying the journal renumbers the same streams.
        let mut again = core(dir.path());
        restore(&mut again, None, Some(Retention { per_account: 1 << 16 })).unwrap();
        let store = again.take_reports().unwrap();
        for (account, m) in &live.reports {
            let (_, seq) = m.report().unwrap();
            prop_assert_eq!(store.get(*account, seq), Some(m));
        }
        for (a, n) in next {
            prop_assert_eq!(store.next_seq(a), n);
            prop_assert_eq!(again.next_report_seq(a), n);
        }
    }
}

#[test]
fn a_mass_cancel_answers_once_with_its_count_zero_included() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = core(dir.path());
    let a = AccountId(1);
    let mut out = Recorder::default();
    let order = |cid: u64, instrument: u32| {
        Inbound::NewOrder(NewOrder {
            client_order_id: ClientOrderId(cid),
            price: Price::from_raw(9_000),
            qty: Qty::from_raw(1),
            expire_at: Timestamp(0),
            instrument: InstrumentId(instrument),
            side: Side::Buy,
            order_type: OrderType::Limit,
            tif: TimeInForce::Gtc,
            stp: StpMode::None,
        })
    };
    let key = SessionKey::new(1, 0);
    for (cid, i) in [(1, 1), (2, 2), (3, 2)] {
        c.handle(key, a, &order(cid, i), &mut out).unwrap();
    }
    let all = |cid| {
        Inbound::MassCancel(MassCancel {
            client_order_id: ClientOrderId(cid),
            instrument: None,
            side: None,
        })
    };
    out.reports.clear();
    c.handle(key, a, &all(10), &mut out).unwrap();
    let cancelled: Vec<_> = out
        .reports
        .iter()
        .filter_map(|(_, m)| match m {
            Outbound::Cancelled(x) => Some(x.request_id),
            _ => None,
        })
        .collect();
    assert_eq!(cancelled, [ClientOrderId(10); 3]);
    match out.reports.last() {
        Some((_, Outbound::MassCancelDone(d))) => {
            assert_eq!(
                (d.cancelled, d.request_id, d.instrument),
                (3, ClientOrderId(10), None)
            );
        }
        other => panic!("{other:?}"),
    }
    out.reports.clear();
    c.handle(key, a, &all(11), &mut out).unwrap();
    match out.reports.as_slice() {
        [(_, Outbound::MassCancelDone(d))] => assert_eq!(d.cancelled, 0),
        other => panic!("nothing to cancel still answers: {other:?}"),
    }
    // An unknown instrument: the refusal is the one answer.
    out.reports.clear();
    let bad = Inbound::MassCancel(MassCancel {
        client_order_id: ClientOrderId(12),
        instrument: Some(InstrumentId(9)),
        side: None,
    });
    c.handle(key, a, &bad, &mut out).unwrap();
    match out.reports.as_slice() {
        [(_, Outbound::CancelRejected(r))] => {
            assert_eq!(r.reason, RejectCode::UnknownInstrument.reason())
        }
        other => panic!("{other:?}"),
    }
}

/// Snapshot + tail: the counters come from the snapshot, the tail renumbers on top.
#[test]
fn a_snapshot_carries_the_counters_and_the_tail_continues_them() {
    let dir = tempfile::tempdir().unwrap();
    let ops: Vec<(u8, u32, u64)> = (0..200u64)
        .map(|i| {
            (
                (i % 5) as u8,
                (i % 4) as u32,
                i.wrapping_mul(0x9E37_79B9_7F4A_7C15),
            )
        })
        .collect();
    let mut live_core = core(dir.path());
    let (head, _) = drive(&mut live_core, &ops[..120]);
    let seq = live_core.engine_seq();
    let blob = peregrine_exchange_core::codec::snapshot::encode(
        live_core.engine(),
        seq,
        live_core.now(),
        &live_core.report_counters(),
    );
    let store = SnapshotStore::open(dir.path().join("snapshots"), Default::default()).unwrap();
    let mut store_w =
        SnapshotStore::open(dir.path().join("snapshots"), Default::default()).unwrap();
    store_w.write(seq, blob).unwrap();
    let (tail, _) = drive(&mut live_core, &ops[120..]);
    drop(live_core);
    let mut again = core(dir.path());
    restore(
        &mut again,
        Some(&store),
        Some(Retention {
            per_account: 1 << 16,
        }),
    )
    .unwrap();
    let rebuilt = again.take_reports().unwrap();
    for (account, m) in &tail.reports {
        let (_, s) = m.report().unwrap();
        assert_eq!(
            rebuilt.get(*account, s),
            Some(m),
            "tail report {s} of {account}"
        );
    }
    // The head is before the snapshot: not retained, and said so.
    if let Some((account, m)) = head.reports.first() {
        let (_, s) = m.report().unwrap();
        assert_eq!(rebuilt.get(*account, s), None);
        assert!(rebuilt.oldest_seq(*account) > s);
    }
}

#[path = "streams_venue/mod.rs"]
mod venue;
