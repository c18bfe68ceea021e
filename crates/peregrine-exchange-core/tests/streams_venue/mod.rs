//! The venue's order types through the core, with balances and fees on: stops,
//! stop-limits, take-profits, trailing stops, icebergs, OCO / OTO / OTOCO lists, list
//! cancels, market-maker protection, admin halts and auctions, a volatility band,
//! timers. Every request gets exactly one terminal answer; each account's stream is
//! gap-free; the ledger stays conserved with the fees in the fee account; and a
//! fresh core rebuilds exactly the same streams and state hash from the journal alone
//! and from a snapshot taken mid-stream plus the tail.

use super::*;
use peregrine_exchange_core::balances::{
    AssetConfig, BalanceInputs, BalanceSetup, BalancesConfig, InitialBalance,
};
use peregrine_ledger::{AssetId, Fees};
use peregrine_types::{
    AuctionKind, FeeSchedule, FeeTier, ListKind, TrailUnit, TriggerKind, VolatilityRule,
};
use peregrine_wire::field::{ListLeg, MarketAction, MmpAction, Pad};
use peregrine_wire::v2::venue::{CancelList, MarketControl, MmpRequest, NewOrderExt, NewOrderList};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

const ADMIN: AccountId = AccountId(9);
const FEE_ACCOUNT: AccountId = AccountId(99);

fn venue_specs() -> Vec<InstrumentSpec> {
    let base = |id, symbol: &str| InstrumentSpec {
        base: Some(symbol.into()),
        quote: Some("USD".into()),
        ..InstrumentSpec::example(id)
    };
    vec![
        InstrumentSpec {
            fees: Some(FeeSchedule {
                maker_ppm: -100,
                taker_ppm: 2_000,
                tiers: vec![FeeTier {
                    min_volume: "1000".into(),
                    maker_ppm: -200,
                    taker_ppm: 1_000,
                }],
            }),
            ..base(1, "AAA")
        },
        InstrumentSpec {
            volatility: Some(VolatilityRule {
                band_bps: 8,
                auction_ms: 1,
            }),
            ..base(2, "BBB")
        },
    ]
}

fn setup() -> BalanceSetup {
    let specs = venue_specs();
    let accounts: Vec<AccountId> = (1..=4).map(AccountId).chain([ADMIN, FEE_ACCOUNT]).collect();
    let assets = [
        AssetConfig {
            id: 1,
            symbol: "USD".into(),
            decimals: 2,
        },
        AssetConfig {
            id: 2,
            symbol: "AAA".into(),
            decimals: 0,
        },
        AssetConfig {
            id: 3,
            symbol: "BBB".into(),
            decimals: 0,
        },
    ];
    let mut initial = Vec::new();
    for a in 1..=4 {
        for (asset, amount) in [("USD", "5000000"), ("AAA", "2000"), ("BBB", "2000")] {
            initial.push(InitialBalance {
                account: AccountId(a),
                asset: asset.into(),
                amount: amount.into(),
            });
        }
    }
    let balances = BalancesConfig {
        enabled: true,
        initial,
    };
    BalanceSetup::resolve(&BalanceInputs {
        instruments: &specs,
        accounts: &accounts,
        admins: &[ADMIN],
        assets: &assets,
        balances: &balances,
    })
    .unwrap()
    .unwrap()
}

/// The test's clock: epoch nanoseconds the test moves (2027-01-15 00:00 UTC at the
/// start, so a run never crosses a midnight and the fee tiers stay put).
#[derive(Clone)]
struct TestClock(Arc<AtomicU64>);

impl TestClock {
    const START: u64 = 1_799_971_200_000_000_000;

    fn new() -> Self {
        TestClock(Arc::new(AtomicU64::new(Self::START)))
    }

    fn clock(&self) -> Clock {
        Clock::manual(self.0.clone())
    }

    fn advance(&self, ns: u64) {
        self.0.fetch_add(ns, Ordering::Relaxed);
    }
}

