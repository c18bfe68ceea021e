//! Who may log in, with what, and as what: the exchange's account table for the
//! version-2 login (protocol document, section 4.1).
//!
//! The configuration holds, per account, only `stored_key = SHA-256(key)` in hex
//! (written by `peregrine keygen`), never a password or the key itself: a copy of the
//! configuration does not let anyone log in. `admin` accounts may deposit and
//! withdraw; `operator` accounts may open drop copies of other accounts or of every
//! account.

use std::collections::BTreeMap;

use peregrine_types::AccountId;
use peregrine_wire::auth::StoredKey;
use peregrine_wire::field::SessionKind;
use peregrine_wire::v2::session::Login;

use crate::config::AccountConfig;

/// What a verified login is allowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Grant {
    /// The logged-in account.
    pub account: AccountId,
    /// Trading or drop copy.
    pub kind: SessionKind,
    /// Whose reports the session gets (None: every account).
    pub target: Option<AccountId>,
    /// An admin account.
    pub admin: bool,
}

/// Why a login is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// Unknown account or a proof that does not verify (one answer for both).
    BadCredentials,
    /// The proof verified, but the session asked for is not allowed.
    NotPermitted,
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    stored: StoredKey,
    admin: bool,
    operator: bool,
}

/// The account table, loaded once from the configuration.
#[derive(Debug, Clone, Default)]
pub(crate) struct Credentials {
    accounts: BTreeMap<AccountId, Entry>,
}

impl Credentials {
    /// The table of `entries` (entries whose stored key does not parse are skipped:
    /// validate the configuration first).
    pub(crate) fn new(entries: &[AccountConfig]) -> Self {
        let accounts = entries
            .iter()
            .filter_map(|e| {
                let stored = StoredKey::from_hex(&e.stored_key)?;
                Some((
                    e.id,
                    Entry {
                        stored,
                        admin: e.admin,
                        operator: e.operator,
                    },
                ))
            })
            .collect();
        Credentials { accounts }
    }

    /// Checks `login` answering `nonce`: the proof, then what it asks for.
    pub(crate) fn verify(&self, nonce: &[u8; 32], login: &Login) -> Result<Grant, Refusal> {
        // An unknown account costs the same hashing as a known one: verify against a
        // fixed dummy hash, so timing does not reveal which accounts exist.
        const DUMMY: StoredKey = StoredKey([0x5A; 32]);
        let entry = self.accounts.get(&login.account);
        let stored = entry.map_or(DUMMY, |e| e.stored);
        let proved = login.verify(&stored, nonce);
        let Some(e) = entry.filter(|_| proved) else {
            return Err(Refusal::BadCredentials);
        };
        let own = login.target == Some(login.account);
        let allowed = match login.kind {
            SessionKind::Trading => own,
            SessionKind::DropCopy => own || e.operator,
        };
        if !allowed {
            return Err(Refusal::NotPermitted);
        }
        Ok(Grant {
            account: login.account,
            kind: login.kind,
            target: login.target,
            admin: e.admin,
        })
    }

    /// The admin accounts.
    #[cfg(test)]
    pub(crate) fn admins(&self) -> impl Iterator<Item = AccountId> + '_ {
        self.accounts
            .iter()
            .filter(|(_, e)| e.admin)
            .map(|(a, _)| *a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use peregrine_wire::auth::AccountKey;
    use peregrine_wire::field::Pad;

    fn table() -> (Credentials, AccountKey, AccountKey) {
        let trader = AccountKey([1; 32]);
        let operator = AccountKey([2; 32]);
        let entries = [
            AccountConfig {
                id: AccountId(1),
                stored_key: trader.stored().to_hex(),
                admin: false,
                operator: false,
            },
            AccountConfig {
                id: AccountId(9),
                stored_key: operator.stored().to_hex(),
                admin: true,
                operator: true,
            },
        ];
        (Credentials::new(&entries), trader, operator)
    }

    fn login(key: &AccountKey, account: u32, target: Option<u32>, kind: SessionKind) -> Login {
        let mut l = Login {
            next_report_seq: 0,
            proof: [0; 32],
            account: AccountId(account),
            target: target.map(AccountId),
            heartbeat_interval_ms: 1000,
            kind,
            reserved: Pad,
        };
        l.proof = l.proof_for(key, &[4; 32]);
        l
    }

    #[test]
    fn the_proof_and_the_scope_decide() {
        let (c, trader, operator) = table();
        let n = [4; 32];
        let ok = c.verify(&n, &login(&trader, 1, Some(1), SessionKind::Trading));
        assert_eq!(ok.map(|g| (g.account, g.admin)), Ok((AccountId(1), false)));
        assert_eq!(
            c.verify(&n, &login(&operator, 1, Some(1), SessionKind::Trading)),
            Err(Refusal::BadCredentials),
            "another account's key"
        );
        assert_eq!(
            c.verify(&n, &login(&trader, 5, Some(5), SessionKind::Trading)),
            Err(Refusal::BadCredentials),
            "an unknown account: the same answer"
        );
        assert_eq!(
            c.verify(&n, &login(&trader, 1, Some(9), SessionKind::Trading)),
            Err(Refusal::NotPermitted),
            "trading as another account"
        );
        assert_eq!(
            c.verify(&n, &login(&trader, 1, None, SessionKind::DropCopy)),
            Err(Refusal::NotPermitted),
            "every account needs an operator"
        );
        assert!(c
            .verify(&n, &login(&trader, 1, Some(1), SessionKind::DropCopy))
            .is_ok());
        let all = c.verify(&n, &login(&operator, 9, None, SessionKind::DropCopy));
        assert_eq!(all.map(|g| (g.target, g.admin)), Ok((None, true)));
        assert_eq!(c.admins().collect::<Vec<_>>(), [AccountId(9)]);
    }
}
