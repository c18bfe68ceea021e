//! Account key files: where a client keeps its accounts' secret keys, and how
//! `peregrine keygen` makes them.
//!
//! ```toml
//! # Peregrine account keys. Secret: mode 0600, never commit.
//! [[keys]]
//! account = 1
//! key = "00112233...64 hex digits"
//! ```
//!
//! The exchange never sees these keys: its configuration holds `stored_key`, the
//! SHA-256 of each key ([`KeyFile::exchange_accounts`] prints the `[[accounts]]`
//! entries).

use std::io::Write;
use std::path::Path;

use peregrine_types::AccountId;
use peregrine_wire::auth::{AccountKey, KEY_LEN};
use serde::{Deserialize, Serialize};

/// One account's key, as stored in the file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeyEntry {
    /// The account.
    pub account: AccountId,
    /// The key, 64 hex digits.
    pub key: String,
}

/// A key file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeyFile {
    /// The keys.
    #[serde(default)]
    pub keys: Vec<KeyEntry>,
}

/// Why a key file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    /// Reading or writing failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not a key file.
    #[error("{path}: {reason}")]
    Invalid {
        /// The file.
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// No key for the account.
    #[error("{path}: no key for account {account}")]
    Missing {
        /// The file.
        path: String,
        /// The account.
        account: u32,
    },
}

impl KeyFile {
    /// Reads and checks `path`.
    pub fn load(path: &Path) -> Result<KeyFile, KeyError> {
        let p = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| KeyError::Io {
            path: p.clone(),
            source,
        })?;
        let file: KeyFile = toml::from_str(&text).map_err(|e| KeyError::Invalid {
            path: p.clone(),
            reason: e.to_string(),
        })?;
        for k in &file.keys {
            if AccountKey::from_hex(&k.key).is_none() {
                return Err(KeyError::Invalid {
                    path: p,
                    reason: format!("account {}: key must be 64 hex digits", k.account),
                });
            }
        }
        Ok(file)
    }

    /// The key of `account`.
    pub fn key(&self, account: AccountId) -> Option<AccountKey> {
        self.keys
            .iter()
            .find(|k| k.account == account)
            .and_then(|k| AccountKey::from_hex(&k.key))
    }

    /// [`KeyFile::load`] then [`KeyFile::key`], with the file named in errors.
    pub fn key_of(path: &Path, account: AccountId) -> Result<AccountKey, KeyError> {
        Self::load(path)?.key(account).ok_or(KeyError::Missing {
            path: path.display().to_string(),
            account: account.0,
        })
    }

    /// Fresh random keys for `accounts` (from the operating system's generator).
    pub fn generate(accounts: &[AccountId]) -> Result<KeyFile, KeyError> {
        let mut keys = Vec::with_capacity(accounts.len());
        for &account in accounts {
            let mut k = [0u8; KEY_LEN];
            getrandom::fill(&mut k).map_err(|e| KeyError::Io {
                path: "the random generator".into(),
                source: std::io::Error::other(e.to_string()),
            })?;
            keys.push(KeyEntry {
                account,
                key: AccountKey(k).to_hex(),
            });
        }
        Ok(KeyFile { keys })
    }

    /// Writes the file with mode 0600; refuses to overwrite an existing file.
    pub fn save_new(&self, path: &Path) -> Result<(), KeyError> {
        use std::os::unix::fs::OpenOptionsExt;
        let p = path.display().to_string();
        let io = |source| KeyError::Io {
            path: p.clone(),
            source,
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(path)
            .map_err(io)?;
        let body = toml::to_string(self).map_err(|e| KeyError::Invalid {
            path: p.clone(),
            reason: e.to_string(),
        })?;
        f.write_all(b"# Peregrine account keys. Secret: keep mode 0600, never commit.\n")
            .and_then(|()| f.write_all(body.as_bytes()))
            .and_then(|()| f.sync_all())
            .map_err(io)
    }

    /// The exchange's `[[accounts]]` entries for these keys (stored hashes only), as
    /// TOML; `admins` and `operators` get those roles.
    pub fn exchange_accounts(&self, admins: &[AccountId], operators: &[AccountId]) -> String {
        let mut out = String::new();
        for k in &self.keys {
            let Some(key) = AccountKey::from_hex(&k.key) else {
                continue;
            };
            out.push_str(&format!(
                "[[accounts]]\nid = {}\nstored_key = \"{}\"\n",
                k.account,
                key.stored().to_hex()
            ));
            if admins.contains(&k.account) {
                out.push_str("admin = true\n");
            }
            if operators.contains(&k.account) {
                out.push_str("operator = true\n");
            }
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_files_round_trip_private_and_match_the_exchange_entries() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("keys/keys.toml");
        let file = KeyFile::generate(&[AccountId(1), AccountId(2)]).unwrap();
        assert_ne!(file.keys[0].key, file.keys[1].key);
        file.save_new(&path).unwrap();
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert!(file.save_new(&path).is_err(), "never overwritten");
        let back = KeyFile::load(&path).unwrap();
        assert_eq!(back, file);
        let key = KeyFile::key_of(&path, AccountId(2)).unwrap();
        let accounts = file.exchange_accounts(&[AccountId(2)], &[]);
        #[derive(serde::Deserialize)]
        struct Entry {
            stored_key: String,
            #[serde(default)]
            admin: bool,
        }
        #[derive(serde::Deserialize)]
        struct Accounts {
            accounts: Vec<Entry>,
        }
        let parsed: Accounts = toml::from_str(&accounts).unwrap();
        assert_eq!(parsed.accounts[1].stored_key, key.stored().to_hex());
        assert!(parsed.accounts[1].admin && !parsed.accounts[0].admin);
        assert!(
            !accounts.contains(&file.keys[0].key),
            "no key in the exchange's part"
        );
        assert!(matches!(
            KeyFile::key_of(&path, AccountId(7)),
            Err(KeyError::Missing { account: 7, .. })
        ));
    }
}
