//! The matching stage with balances on, without sockets: deposits and withdrawals from
//! admin sessions, reservations on entry, settlement of fills on both sides, releases
//! on cancel, conservation (`Ledger::check`) after every step of random streams, and
//! replay of the recorded journal (in memory, and on disk through snapshot + tail)
//! reproducing identical balances and state hash.
use peregrine_book::MatchingEngine;
use peregrine_exchange_core::balances::{
    AdminReason, AssetConfig, BalanceInputs, BalanceSetup, BalancesConfig,
};
use peregrine_exchange_core::codec::command::Record;
use peregrine_exchange_core::journal::{CommandLog, MemoryLog};
use peregrine_exchange_core::{Clock, Core, Outbox, SessionKey};
use peregrine_ledger::{AssetId, Balance};
use peregrine_types::{
    AccountId, ClientOrderId, InstrumentId, OrderId, OrderType, Price, Qty, Side, StpMode,
    TimeInForce, Timestamp,
};
use peregrine_wire::admin::{BalanceQuery, Deposit, Withdraw};
use peregrine_wire::orders::{Cancel, NewOrder, Replace};
use peregrine_wire::v2::{Inbound, Outbound};
use proptest::prelude::*;

#[global_allocator]
static GLOBAL: peregrine_testkit::CountingAllocator = peregrine_testkit::CountingAllocator;

const PGN: u32 = 1;
const USD: u32 = 2;
const ADMIN: AccountId = AccountId(9);

const CONFIG: &str = r#"
[balances]
enabled = true
[[assets]]
id = 1
symbol = "PGN"
decimals = 0
[[assets]]
id = 2
symbol = "USD"
decimals = 2
[[instruments]]
id = 1
symbol = "PGN-USD"
price_decimals = 2
qty_decimals = 0
tick_size = 1
lot_size = 1
min_qty = 1
max_qty = 1000
reference_price = 10000
band = 5000
status = "active"
base = "PGN"
quote = "USD"
"#;

/// The venue parts of an exchange config (the server's `Config` is not needed here).
#[derive(serde::Deserialize)]
struct Venue {
    balances: BalancesConfig,
    assets: Vec<AssetConfig>,
    instruments: Vec<peregrine_types::InstrumentSpec>,
}

fn setup() -> (BalanceSetup, Vec<peregrine_types::InstrumentSpec>) {
    let v: Venue = toml::from_str(CONFIG).unwrap();
    let inputs = BalanceInputs {
        instruments: &v.instruments,
        accounts: &[AccountId(1), AccountId(2), AccountId(3), ADMIN],
        admins: &[ADMIN],
        assets: &v.assets,
        balances: &v.balances,
    };
    (
        BalanceSetup::resolve(&inputs).unwrap().unwrap(),
        v.instruments,
    )
}

fn core_with<L: CommandLog>(log: L) -> Core<L> {
    let (setup, instruments) = setup();
    let engine = MatchingEngine::new(&instruments, 1024).unwrap();
    Core::new(engine, 1024, log, Clock::monotonic()).with_balances(&setup)
}

/// Keeps every report.
#[derive(Default)]
struct Recorder(Vec<Outbound>);

impl Outbox for Recorder {
    fn answer(&mut self, to: SessionKey, msg: Outbound) {
        self.report(AccountId(0), msg, to);
    }
    fn report(&mut self, _: AccountId, msg: Outbound, _: SessionKey) {
        self.0.push(msg);
    }
}

fn send<L: CommandLog>(core: &mut Core<L>, from: AccountId, msg: Inbound) -> Vec<Outbound> {
    let mut out = Recorder::default();
    core.handle(SessionKey::new(from.0, 0), from, &msg, &mut out)
        .unwrap();
    core.end_batch().unwrap();
    if let Some(l) = core.ledger() {
        l.check().unwrap();
    }
    out.0
}

fn deposit(account: u32, asset: u32, amount: i64) -> Inbound {
    Inbound::Deposit(Deposit {
        request_id: 7,
        amount,
        account: AccountId(account),
        asset,
    })
}

fn withdraw(account: u32, asset: u32, amount: i64) -> Inbound {
    Inbound::Withdraw(Withdraw {
        request_id: 8,
        amount,
        account: AccountId(account),
        asset,
    })
}

