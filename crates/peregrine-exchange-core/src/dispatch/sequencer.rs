//! Batch mode: the sequencer groups incoming requests into ticks.
//!
//! Ticks sit on a fixed grid of `tick_ns`. A request arriving at clock time `t` joins
//! the open tick, or opens tick `k = t / tick_ns + 1` (the next grid point after `t`,
//! and always after the last tick run). When the clock reaches `k · tick_ns` the tick
//! runs: its commands are journaled and executed in arrival order, all with timestamp
//! `k · tick_ns`, the commitment window closes, and the caller commits the journal
//! before any report leaves (as for any batch). So `tick_seq = timestamp / tick_ns`
//! and a tick is exactly one commitment window (`peregrine_commit::WindowState`).
//!
//! **Bounded.** The tick buffer is allocated once with `tick_capacity` slots and
//! never grows. A request that finds the tick full *closes it early*: the tick runs
//! at once, still with its grid timestamp `k · tick_ns` (at most one tick ahead of the
//! clock), and the request opens tick `k + 1`. Nothing is rejected or dropped; under
//! sustained overload tick timestamps can run ahead of the wall clock, by one tick per
//! early close beyond what the clock covers.

use peregrine_types::{AccountId, Timestamp};
use peregrine_wire::v2::Inbound;

use crate::core::Core;
use crate::journal::CommandLog;
use crate::seams::{Outbox, Request, SessionKey};

/// The tick buffer.
#[derive(Debug)]
pub struct Sequencer {
    buf: Vec<Request>,
    capacity: usize,
    tick_ns: u64,
    /// Index of the open tick (valid while `buf` is not empty).
    open: u64,
    /// Index of the last tick run.
    last: u64,
    ticks: u64,
    early: u64,
}

impl Sequencer {
    /// A sequencer with ticks of `tick_ns` holding up to `capacity` requests.
    pub fn new(tick_ns: u64, capacity: usize) -> Self {
        let capacity = capacity.max(1);
        Sequencer {
            buf: Vec::with_capacity(capacity),
            capacity,
            tick_ns: tick_ns.max(1),
            open: 0,
            last: 0,
            ticks: 0,
            early: 0,
        }
    }

    /// Adds a request arriving at `now`. Runs the open tick first when it is full
    /// (an early close); returns whether a tick ran.
    pub fn push<L: CommandLog>(
        &mut self,
        r: Request,
        now: Timestamp,
        core: &mut Core<L>,
        out: &mut impl Outbox,
    ) -> std::io::Result<bool> {
        let mut ran = false;
        if self.buf.len() >= self.capacity {
            self.early += 1;
            self.run(core, out)?;
            ran = true;
        }
        if self.buf.is_empty() {
            self.open = (now.0 / self.tick_ns + 1).max(self.last + 1);
        }
        self.buf.push(r);
        Ok(ran)
    }

    /// When the open tick is due (none open: `None`).
    pub fn due_at(&self) -> Option<Timestamp> {
        (!self.buf.is_empty()).then(|| Timestamp(self.open.saturating_mul(self.tick_ns)))
    }

    /// Whether the open tick's boundary has passed at `now`.
    pub fn due(&self, now: Timestamp) -> bool {
        !self.buf.is_empty() && now.0 >= self.open.saturating_mul(self.tick_ns)
    }

    /// Runs the open tick if it is due; returns whether it ran.
    pub fn run_if_due<L: CommandLog>(
        &mut self,
        now: Timestamp,
        core: &mut Core<L>,
        out: &mut impl Outbox,
    ) -> std::io::Result<bool> {
        if !self.due(now) {
            return Ok(false);
        }
        self.run(core, out)?;
        Ok(true)
    }

    /// Runs the open tick now: every request in arrival order at the tick's
    /// timestamp, then closes the commitment window.
    fn run<L: CommandLog>(
        &mut self,
        core: &mut Core<L>,
        out: &mut impl Outbox,
    ) -> std::io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let ts = Timestamp(self.open.saturating_mul(self.tick_ns));
        // GTD orders due by the tick expire before its requests see the books.
        core.expire_due(ts, out)?;
        for i in 0..self.buf.len() {
            let r = self.buf[i];
            core.handle_at(r.key, r.account, &r.msg, ts, out)?;
        }
        core.end_tick();
        self.buf.clear();
        self.last = self.open;
        self.ticks += 1;
        Ok(())
    }

    /// With no tick open: when a GTD order is due by the last grid point passed at
    /// `now`, runs a tick of its own there that only expires (so expiry is on time
    /// without requests; an open tick expires first when it runs). Returns whether a
    /// tick ran.
    pub fn expire_if_due<L: CommandLog>(
        &mut self,
        now: Timestamp,
        core: &mut Core<L>,
        out: &mut impl Outbox,
    ) -> std::io::Result<bool> {
        let k = now.0 / self.tick_ns;
        if !self.buf.is_empty() || k <= self.last {
            return Ok(false);
        }
        let ts = Timestamp(k.saturating_mul(self.tick_ns));
        if core.next_expiry().is_none_or(|at| at > ts) {
            return Ok(false);
        }
        core.expire_due(ts, out)?;
        core.end_tick();
        self.last = k;
        self.ticks += 1;
        Ok(true)
    }

    /// Requests waiting in the open tick.
    pub fn pending(&self) -> usize {
        self.buf.len()
    }

    /// Ticks run, and how many of them closed early because the buffer was full.
    pub fn stats(&self) -> (u64, u64) {
        (self.ticks, self.early)
    }

    /// Builds a [`Request`] (for callers that hold the parts).
    pub fn request(key: SessionKey, account: AccountId, msg: Inbound) -> Request {
        Request::trading(key, account, msg)
    }
}
