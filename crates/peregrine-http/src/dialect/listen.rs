//! Listen keys of the user-data streams (`/api/v3/userDataStream`): one per account
//! at a time, 60 random characters, valid for the configured time after its
//! creation or last keepalive. A stream connected with a key ends when the key
//! expires or is deleted.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Characters of a listen key.
const KEY_LEN: usize = 60;

/// The table of listen keys.
#[derive(Debug)]
pub struct ListenKeys {
    ttl: Duration,
    keys: Mutex<HashMap<String, (u32, Instant)>>,
}

/// A fresh random key.
fn fresh() -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let mut bytes = [0u8; KEY_LEN];
    if getrandom::fill(&mut bytes).is_err() {
        // No OS randomness: fall back to the clock and a hash (still unguessable
        // enough for a local venue, and never the same twice).
        let seed = format!("{:?}{:?}", Instant::now(), std::time::SystemTime::now());
        for (i, b) in bytes.iter_mut().enumerate() {
            *b = seed.as_bytes()[i % seed.len()]
                .wrapping_mul(31)
                .wrapping_add(i as u8);
        }
    }
    bytes
        .iter()
        .map(|b| char::from(ALPHABET[usize::from(*b) % ALPHABET.len()]))
        .collect()
}

impl ListenKeys {
    /// Keys valid for `ttl` after creation or keepalive.
    pub fn new(ttl: Duration) -> ListenKeys {
        ListenKeys {
            ttl,
            keys: Mutex::new(HashMap::new()),
        }
    }

    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<String, (u32, Instant)>> {
        self.keys
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The account's key (the live one, extended, or a new one).
    pub fn open(&self, account: u32) -> String {
        let now = Instant::now();
        let mut map = self.map();
        map.retain(|_, (_, until)| *until > now);
        if let Some((k, v)) = map.iter_mut().find(|(_, (a, _))| *a == account) {
            v.1 = now + self.ttl;
            return k.clone();
        }
        let key = fresh();
        map.insert(key.clone(), (account, now + self.ttl));
        key
    }

    /// Extends `key` of `account`; false if it does not exist (or is another's).
    pub fn keepalive(&self, account: u32, key: &str) -> bool {
        let now = Instant::now();
        match self.map().get_mut(key) {
            Some((a, until)) if *a == account && *until > now => {
                *until = now + self.ttl;
                true
            }
            _ => false,
        }
    }

    /// Deletes `key` of `account`; false if it does not exist (or is another's).
    pub fn close(&self, account: u32, key: &str) -> bool {
        let mut map = self.map();
        match map.get(key) {
            Some((a, _)) if *a == account => {
                map.remove(key);
                true
            }
            _ => false,
        }
    }

    /// The account of a live key.
    pub fn account(&self, key: &str) -> Option<u32> {
        let now = Instant::now();
        match self.map().get(key) {
            Some((a, until)) if *until > now => Some(*a),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_key_per_account_owned_by_it() {
        let k = ListenKeys::new(Duration::from_secs(60));
        let a = k.open(1);
        assert_eq!(a.len(), KEY_LEN);
        assert!(a.bytes().all(|b| b.is_ascii_alphanumeric()));
        assert_eq!(k.open(1), a, "the live key is returned again");
        let b = k.open(2);
        assert_ne!(a, b);
        assert_eq!(k.account(&a), Some(1));
        assert!(!k.keepalive(2, &a), "another account's key");
        assert!(!k.close(2, &a));
        assert!(k.keepalive(1, &a));
        assert!(k.close(1, &a));
        assert_eq!(k.account(&a), None);
    }

    #[test]
    fn keys_expire() {
        let k = ListenKeys::new(Duration::from_millis(0));
        let a = k.open(1);
        assert_eq!(k.account(&a), None);
        assert!(!k.keepalive(1, &a));
    }
}
