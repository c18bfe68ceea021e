//! Batch mode with commitments allocates nothing on the matching thread once warm:
//! the tick buffer is preallocated, trades go into pooled chunks, and chunks travel
//! to the hasher thread and back as boxes (a counting global allocator, counting the
//! measuring thread only; the hasher thread's own work is not counted).

use peregrine_book::MatchingEngine;
use peregrine_commit::Committer;
use peregrine_exchange_core::dispatch::Sequencer;
use peregrine_exchange_core::mix;
use peregrine_exchange_core::NoLog;
use peregrine_exchange_core::{Clock, Core, Outbox, SessionKey};
use peregrine_types::{AccountId, ClientOrderId, InstrumentSpec, Timestamp};
use peregrine_wire::v2::{Inbound, Outbound};

#[global_allocator]
static GLOBAL: peregrine_testkit::CountingAllocator = peregrine_testkit::CountingAllocator;

struct Count(u64);
impl Outbox for Count {
    fn answer(&mut self, to: SessionKey, msg: Outbound) {
        self.report(AccountId(0), msg, to);
    }
    fn report(&mut self, _: AccountId, _: Outbound, _: SessionKey) {
        self.0 += 1;
    }
}

#[test]
fn batch_ticks_with_commitments_do_not_allocate_once_warm() {
    let spec = InstrumentSpec::example(1);
    let engine = MatchingEngine::new(std::slice::from_ref(&spec), 4096).unwrap();
    let committer = Committer::spawn(1_000_000, 64, None, None).unwrap();
    let mut core =
        Core::new(engine, 4096, NoLog, Clock::monotonic()).with_commitments(Box::new(committer));
    let mut seq = Sequencer::new(1_000_000, 4096);
    let mut out = Count(0);
    let reqs: Vec<Inbound> = (0..8_000u64)
        .map(|j| {
            let mut o = mix::order(&spec, j);
            o.client_order_id = ClientOrderId(j + 1);
            Inbound::NewOrder(o)
        })
        .collect();
    let mut step = |core: &mut Core<NoLog>, j: usize, r: &Inbound| {
        let now = Timestamp(1_700_000_000_000_000_000 + j as u64 * 20_000);
        let key = SessionKey::new(0, 0);
        let req = Sequencer::request(key, AccountId(1 + (j % 2) as u32), *r);
        seq.push(req, now, core, &mut out).unwrap();
        seq.run_if_due(now, core, &mut out).unwrap();
        core.end_batch().unwrap();
        core.publish(&mut peregrine_exchange_core::feed::NoPackets);
    };
    for (j, r) in reqs.iter().enumerate().take(2_000) {
        step(&mut core, j, r);
    }
    let before = peregrine_testkit::allocations();
    for (j, r) in reqs.iter().enumerate().skip(2_000) {
        step(&mut core, j, r);
    }
    let allocations = peregrine_testkit::allocations() - before;
    assert_eq!(allocations, 0, "allocations on the matching thread");
    assert!(out.0 > 10_000);
}
