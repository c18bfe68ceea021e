//! The matching stage without sockets: the journal seam sees every command before its
//! results, replaying the log reproduces the state exactly, and the per-order path does
//! not allocate once warm (a counting global allocator, thread-local counter).
use std::sync::Arc;

use peregrine_book::MatchingEngine;
use peregrine_exchange_core::journal::{CommandLog, MemoryLog};
use peregrine_exchange_core::mix;
use peregrine_exchange_core::{Clock, Core, Outbox, SessionKey};
use peregrine_types::{AccountId, ClientOrderId, InstrumentSpec};
use peregrine_wire::v2::{Inbound, Outbound};

#[global_allocator]
static GLOBAL: peregrine_testkit::CountingAllocator = peregrine_testkit::CountingAllocator;

/// Counts reports per session into fixed counters (never allocates).
#[derive(Default)]
struct CountingOutbox {
    reports: u64,
    fills: u64,
    last_engine_seq: u64,
}

impl Outbox for CountingOutbox {
    fn answer(&mut self, to: SessionKey, msg: Outbound) {
        self.report(AccountId(0), msg, to);
    }
    fn report(&mut self, _: AccountId, msg: Outbound, _: SessionKey) {
        self.reports += 1;
        assert!(
            msg.engine_seq() >= self.last_engine_seq,
            "engine seq went back"
        );
        self.last_engine_seq = msg.engine_seq();
        if matches!(msg, Outbound::Fill(_)) {
            self.fills += 1;
        }
    }
}

/// Records how many commands were appended when each commit happened.
#[derive(Default)]
struct Probe {
    inner: MemoryLog,
}

impl CommandLog for Probe {
    fn append(&mut self, seq: u64, cmd: &peregrine_book::Command) -> std::io::Result<()> {
        assert_eq!(seq, self.inner.records.len() as u64 + 1, "gap-free from 1");
        self.inner.append(seq, cmd)
    }
    fn commit(&mut self) -> std::io::Result<()> {
        self.inner.commit()
    }
}

fn core_with<L: CommandLog>(log: L) -> (Core<L>, InstrumentSpec) {
    let spec = InstrumentSpec::example(1);
    let engine = MatchingEngine::new(std::slice::from_ref(&spec), 4096).unwrap();
    let core = Core::new(engine, 4096, log, Clock::monotonic());
    (core, spec)
}

fn request(spec: &InstrumentSpec, j: u64) -> Inbound {
    let mut o = mix::order(spec, j);
    o.client_order_id = ClientOrderId(j + 1);
    Inbound::NewOrder(o)
}

#[test]
fn every_command_is_logged_and_replay_reproduces_the_state() {
    let (mut core, spec) = core_with(Probe::default());
    let mut out = CountingOutbox::default();
    for j in 0..2_000u64 {
        let key = SessionKey::new((j % 4) as u32, 0);
        core.handle(
            key,
            AccountId((j % 4) as u32 + 1),
            &request(&spec, j),
            &mut out,
        )
        .unwrap();
        if j % 10 == 9 {
            core.end_batch().unwrap();
        }
    }
    core.end_batch().unwrap();
    let log = &core.log().inner;
    assert_eq!(log.records.len(), 2_000);
    assert_eq!(log.committed, 2_000);
    assert_eq!(core.engine_seq(), 2_000);
    assert_eq!(out.fills, 2_000, "1,000 trades, a fill to each side");

    let mut replay: MatchingEngine =
        MatchingEngine::new(std::slice::from_ref(&spec), 4096).unwrap();
    let mut events = Vec::new();
    for (_, cmd) in &log.records {
        events.clear();
        replay.execute(cmd, &mut events);
    }
    assert_eq!(replay.state_hash(), core.engine().state_hash());
}

#[test]
fn the_per_order_path_does_not_allocate_once_warm() {
    assert_no_allocations_once_warm(peregrine_exchange_core::NoLog);
}

/// The same with the real journal (fsync `none`: the writes still happen, the test
/// does not wait for the disk). Segment rotation allocates; 3,000 orders stay inside
/// one segment.
#[test]
fn the_journaled_per_order_path_does_not_allocate_once_warm() {
    let dir = tempfile::tempdir().unwrap();
    let section = peregrine_exchange_core::journal::JournalSection {
        fsync: peregrine_journal::FsyncPolicy::None,
        ..peregrine_exchange_core::journal::JournalSection::new(dir.path())
    };
    let (journal, _) = peregrine_exchange_core::replay::open_journal(
        &section,
        peregrine_journal::LossPolicy::Refuse,
    )
    .unwrap();
    assert_no_allocations_once_warm(peregrine_exchange_core::journal::JournalLog::new(journal));
}

fn assert_no_allocations_once_warm<L: CommandLog>(log: L) {
    let (mut core, spec) = core_with(log);
    let mut out = CountingOutbox::default();
    let reqs: Vec<Inbound> = (0..4_000u64).map(|j| request(&spec, j)).collect();
    for (j, r) in reqs.iter().enumerate().take(1_000) {
        core.handle(
            SessionKey::new(0, 0),
            AccountId(1 + (j % 2) as u32),
            r,
            &mut out,
        )
        .unwrap();
    }
    let before = peregrine_testkit::allocations();
    for (j, r) in reqs.iter().enumerate().skip(1_000) {
        core.handle(
            SessionKey::new(0, 0),
            AccountId(1 + (j % 2) as u32),
            r,
            &mut out,
        )
        .unwrap();
        core.end_batch().unwrap();
    }
    let allocations = peregrine_testkit::allocations() - before;
    assert_eq!(allocations, 0, "allocations on the per-order path");
    assert!(out.reports > 6_000);
}

