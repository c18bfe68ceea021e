//! The order record of seed 000: eight timestamps taken along one order's round trip
//! from a strategy through the order engine to a venue and back. The SDK's `Event`
//! carries them between processes; the dispatch bench's `Order` carries them between
//! threads. All are nanoseconds of one monotonic clock; 0 means "not known" (a risk
//! reject never reaches a gateway).

/// The eight timestamps, indexed by the constants below.
pub type Stamps = [u64; COUNT];

/// How many timestamps an order record holds.
pub const COUNT: usize = 8;

/// t1: the strategy sent the order (in the bench: its scheduled fire time, so a late
/// send counts against the system, not the schedule: no coordinated omission).
pub const STRATEGY_SEND: usize = 0;
/// t2: the orchestrator popped it from the strategy's submit queue.
pub const ORCH_RECV_SUBMIT: usize = 1;
/// t3: the orchestrator pushed it into the gateway inbox (after risk).
pub const ORCH_DISPATCH: usize = 2;
/// t4: the gateway popped it and handed it to the venue.
pub const GATEWAY_RECV: usize = 3;
/// t5: the gateway received the venue's answer.
pub const GATEWAY_DONE: usize = 4;
/// t6: the orchestrator popped the completion.
pub const ORCH_RECV_COMPLETION: usize = 5;
/// t7: the orchestrator pushed the event into the strategy's return queue.
pub const ORCH_RETURN: usize = 6;
/// t8: the strategy popped the event.
pub const STRATEGY_RECV: usize = 7;

/// Names, in index order.
pub const NAMES: [&str; COUNT] = [
    "t1 strategy_send",
    "t2 orch_recv_submit",
    "t3 orch_dispatch",
    "t4 gateway_recv",
    "t5 gateway_done",
    "t6 orch_recv_completion",
    "t7 orch_return",
    "t8 strategy_recv",
];
