//! GTD expiry on time. The book expires a GTD order lazily, when a command reaches
//! its book at or after the expiry; until then the order would still rest, and an
//! order status, an open-orders list or a book snapshot would show it live. The core
//! runs a journaled `Tick` (which advances every book's clock) as soon as the earliest
//! expiry is due: the loops call [`Core::expire_due`] from their housekeeping, and
//! the core itself before it answers a query, so no answer ever shows an expired
//! order. The tick is sequenced like any command (its `Cancelled{expired}` reports go
//! to the owners' streams, its level updates to the feed) and replays identically.

use peregrine_book::{Action, Command};
use peregrine_types::Timestamp;

use super::Core;
use crate::journal::CommandLog;
use crate::seams::{Outbox, SessionKey};

impl<L: CommandLog> Core<L> {
    /// When the earliest resting GTD order expires (`None`: none rests).
    pub fn next_expiry(&mut self) -> Option<Timestamp> {
        self.engine.next_expiry()
    }

    /// Expires every GTD order due at `now` with one journaled `Tick` at `now`;
    /// returns whether one ran (nothing was due: nothing is journaled).
    pub fn expire_due(&mut self, now: Timestamp, out: &mut impl Outbox) -> std::io::Result<bool> {
        match self.engine.next_expiry() {
            Some(at) if at <= now => {
                let tick = Command {
                    ts: now,
                    action: Action::Tick,
                };
                // Nobody asked: the reports go to the owners' streams only.
                self.execute(SessionKey::RECOVERED, &tick, out)?;
                Ok(true)
            }
            _ => Ok(false),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;

    use peregrine_book::MatchingEngine;
    use peregrine_types::{
        AccountId, ClientOrderId, InstrumentId, InstrumentSpec, OrderId, OrderType, Price, Qty,
        Side, StpMode, TimeInForce,
    };
    use peregrine_wire::field::OrderState;
    use peregrine_wire::reason::CancelCode;
    use peregrine_wire::v2::queries::{OpenOrdersRequest, OrderStatusRequest};
    use peregrine_wire::v2::{Inbound, NewOrder, Outbound};

    use super::*;
    use crate::journal::{CommandLog, MemoryLog};
    use crate::Clock;

    #[derive(Default)]
    pub(crate) struct Recorder(pub(crate) Vec<Outbound>);

    impl Outbox for Recorder {
        fn report(&mut self, _: AccountId, msg: Outbound, _: SessionKey) {
            self.0.push(msg);
        }
        fn answer(&mut self, _: SessionKey, msg: Outbound) {
            self.0.push(msg);
        }
    }

    pub(crate) const A: AccountId = AccountId(1);
    pub(crate) const KEY: SessionKey = SessionKey(7);

    pub(crate) fn gtd(client: u64, expire_at: u64) -> Inbound {
        Inbound::NewOrder(NewOrder {
            client_order_id: ClientOrderId(client),
            price: Price::from_raw(9_990),
            qty: Qty::from_raw(2),
            expire_at: Timestamp(expire_at),
            instrument: InstrumentId(1),
            side: Side::Buy,
            order_type: OrderType::Limit,
            tif: TimeInForce::Gtd,
            stp: StpMode::None,
        })
    }

    pub(crate) fn core(now: &Arc<AtomicU64>) -> Core<MemoryLog> {
        let engine = MatchingEngine::new(&[InstrumentSpec::example(1)], 64).unwrap();
        Core::new(
            engine,
            64,
            MemoryLog::default(),
            Clock::manual(Arc::clone(now)),
        )
    }

    /// An order status and an open-orders list asked after a GTD order's expiry never
    /// show it: the query expires it first (a journaled tick whose `Cancelled` report
    /// precedes the answer), though no command reached its book since.
    #[test]
    fn a_query_after_the_expiry_never_shows_the_order_live() {
        let now = Arc::new(AtomicU64::new(1_000));
        let mut core = core(&now);
        let mut out = Recorder::default();
        core.handle(KEY, A, &gtd(1, 5_000), &mut out).unwrap();
        assert!(matches!(out.0[..], [Outbound::Accepted(_)]));
        assert_eq!(core.next_expiry(), Some(Timestamp(5_000)));
        now.store(6_000, Ordering::Relaxed);
        out.0.clear();
        let status = Inbound::OrderStatusRequest(OrderStatusRequest {
            request_id: 3,
            order_id: OrderId(1),
            client_order_id: ClientOrderId(0),
            instrument: InstrumentId(1),
        });
        core.handle(KEY, A, &status, &mut out).unwrap();
        match &out.0[..] {
            [Outbound::Cancelled(c), Outbound::OrderStatus(s)] => {
                assert_eq!(c.reason, CancelCode::Expired.reason());
                assert_eq!((c.order_id, c.request_id), (OrderId(1), ClientOrderId(0)));
                assert_eq!(s.state, OrderState::Unknown, "never shown live");
                assert_eq!(s.report_seq, c.report_seq, "the answer reflects the expiry");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(core.log().records.len(), 2, "the order and one tick");
        assert_eq!(core.next_expiry(), None);
        out.0.clear();
        let open = Inbound::OpenOrdersRequest(OpenOrdersRequest {
            request_id: 4,
            account: Some(A),
            instrument: None,
        });
        core.handle(KEY, A, &open, &mut out).unwrap();
        assert!(matches!(&out.0[..], [Outbound::OpenOrdersEnd(e)] if e.count == 0));
        assert_eq!(
            core.log().records.len(),
            2,
            "nothing due: nothing journaled"
        );
    }

    /// The loops' housekeeping expires on time without any request: one tick per
    /// due time, nothing journaled when nothing is due.
    #[test]
    fn expire_due_runs_one_tick_when_an_expiry_has_come_and_none_before() {
        let now = Arc::new(AtomicU64::new(1_000));
        let mut core = core(&now);
        let mut out = Recorder::default();
        core.handle(KEY, A, &gtd(1, 5_000), &mut out).unwrap();
        core.handle(KEY, A, &gtd(2, 8_000), &mut out).unwrap();
        out.0.clear();
        assert!(!core.expire_due(Timestamp(4_999), &mut out).unwrap());
        assert!(core.expire_due(Timestamp(5_000), &mut out).unwrap());
        assert!(
            matches!(&out.0[..], [Outbound::Cancelled(c)] if c.client_order_id == ClientOrderId(1))
        );
        assert!(!core.expire_due(Timestamp(7_000), &mut out).unwrap());
        assert_eq!(core.next_expiry(), Some(Timestamp(8_000)));
        // A cancelled GTD order leaves no due time behind.
        let cancel = Inbound::Cancel(peregrine_wire::v2::Cancel {
            client_order_id: ClientOrderId(9),
            order_id: OrderId(2),
            instrument: InstrumentId(1),
        });
        core.handle(KEY, A, &cancel, &mut out).unwrap();
        assert_eq!(core.next_expiry(), None);
        let before = core.log().records.len();
        assert!(!core.expire_due(Timestamp(9_000), &mut out).unwrap());
        assert_eq!(core.log().records.len(), before);
    }

    /// A log whose sync lags: durable through what the test says.
    struct LaggingLog(MemoryLog, Arc<AtomicU64>);

    impl CommandLog for LaggingLog {
        fn append(&mut self, seq: u64, cmd: &Command) -> std::io::Result<()> {
            self.0.append(seq, cmd)
        }
        fn commit(&mut self) -> std::io::Result<()> {
            self.0.commit()
        }
        fn durable_through(&self) -> u64 {
            self.1.load(Ordering::Relaxed)
        }
    }

    /// The loop's chores run an expiry's tick after the batch ended (when parked,
    /// then the idle flush): the tick is neither committed nor durable, so its level
    /// update waits for the next batch and its sync (peregrine sim, seed 1066: the
    /// parked loop's path; before the fix the idle flush sent it at once).
    #[test]
    fn an_expiry_tick_run_after_the_batch_publishes_nothing_before_it_is_durable() {
        use crate::feed::{Feed, PacketLog};
        let now = Arc::new(AtomicU64::new(1_000));
        let durable = Arc::new(AtomicU64::new(0));
        let engine = MatchingEngine::new(&[InstrumentSpec::example(1)], 64).unwrap();
        let log = LaggingLog(MemoryLog::default(), Arc::clone(&durable));
        let mut core = Core::new(engine, 64, log, Clock::manual(Arc::clone(&now)))
            .with_feed(Feed::new(1, 1400, u64::MAX / 2, 64, 1_000));
        let (mut out, mut packets) = (Recorder::default(), PacketLog::default());
        core.handle(KEY, A, &gtd(1, 5_000), &mut out).unwrap();
        core.end_batch().unwrap();
        durable.store(1, Ordering::Relaxed);
        core.publish(&mut packets);
        assert_eq!(
            core.feed().unwrap().next_seq(),
            2,
            "the order's level update"
        );
        now.store(6_000, Ordering::Relaxed);
        // The parked loop: expiry after the batch's end, then the idle chores.
        assert!(core.expire_due(Timestamp(6_000), &mut out).unwrap());
        core.idle(&mut packets);
        assert_eq!(
            core.feed().unwrap().next_seq(),
            2,
            "the tick's level update left before its record was committed or durable"
        );
        core.end_batch().unwrap();
        core.idle(&mut packets);
        assert_eq!(core.feed().unwrap().next_seq(), 2, "committed, not durable");
        durable.store(2, Ordering::Relaxed);
        core.idle(&mut packets);
        assert_eq!(core.feed().unwrap().next_seq(), 3, "durable: it leaves");
        assert_eq!(packets.0.len(), 2);
    }
}
