//! The session layer's counters: plain fields of the thread that owns the sockets,
//! copied to the [`crate::metrics::hub::MetricsHub`] at most once per interval.

/// Why a session ended, for `peregrine_exchange_session_disconnects_total`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DisconnectReason {
    /// It stopped reading: its outbound buffer overflowed, or its output did not
    /// move for `slow_reader_ms`.
    SlowReader,
    /// A malformed frame, an unknown type, or a protocol violation (anything before
    /// `Login`, a second `Login`).
    BadInput,
    /// Silent for three heartbeat intervals.
    HeartbeatTimeout,
    /// The peer closed the connection.
    PeerClosed,
    /// A socket error.
    IoError,
    /// A `Logout`, after its output drained.
    Logout,
    /// Bad credentials, after the `LoginRejected` drained.
    LoginRejected,
    /// Anything else (internal errors).
    /// Its position fell behind the report retention.
    BehindRetention,
    /// The exchange stopped.
    Shutdown,
    Other,
}

impl DisconnectReason {
    /// Every reason, in counter index order.
    pub(crate) const ALL: [DisconnectReason; 10] = [
        Self::SlowReader,
        Self::BadInput,
        Self::HeartbeatTimeout,
        Self::PeerClosed,
        Self::IoError,
        Self::Logout,
        Self::LoginRejected,
        Self::BehindRetention,
        Self::Shutdown,
        Self::Other,
    ];

    /// The label value.
    pub(crate) const fn as_str(self) -> &'static str {
        match self {
            Self::SlowReader => "slow_reader",
            Self::BadInput => "bad_input",
            Self::HeartbeatTimeout => "heartbeat_timeout",
            Self::PeerClosed => "peer_closed",
            Self::IoError => "io_error",
            Self::Logout => "logout",
            Self::LoginRejected => "login_rejected",
            Self::BehindRetention => "behind_retention",
            Self::Shutdown => "shutdown",
            Self::Other => "other",
        }
    }

    /// Classifies the close reason the session layer logs (`None`: closed after its
    /// output drained, i.e. a logout, or a login reject if never logged in).
    /// The reason of a session the exchange ended with `Disconnect` and `code`.
    pub(crate) fn of(code: peregrine_wire::reason::DisconnectCode) -> Self {
        use peregrine_wire::reason::DisconnectCode as C;
        match code {
            C::HeartbeatTimeout => Self::HeartbeatTimeout,
            C::SlowReader => Self::SlowReader,
            C::BehindRetention => Self::BehindRetention,
            C::ProtocolViolation => Self::BadInput,
            C::Shutdown => Self::Shutdown,
        }
    }

    pub(crate) fn classify(why: Option<&str>, logged_in: bool) -> Self {
        let Some(why) = why else {
            return if logged_in {
                Self::Logout
            } else {
                Self::LoginRejected
            };
        };
        if why.starts_with("slow reader") {
            Self::SlowReader
        } else if why.starts_with("malformed input")
            || why.ends_with("before login")
            || why.starts_with("second Login")
        {
            Self::BadInput
        } else if why.starts_with("no input for") {
            Self::HeartbeatTimeout
        } else if why.starts_with("peer closed") {
            Self::PeerClosed
        } else if why.starts_with("read error") || why.starts_with("write") {
            Self::IoError
        } else {
            Self::Other
        }
    }
}

/// The session layer's counters (plain fields of the thread that owns the sockets).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct SessionStats {
    /// Connections open now (gauge, set at publish).
    pub connected: u64,
    /// Of those, logged in (gauge, set at publish).
    pub logged_in: u64,
    /// Connections accepted.
    pub accepted: u64,
    /// Connections refused because `max_sessions` were open.
    pub refused: u64,
    /// Successful logins.
    pub logins: u64,
    /// Sessions closed, by [`DisconnectReason::ALL`] index.
    pub disconnects: [u64; 10],
    /// Bytes queued in all sessions' outbound buffers, not yet written (gauge).
    pub outbound_bytes: u64,
    /// Reports dropped because neither the session nor its account was connected.
    pub undeliverable: u64,
    /// Requests refused `busy` (backpressure).
    pub busy: u64,
}

impl SessionStats {
    /// Counts a closed session.
    pub(crate) fn disconnected(&mut self, why: DisconnectReason) {
        let i = DisconnectReason::ALL
            .iter()
            .position(|r| *r == why)
            .unwrap_or(DisconnectReason::ALL.len() - 1);
        self.disconnects[i] += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn close_reasons_are_classified() {
        let c = |w: &str| DisconnectReason::classify(Some(w), true);
        assert_eq!(
            c("slow reader: 10 unsent bytes exceed the 8-byte outbound buffer"),
            DisconnectReason::SlowReader
        );
        assert_eq!(c("malformed input: bad length"), DisconnectReason::BadInput);
        assert_eq!(c("NewOrder before login"), DisconnectReason::BadInput);
        assert_eq!(
            c("second Login on a logged-in session"),
            DisconnectReason::BadInput
        );
        assert_eq!(
            c("no input for three heartbeat intervals"),
            DisconnectReason::HeartbeatTimeout
        );
        assert_eq!(
            c("peer closed the connection"),
            DisconnectReason::PeerClosed
        );
        assert_eq!(c("read error: reset"), DisconnectReason::IoError);
        assert_eq!(c("write error: broken pipe"), DisconnectReason::IoError);
        assert_eq!(c("write returned 0"), DisconnectReason::IoError);
        assert_eq!(
            c("internal: outbound encode failed"),
            DisconnectReason::Other
        );
        assert_eq!(
            DisconnectReason::classify(None, true),
            DisconnectReason::Logout
        );
        assert_eq!(
            DisconnectReason::classify(None, false),
            DisconnectReason::LoginRejected
        );
        let mut s = SessionStats::default();
        s.disconnected(DisconnectReason::Other);
        s.disconnected(DisconnectReason::SlowReader);
        assert_eq!(s.disconnects, [1, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
    }
}
