//! The client's side of a version-2 order-entry session, sans-IO: the order of the
//! handshake, the continuity of `session_seq` and of the report stream, and the
//! recovery phase after login. Like [`crate::md::sequencer::FeedSequencer`] for the
//! feed, it sees decoded messages and says what they mean; the caller owns the socket
//! (`peregrine-client` wraps it around a blocking connection).
//!
//! ```text
//! Challenge ─▶ login() ─▶ LoginAccepted ─▶ InstrumentDefinition × n ─▶ ReplayStart
//!   ─▶ (reports | OpenOrder… OpenOrdersEnd) ─▶ ReplayEnd ─▶ live
//! LeaderRedirect (a cluster follower, instead of the Challenge) ─▶ closed
//! LeaderRedirect (a cluster leader that lost its quorum, at any later point) ─▶ closed
//! Disconnect (after the login, in any phase: the exchange closes the session) ─▶ closed
//! ```
//!
//! Every report of the session's stream must arrive exactly once and in order: a gap
//! or a repeat is a [`Violation`] (the exchange never skips a report), and a heartbeat
//! announcing a later `next_report_seq` than the client has reached means reports
//! went missing. For a drop copy of every account, continuity is checked per account
//! once an account's first report was seen, and [`ClientSession::resume_point`] is the
//! engine sequence number to resume from.

use peregrine_types::AccountId;
use std::collections::BTreeMap;

use crate::auth::AccountKey;
use crate::field::{LeaderAddress, Pad, SessionKind};
use crate::v2::session::{Login, LoginAccepted};
use crate::v2::Outbound;

/// What the client asks for at login.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoginParams {
    /// The account whose key proves the login.
    pub account: AccountId,
    /// Trading or drop copy.
    pub kind: SessionKind,
    /// Whose reports (None: every account, operators only).
    pub target: Option<AccountId>,
    /// Requested heartbeat interval, milliseconds.
    pub heartbeat_ms: u32,
    /// The next report sequence number the client expects (0: none, start live);
    /// an engine sequence number for every account.
    pub resume_from: u64,
}

impl LoginParams {
    /// A trading session of `account` resuming at `resume_from`.
    pub fn trading(account: AccountId, resume_from: u64) -> Self {
        LoginParams {
            account,
            kind: SessionKind::Trading,
            target: Some(account),
            heartbeat_ms: 1000,
            resume_from,
        }
    }
}

/// Where the session is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Waiting for the exchange's `Challenge`.
    AwaitChallenge,
    /// `Login` sent; waiting for the answer.
    AwaitAnswer,
    /// Receiving instrument definitions (this many left).
    Instruments(u32),
    /// Waiting for `ReplayStart`.
    AwaitReplay,
    /// Receiving the replayed reports (this many left).
    Replaying(u64),
    /// Receiving the open-orders snapshot that replaces a replay.
    Snapshot,
    /// Waiting for `ReplayEnd`.
    AwaitReplayEnd,
    /// Live traffic.
    Live,
    /// Rejected, redirected or violated: nothing more is accepted.
    Closed,
}

/// What one message means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// The challenge arrived: send this `Login` ([`ClientSession::login`] made it).
    SendLogin(Login),
    /// The login succeeded.
    LoggedIn(LoginAccepted),
    /// The login failed: reason and the delay before another attempt may succeed.
    Rejected {
        /// The login reason code.
        reason: u16,
        /// Milliseconds to wait (throttling), 0 if none.
        retry_after_ms: u32,
    },
    /// A cluster node that is not the leader sent `LeaderRedirect` instead of the
    /// challenge, or a leader that lost its quorum sent it as the last message of a
    /// session: the session is closed; log in at the leader instead (with no leader
    /// known, try the cluster's nodes after `retry_after_ms`).
    Redirect {
        /// The leader's node id; 0: no leader known yet.
        leader_id: u64,
        /// The leader's order-entry address (`host:port`); `None` when the message
        /// carries none (no leader known) or its bytes are not text.
        address: Option<LeaderAddress>,
        /// Milliseconds to wait before trying again when no leader is known.
        retry_after_ms: u32,
    },
    /// An instrument definition (`Outbound::InstrumentDefinition`).
    Instrument,
    /// The recovery phase started; `replay` reports follow, or a snapshot when
    /// `reason` is non-zero.
    RecoveryStarted {
        /// Reports to be replayed.
        replay: u64,
        /// 0, or the recovery reason code (the client's position was lost).
        reason: u16,
    },
    /// A report of the session's stream, in order (replayed during recovery, live
    /// after).
    Report {
        /// True during the recovery phase.
        replayed: bool,
    },
    /// An open order of the snapshot that replaced a replay.
    SnapshotOrder,
    /// Recovery is over; live traffic follows.
    RecoveryDone,
    /// The exchange is closing the session (`Disconnect`), with a disconnect reason
    /// code: nothing more arrives on this connection; reconnect and resume from
    /// [`ClientSession::resume_point`].
    Disconnected {
        /// The disconnect reason code (`reason::DisconnectCode`).
        reason: u16,
    },
    /// Any other message: answers to queries, unsequenced refusals, a copy of an
    /// answer about an account outside the stream, heartbeats.
    Other,
}

