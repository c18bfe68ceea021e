//! Why a client operation failed.

use peregrine_wire::{DecodeError, EncodeError};

/// An error of the client library.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// A socket operation failed; `what` says which.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// Why it failed.
        source: std::io::Error,
    },
    /// The exchange refused the login.
    #[error("login of account {account} rejected (reason {reason}{}, retry after {retry_after_ms} ms)",
        peregrine_wire::reason::LoginCode::from_code(*.reason).map_or(String::new(), |c| format!(" {}", c.name())))]
    LoginRejected {
        /// The account.
        account: u32,
        /// The `LoginRejected` reason code.
        reason: u16,
        /// Milliseconds before another attempt can succeed (throttling).
        retry_after_ms: u32,
    },
    /// A cluster node that is not the leader answered with `LeaderRedirect`: log in
    /// at `address` (or, with no leader known, try again after `retry_after_ms`).
    #[error("redirected to the cluster leader {leader_id} at {} (retry after {retry_after_ms} ms)",
        .address.as_deref().unwrap_or("<no leader known>"))]
    Redirected {
        /// The leader's node id; 0: no leader known yet.
        leader_id: u64,
        /// The leader's order-entry address, `host:port`.
        address: Option<String>,
        /// Milliseconds to wait before trying again when no leader is known.
        retry_after_ms: u32,
    },
    /// The exchange broke the protocol (a gap in the report stream, say).
    #[error("protocol violation: {0}")]
    Violation(#[from] peregrine_wire::v2::client::Violation),
    /// A key file could not be used.
    #[error(transparent)]
    Keys(#[from] crate::keys::KeyError),
    /// The peer sent bytes that do not decode.
    #[error("malformed message from the exchange: {0}")]
    Decode(#[from] DecodeError),
    /// A message could not be encoded (a bug, or a field out of range).
    #[error("encoding a message: {0}")]
    Encode(#[from] EncodeError),
    /// The peer closed the connection.
    #[error("the exchange closed the connection {0}")]
    Closed(&'static str),
    /// The peer answered something the protocol does not allow here.
    #[error("unexpected answer: {0}")]
    Unexpected(String),
    /// One of several sessions failed.
    #[error("session {index} to {addr}: {source}")]
    Session {
        /// Which session.
        index: usize,
        /// Where to.
        addr: std::net::SocketAddr,
        /// Why.
        source: Box<ClientError>,
    },
    /// A request the caller built is invalid.
    #[error("{0}")]
    Invalid(String),
}

/// Attaches what was being done to an I/O error.
pub(crate) trait IoContext<T> {
    /// `Err(e)` becomes [`ClientError::Io`] with `what`.
    fn doing(self, what: impl FnOnce() -> String) -> Result<T, ClientError>;
}

impl<T> IoContext<T> for std::io::Result<T> {
    fn doing(self, what: impl FnOnce() -> String) -> Result<T, ClientError> {
        self.map_err(|source| ClientError::Io {
            what: what(),
            source,
        })
    }
}