/// A venue core over the journal in `dir`, reading `clock`.
fn venue_core(dir: &Path, clock: &TestClock) -> Core<JournalLog> {
    let (journal, _) = open_journal(&section(dir), LossPolicy::Refuse).unwrap();
    let specs = venue_specs();
    let engine = MatchingEngine::new(&specs, 4096).unwrap();
    let fees = Fees::from_specs(&specs).unwrap().unwrap();
    Core::new(engine, 4096, JournalLog::new(journal), clock.clock())
        .with_balances(&setup())
        .with_admins(&[ADMIN])
        .with_fees(fees, FEE_ACCOUNT)
}

fn leg(cid: u64, x: u64, side: Side, trigger: u8) -> ListLeg {
    let mut l = ListLeg {
        client_order_id: ClientOrderId(cid),
        price: Price::from_raw(9_990 + (x % 21) as i64),
        qty: Qty::from_raw(1 + (x % 5) as i64),
        ..ListLeg::UNUSED
    };
    l.side = side;
    match trigger {
        0 => {}
        1 => {
            l.trigger = TriggerKind::StopLoss;
            l.stop_price = Price::from_raw(match side {
                Side::Buy => 10_015 + (x % 7) as i64,
                Side::Sell => 9_985 - (x % 7) as i64,
            });
        }
        _ => {
            l.trigger = TriggerKind::TakeProfit;
            l.stop_price = Price::from_raw(match side {
                Side::Buy => 9_985 - (x % 7) as i64,
                Side::Sell => 10_015 + (x % 7) as i64,
            });
        }
    }
    l
}

/// A venue request from `account` and the reference of its terminal answer.
fn venue_request(kind: u8, i: u64, x: u64, account: AccountId) -> (Inbound, Option<RequestRef>) {
    let cid = ClientOrderId(i + 1);
    let instrument = InstrumentId(1 + (x % 2) as u32);
    let side = if x.is_multiple_of(2) {
        Side::Buy
    } else {
        Side::Sell
    };
    match kind % 12 {
        0..=2 => request(0, i, x),
        3 => request(2 + (x % 3) as u8, i, x),
        4 | 5 => {
            let (trigger, stop, trail_unit, trail, display) = match x % 5 {
                0 => (TriggerKind::StopLoss, 10_012, TrailUnit::None, 0, 0),
                1 => (TriggerKind::TakeProfit, 9_988, TrailUnit::None, 0, 0),
                2 => (TriggerKind::StopLoss, 0, TrailUnit::Ticks, 3, 0),
                3 => (TriggerKind::None, 0, TrailUnit::None, 0, 2),
                _ => (TriggerKind::StopLoss, 0, TrailUnit::Bps, 12, 0),
            };
            let stop = match (side, trigger) {
                (Side::Sell, TriggerKind::StopLoss) if stop != 0 => 9_988,
                (Side::Sell, TriggerKind::TakeProfit) => 10_012,
                _ => stop,
            };
            (
                Inbound::NewOrderExt(NewOrderExt {
                    client_order_id: cid,
                    price: Price::from_raw(9_990 + (x % 21) as i64),
                    qty: Qty::from_raw(3 + (x % 6) as i64),
                    expire_at: Timestamp(0),
                    stop_price: Price::from_raw(stop),
                    display_qty: Qty::from_raw(display),
                    instrument,
                    trail,
                    side,
                    order_type: OrderType::Limit,
                    tif: TimeInForce::Gtc,
                    stp: StpMode::None,
                    trigger,
                    trail_unit,
                    reserved: Pad,
                }),
                Some(RequestRef::NewOrder(cid)),
            )
        }
        6 | 7 => {
            let kind = [ListKind::Oco, ListKind::Oto, ListKind::Otoco][(x % 3) as usize];
            let (leg0, leg1, leg2) = match kind {
                ListKind::Oco => (
                    ListLeg {
                        order_type: OrderType::PostOnly,
                        ..leg(i * 10 + 1, x, side, 0)
                    },
                    leg(i * 10 + 2, x / 7, side, 1),
                    ListLeg::UNUSED,
                ),
                ListKind::Oto => (
                    leg(i * 10 + 1, x, side, 0),
                    leg(i * 10 + 2, x / 3, side.opposite(), 0),
                    ListLeg::UNUSED,
                ),
                ListKind::Otoco => (
                    leg(i * 10 + 1, x, side, 0),
                    leg(i * 10 + 2, x / 3, side.opposite(), 1),
                    leg(i * 10 + 3, x / 5, side.opposite(), 2),
                ),
            };
            (
                Inbound::NewOrderList(NewOrderList::new(cid, instrument, kind, [leg0, leg1, leg2])),
                Some(RequestRef::NewList(cid)),
            )
        }
        8 => (
            Inbound::CancelList(CancelList {
                client_order_id: cid,
                list_id: OrderId(1 + x % (i * 3 + 1)),
                instrument,
            }),
            // Answered by `ListStatus` done, or `CancelRejected`.
            Some(RequestRef::CancelList(cid)),
        ),
        9 => (
            Inbound::MmpRequest(MmpRequest {
                request_id: i + 1,
                window_ns: 1_000_000 + x % 1_000_000,
                max_qty: Qty::from_raw(5 + (x % 20) as i64),
                freeze_ns: if x.is_multiple_of(2) { 0 } else { 500_000 },
                instrument,
                max_fills: 1 + (x % 4) as u32,
                action: [
                    MmpAction::Set,
                    MmpAction::Set,
                    MmpAction::Reset,
                    MmpAction::Clear,
                ][(x % 4) as usize],
                reserved: Pad,
            }),
            Some(RequestRef::Mmp(i + 1)),
        ),
        _ => {
            let action = [
                MarketAction::Halt,
                MarketAction::Resume,
                MarketAction::StartAuction,
                MarketAction::Uncross,
            ][(x % 4) as usize];
            let _ = account;
            // The instrument from other bits than the action's: with `x % 2` both
            // instrument 1 only ever got halts and auction starts, instrument 2 only
            // resumes and uncrosses (see `the_venue_stream_reaches_every_report`).
            let instrument = InstrumentId(1 + ((x >> 7) % 2) as u32);
            (
                Inbound::MarketControl(MarketControl {
                    request_id: i + 1,
                    duration_ns: if x.is_multiple_of(3) { 0 } else { 200_000 },
                    instrument,
                    action,
                    auction_kind: AuctionKind::Manual,
                    reserved: Pad,
                }),
                Some(RequestRef::Market(i + 1)),
            )
        }
    }
}