fn order(id: u64, side: Side, price: i64, qty: i64, order_type: OrderType) -> Inbound {
    let tif = if order_type == OrderType::Market {
        TimeInForce::Ioc
    } else {
        TimeInForce::Gtc
    };
    Inbound::NewOrder(NewOrder {
        client_order_id: ClientOrderId(id),
        price: Price::from_raw(price),
        qty: Qty::from_raw(qty),
        expire_at: Timestamp(0),
        instrument: InstrumentId(1),
        side,
        order_type,
        tif,
        stp: StpMode::None,
    })
}

fn cancel(id: u64, order_id: u64) -> Inbound {
    Inbound::Cancel(Cancel {
        client_order_id: ClientOrderId(id),
        order_id: OrderId(order_id),
        instrument: InstrumentId(1),
    })
}

fn bal<L: CommandLog>(core: &Core<L>, account: u32, asset: u32) -> Balance {
    core.ledger()
        .unwrap()
        .balance(AccountId(account), AssetId(asset))
}

fn admin_reject(reports: &[Outbound]) -> Option<AdminReason> {
    match reports {
        [Outbound::AdminRejected(r)] => AdminReason::from_code(r.reason.0),
        _ => None,
    }
}

/// Replays a memory log (book and admin records interleaved by sequence) into a fresh
/// core with balances.
fn replay(log: &MemoryLog) -> Core<MemoryLog> {
    let mut records: Vec<(u64, Record)> = log
        .records
        .iter()
        .map(|(s, c)| (*s, Record::Command(*c)))
        .chain(log.admin.iter().map(|(s, a)| (*s, Record::Admin(*a))))
        .collect();
    records.sort_by_key(|(s, _)| *s);
    for (i, (s, _)) in records.iter().enumerate() {
        assert_eq!(*s, i as u64 + 1, "one gap-free sequence for both kinds");
    }
    let mut core = core_with(MemoryLog::default());
    for (seq, rec) in &records {
        core.replay_record(*seq, rec);
    }
    core
}

#[test]
fn deposit_reserve_fill_cancel_withdraw() {
    let mut core = core_with(MemoryLog::default());
    // Only admins move money; a refused request is not sequenced.
    let r = send(&mut core, AccountId(1), deposit(1, USD, 100_000));
    assert_eq!(admin_reject(&r), Some(AdminReason::NotAdmin));
    assert_eq!(core.engine_seq(), 0);
    let r = send(&mut core, ADMIN, deposit(1, 99, 1));
    assert_eq!(admin_reject(&r), Some(AdminReason::UnknownAsset));
    let r = send(&mut core, ADMIN, deposit(1, USD, 100_000));
    match r.as_slice() {
        [Outbound::Balance(b)] => {
            assert_eq!((b.available, b.held, b.request_id), (100_000, 0, 7));
            assert_eq!(b.engine_seq, 1);
        }
        other => panic!("{other:?}"),
    }
    let r = send(&mut core, ADMIN, deposit(2, PGN, 10));
    assert!(matches!(r.as_slice(), [Outbound::Balance(_)]));

    // 20 × 100.00 = 2,000.00 > 1,000.00: rejected with reason 17.
    let r = send(
        &mut core,
        AccountId(1),
        order(1, Side::Buy, 10_000, 20, OrderType::Limit),
    );
    match r.as_slice() {
        [Outbound::Rejected(x)] => assert_eq!(x.reason.0, 17),
        other => panic!("{other:?}"),
    }
    // 5 × 100.00 reserves 500.00.
    let r = send(
        &mut core,
        AccountId(1),
        order(2, Side::Buy, 10_000, 5, OrderType::Limit),
    );
    let Some(Outbound::Accepted(buy)) = r.first() else {
        panic!("{r:?}");
    };
    assert_eq!(
        bal(&core, 1, USD),
        Balance {
            available: 50_000,
            reserved: 50_000
        }
    );
    // Reserved funds cannot be withdrawn.
    let r = send(&mut core, ADMIN, withdraw(1, USD, 60_000));
    assert_eq!(admin_reject(&r), Some(AdminReason::InsufficientAvailable));
    let seq = core.engine_seq();

    // The seller's 3 at 99.00 trade at the maker's 100.00.
    let r = send(
        &mut core,
        AccountId(2),
        order(3, Side::Sell, 9_900, 3, OrderType::Limit),
    );
    assert_eq!(core.engine_seq(), seq + 1);
    assert_eq!(
        r.iter().filter(|m| matches!(m, Outbound::Fill(_))).count(),
        2
    );
    assert_eq!(
        bal(&core, 1, USD),
        Balance {
            available: 50_000,
            reserved: 20_000
        }
    );
    assert_eq!(bal(&core, 1, PGN).available, 3);
    assert_eq!(
        bal(&core, 2, PGN),
        Balance {
            available: 7,
            reserved: 0
        }
    );
    assert_eq!(bal(&core, 2, USD).available, 30_000);

    // A market buy reserves at its protection price; nothing to sell against: released.
    let r = send(
        &mut core,
        AccountId(1),
        order(4, Side::Buy, 12_000, 4, OrderType::Market),
    );
    assert!(
        r.iter().any(|m| matches!(m, Outbound::Cancelled(_))),
        "{r:?}"
    );
    assert_eq!(bal(&core, 1, USD).available, 50_000);

    // Cancel releases the rest; then everything free can leave.
    let r = send(&mut core, AccountId(1), cancel(5, buy.order_id.0));
    assert!(matches!(r.as_slice(), [Outbound::Cancelled(_)]));
    assert_eq!(
        bal(&core, 1, USD),
        Balance {
            available: 70_000,
            reserved: 0
        }
    );
    let r = send(&mut core, ADMIN, withdraw(1, USD, 70_000));
    assert!(matches!(r.as_slice(), [Outbound::Balance(b)] if b.available == 0));

    // Queries: own account, or any account from an admin.
    let q = |account: u32| {
        Inbound::BalanceQuery(BalanceQuery {
            request_id: 3,
            account: AccountId(account),
            asset: USD,
        })
    };
    let r = send(&mut core, AccountId(2), q(2));
    assert!(matches!(r.as_slice(), [Outbound::Balance(b)] if b.available == 30_000));
    let r = send(&mut core, AccountId(2), q(1));
    assert_eq!(admin_reject(&r), Some(AdminReason::NotAdmin));
    let r = send(&mut core, ADMIN, q(2));
    assert!(matches!(r.as_slice(), [Outbound::Balance(_)]));

    let again = replay(core.log());
    assert_eq!(again.state_hash(), core.state_hash());
    assert_eq!(
        again.ledger().unwrap().export(),
        core.ledger().unwrap().export()
    );
    assert_ne!(core.state_hash(), core.engine().state_hash());
}

