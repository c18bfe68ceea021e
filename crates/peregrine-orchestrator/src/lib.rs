//! The order engine's orchestrator core: every decision the engine makes about an
//! order, as a state machine over plain data.
//!
//! ```text
//!   Input (plain data)                                      Output (plain data)
//!   Request{strategy, req}   ─┐                        ┌─▶ Event{strategy, event}   → return ring
//!   Completion (venue)        ├─▶ Orchestrator::handle ─┼─▶ Record(Rec)              → journal
//!   Tick · Control(cmd)       │     (input, now, out)   ├─▶ Gateway{venue, cmd}      → gateway inbox,
//!   ProcessGone · RingsReady ─┘                         │                              after its records
//!   Undelivered · JournalFailed                         └─▶ Reply · Publish · Note · Retire/RecreateRings
//! ```
//!
//! [`Orchestrator::handle`] takes one [`Input`] and the time `now` (read by the
//! caller) and appends [`Output`]s to a buffer the caller owns. It owns no thread,
//! socket, file or clock: the engine's orchestrator thread (`peregrine-engine`) is a
//! thin shell that pops inputs from the shared-memory rings and queues, calls
//! `handle`, and carries the outputs out. Tests drive it directly, deterministically
//! (`tests/sim.rs`, a seeded harness with venues that disconnect, fill partially and
//! replay). On the per-order path it allocates nothing and makes no system call
//! (`tests/no_alloc.rs`, with the counting allocator).
//!
//! What it decides:
//!
//! * new orders: decode, engine checks (venue, instrument, strategy alive, room),
//!   pre-trade risk ([`peregrine_risk`]), then the journal record and the gateway
//!   command (write-ahead: the shell hands the command over only once the record is in
//!   the journal);
//! * cancels and replaces, and what venue reports do to risk, positions and PnL;
//! * the kill switch, run-time limit changes (operator commands, [`control`]);
//! * liveness: a strategy silent for the heartbeat timeout is dead, measured on the
//!   engine's own loop clock (the gap between two inputs), so a stall of the engine
//!   itself never kills anyone; a dead strategy's orders are cancelled, and once all
//!   have ended it gets fresh rings;
//! * recovery: the journal's records replayed onto a fresh core ([`replay`]).
//!
//! Modules: [`io`] (inputs and outputs), [`config`], `state` (the core and `handle`),
//! `submit` (requests), `complete` (venue reports), `house` (housekeeping), [`control`]
//! (operator commands), [`record`] (journal records and their codec), [`replay`],
//! `report` (its sections of `stats` and the summary), [`summary`] (the summary as
//! data), [`units`] (how numbers are shown).
#![deny(unsafe_code)]

mod complete;
pub mod config;
pub mod control;
mod house;
pub mod io;
mod lists;
pub mod record;
mod rejects;
pub mod replay;
mod report;
mod state;
mod submit;
pub mod summary;
pub mod units;

pub use config::{CoreConfig, DeadPolicy, StrategySpec, VenueSpec};
pub use control::{ControlCmd, ControlReply, LimitScope};
pub use io::{Completion, CompletionKind, DeathCause, GatewayCmd, Input, Note, Output, Outputs};
pub use record::{Rec, RecError, SentOrder, ORPHAN};
pub use replay::{Recovered, Replayer};
pub use report::engine_reason;
pub use state::{Liveness, Orchestrator};
