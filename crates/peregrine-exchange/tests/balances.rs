//! The matching stage with balances on, without sockets: deposits and withdrawals from
//! admin sessions, reservations on entry, settlement of fills on both sides, releases
//! on cancel, conservation (`Ledger::check`) after every step of random streams, and
//! replay of the recorded journal (in memory, and on disk through snapshot + tail)
//! reproducing identical balances and state hash.
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use peregrine_book::MatchingEngine;
use peregrine_exchange::balances::{AdminReason, BalanceSetup};
use peregrine_exchange::command_codec::Record;
use peregrine_exchange::core::{Core, Outbox, SessionKey};
use peregrine_exchange::journal::{CommandLog, MemoryLog};
use peregrine_exchange::Config;
use peregrine_ledger::{AssetId, Balance};
use peregrine_types::{
    AccountId, ClientOrderId, InstrumentId, OrderId, OrderType, Price, Qty, Side, StpMode,
    TimeInForce, Timestamp,
};
use peregrine_wire::admin::{BalanceQuery, Deposit, Withdraw};
use peregrine_wire::orders::{Cancel, NewOrder, Replace};
use peregrine_wire::{Inbound, Outbound};
use proptest::prelude::*;

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
[[accounts]]
id = 1
password = "a"
[[accounts]]
id = 2
password = "b"
[[accounts]]
id = 3
password = "c"
[[accounts]]
id = 9
password = "root"
admin = true
"#;

fn config() -> Config {
    let c = Config::parse(CONFIG).unwrap();
    c.validate().unwrap();
    c
}

fn core_with<L: CommandLog>(log: L) -> Core<L> {
    let c = config();
    let setup = BalanceSetup::from_config(&c).unwrap().unwrap();
    let engine = MatchingEngine::new(&c.instruments, 1024).unwrap();
    Core::new(engine, 1024, Arc::new(AtomicU64::new(0)), log, None).with_balances(&setup)
}

/// Keeps every report.
#[derive(Default)]
struct Recorder(Vec<Outbound>);

impl Outbox for Recorder {
    fn send(&mut self, _: SessionKey, _: AccountId, msg: Outbound) {
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
            assert_eq!((b.available, b.reserved, b.request_id), (100_000, 0, 7));
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
    let c = config();
    let engine = MatchingEngine::new(&c.instruments, 64).unwrap();
    let mut core = Core::new(
        engine,
        64,
        Arc::new(AtomicU64::new(0)),
        MemoryLog::default(),
        None,
    );
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

/// On disk: a journal with snapshots every 7 commands; a fresh core restores the newest
/// snapshot and replays the tail, and ends with identical balances and hash.
#[test]
fn snapshot_plus_journal_tail_restores_balances_exactly() {
    use peregrine_exchange::journal_log::{JournalLog, JournalSection};
    use peregrine_exchange::journal_replay::{open_journal, restore};
    use peregrine_exchange::snapshotter::Snapshotter;
    use peregrine_journal::{SnapshotConfig, SnapshotStore};

    let dir = tempfile::tempdir().unwrap();
    let section = JournalSection {
        snapshot_every: 7,
        ..JournalSection::new(dir.path())
    };
    let steps: Vec<Step> = (0..120u64)
        .map(|i| match i % 6 {
            0 => Step::Deposit(1 + (i % 3) as u32, 1 + (i % 2) as u32, 50_000),
            1 | 2 => Step::Order(
                1 + (i % 3) as u32,
                if i % 4 < 2 { Side::Buy } else { Side::Sell },
                9_990 + (i % 20) as i64,
                1 + (i % 7) as i64,
                OrderType::Limit,
            ),
            3 => Step::Cancel(1 + (i % 3) as u32, i / 3),
            4 => Step::Withdraw(1 + (i % 3) as u32, 2, 1_000),
            _ => Step::Replace(1 + (i % 3) as u32, i / 2, 10_000, 2),
        })
        .collect();
    let (want_hash, want_state, last_seq) = {
        let (journal, _) = open_journal(&section).unwrap();
        let store = SnapshotStore::open(section.snapshot_dir(), SnapshotConfig::default()).unwrap();
        let mut core = core_with(JournalLog::new(journal))
            .with_snapshots(Snapshotter::spawn(store, section.snapshot_every).unwrap());
        run_steps(&mut core, &steps);
        let out = (
            core.state_hash(),
            core.ledger().unwrap().export(),
            core.engine_seq(),
        );
        drop(core); // joins the snapshot writer
        out
    };
    assert!(last_seq > 100);
    let (journal, _) = open_journal(&section).unwrap();
    let store = SnapshotStore::open(section.snapshot_dir(), SnapshotConfig::default()).unwrap();
    let mut core = core_with(JournalLog::new(journal));
    let (done, hash) = restore(&mut core, Some(&store)).unwrap();
    assert!(done.records < last_seq, "a snapshot was used");
    assert_eq!(core.engine_seq(), last_seq);
    assert_eq!(hash, want_hash);
    assert_eq!(core.ledger().unwrap().export(), want_state);
    core.ledger().unwrap().check().unwrap();
}
