//! The FIX session layer as a sans-IO state machine.
//!
//! The caller owns the socket and the clock. Per connection it calls
//! [`Session::connect`]; for every read, [`Session::receive`] on its receive buffer
//! until it returns [`Received::NeedMore`] (dropping the consumed bytes each time);
//! [`Session::poll`] whenever time passes (heartbeats, TestRequest, timeouts);
//! [`Session::send_app`] to send an application message; and it writes
//! [`Session::outbound`] to the socket, then [`Session::consume_outbound`]. On
//! [`Event::Disconnect`] it writes what is pending, closes, and calls
//! [`Session::disconnected`]. Time is nanoseconds since the Unix epoch (it becomes
//! SendingTime).
//!
//! Acceptor and initiator share all of it; only who sends the first Logon differs.
//! Rules (FIX session protocol, FIX 4.4): see `docs/fix.md`, "Session rules"; each
//! has a unit test in `session/tests`.

mod acceptor;
mod admin;
mod config;
mod event;
mod gap;
mod inbound;
mod logon;
mod outbound;
mod reject;
mod timers;

#[cfg(test)]
mod tests;

pub use acceptor::{identify_logon, LogonIdentity};
pub use config::{Role, SessionConfig};
pub use event::{DisconnectReason, Event, Received};
pub use reject::SessionRejectReason;

use crate::codec::Encoder;
use crate::store::{MessageStore, StoreError};

use gap::{Gap, Queue};

/// Where the session is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// No connection.
    Disconnected,
    /// Connected; the Logon exchange has not completed (since `since`, ns).
    AwaitingLogon {
        /// When the connection (acceptor) or our Logon (initiator) started.
        since: u64,
    },
    /// Logged on.
    Active,
    /// We sent a Logout at `at` and wait for the answer.
    LogoutSent {
        /// When.
        at: u64,
    },
    /// The session asked for a disconnect; nothing more is processed.
    Closing,
}

/// One FIX session: its settings, its store, and the state of its connection.
#[derive(Debug)]
pub struct Session<S: MessageStore> {
    config: SessionConfig,
    store: S,
    state: State,
    encoder: Encoder,
    /// Bytes produced and not yet taken by the caller, from `out_start`.
    out: Vec<u8>,
    out_start: usize,
    /// The heartbeat interval in force (ns).
    heartbeat_ns: u64,
    last_sent: u64,
    last_received: u64,
    /// TestReqID (as a counter) of a TestRequest we sent and that is unanswered.
    test_request: Option<u64>,
    test_counter: u64,
    /// The inbound gap we asked a resend for, while it is open.
    gap: Option<Gap>,
    /// Messages that arrived ahead of the gap, to process once it is filled.
    queue: Queue,
    /// Whether the Logon being answered/sent carries ResetSeqNumFlag=Y.
    logon_reset: bool,
    /// A reset the store refused when the connection ended, to do at the next one.
    reset_pending: bool,
    /// The message being handled came from the queue (its checks at arrival hold).
    from_queue: bool,
}

impl<S: MessageStore> Session<S> {
    /// A session (not connected) over `store`, which holds its sequence numbers.
    pub fn new(config: SessionConfig, store: S) -> Self {
        let heartbeat_ns = u64::from(config.heartbeat_secs) * 1_000_000_000;
        Session {
            config,
            store,
            state: State::Disconnected,
            encoder: Encoder::with_capacity(1024),
            out: Vec::with_capacity(64 * 1024),
            out_start: 0,
            heartbeat_ns,
            last_sent: 0,
            last_received: 0,
            test_request: None,
            test_counter: 0,
            gap: None,
            queue: Queue::default(),
            logon_reset: false,
            reset_pending: false,
            from_queue: false,
        }
    }

    /// The settings.
    pub fn config(&self) -> &SessionConfig {
        &self.config
    }

    /// The state of the connection.
    pub fn state(&self) -> State {
        self.state
    }

    /// Whether the session is logged on.
    pub fn is_logged_on(&self) -> bool {
        matches!(self.state, State::Active | State::LogoutSent { .. })
    }

    /// The store (sequence numbers, sent messages).
    pub fn store(&self) -> &S {
        &self.store
    }

    /// The store, mutably (for the caller to reset it between trading days).
    pub fn store_mut(&mut self) -> &mut S {
        &mut self.store
    }

    /// A new connection. The initiator sends its Logon now (resetting both sequence
    /// numbers first if configured); the acceptor waits for the peer's.
    pub fn connect(&mut self, now: u64) -> Result<(), StoreError> {
        self.out.clear();
        self.out_start = 0;
        self.state = State::AwaitingLogon { since: now };
        self.last_received = now;
        self.last_sent = now;
        self.test_request = None;
        self.forget_inbound();
        self.logon_reset = false;
        if self.reset_pending {
            self.store.reset(now)?;
            self.reset_pending = false;
        }
        if self.config.role == Role::Initiator {
            if self.config.reset_on_logon {
                self.store.reset(now)?;
                self.logon_reset = true;
            }
            self.heartbeat_ns = u64::from(self.config.heartbeat_secs) * 1_000_000_000;
            self.send_logon(now)?;
        }
        Ok(())
    }

    /// The connection is gone (closed by either side). Unsent output is dropped:
    /// everything sequenced is in the store for the resend after the next Logon.
    /// With `reset_on_disconnect` both sequence numbers start again (if the store
    /// refuses now, at the next [`Session::connect`]).
    pub fn disconnected(&mut self) {
        self.state = State::Disconnected;
        self.out.clear();
        self.out_start = 0;
        self.test_request = None;
        self.forget_inbound();
        if self.config.reset_on_disconnect {
            let now = self.last_received.max(self.last_sent);
            self.reset_pending = self.store.reset(now).is_err();
        }
    }

    /// Forgets the inbound gap and the messages queued behind it.
    fn forget_inbound(&mut self) {
        self.gap = None;
        self.queue.clear();
    }

    /// Bytes to write to the socket. Flushes the store first, so no message can reach
    /// the peer before it is durable (per the store's policy).
    pub fn outbound(&mut self) -> Result<&[u8], StoreError> {
        self.store.flush()?;
        Ok(&self.out[self.out_start..])
    }

    /// Records that `n` bytes of [`Session::outbound`] were written.
    pub fn consume_outbound(&mut self, n: usize) {
        self.out_start = (self.out_start + n).min(self.out.len());
        if self.out_start == self.out.len() {
            self.out.clear();
            self.out_start = 0;
        } else if self.out_start > 64 * 1024 && self.out_start * 2 > self.out.len() {
            self.out.drain(..self.out_start);
            self.out_start = 0;
        }
    }

    /// Bytes produced and not yet written.
    pub fn pending_outbound(&self) -> usize {
        self.out.len() - self.out_start
    }

    /// Whether unsent output passed `max_outbound_bytes` (the peer does not read):
    /// the caller should disconnect; the peer gets everything by resend later.
    pub fn is_slow_consumer(&self) -> bool {
        self.pending_outbound() > self.config.max_outbound_bytes
    }
}