/// Runs `ops` through `core` (market commands mostly from the admin), `step_ns`
/// of `clock` apart, committing every 7 and running the timers; returns what was
/// sent and the terminal references.
fn drive_venue(
    core: &mut Core<JournalLog>,
    ops: &[(u8, u32, u64)],
    first: usize,
    clock: &TestClock,
    step_ns: u64,
) -> (Recorder, Vec<RequestRef>) {
    let mut out = Recorder::default();
    let mut refs = Vec::new();
    for (i, &(kind, a, x)) in ops.iter().enumerate() {
        let i = first + i;
        clock.advance(step_ns);
        let mut account = AccountId(1 + a % 4);
        if kind % 12 >= 10 && !x.is_multiple_of(5) {
            account = ADMIN;
        }
        let (msg, r) = venue_request(kind, i as u64, x, account);
        core.handle(SessionKey::new(account.0, 0), account, &msg, &mut out)
            .unwrap();
        refs.extend(r);
        if i % 7 == 6 {
            core.run_timers(&mut out).unwrap();
            core.end_batch().unwrap();
        }
        let l = core.ledger().unwrap();
        l.check().unwrap();
        let usd = AssetId(1);
        assert_eq!(l.balance(FEE_ACCOUNT, usd).total(), l.fees_collected(usd));
    }
    core.end_batch().unwrap();
    (out, refs)
}

