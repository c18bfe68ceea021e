//! The admin client: logs in, sends one deposit, withdrawal or balance query and
//! returns the exchange's answer.

use std::net::SocketAddr;
use std::time::Duration;

use peregrine_exchange_core::balances::AdminReason;
use peregrine_types::AccountId;
use peregrine_wire::admin::{Balance, BalanceQuery, Deposit, Withdraw};
use peregrine_wire::Outbound;

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
    /// Order-entry address.
    pub addr: SocketAddr,
    /// The account to log in as.
    pub account: AccountId,
    /// Its password.
    pub password: String,
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

/// Sends the request and waits for its answer: the balance after it, or the
/// exchange's refusal.
pub fn request(req: &AdminRequest) -> Result<Result<Balance, AdminRejection>, ClientError> {
    let (mut conn, _) = Connection::login(req.addr, req.account, &req.password, TIMEOUT)?;
    let request_id = 1;
    let (account, asset) = (req.about, req.asset);
    match req.action {
        AdminAction::Deposit(amount) => conn.send(&Deposit {
            request_id,
            amount,
            account,
            asset,
        })?,
        AdminAction::Withdraw(amount) => conn.send(&Withdraw {
            request_id,
            amount,
            account,
            asset,
        })?,
        AdminAction::Balance => conn.send(&BalanceQuery {
            request_id,
            account,
            asset,
        })?,
    }
    loop {
        match conn.recv()? {
            Outbound::Balance(b) if b.request_id == request_id => return Ok(Ok(b)),
            Outbound::AdminRejected(r) if r.request_id == request_id => {
                return Ok(Err(AdminRejection {
                    reason: AdminReason::from_code(r.reason.0),
                    code: r.reason.0,
                }))
            }
            _ => continue, // heartbeats, reports of the account's orders
        }
    }
}