/// Fees charged on every fill (maker rebate, taker fee, a 30-day volume tier crossed
/// during the measured part) make no allocation once warm.
#[test]
fn charging_fees_on_fills_does_not_allocate_once_warm() {
    let spec = InstrumentSpec {
        fees: Some(peregrine_types::FeeSchedule {
            maker_ppm: -100,
            taker_ppm: 2_000,
            tiers: vec![peregrine_types::FeeTier {
                min_volume: "100000".into(),
                maker_ppm: -200,
                taker_ppm: 1_000,
            }],
        }),
        ..InstrumentSpec::example(1)
    };
    let fees = peregrine_ledger::Fees::from_specs(std::slice::from_ref(&spec))
        .unwrap()
        .unwrap();
    let engine = MatchingEngine::new(std::slice::from_ref(&spec), 4096).unwrap();
    let mut core = Core::new(
        engine,
        4096,
        peregrine_exchange_core::NoLog,
        Clock::monotonic(),
    )
    .with_fees(fees, AccountId(9));
    /// Counts fills and the fees they carry (never allocates).
    #[derive(Default)]
    struct Fees {
        fills: u64,
        charged: u64,
        rebated: u64,
    }
    impl Outbox for Fees {
        fn answer(&mut self, to: SessionKey, msg: Outbound) {
            self.report(AccountId(0), msg, to);
        }
        fn report(&mut self, _: AccountId, msg: Outbound, _: SessionKey) {
            if let Outbound::Fill(f) = msg {
                self.fills += 1;
                self.charged += u64::from(f.fee > 0);
                self.rebated += u64::from(f.fee < 0);
            }
        }
    }
    let mut out = Fees::default();
    let reqs: Vec<Inbound> = (0..4_000u64).map(|j| request(&spec, j)).collect();
    let mut run = |range: std::ops::Range<usize>, out: &mut Fees| {
        for j in range {
            core.handle(
                SessionKey::new(0, 0),
                AccountId(1 + (j % 2) as u32),
                &reqs[j],
                out,
            )
            .unwrap();
            core.end_batch().unwrap();
        }
    };
    run(0..1_000, &mut out);
    let warm = (out.charged, out.rebated);
    let allocations = peregrine_testkit::allocations_during(|| run(1_000..4_000, &mut out));
    assert!(
        out.charged - warm.0 > 500 && out.rebated - warm.1 > 500,
        "fees were charged and rebated in the measured part: {} {}",
        out.charged,
        out.rebated
    );
    assert_eq!(allocations, 0, "allocations charging fees");
}

/// With metrics, depth and the feed attached and both telemetry intervals 0 (a publish
/// after every batch: the worst case), the per-order path still makes no allocation,
/// and the published counters match what was sent.
#[test]
fn publishing_metrics_depth_and_feed_does_not_allocate_once_warm() {
    use peregrine_exchange_core::feed::{Feed, NoPackets};
    use peregrine_exchange_core::telemetry::{DepthPublisher, StatsSlot};

    let (core, spec) = core_with(peregrine_exchange_core::NoLog);
    let depth = DepthPublisher::new(core.engine(), 5, 0);
    let slot = depth.slot();
    let hub = Arc::new(StatsSlot::new(1));
    let feed = Feed::new(1, 1400, 1_000_000_000, 1 << 10, core.now().0);
    let mut core = core
        .with_depth(depth)
        .with_metrics(Arc::clone(&hub), 0)
        .with_feed(feed);
    let mut out = CountingOutbox::default();
    let reqs: Vec<Inbound> = (0..4_000u64).map(|j| request(&spec, j)).collect();
    let mut run = |core: &mut Core<_>, range: std::ops::Range<usize>| {
        for j in range {
            let account = AccountId(1 + (j % 2) as u32);
            core.handle(SessionKey::new(0, 0), account, &reqs[j], &mut out)
                .unwrap();
            core.end_batch().unwrap();
            core.publish(&mut NoPackets);
            if j % 64 == 0 {
                core.idle(&mut NoPackets);
            }
        }
    };
    run(&mut core, 0..1_000);
    let before = peregrine_testkit::allocations();
    run(&mut core, 1_000..4_000);
    let allocations = peregrine_testkit::allocations() - before;
    assert_eq!(allocations, 0, "allocations with metrics and depth on");

    let stats = hub.read();
    assert!(
        core.feed().unwrap().next_seq() > 4_000,
        "the feed published"
    );
    assert_eq!(stats.requests[0], 4_000, "new orders");
    assert_eq!(stats.orders_received.iter().sum::<u64>(), 4_000);
    assert_eq!(stats.commands, 4_000);
    assert_eq!(stats.batches, 4_000);
    assert_eq!(stats.latency[0].count, 4_000, "one latency per request");
    assert_eq!(stats.engine_seq, 4_000);
    assert_eq!(stats.fills, core.metrics().stats().fills);
    assert!(stats.fills > 0);
    let snap = slot.read();
    assert_eq!(snap.engine_seq, 4_000);
    let resting = snap.books[0].resting_orders;
    assert_eq!(resting, core.engine().books().next().unwrap().len() as u64);
    assert_eq!(stats.resting[0].1, resting);
}