#[test]
fn balances_off_refuses_admin_requests_and_keeps_the_plain_hash() {
    let (_, instruments) = setup();
    let engine = MatchingEngine::new(&instruments, 64).unwrap();
    let mut core = Core::new(engine, 64, MemoryLog::default(), Clock::monotonic());
    let r = send(&mut core, ADMIN, deposit(1, USD, 5));
    assert_eq!(admin_reject(&r), Some(AdminReason::BalancesOff));
    let r = send(
        &mut core,
        AccountId(1),
        order(1, Side::Buy, 10_000, 20, OrderType::Limit),
    );
    assert!(matches!(r.as_slice(), [Outbound::Accepted(_)]));
    assert_eq!(core.state_hash(), core.engine().state_hash());
    assert!(core.log().admin.is_empty());
}

/// One random step.
#[derive(Debug, Clone)]
enum Step {
    Deposit(u32, u32, i64),
    Withdraw(u32, u32, i64),
    Order(u32, Side, i64, i64, OrderType),
    Cancel(u32, u64),
    Replace(u32, u64, i64, i64),
}

fn arb_step() -> impl Strategy<Value = Step> {
    let account = 1u32..=3;
    let asset = 1u32..=2;
    let side = prop_oneof![Just(Side::Buy), Just(Side::Sell)];
    let kind = prop_oneof![
        4 => Just(OrderType::Limit),
        1 => Just(OrderType::Market),
        1 => Just(OrderType::PostOnly),
    ];
    prop_oneof![
        2 => (account.clone(), asset.clone(), -10i64..200_000).prop_map(|(a, s, v)| Step::Deposit(a, s, v)),
        1 => (account.clone(), asset, -10i64..100_000).prop_map(|(a, s, v)| Step::Withdraw(a, s, v)),
        6 => (account.clone(), side, 9_950i64..10_050, 1i64..30, kind)
            .prop_map(|(a, s, p, q, k)| Step::Order(a, s, p, q, k)),
        2 => (account.clone(), 1u64..60).prop_map(|(a, id)| Step::Cancel(a, id)),
        1 => (account, 1u64..60, 9_950i64..10_050, 1i64..30)
            .prop_map(|(a, id, p, q)| Step::Replace(a, id, p, q)),
    ]
}

