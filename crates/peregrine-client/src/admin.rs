//! The admin client: logs in, sends one deposit, withdrawal or balance query and
//! returns the exchange's answer.

use std::net::SocketAddr;
use std::time::Duration;

use peregrine_exchange_core::balances::AdminReason;
use peregrine_types::AccountId;
use peregrine_wire::admin::{BalanceQuery, Deposit, Withdraw};
use peregrine_wire::auth::AccountKey;
use peregrine_wire::v2::admin::Balance;
use peregrine_wire::v2::client::LoginParams;
use peregrine_wire::v2::{Outbound, RequestRef};

use crate::error::ClientError;
use crate::order_entry::Connection;

/// What to ask.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AdminAction {
    /// Credit `amount` (smallest units; admin sessions only).
    Deposit(i64),
    /// Debit `amount` of the available balance (admin sessions only).
    Withdraw(i64),
    /// Report the balance.
    Balance,
}

/// One admin request.
#[derive(Debug, Clone)]
pub struct AdminRequest {
    /// Order-entry addresses: one exchange's, or every node's of a cluster (the
    /// request goes to the leader, following redirects).
    pub addrs: Vec<SocketAddr>,
    /// The account to log in as.
    pub account: AccountId,
    /// Its key.
    pub key: AccountKey,
    /// The account the request is about.
    pub about: AccountId,
    /// The asset id.
    pub asset: u32,
    /// What to do.
    pub action: AdminAction,
}

/// Why the exchange refused an admin request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("rejected: {} (code {code})", .reason.map_or("unknown", AdminReason::as_str))]
pub struct AdminRejection {
    /// The reason, if this client knows the code.
    pub reason: Option<AdminReason>,
    /// The wire code.
    pub code: u16,
}

const TIMEOUT: Duration = Duration::from_secs(5);
/// How long to look for a cluster's leader (an election takes well under a second).
const LEADER_WAIT: Duration = Duration::from_secs(10);
/// The same with a single address.
const ONE_NODE_WAIT: Duration = Duration::from_millis(500);

/// Sends the request and waits for its answer: the balance after it, or the
/// exchange's refusal.
pub fn request(req: &AdminRequest) -> Result<Result<Balance, AdminRejection>, ClientError> {
    // No replay: the session starts live (resume_from 0).
    let params = LoginParams::trading(req.account, 0);
    // One address: a node that is down fails fast (a redirect is still followed).
    let wait = if req.addrs.len() > 1 {
        LEADER_WAIT
    } else {
        ONE_NODE_WAIT
    };
    let (mut conn, _, _) =
        Connection::connect_any(&req.addrs, params, req.key.clone(), TIMEOUT, wait)?;
    conn.recover(|_| {})?;
    let request_id = 1;
    let want = RequestRef::Admin(request_id);
    let (account, asset) = (req.about, req.asset);
    let answer = match req.action {
        AdminAction::Deposit(amount) => conn.request(
            &Deposit {
                request_id,
                amount,
                account,
                asset,
            },
            want,
            |_| {},
        )?,
        AdminAction::Withdraw(amount) => conn.request(
            &Withdraw {
                request_id,
                amount,
                account,
                asset,
            },
            want,
            |_| {},
        )?,
        AdminAction::Balance => conn.request(
            &BalanceQuery {
                request_id,
                account,
                asset,
            },
            want,
            |_| {},
        )?,
    };
    match answer {
        Outbound::Balance(b) => Ok(Ok(b)),
        Outbound::AdminRejected(r) => Ok(Err(AdminRejection {
            reason: AdminReason::from_code(r.reason.0),
            code: r.reason.0,
        })),
        other => Err(ClientError::Unexpected(format!(
            "answer to an admin request: {other:?}"
        ))),
    }
}
