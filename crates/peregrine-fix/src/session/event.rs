//! What the session tells its caller.

use crate::codec::{Garble, Message};

use super::reject::SessionRejectReason;

/// Something the caller must act on or may log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event<'a> {
    /// The session is logged on. `reset`: both sequence numbers started again at 1.
    LoggedOn {
        /// Whether this Logon reset the sequence numbers.
        reset: bool,
        /// The heartbeat interval in force, in seconds.
        heartbeat_secs: u32,
    },
    /// An application message, in sequence (a PossDup resend included), for the
    /// application to decode from [`Message::fields`].
    App(Message<'a>),
    /// We answered an inbound message with a session-level Reject (for logs; the
    /// session already sent it).
    Rejected {
        /// MsgSeqNum of the rejected message (0 if unknown).
        ref_seq: u64,
        /// Why.
        reason: SessionRejectReason,
        /// The tag at fault, if any (RefTagID: an invalid tag may be 0 or negative).
        ref_tag: Option<i64>,
    },
    /// The peer rejected one of our messages at session level (35=3).
    /// Informational.
    PeerRejected {
        /// RefSeqNum (45) of our message.
        ref_seq: u64,
    },
    /// Garbled bytes were skipped (no answer, no sequence number: the next good
    /// message shows the gap). Informational.
    Garbled(Garble),
    /// The peer asked for a resend of `begin..=end` (0 = to the last), and got it.
    ResendServed {
        /// BeginSeqNo.
        begin: u64,
        /// EndSeqNo.
        end: u64,
    },
    /// Close the connection once the pending output is written; then call
    /// `Session::disconnected`.
    Disconnect(DisconnectReason),
}

/// Why the session wants the connection closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DisconnectReason {
    /// The peer logged out (and we answered).
    PeerLogout,
    /// We logged out and the peer answered (or did not in time).
    LogoutComplete,
    /// No Logon in time.
    LogonTimeout,
    /// No answer to our Logout in time.
    LogoutTimeout,
    /// Nothing received for two heartbeat intervals, a TestRequest included.
    HeartbeatTimeout,
    /// The first message was not a Logon.
    NotLogon,
    /// The Logon was refused (credentials, HeartBtInt, EncryptMethod, CompIDs);
    /// a Logout with the reason was sent.
    LogonRefused(&'static str),
    /// The peer refused our Logon (initiator).
    LogonRejectedByPeer,
    /// MsgSeqNum lower than expected without PossDupFlag.
    SeqTooLow {
        /// What we expected.
        expected: u64,
        /// What came.
        received: u64,
    },
    /// MsgSeqNum missing or not a number.
    NoSeqNum,
    /// Wrong CompIDs on a logged-on session.
    CompIdProblem,
    /// SendingTime too far from our clock.
    SendingTime,
    /// A message of another FIX version (BeginString) on a logged-on session.
    IncorrectBeginString,
    /// A Logon with ResetSeqNumFlag whose MsgSeqNum is not 1.
    BadReset,
    /// The peer does not read: unsent output passed the limit.
    SlowConsumer,
    /// A second Logon on a logged-on connection.
    DuplicateLogon,
    /// The application asked.
    Requested,
}

impl DisconnectReason {
    /// Text for a Logout (58) or a log line.
    pub fn text(self) -> &'static str {
        match self {
            Self::PeerLogout => "logout acknowledged",
            Self::LogoutComplete => "logout complete",
            Self::LogonTimeout => "no Logon in time",
            Self::LogoutTimeout => "no Logout answer in time",
            Self::HeartbeatTimeout => "heartbeat timeout: nothing received after TestRequest",
            Self::NotLogon => "first message not a Logon",
            Self::LogonRefused(why) => why,
            Self::LogonRejectedByPeer => "Logon refused by the peer",
            Self::SeqTooLow { .. } => "MsgSeqNum too low",
            Self::NoSeqNum => "MsgSeqNum missing or invalid",
            Self::CompIdProblem => "CompID problem",
            Self::SendingTime => "SendingTime accuracy problem",
            Self::IncorrectBeginString => "Incorrect BeginString",
            Self::BadReset => "ResetSeqNumFlag with MsgSeqNum other than 1",
            Self::SlowConsumer => "output not read: slow consumer",
            Self::DuplicateLogon => "Logon received on a logged-on session",
            Self::Requested => "logout",
        }
    }
}

/// The result of offering bytes to the session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Received<'a> {
    /// No whole message yet: read more bytes and call again with all of them.
    NeedMore,
    /// `len` bytes were used (drop them from the buffer), with an event if any.
    Consumed {
        /// Bytes used from the start of the buffer.
        len: usize,
        /// What happened.
        event: Option<Event<'a>>,
    },
}

/// Text of a reject reason code, for the `Rejected` event's logs.
impl SessionRejectReason {
    /// Whether this reject also ends the session (CompID and SendingTime problems).
    pub const fn logs_out(self) -> bool {
        matches!(self, Self::CompIdProblem | Self::SendingTimeAccuracy)
    }
}