fn venue_ops() -> impl Strategy<Value = Vec<(u8, u32, u64)>> {
    prop::collection::vec((any::<u8>(), 0u32..4, any::<u64>()), 1..160)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    #[test]
    fn prop_venue_requests_answer_once_and_replay_and_snapshots_rebuild_them(
        ops in venue_ops(),
        cut in 0usize..160,
        step in 0u64..100_000,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let clock = TestClock::new();
        let mut live_core = venue_core(dir.path(), &clock);
        live_core.fund_initial(&setup().initial).unwrap();
        // The funding deposits' answers open the streams.
        let funded: BTreeMap<AccountId, u64> = live_core.report_counters().into_iter().collect();
        let cut = cut.min(ops.len());
        let (head, mut refs) = drive_venue(&mut live_core, &ops[..cut], 0, &clock, step);
        // A snapshot of the live state at the cut.
        let seq = live_core.engine_seq();
        let blob = peregrine_exchange_core::codec::snapshot::encode(
            live_core.engine(),
            seq,
            live_core.now(),
            &live_core.report_counters(),
        );
        let (tail, tail_refs) = drive_venue(&mut live_core, &ops[cut..], cut, &clock, step);
        refs.extend(tail_refs);
        let live_hash = live_core.state_hash();
        drop(live_core);

        let mut all = Recorder::default();
        all.reports.extend(head.reports.iter().chain(&tail.reports).cloned());
        all.answers.extend(head.answers.iter().chain(&tail.answers).cloned());
        let counts = terminal_counts(&all);
        for r in &refs {
            if counts.get(r).copied() != Some(1) {
                let msgs: Vec<_> = all
                    .reports
                    .iter()
                    .map(|(_, m)| m)
                    .chain(all.answers.iter().map(|(_, m)| m))
                    .filter(|m| m.terminal() == Some(*r))
                    .collect();
                prop_assert!(false, "{:?} answered {} times: {:#?}", r, msgs.len(), msgs);
            }
        }
        let mut next = funded;
        for (account, m) in &all.reports {
            let (a, seq) = m.report().expect("stamped");
            prop_assert_eq!(a, *account);
            let n = next.entry(a).or_insert(1);
            prop_assert_eq!(seq, *n);
            *n += 1;
        }

        // From the journal alone.
        let mut again = venue_core(dir.path(), &TestClock::new());
        let (_, hash) = restore(&mut again, None, Some(Retention { per_account: 1 << 16 })).unwrap();
        prop_assert_eq!(hash, live_hash);
        let store = again.take_reports().unwrap();
        for (account, m) in &all.reports {
            let (_, s) = m.report().unwrap();
            prop_assert_eq!(store.get(*account, s), Some(m));
        }

        // From the snapshot plus the tail.
        let mut store_w =
            SnapshotStore::open(dir.path().join("snapshots"), Default::default()).unwrap();
        store_w.write(seq, blob).unwrap();
        let snaps = SnapshotStore::open(dir.path().join("snapshots"), Default::default()).unwrap();
        let mut from_snap = venue_core(dir.path(), &TestClock::new());
        let (_, hash) = restore(
            &mut from_snap,
            Some(&snaps),
            Some(Retention { per_account: 1 << 16 }),
        )
        .unwrap();
        prop_assert_eq!(hash, live_hash);
        let rebuilt = from_snap.take_reports().unwrap();
        for (account, m) in &tail.reports {
            let (_, s) = m.report().unwrap();
            prop_assert_eq!(rebuilt.get(*account, s), Some(m), "tail report {} of {}", s, account);
        }
    }
}

/// Cancel-on-disconnect cancels every open order of the account, parked ones
/// included, as one journaled mass cancel whose reports carry the marker id.
#[test]
fn cancel_on_disconnect_cancels_resting_and_parked_orders() {
    let dir = tempfile::tempdir().unwrap();
    let clock = TestClock::new();
    let mut c = venue_core(dir.path(), &clock);
    c.fund_initial(&setup().initial).unwrap();
    let a = AccountId(1);
    let key = SessionKey::new(1, 0);
    let mut out = Recorder::default();
    for (kind, x) in [(0u8, 2u64), (4, 10), (4, 12), (6, 3)] {
        let (msg, _) = venue_request(kind, x, x, a);
        c.handle(key, a, &msg, &mut out).unwrap();
    }
    out.reports.clear();
    c.cancel_on_disconnect(a, &mut out).unwrap();
    let cancelled = out
        .reports
        .iter()
        .filter(|(_, m)| matches!(m, Outbound::Cancelled(x) if x.request_id.0 == u64::MAX))
        .count();
    assert!(cancelled >= 3, "{:#?}", out.reports);
    assert!(matches!(
        out.reports.last(),
        Some((_, Outbound::MassCancelDone(d))) if d.request_id.0 == u64::MAX
    ));
    for b in c.engine().books() {
        assert_eq!((b.len(), b.parked_len()), (0, 0));
    }
}

