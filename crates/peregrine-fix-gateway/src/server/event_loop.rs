//! The readiness-driven loop. Each iteration is one `epoll_wait` over every socket
//! the gateway owns ([`crate::poller`]): with a zero timeout while the idler spins or
//! yields, with the time to the next timer once it parks. Then, and only for what was
//! reported:
//!
//! * a readable pending connection is read, and attached to its session when its
//!   Logon is whole (that session is then served at once: the Logon is in hand);
//! * each session with a ready socket is served once ([`Slot::serve`]), however many
//!   of its sockets were ready;
//! * the listener, when readable, is drained of waiting connections.
//!
//! Timers (FIX heartbeats and TestRequests, logon timeouts, the native sessions'
//! reconnects, heartbeats and silence limits) run on a timer pass that serves every
//! session, at least every [`TIMER_TICK_NS`] and exactly when a native timer is due.
//! Nothing else is done per iteration: one clock read (~25 ns beside the
//! `epoll_wait`'s system call), no `recv` on sockets with nothing to read, no store
//! flush for sessions nobody touched.

use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use peregrine_fix::codec::FrameLimits;
use peregrine_queue::poller::ready;
use peregrine_queue::WaitStrategy;
use peregrine_types::wall_ns;

use crate::poller::{Poller, Token, Watch};

use super::link::write_out;
use super::pending::{Accepted, Pending};
use super::slot::Slot;

/// The longest a parked loop blocks, and the longest between timer passes. The FIX
/// session timers (heartbeats, TestRequest, the Logon and Logout timeouts) and the
/// pending connections' logon timeout count whole seconds, and a TestRequest goes out
/// only after a HeartBtInt plus 20% of silence: a pass at least every 100 ms keeps
/// them within a tenth of their least setting (1 s). The native sessions' timers are
/// kept exactly ([`crate::native::NativeConn::due_in`]). It also bounds how long
/// `stop` waits.
pub(super) const TIMER_TICK_NS: u64 = 100_000_000;

/// How long the listener is left out of the set after `accept(2)` failed for want of
/// descriptors or memory: the connection stays queued, so the listener would be
/// reported on every wait and keep the loop from ever parking.
const ACCEPT_PAUSE_NS: u64 = 100_000_000;

/// The loop's state: its sockets, their sessions, and what one iteration gathered.
#[derive(Debug)]
pub(super) struct Gateway {
    pub poller: Poller,
    pub listener: TcpListener,
    listener_watch: Watch,
    /// Set while the listener is out of the set after a failed accept: when to put it
    /// back.
    accept_paused_until: Option<u64>,
    pub pending: Pending,
    pub slots: Vec<Slot>,
    comp_id: String,
    /// The tokens of the last wait (allocated once).
    ready: Vec<Token>,
    /// The slots to serve this iteration (allocated once).
    queue: Vec<usize>,
    /// When the next timer pass is due.
    timers_at: u64,
}

impl Gateway {
    /// Puts the listener in a new epoll set; the sessions' sockets join as they come.
    pub(super) fn new(
        listener: TcpListener,
        slots: Vec<Slot>,
        comp_id: String,
        max_pending: usize,
        limits: FrameLimits,
        logon_timeout_ns: u64,
    ) -> std::io::Result<Gateway> {
        // Room for every socket at once: one wait reports all that are ready.
        let poller = Poller::new(1 + max_pending + 2 * slots.len())?;
        let mut listener_watch = Watch::default();
        listener_watch.register(&poller, &listener, Token::Listener)?;
        let n = slots.len();
        Ok(Gateway {
            poller,
            listener,
            listener_watch,
            accept_paused_until: None,
            pending: Pending::new(max_pending, limits, logon_timeout_ns),
            slots,
            comp_id,
            ready: Vec::with_capacity(1 + max_pending + 2 * n),
            queue: Vec::with_capacity(n),
            timers_at: 0,
        })
    }

