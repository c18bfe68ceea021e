//! What the orchestrator core takes in and gives out: plain data, no handles.
//!
//! The shell around the core (`peregrine-engine`'s orchestrator thread) pops an
//! input from a ring or a queue, reads the clock, calls
//! [`crate::Orchestrator::handle`] and then carries out the [`Output`]s in order:
//! it appends [`Output::Record`]s to the journal, hands [`Output::Gateway`]
//! commands to the gateway threads (a new order only once the journal holds its
//! `Sent` record: the write-ahead rule), pushes [`Output::Event`]s into the strategies'
//! return rings, and so on. What it could not carry out comes back as an input
//! ([`Input::Undelivered`]).

use peregrine_strategy::msg::{Event, Request};
use peregrine_types::{Price, Qty};
use peregrine_venues::{Report, VenueError, VenueOrder};

use crate::record::Rec;

/// Orchestrator → gateway.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GatewayCmd {
    /// Send a new order.
    New(VenueOrder),
    /// One leg of an order list. A list travels as its legs, one command each, in
    /// leg order with nothing between them (consecutive engine ids); the gateway
    /// gathers them and sends the list once its last leg is in, entered together or
    /// not at all ([`peregrine_venues::Venue::submit_list`]). The shell hands all of
    /// a list's legs to the gateway or none ([`Input::Undelivered`] for each). One
    /// leg per command keeps every plain order's command its own size (at most 72
    /// bytes, checked at compile time) instead of three orders wide.
    ListLeg {
        /// OCO, OTO or OTOCO.
        kind: peregrine_types::ListKind,
        /// The leg's index in the list, from 0.
        index: u8,
        /// The leg.
        order: VenueOrder,
    },
    /// Cancel an order by engine id.
    Cancel(u64),
    /// Change an order's limit price and open quantity.
    Replace {
        /// The engine's order id.
        engine_id: u64,
        /// New limit price.
        price: Price,
        /// New open quantity.
        qty: Qty,
    },
}

impl GatewayCmd {
    /// The engine order id the command is about.
    pub fn engine_id(&self) -> u64 {
        match *self {
            GatewayCmd::New(o) => o.engine_id,
            GatewayCmd::ListLeg { order, .. } => order.engine_id,
            GatewayCmd::Cancel(id) | GatewayCmd::Replace { engine_id: id, .. } => id,
        }
    }
}

/// The most a [`GatewayCmd`] may take: a plain new order and its tag. Every command
/// is copied through the orchestrator's outputs, the gateway's inbox and its held
/// queue, so an order list may not widen it (2026-11-28: 200 bytes with three legs
/// inline, 72 with one leg per command; docs/engine.md, "Order lists").
const GATEWAY_CMD_MAX: usize = 72;
const _: () = assert!(std::mem::size_of::<GatewayCmd>() <= GATEWAY_CMD_MAX);

/// What a completion says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompletionKind {
    /// A venue report.
    Report(Report),
    /// The venue refused the cancel synchronously (unknown order, busy, disconnected).
    CancelFailed(VenueError),
    /// The venue refused the submit synchronously (busy, disconnected).
    SubmitFailed(VenueError),
    /// The venue refused the replace synchronously (unknown order, busy, disconnected).
    ReplaceFailed(VenueError),
    /// The venue's report stream has been processed up to here: the next report
    /// sequence number to ask for after a restart (journaled, after the reports it
    /// covers; `engine_id` is 0).
    Cursor(u64),
}

/// Gateway → orchestrator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Completion {
    /// Venue index.
    pub venue: u32,
    /// The engine's order id.
    pub engine_id: u64,
    /// What happened.
    pub kind: CompletionKind,
    /// t3: when the orchestrator's shell handed the command to the gateway (0 unknown).
    pub t3: u64,
    /// t4: when the gateway handed the order to the venue.
    pub t4: u64,
    /// t5: when the gateway got this report.
    pub t5: u64,
    /// The delay D the venue scheduled for the order (0 unknown).
    pub scheduled_ns: u64,
}

// Operator commands (their handling: `control`); plain data like every input and
// output, so they live here.

/// Whose limits a `limits` command is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LimitScope {
    /// Show the global limits and every strategy's.
    All,
    /// The global limits.
    Global,
    /// One strategy's.
    Strategy(String),
}

/// A command for the orchestrator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ControlCmd {
    /// Kill switch on, cancel all, reply when confirmed.
    Kill {
        /// Request id, echoed in the reply.
        id: u64,
        /// `None`: every strategy.
        strategy: Option<String>,
        /// Give up after this long.
        timeout_ms: u64,
    },
    /// Kill switch off (the strategy's, or every strategy's and the global one):
    /// orders are accepted again; journaled as the kill is.
    Release {
        /// Request id, echoed in the reply.
        id: u64,
        /// `None`: every strategy and the global switch.
        strategy: Option<String>,
    },
    /// Show or change risk limits; applied by the orchestrator between orders.
    Limits {
        /// Request id, echoed in the reply.
        id: u64,
        /// Whose.
        scope: LimitScope,
        /// `(key, value)` pairs, already checked by [`peregrine_risk::Limits::parse_changes`]; empty:
        /// only show.
        changes: Vec<(String, String)>,
    },
}

/// The orchestrator's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControlReply {
    /// The request's id.
    pub id: u64,
    /// Success?
    pub ok: bool,
    /// Human text.
    pub text: String,
}