/// A message the protocol does not allow where it arrived.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Violation {
    /// `session_seq` did not follow the previous one.
    #[error("session_seq {got}, expected {expected}")]
    SessionSeq {
        /// Expected.
        expected: u64,
        /// Received.
        got: u64,
    },
    /// A report of the stream skipped or repeated a sequence number.
    #[error("report {got} of account {account}, expected {expected}")]
    ReportSeq {
        /// The account.
        account: u32,
        /// Expected.
        expected: u64,
        /// Received.
        got: u64,
    },
    /// A heartbeat or the end of recovery announced reports the client never got.
    #[error("the exchange is at report {announced}, the client at {reached}")]
    Missing {
        /// The exchange's next report sequence number.
        announced: u64,
        /// The client's.
        reached: u64,
    },
    /// A message type out of place (`msg_type` given).
    #[error("message type {0:#04x} out of place")]
    OutOfPlace(u8),
}

/// The client's view of one session. See the module documentation.
#[derive(Debug)]
pub struct ClientSession {
    params: LoginParams,
    phase: Phase,
    next_session_seq: u64,
    /// The stream's next report (single-account scope).
    next_report: u64,
    /// Every-account scope: each account's next report, once seen.
    per_account: BTreeMap<AccountId, u64>,
    /// Every-account scope: the engine sequence number of the last report processed.
    last_engine: u64,
    /// `Login.flags` (e.g. [`super::session::LOGIN_CANCEL_ON_DISCONNECT`]).
    flags: u8,
}

impl ClientSession {
    /// A session about to connect.
    pub fn new(params: LoginParams) -> Self {
        ClientSession {
            params,
            phase: Phase::AwaitChallenge,
            next_session_seq: 1,
            next_report: params.resume_from,
            per_account: BTreeMap::new(),
            last_engine: params.resume_from.saturating_sub(1),
            flags: 0,
        }
    }

    /// Sets the login's session options (`Login.flags`), e.g.
    /// [`super::session::LOGIN_CANCEL_ON_DISCONNECT`].
    pub fn with_login_flags(mut self, flags: u8) -> Self {
        self.flags = flags;
        self
    }

    /// Where the session is.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// The `Login` answering `nonce`, proved with `key`.
    pub fn login(&self, nonce: &[u8; 32], key: &AccountKey) -> Login {
        let mut l = Login {
            next_report_seq: self.params.resume_from,
            proof: [0; 32],
            account: self.params.account,
            target: self.params.target,
            heartbeat_interval_ms: self.params.heartbeat_ms,
            kind: self.params.kind,
            flags: self.flags,
            reserved: Pad,
        };
        l.proof = l.proof_for(key, nonce);
        l
    }

    /// What to resume from on the next login: the next report sequence number of the
    /// account's stream, or, for every account, the engine sequence number of the last
    /// report processed (reports of that command are re-sent; [`Self::on_message`]
    /// drops them as already seen when the session carries its per-account state).
    pub fn resume_point(&self) -> u64 {
        match self.params.target {
            Some(_) => self.next_report,
            None => self.last_engine.max(1),
        }
    }

    /// Processes one message from the exchange (`key` proves the login when the
    /// challenge arrives).
    pub fn on_message(&mut self, msg: &Outbound, key: &AccountKey) -> Result<Step, Violation> {
        if self.phase == Phase::Closed {
            return Err(Violation::OutOfPlace(msg.msg_type()));
        }
        let step = self
            .check_session_seq(msg)
            .and_then(|()| self.step(msg, key));
        if step.is_err() {
            self.phase = Phase::Closed;
        }
        step
    }

    fn check_session_seq(&mut self, msg: &Outbound) -> Result<(), Violation> {
        let got = msg.session_seq();
        if got != self.next_session_seq {
            return Err(Violation::SessionSeq {
                expected: self.next_session_seq,
                got,
            });
        }
        self.next_session_seq += 1;
        Ok(())
    }