    /// Runs until `stop` is set, idling by `wait` (spin and yield: zero-timeout waits;
    /// park: a wait until input or the next timer).
    pub(super) fn run(&mut self, wait: WaitStrategy, stop: &AtomicBool) -> std::io::Result<()> {
        let mut idler = wait.idler();
        let mut timeout = Duration::ZERO;
        // Relaxed: a stop request needs no ordering with other memory.
        while !stop.load(Ordering::Relaxed) {
            let busy = self.turn(timeout)?;
            timeout = Duration::ZERO;
            if busy {
                idler.reset();
            } else if idler.idle_or_block() {
                timeout = self.park_for(wall_ns());
            }
        }
        Ok(())
    }

    /// One iteration: wait up to `timeout` for readiness, serve what is ready, run
    /// the timers when due. Returns whether anything happened.
    pub(super) fn turn(&mut self, timeout: Duration) -> std::io::Result<bool> {
        self.ready.clear();
        let events = self.poller.wait(Some(timeout))?;
        self.ready
            .extend(events.iter().filter_map(|e| Token::decode(ready(e).token)));
        let now = wall_ns();
        let mut busy = !self.ready.is_empty();
        let mut accept = false;
        for k in 0..self.ready.len() {
            match self.ready[k] {
                Token::Listener => accept = true,
                Token::Pending(i) => {
                    let attached =
                        self.pending
                            .serve(i, &self.poller, &mut self.slots, &self.comp_id, now);
                    if let Some(s) = attached {
                        self.enqueue(s);
                    }
                }
                Token::Fix(s) if s < self.slots.len() => {
                    self.slots[s].fix_ready = true;
                    self.enqueue(s);
                }
                Token::Native(s) if s < self.slots.len() => {
                    self.slots[s].native_ready = true;
                    self.enqueue(s);
                }
                Token::Fix(_) | Token::Native(_) => {}
            }
        }
        let timers = now >= self.timers_at;
        if timers {
            busy |= self.pending.expire(&self.poller, now);
            self.resume_accepting(now);
            for s in 0..self.slots.len() {
                self.enqueue(s);
            }
            self.timers_at = now + TIMER_TICK_NS;
        }
        for q in 0..self.queue.len() {
            let s = self.queue[q];
            let slot = &mut self.slots[s];
            busy |= slot.serve(s, &self.poller, now, timers);
            // A session's turn can bring its native timer nearer (a lost connection
            // reconnects at once or after a pause); it never pushes it further than
            // the pass already planned.
            self.timers_at = self
                .timers_at
                .min(now.saturating_add(slot.native.due_in(now)));
        }
        self.queue.clear();
        if accept {
            busy |= self.accept(now);
        }
        Ok(busy)
    }

    fn enqueue(&mut self, s: usize) {
        let slot = &mut self.slots[s];
        if !slot.queued {
            slot.queued = true;
            self.queue.push(s);
        }
    }

    fn accept(&mut self, now: u64) -> bool {
        match self.pending.accept(&self.listener, &self.poller, now) {
            Accepted::Drained { any } => any,
            Accepted::Failed => {
                self.listener_watch.remove(&self.poller, &self.listener);
                self.accept_paused_until = Some(now + ACCEPT_PAUSE_NS);
                true
            }
        }
    }

    fn resume_accepting(&mut self, now: u64) {
        if self.accept_paused_until.is_some_and(|at| now >= at) {
            match self
                .listener_watch
                .register(&self.poller, &self.listener, Token::Listener)
            {
                Ok(()) => self.accept_paused_until = None,
                Err(_) => self.accept_paused_until = Some(now + ACCEPT_PAUSE_NS),
            }
        }
    }

    /// How long a parked wait may block: until the next timer pass, at most
    /// [`TIMER_TICK_NS`].
    fn park_for(&self, now: u64) -> Duration {
        Duration::from_nanos(self.timers_at.saturating_sub(now).min(TIMER_TICK_NS))
    }

    /// Takes the listener out of the set (a test's negative control).
    #[cfg(test)]
    pub(super) fn listener_watch_remove(&mut self) {
        self.listener_watch.remove(&self.poller, &self.listener);
    }

    /// Logs every client out (best effort: the output is written, briefly retried)
    /// and closes its connection.
    pub(super) fn log_out_all(&mut self) {
        for slot in &mut self.slots {
            if let Some(link) = slot.fix.take() {
                let _ = slot.bridge.session.logout("gateway stopping", wall_ns());
                write_out(&mut slot.bridge.session, &link.stream, true);
                link.close(&self.poller);
            }
        }
    }
}