/// Market commands are an admin's: another account's is refused without being
/// journaled; an admin's auction ends by itself when its timer fires.
#[test]
fn market_commands_are_admin_only_and_timed_auctions_end_on_a_tick() {
    let dir = tempfile::tempdir().unwrap();
    let clock = TestClock::new();
    let mut c = venue_core(dir.path(), &clock);
    c.fund_initial(&setup().initial).unwrap();
    let mut out = Recorder::default();
    let start = Inbound::MarketControl(MarketControl {
        request_id: 7,
        duration_ns: 1,
        instrument: InstrumentId(1),
        action: MarketAction::StartAuction,
        auction_kind: AuctionKind::Manual,
        reserved: Pad,
    });
    let seq = c.engine_seq();
    c.handle(SessionKey::new(1, 0), AccountId(1), &start, &mut out)
        .unwrap();
    assert_eq!(c.engine_seq(), seq, "refused before sequencing");
    assert!(matches!(
        out.answers.last(),
        Some((_, Outbound::CancelRejected(r))) if r.request_kind == peregrine_wire::RequestKind::MarketControl
    ));
    c.handle(SessionKey::new(9, 0), ADMIN, &start, &mut out)
        .unwrap();
    assert!(matches!(
        out.answers.last(),
        Some((_, Outbound::MarketControlDone(d))) if d.request_id == 7 && d.phase.is_auction()
    ));
    // The auction ends 1 ns later: the next timer run journals a tick and uncrosses.
    clock.advance(1);
    assert!(c.timers_due());
    assert!(c.run_timers(&mut out).unwrap());
    assert!(c
        .engine()
        .book(InstrumentId(1))
        .unwrap()
        .phase()
        .is_continuous());
    assert!(!c.run_timers(&mut out).unwrap(), "nothing due now");
}