fn run_steps<L: CommandLog>(core: &mut Core<L>, steps: &[Step]) {
    for (i, step) in steps.iter().enumerate() {
        let id = i as u64 + 1;
        let (from, msg) = match *step {
            Step::Deposit(a, s, v) => (ADMIN, deposit(a, s, v)),
            Step::Withdraw(a, s, v) => (ADMIN, withdraw(a, s, v)),
            Step::Order(a, side, p, q, k) => (AccountId(a), order(id, side, p, q, k)),
            Step::Cancel(a, o) => (AccountId(a), cancel(id, o)),
            Step::Replace(a, o, p, q) => (
                AccountId(a),
                Inbound::Replace(Replace {
                    client_order_id: ClientOrderId(id),
                    order_id: OrderId(o),
                    new_price: Price::from_raw(p),
                    new_qty: Qty::from_raw(q),
                    instrument: InstrumentId(1),
                }),
            ),
        };
        // `send` runs `Ledger::check` (conservation, no negative balance, reserved ==
        // what open orders hold) after every step.
        send(core, from, msg);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn prop_conservation_holds_and_replay_reproduces_balances(
        steps in proptest::collection::vec(arb_step(), 1..150)
    ) {
        let mut core = core_with(MemoryLog::default());
        run_steps(&mut core, &steps);
        let again = replay(core.log());
        prop_assert_eq!(again.state_hash(), core.state_hash());
        prop_assert_eq!(again.ledger().unwrap().export(), core.ledger().unwrap().export());
        prop_assert_eq!(again.engine_seq(), core.engine_seq());
    }
}

/// The random streams above do exercise settlement: a fixed-seed one trades.
#[test]
fn a_random_stream_trades_and_settles() {
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let steps = proptest::collection::vec(arb_step(), 150)
        .new_tree(&mut runner)
        .unwrap()
        .current();
    let mut core = core_with(MemoryLog::default());
    run_steps(&mut core, &steps);
    let trades = core
        .engine()
        .book(InstrumentId(1))
        .map_or(0, peregrine_book::Book::trade_seq);
    assert!(trades > 0, "no trade in {steps:?}");
}

/// A synchronous snapshot sink: encodes the live state at every `every`-th record
/// and writes it after the batch's commit (the server's snapshot thread does the same
/// off the matching thread; `peregrine-exchange/tests/journal_recovery.rs`).
#[derive(Debug)]
struct InlineSnapshots {
    store: peregrine_journal::SnapshotStore,
    every: u64,
    pending: Option<(u64, Vec<u8>)>,
}

impl peregrine_exchange_core::SnapshotSink for InlineSnapshots {
    fn seed(
        &mut self,
        _: &peregrine_exchange_core::balances::VenueEngine,
        _: u64,
        _: Timestamp,
        _: &peregrine_exchange_core::reports::Counters,
    ) {
    }
    fn after_command(
        &mut self,
        seq: u64,
        _: Record,
        engine: &peregrine_exchange_core::balances::VenueEngine,
        ts: Timestamp,
        reports: &peregrine_exchange_core::reports::Counters,
    ) {
        if seq.is_multiple_of(self.every) {
            let blob = peregrine_exchange_core::codec::snapshot::encode(
                engine,
                seq,
                ts,
                &reports.sorted(),
            );
            self.pending = Some((seq, blob));
        }
    }
    fn after_commit(
        &mut self,
        _: &peregrine_exchange_core::balances::VenueEngine,
        _: u64,
        _: &peregrine_exchange_core::reports::Counters,
    ) {
        if let Some((seq, blob)) = self.pending.take() {
            self.store.write(seq, blob).unwrap();
        }
    }
}

/// On disk: a journal with snapshots every 7 commands; a fresh core restores the newest
/// snapshot and replays the tail, and ends with identical balances and hash.
#[test]
fn snapshot_plus_journal_tail_restores_balances_exactly() {
    use peregrine_exchange_core::journal::{JournalLog, JournalSection};
    use peregrine_exchange_core::replay::{open_journal, restore};
    use peregrine_journal::{SnapshotConfig, SnapshotStore};

    let dir = tempfile::tempdir().unwrap();
    let section = JournalSection {
        snapshot_every: 7,
        ..JournalSection::new(dir.path())
    };
    let steps: Vec<Step> = (0..120u64)
        .map(|i| {
            let account = 1 + (i % 3) as u32;
            match i % 6 {
                0 => {
                    let asset = 1 + ((i / 6) % 2) as u32;
                    let amount = if asset == PGN { 50 } else { 500_000 };
                    Step::Deposit(1 + ((i / 6) % 3) as u32, asset, amount)
                }
                1 => Step::Order(
                    account,
                    Side::Buy,
                    10_000 + (i % 5) as i64,
                    1 + (i % 7) as i64,
                    OrderType::Limit,
                ),
                2 => Step::Order(
                    account,
                    Side::Sell,
                    9_996 + (i % 5) as i64,
                    1 + (i % 5) as i64,
                    OrderType::Limit,
                ),
                3 => Step::Cancel(account, i / 3),
                4 => Step::Withdraw(account, USD, 1_000),
                _ => Step::Replace(account, i / 2, 10_000, 2),
            }
        })
        .collect();
    let (want_hash, want_state, last_seq) = {
        let (journal, _) = open_journal(&section, peregrine_journal::LossPolicy::Refuse).unwrap();
        let store = SnapshotStore::open(section.snapshot_dir(), SnapshotConfig::default()).unwrap();
        let mut core =
            core_with(JournalLog::new(journal)).with_snapshots(Box::new(InlineSnapshots {
                store,
                every: section.snapshot_every,
                pending: None,
            }));
        run_steps(&mut core, &steps);
        let trades = core
            .engine()
            .book(InstrumentId(1))
            .map_or(0, peregrine_book::Book::trade_seq);
        assert!(trades > 5, "the stream trades ({trades} trades)");
        let out = (
            core.state_hash(),
            core.ledger().unwrap().export(),
            core.engine_seq(),
        );
        drop(core);
        out
    };
    assert!(last_seq > 100);
    assert!(want_state.holds.len() > 1, "orders rest: {want_state:?}");
    let (journal, _) = open_journal(&section, peregrine_journal::LossPolicy::Refuse).unwrap();
    let store = SnapshotStore::open(section.snapshot_dir(), SnapshotConfig::default()).unwrap();
    let mut core = core_with(JournalLog::new(journal));
    let (done, hash) = restore(&mut core, Some(&store), None).unwrap();
    assert!(done.records < last_seq, "a snapshot was used");
    assert_eq!(core.engine_seq(), last_seq);
    assert_eq!(hash, want_hash);
    assert_eq!(core.ledger().unwrap().export(), want_state);
    core.ledger().unwrap().check().unwrap();
}

/// Counts reports without allocating.
#[derive(Default)]
struct Count(u64);

impl Outbox for Count {
    fn answer(&mut self, to: SessionKey, msg: Outbound) {
        self.report(AccountId(0), msg, to);
    }
    fn report(&mut self, _: AccountId, _: Outbound, _: SessionKey) {
        self.0 += 1;
    }
}

/// With balances on, the per-order path (reserve, match, settle, journal seam) makes no
/// allocation once warm (a counting global allocator, thread-local counter).
#[test]
fn the_per_order_path_with_balances_does_not_allocate_once_warm() {
    let mut core = core_with(peregrine_exchange_core::NoLog);
    let mut out = Count::default();
    for a in 1..=3 {
        for (asset, amount) in [(PGN, 1_000_000_000), (USD, i64::MAX / 4)] {
            let msg = deposit(a, asset, amount);
            core.handle(SessionKey::new(9, 0), ADMIN, &msg, &mut out)
                .unwrap();
        }
    }
    let spec = peregrine_types::InstrumentSpec::example(1);
    let reqs: Vec<Inbound> = (0..4_000u64)
        .map(|j| {
            let mut o = peregrine_exchange_core::mix::order(&spec, j);
            o.client_order_id = ClientOrderId(j + 1);
            Inbound::NewOrder(o)
        })
        .collect();
    let run = |core: &mut Core<_>, range: std::ops::Range<usize>, out: &mut Count| {
        for j in range {
            let account = AccountId(1 + (j % 3) as u32);
            core.handle(SessionKey::new(0, 0), account, &reqs[j], out)
                .unwrap();
            core.end_batch().unwrap();
        }
    };
    run(&mut core, 0..1_000, &mut out);
    let before = peregrine_testkit::allocations();
    run(&mut core, 1_000..4_000, &mut out);
    let allocations = peregrine_testkit::allocations() - before;
    assert_eq!(allocations, 0, "allocations on the per-order path");
    assert!(out.0 > 6_000);
    let fills = core
        .engine()
        .book(InstrumentId(1))
        .map_or(0, peregrine_book::Book::trade_seq);
    assert!(fills > 1_000, "{fills} trades");
    core.ledger().unwrap().check().unwrap();
}
