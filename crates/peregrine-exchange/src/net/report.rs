//! What the matching stage hands back to the session layer: a report of an
//! account's stream, or an answer to one session. Both topologies carry it (the
//! split topology over its ring, the compact one in the session table's queue of
//! output waiting for durability).

use peregrine_exchange_core::SessionKey;
use peregrine_types::AccountId;
use peregrine_wire::v2::Outbound;

/// A report or an answer on its way back to the session layer.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Report {
    /// A report of `account`'s stream, caused by `requester`'s request.
    Stream {
        /// The account.
        account: AccountId,
        /// The requesting session.
        requester: SessionKey,
        /// The report.
        msg: Outbound,
    },
    /// An answer to session `to` only.
    Answer {
        /// The session.
        to: SessionKey,
        /// The answer.
        msg: Outbound,
    },
}