/// The venue stream above reaches what it claims to: triggers and releases, lists
/// resolved, protections tripped, market commands done, fees charged and rebates
/// paid, auction fills; and every fill carries exactly its schedule's fee.
///
/// Run at two paces of the test's clock: 1 µs between requests (what an optimised
/// build saw on the wall clock, where this test failed with no fee-paying fill at all)
/// and 50 µs (what a dev build saw). The cause was the generator, not the fee path:
/// market commands took their instrument from `x % 2` and their action from `x % 4`,
/// so instrument 1 (the one with fees) only ever got halts and auction starts; when
/// little time passed, its timed halts never ended and it never traded.
#[test]
fn the_venue_stream_reaches_every_report() {
    for step_ns in [1_000, 50_000] {
        let dir = tempfile::tempdir().unwrap();
        let clock = TestClock::new();
        let mut c = venue_core(dir.path(), &clock);
        c.fund_initial(&setup().initial).unwrap();
        let ops: Vec<(u8, u32, u64)> = (0..1_500u64)
            .map(|i| {
                let x = i.wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(17);
                ((x % 251) as u8, (x % 4) as u32, x)
            })
            .collect();
        let (out, _) = drive_venue(&mut c, &ops, 0, &clock, step_ns);
        let seen = |f: &dyn Fn(&Outbound) -> bool| out.reports.iter().filter(|(_, m)| f(m)).count();
        use peregrine_wire::field::{ListState, TriggerCause};
        use peregrine_wire::LiquidityRole;
        let triggered =
            seen(&|m| matches!(m, Outbound::Triggered(t) if t.cause == TriggerCause::Price));
        let released =
            seen(&|m| matches!(m, Outbound::Triggered(t) if t.cause == TriggerCause::Released));
        let done = seen(&|m| matches!(m, Outbound::ListStatus(l) if l.status == ListState::Done));
        let tripped =
            seen(&|m| matches!(m, Outbound::MmpStatus(s) if s.action == MmpAction::Triggered));
        let charged = seen(&|m| matches!(m, Outbound::Fill(f) if f.fee > 0));
        let rebated = seen(&|m| matches!(m, Outbound::Fill(f) if f.fee < 0));
        let auction = seen(&|m| matches!(m, Outbound::Fill(f) if f.role == LiquidityRole::Auction));
        let market = out
            .answers
            .iter()
            .filter(|(_, m)| matches!(m, Outbound::MarketControlDone(_)))
            .count();
        let counts = [
            triggered, released, done, tripped, charged, rebated, auction, market,
        ];
        assert!(
            counts.iter().all(|&n| n > 0),
            "pace {step_ns} ns: {counts:?}"
        );

        // Every fill's fee is its schedule's, to the unit: instrument 1 charges
        // -100 ppm to makers and 2,000 ppm to takers and both auction sides (no
        // account reaches the tier in one day); instrument 2 has no fees. The sum
        // is what the fee account holds.
        let mut sum = 0i128;
        for (_, m) in &out.reports {
            let Outbound::Fill(f) = m else { continue };
            let notional = i128::from(f.price.units()) * i128::from(f.qty.lots());
            let ppm = match (f.instrument.0, f.role) {
                (1, LiquidityRole::Maker) => -100,
                (1, _) => 2_000,
                _ => 0,
            };
            let fee = peregrine_ledger::fees::fee_of(notional, ppm);
            assert_eq!(f.fee, fee, "pace {step_ns} ns: {f:?}");
            assert_eq!(f.fee_asset, 1, "both quote in USD: {f:?}");
            sum += i128::from(f.fee);
        }
        let l = c.ledger().unwrap();
        assert_eq!(l.balance(FEE_ACCOUNT, AssetId(1)).total(), sum);
    }
}

/// Batch mode: a due book timer joins the open tick (opening one when none is) and
/// runs at the tick's timestamp after its requests, so the auction's end belongs to
/// a tick like any command; nothing runs before the tick's boundary.
#[test]
fn in_batch_mode_a_due_timer_runs_in_the_next_tick() {
    use peregrine_exchange_core::dispatch::{Dispatch, Sequencer};
    let dir = tempfile::tempdir().unwrap();
    let clock = TestClock::new();
    let mut c = venue_core(dir.path(), &clock);
    c.fund_initial(&setup().initial).unwrap();
    let mut out = Recorder::default();
    let start = Inbound::MarketControl(MarketControl {
        request_id: 7,
        duration_ns: 1,
        instrument: InstrumentId(1),
        action: MarketAction::StartAuction,
        auction_kind: AuctionKind::Manual,
        reserved: Pad,
    });
    c.handle(SessionKey::new(9, 0), ADMIN, &start, &mut out)
        .unwrap();
    clock.advance(1);
    assert!(c.timers_due());
    // A tick of one hour: its boundary is far away.
    let mut d = Dispatch::new(Some(Sequencer::new(3_600_000_000_000, 16)));
    d.start(&c);
    let seq = c.engine_seq();
    assert!(!d.timers(&mut c, &mut out).unwrap(), "held for the tick");
    assert!(d.due_in(c.now()).is_some(), "the timer opened a tick");
    assert!(!d.run_if_due(&mut c, &mut out).unwrap());
    assert_eq!(c.engine_seq(), seq, "nothing sequenced before the boundary");
    let book = |c: &Core<_>| c.engine().book(InstrumentId(1)).unwrap().phase();
    assert!(book(&c).is_auction());
    // The boundary passes: the tick runs, at its boundary timestamp.
    let Dispatch::Batch { seq: s, .. } = &mut d else {
        unreachable!()
    };
    assert!(s.run_if_due(Timestamp(u64::MAX), &mut c, &mut out).unwrap());
    assert_eq!(c.engine_seq(), seq + 1, "one journaled Tick");
    assert!(book(&c).is_continuous());
}
