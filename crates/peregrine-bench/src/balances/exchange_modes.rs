//! Sustained throughput of the exchange's two matching modes, with commitments on a
//! hasher thread: the exchange `Core` (sequencing, order ownership, report mapping,
//! the commitment hand-off) rather than the bare engine, no journal and no sockets.
//!
//! * **batch**: 10 resting orders per tick through `Sequencer::push`, then
//!   `run_if_due` at the tick boundary (synthetic clock times, so no waiting), the
//!   tick's window closed and handed to the hasher.
//! * **continuous**: the same orders through `Core::handle_at`, 10 per 1 ms
//!   commitment window.
//!
//! The hasher runs concurrently on another thread, as in production. Two rates per
//! mode: the matching thread's (orders / its wall time, the hasher may still be
//! working), and end to end (the clock stops when the last commitment has been
//! computed: the core is dropped, which hands over the last chunk and joins the
//! hasher). On a machine without a spare core the second needs the hasher to be
//! scheduled, so it measures the scheduler as much as the code.

use std::time::Instant;

use peregrine_book::MatchingEngine;
use peregrine_commit::Committer;
use peregrine_exchange_core::dispatch::Sequencer;
use peregrine_exchange_core::feed::NoPackets;
use peregrine_exchange_core::mix;
use peregrine_exchange_core::{Clock, Core, NoLog, Outbox, SessionKey};
use peregrine_types::{AccountId, ClientOrderId, InstrumentSpec, Timestamp};
use peregrine_wire::v2::{Inbound, Outbound};

const TICK_NS: u64 = 1_000_000;
const BASE: u64 = 1_700_000_000_000_000_000;

struct Drop0;
impl Outbox for Drop0 {
    fn report(&mut self, _: AccountId, _: Outbound, _: SessionKey) {}
    fn answer(&mut self, _: SessionKey, _: Outbound) {}
}

fn core(orders: usize) -> anyhow::Result<Core<NoLog>> {
    let spec = InstrumentSpec::example(1);
    let engine = MatchingEngine::new(std::slice::from_ref(&spec), orders + 16)?;
    let committer = Committer::spawn(TICK_NS, 16_384, None, None)?;
    Ok(Core::new(engine, orders + 16, NoLog, Clock::monotonic())
        .with_commitments(Box::new(committer)))
}

fn requests(n: usize) -> Vec<Inbound> {
    let spec = InstrumentSpec::example(1);
    (0..n as u64)
        .map(|i| {
            // Resting only: the mix's bids and asks (j % 4 in {0, 1}).
            let mut o = mix::order(&spec, (i / 2) * 4 + i % 2);
            o.client_order_id = ClientOrderId(i + 1);
            Inbound::NewOrder(o)
        })
        .collect()
}

fn batch(reqs: &[Inbound]) -> anyhow::Result<(u64, u64)> {
    let mut core = core(reqs.len())?;
    let mut seq = Sequencer::new(TICK_NS, 4096);
    let key = SessionKey::new(0, 0);
    let t0 = Instant::now();
    for (tick, chunk) in reqs.chunks(10).enumerate() {
        let now = Timestamp(BASE + tick as u64 * TICK_NS);
        for r in chunk {
            seq.push(
                Sequencer::request(key, AccountId(1), *r),
                now,
                &mut core,
                &mut Drop0,
            )?;
        }
        seq.run_if_due(Timestamp(now.0 + TICK_NS), &mut core, &mut Drop0)?;
        core.end_batch()?;
        core.publish(&mut NoPackets);
    }
    let matching = ns(t0);
    drop(core);
    Ok((matching, ns(t0)))
}

fn continuous(reqs: &[Inbound]) -> anyhow::Result<(u64, u64)> {
    let mut core = core(reqs.len())?;
    let key = SessionKey::new(0, 0);
    let t0 = Instant::now();
    for (i, r) in reqs.iter().enumerate() {
        let ts = Timestamp(BASE + i as u64 * (TICK_NS / 10));
        core.handle_at(key, AccountId(1), r, ts, &mut Drop0)?;
        if i % 10 == 9 {
            core.end_batch()?;
            core.publish(&mut NoPackets);
        }
    }
    core.end_tick();
    let matching = ns(t0);
    drop(core);
    Ok((matching, ns(t0)))
}

fn ns(t0: Instant) -> u64 {
    u64::try_from(t0.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

/// (name, orders/s, Olympus's figure) for both modes, median of `repeats` runs of
/// `ticks` × 10 orders.
pub(super) fn sustained(
    ticks: usize,
    repeats: usize,
) -> anyhow::Result<Vec<(String, f64, &'static str)>> {
    let reqs = requests(ticks * 10);
    let rate = |ns: u64| reqs.len() as f64 / (ns.max(1) as f64 / 1e9);
    let median = |run: fn(&[Inbound]) -> anyhow::Result<(u64, u64)>| -> anyhow::Result<(f64, f64)> {
        let (mut matching, mut total) = (Vec::new(), Vec::new());
        for _ in 0..repeats.max(1) {
            let (m, t) = run(&reqs)?;
            matching.push(rate(m));
            total.push(rate(t));
        }
        matching.sort_by(f64::total_cmp);
        total.sort_by(f64::total_cmp);
        Ok((matching[matching.len() / 2], total[total.len() / 2]))
    };
    let (cm, ct) = median(continuous)?;
    let (bm, bt) = median(batch)?;
    Ok(vec![
        (
            "exchange Core, continuous: matching thread".to_string(),
            cm,
            "3.83 M/s",
        ),
        (
            "exchange Core, continuous: + all hashed".to_string(),
            ct,
            "3.83 M/s",
        ),
        (
            "exchange Core, batch (10/tick): matching".to_string(),
            bm,
            "3.5 M/s",
        ),
        (
            "exchange Core, batch (10/tick): + all hashed".to_string(),
            bt,
            "3.5 M/s",
        ),
    ])
}