/// One input of [`crate::Orchestrator::handle`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    /// A request popped from strategy `strategy`'s submit ring (`now` is its t2).
    Request {
        /// Strategy index.
        strategy: u16,
        /// The raw request, decoded (and refused if malformed) by the core.
        req: Request,
    },
    /// A venue report or refusal from a gateway (`now` is its t6).
    Completion(Completion),
    /// Housekeeping: kill progress, liveness, re-arming dead strategies. The shell
    /// sends one at least every few milliseconds while it runs; the gap between two
    /// inputs is the engine's own loop clock (see [`crate::CoreConfig::stall_ns`]).
    Tick,
    /// An operator command from the control socket.
    Control(ControlCmd),
    /// The shell found strategy `strategy`'s process gone (its pid, from its
    /// heartbeats, no longer exists or is a zombie).
    ProcessGone {
        /// Strategy index.
        strategy: u16,
    },
    /// The shell made fresh rings for a dead strategy ([`Output::RecreateRings`]).
    RingsReady {
        /// Strategy index.
        strategy: u16,
    },
    /// The shell could not make them (it is asked again at a later tick).
    RingsFailed {
        /// Strategy index.
        strategy: u16,
    },
    /// The shell could not hand `cmd` to venue `venue`'s gateway (its inbox was
    /// full): the core takes it back as refused.
    Undelivered {
        /// Venue index.
        venue: u32,
        /// The command.
        cmd: GatewayCmd,
    },
    /// The journal failed (a write or sync error): nothing more can be made durable.
    JournalFailed,
}

/// Why a strategy was declared dead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeathCause {
    /// Silent for the heartbeat timeout (measured on the engine's own loop clock).
    Silent,
    /// Its process is gone.
    ProcessExited,
}

impl DeathCause {
    /// In words.
    pub fn as_str(self) -> &'static str {
        match self {
            DeathCause::Silent => "heartbeat timeout",
            DeathCause::ProcessExited => "process exited",
        }
    }
}

/// Something worth a log line (the shell formats and logs it off the order path).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Note {
    /// A strategy was declared dead; its kill switch is on and `cancels` cancels went
    /// out.
    StrategyDead {
        /// Strategy index.
        strategy: u16,
        /// Why.
        cause: DeathCause,
        /// Cancels sent.
        cancels: u64,
    },
    /// Every order of a dead strategy's incarnation has ended and its fresh rings are
    /// in place: it may attach again.
    Rearmed {
        /// Strategy index.
        strategy: u16,
        /// The new incarnation.
        generation: u32,
    },
    /// The engine's own loop did not run for `gap_ns` (not scheduled, or blocked):
    /// the silence of strategies during that gap was not held against them.
    Stalled {
        /// How long.
        gap_ns: u64,
    },
    /// The journal failed: the global kill switch is on until a restart.
    JournalFailed,
    /// The orchestrator's order table is full: new orders are refused (busy).
    OrderTableFull,
}

/// One output of [`crate::Orchestrator::handle`], carried out by the shell in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Output {
    /// Push `event` into strategy `strategy`'s return ring (the shell stamps t7).
    Event {
        /// Strategy index.
        strategy: u16,
        /// The event.
        event: Event,
    },
    /// Hand `cmd` to venue `venue`'s gateway, after every record output before it is
    /// in the journal (the shell tags it with the journal position).
    Gateway {
        /// Venue index.
        venue: u32,
        /// The command.
        cmd: GatewayCmd,
    },
    /// Append a record to the journal (with a journal configured).
    Record(Rec),
    /// Answer an operator command.
    Reply(ControlReply),
    /// Publish a fresh stats snapshot now (before the reply that follows it).
    Publish,
    /// A strategy was declared dead: unlink its ring files (no new process may attach
    /// to rings that may still hold the old one's messages), keep reading the old ones.
    RetireRings {
        /// Strategy index.
        strategy: u16,
    },
    /// Every order of a dead strategy has ended: create fresh rings at the same paths
    /// and answer with [`Input::RingsReady`] or [`Input::RingsFailed`].
    RecreateRings {
        /// Strategy index.
        strategy: u16,
    },
    /// A log line's worth.
    Note(Note),
}

/// The outputs of one or more [`crate::Orchestrator::handle`] calls: a buffer the
/// shell owns and drains, reserved once so the order path never allocates.
#[derive(Debug)]
pub struct Outputs {
    items: Vec<Output>,
}

impl Default for Outputs {
    fn default() -> Self {
        Outputs::with_capacity(256)
    }
}

impl Outputs {
    /// An empty buffer with room for `n` outputs.
    pub fn with_capacity(n: usize) -> Outputs {
        Outputs {
            items: Vec::with_capacity(n),
        }
    }

    /// Appends one.
    #[inline]
    pub(crate) fn push(&mut self, o: Output) {
        self.items.push(o);
    }

    /// Takes every output, in order (the buffer keeps its capacity).
    pub fn drain(&mut self) -> std::vec::Drain<'_, Output> {
        self.items.drain(..)
    }

    /// The outputs so far.
    pub fn as_slice(&self) -> &[Output] {
        &self.items
    }

    /// No outputs.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Forgets every output.
    pub fn clear(&mut self) {
        self.items.clear();
    }
}
