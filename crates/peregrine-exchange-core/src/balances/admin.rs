//! Admin commands: deposits and withdrawals (journaled, applied to the ledger), who
//! may send them, and why one is refused.

use peregrine_ledger::{AssetId, Balance, Ledger, LedgerError};
use peregrine_types::{AccountId, Timestamp};

/// Deposit or withdrawal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AdminKind {
    /// Credit the available balance.
    Deposit,
    /// Debit the available balance (never reserved funds).
    Withdraw,
}

/// A journaled admin command (tags 6 and 7 of [`crate::codec::command`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AdminCommand {
    /// Sequencing time.
    pub ts: Timestamp,
    /// What to do.
    pub kind: AdminKind,
    /// The account credited or debited.
    pub account: AccountId,
    /// The asset.
    pub asset: AssetId,
    /// Amount in the asset's smallest unit (the ledger refuses non-positive ones).
    pub amount: i64,
    /// The requester's id, echoed in the answer.
    pub request_id: u64,
}

/// Why an admin request was refused: the `reason` of the wire's `AdminRejected`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u16)]
pub enum AdminReason {
    /// The session's account is not marked `admin = true` (or, for a query, asked
    /// about another account).
    NotAdmin = 1,
    /// The exchange runs without balances.
    BalancesOff = 2,
    /// No such asset id.
    UnknownAsset = 3,
    /// No such account.
    UnknownAccount = 4,
    /// The amount is zero or negative.
    NonPositive = 5,
    /// A withdrawal larger than the available balance (reserved funds are never taken).
    InsufficientAvailable = 6,
}

impl AdminReason {
    /// Every reason, for tables and tests.
    pub const ALL: [AdminReason; 6] = [
        Self::NotAdmin,
        Self::BalancesOff,
        Self::UnknownAsset,
        Self::UnknownAccount,
        Self::NonPositive,
        Self::InsufficientAvailable,
    ];

    /// The wire code.
    pub const fn code(self) -> u16 {
        self as u16
    }

    /// Decodes a wire code.
    pub fn from_code(code: u16) -> Option<AdminReason> {
        Self::ALL.iter().copied().find(|r| r.code() == code)
    }

    /// A short name for logs and the CLI.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::NotAdmin => "not_admin",
            Self::BalancesOff => "balances_off",
            Self::UnknownAsset => "unknown_asset",
            Self::UnknownAccount => "unknown_account",
            Self::NonPositive => "non_positive_amount",
            Self::InsufficientAvailable => "insufficient_available",
        }
    }
}

impl From<LedgerError> for AdminReason {
    fn from(e: LedgerError) -> Self {
        match e {
            LedgerError::NonPositive => Self::NonPositive,
            LedgerError::Insufficient { .. } => Self::InsufficientAvailable,
        }
    }
}

/// Who may send admin requests, and which ids exist. Consulted only for admin
/// messages, never on the order path.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AdminPolicy {
    /// Configured asset ids, sorted.
    pub assets: Vec<AssetId>,
    /// Configured accounts, sorted.
    pub accounts: Vec<AccountId>,
    /// Accounts with `admin = true`.
    pub admins: Vec<AccountId>,
}

impl AdminPolicy {
    /// Checks a request from `from` about (`account`, `asset`); `write` for deposits
    /// and withdrawals (admins only), false for a query (own account, or admin).
    pub fn check(
        &self,
        from: AccountId,
        account: AccountId,
        asset: AssetId,
        write: bool,
    ) -> Result<(), AdminReason> {
        let admin = self.admins.contains(&from);
        if !admin && (write || from != account) {
            return Err(AdminReason::NotAdmin);
        }
        if self.accounts.binary_search(&account).is_err() {
            return Err(AdminReason::UnknownAccount);
        }
        if self.assets.binary_search(&asset).is_err() {
            return Err(AdminReason::UnknownAsset);
        }
        Ok(())
    }
}

/// Applies an admin command to the ledger; the balance after it, or why not.
pub fn apply_admin(ledger: &mut Ledger, a: &AdminCommand) -> Result<Balance, AdminReason> {
    let amount = i128::from(a.amount);
    match a.kind {
        AdminKind::Deposit => ledger.deposit(a.account, a.asset, amount)?,
        AdminKind::Withdraw => ledger.withdraw(a.account, a.asset, amount)?,
    }
    Ok(ledger.balance(a.account, a.asset))
}