    fn step(&mut self, msg: &Outbound, key: &AccountKey) -> Result<Step, Violation> {
        let out_of_place = Err(Violation::OutOfPlace(msg.msg_type()));
        match (self.phase, msg) {
            (Phase::AwaitChallenge, Outbound::Challenge(c)) => {
                self.phase = Phase::AwaitAnswer;
                Ok(Step::SendLogin(self.login(&c.nonce, key)))
            }
            // First on a connection (a follower, instead of the challenge), or last on
            // a session (a leader that lost its quorum, protocol document 4.10).
            (_, Outbound::LeaderRedirect(r)) => {
                self.phase = Phase::Closed;
                let address = match r.address.as_text() {
                    Some(t) if !t.is_empty() => Some(r.address),
                    _ => None,
                };
                Ok(Step::Redirect {
                    leader_id: r.leader_id,
                    address,
                    retry_after_ms: r.retry_after_ms,
                })
            }
            // The last message of a logged-in session, in any phase after the login.
            (Phase::AwaitChallenge | Phase::AwaitAnswer, Outbound::Disconnect(_)) => out_of_place,
            (_, Outbound::Disconnect(d)) => {
                self.phase = Phase::Closed;
                Ok(Step::Disconnected { reason: d.reason.0 })
            }
            (Phase::AwaitAnswer, Outbound::LoginAccepted(a)) => {
                self.phase = match a.instrument_count {
                    0 => Phase::AwaitReplay,
                    n => Phase::Instruments(n),
                };
                if self.params.resume_from == 0 {
                    self.next_report = a.next_report_seq;
                }
                Ok(Step::LoggedIn(*a))
            }
            (Phase::AwaitAnswer, Outbound::LoginRejected(r)) => {
                self.phase = Phase::Closed;
                Ok(Step::Rejected {
                    reason: r.reason.0,
                    retry_after_ms: r.retry_after_ms,
                })
            }
            (Phase::Instruments(n), Outbound::InstrumentDefinition(_)) => {
                self.phase = if n > 1 {
                    Phase::Instruments(n - 1)
                } else {
                    Phase::AwaitReplay
                };
                Ok(Step::Instrument)
            }
            (Phase::AwaitReplay, Outbound::ReplayStart(r)) => {
                if r.reason.0 != 0 {
                    // The position is lost: the stream restarts where the exchange is
                    // (known at ReplayEnd), after an open-orders snapshot.
                    self.next_report = 0;
                    self.per_account.clear();
                }
                self.phase = match (r.reason.0, r.count) {
                    (0, 0) => Phase::AwaitReplayEnd,
                    (0, n) => Phase::Replaying(n),
                    _ => Phase::Snapshot,
                };
                Ok(Step::RecoveryStarted {
                    replay: r.count,
                    reason: r.reason.0,
                })
            }
            (Phase::Replaying(n), m) if m.report().is_some() => {
                self.take_report(m)?;
                self.phase = if n > 1 {
                    Phase::Replaying(n - 1)
                } else {
                    Phase::AwaitReplayEnd
                };
                Ok(Step::Report { replayed: true })
            }
            (Phase::Snapshot, Outbound::OpenOrder(o)) if o.request_id == 0 => {
                Ok(Step::SnapshotOrder)
            }
            (Phase::Snapshot, Outbound::OpenOrdersEnd(e)) if e.request_id == 0 => {
                self.phase = Phase::AwaitReplayEnd;
                Ok(Step::Other)
            }
            (Phase::AwaitReplayEnd, Outbound::ReplayEnd(e)) => {
                if self.next_report == 0 {
                    self.next_report = e.next_report_seq;
                }
                self.check_announced(e.next_report_seq)?;
                self.phase = Phase::Live;
                Ok(Step::RecoveryDone)
            }
            (Phase::Live, Outbound::ServerHeartbeat(h)) => {
                self.check_announced(h.next_report_seq)?;
                Ok(Step::Other)
            }
            (Phase::Live, m) if m.report().is_some() => match self.take_report(m) {
                Ok(true) => Ok(Step::Report { replayed: false }),
                Ok(false) => Ok(Step::Other),
                Err(e) => Err(e),
            },
            (Phase::Live, _) => Ok(Step::Other),
            _ => out_of_place,
        }
    }

    /// Checks a report's place in the stream. `Ok(false)`: a report about an account
    /// outside the session's scope (the answer to the session's own admin request).
    fn take_report(&mut self, m: &Outbound) -> Result<bool, Violation> {
        let Some((account, seq)) = m.report() else {
            return Ok(false);
        };
        match self.params.target {
            Some(t) if t != account => Ok(false),
            Some(_) => {
                if self.next_report != 0 && seq != self.next_report {
                    return Err(Violation::ReportSeq {
                        account: account.0,
                        expected: self.next_report,
                        got: seq,
                    });
                }
                self.next_report = seq + 1;
                Ok(true)
            }
            None => {
                if let Some(&next) = self.per_account.get(&account) {
                    if seq != next {
                        return Err(Violation::ReportSeq {
                            account: account.0,
                            expected: next,
                            got: seq,
                        });
                    }
                }
                self.per_account.insert(account, seq + 1);
                self.last_engine = m.engine_seq();
                Ok(true)
            }
        }
    }

    /// The exchange says its stream is at `announced`: the client must be too.
    fn check_announced(&self, announced: u64) -> Result<(), Violation> {
        match self.params.target {
            Some(_) if announced != self.next_report => Err(Violation::Missing {
                announced,
                reached: self.next_report,
            }),
            _ => Ok(()),
        }
    }

    /// The `session_seq` the next message must carry.
    pub fn next_session_seq(&self) -> u64 {
        self.next_session_seq
    }

    /// The next report sequence number of the stream (single-account scope).
    pub fn next_report_seq(&self) -> u64 {
        self.next_report
    }
}

#[cfg(test)]
#[path = "client_tests.rs"]
mod tests;
