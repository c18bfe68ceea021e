//! The version-2 login proof: challenge-response over a per-account key, with the
//! exchange storing only a hash of it (the core of SCRAM, RFC 5802, over SHA-256).
//!
//! * Each account has a random 32-byte **key** ([`AccountKey`]), held by the client.
//! * The exchange stores `stored = SHA-256(key)` ([`StoredKey`]), never the key: a
//!   copy of the exchange's configuration does not let anyone log in.
//! * On a new connection the exchange sends a fresh 32-byte nonce (`Challenge`).
//! * The client sends `proof = key XOR HMAC-SHA256(stored, auth_message)`, where
//!   `auth_message` binds the nonce and every other field of the `Login` (built by
//!   `v2::session::Login::auth_message`; this module only sees its bytes).
//! * The exchange recomputes the HMAC (it knows `stored`), recovers
//!   `key' = proof XOR HMAC`, and accepts if `SHA-256(key') == stored` (compared in
//!   constant time).
//!
//! Neither the key nor anything reusable crosses the wire: the proof is bound to one
//! nonce and one set of login fields. (Like SCRAM, an eavesdropper who also stole the
//! stored hash could recover the key; TLS closes that.)

use hmac::{KeyInit, Mac};
use sha2::{Digest, Sha256};

/// Bytes of a key, a stored key, a nonce and a proof.
pub const KEY_LEN: usize = 32;

/// Domain separation prefix of the `auth_message` (`v2::session::Login::auth_message`).
pub const DOMAIN: &[u8; 20] = b"peregrine-login-v2\0\0";

type HmacSha256 = hmac::Hmac<Sha256>;

/// An account's secret key (client side). `Debug` never prints it.
#[derive(Clone, PartialEq, Eq)]
pub struct AccountKey(pub [u8; KEY_LEN]);

/// What the exchange stores for an account: `SHA-256(key)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoredKey(pub [u8; KEY_LEN]);

impl core::fmt::Debug for AccountKey {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("AccountKey(<redacted>)")
    }
}

impl AccountKey {
    /// The hash the exchange stores for this key.
    pub fn stored(&self) -> StoredKey {
        StoredKey(Sha256::digest(self.0).into())
    }

    /// Parses 64 hex digits.
    pub fn from_hex(text: &str) -> Option<AccountKey> {
        parse_hex(text).map(AccountKey)
    }

    /// 64 lowercase hex digits.
    pub fn to_hex(&self) -> String {
        to_hex(&self.0)
    }

    /// The proof over `auth_message`: `key XOR HMAC-SHA256(SHA-256(key), message)`.
    pub fn prove(&self, auth_message: &[u8]) -> [u8; KEY_LEN] {
        let sig = signature(&self.stored(), auth_message);
        xor(&self.0, &sig)
    }
}

impl StoredKey {
    /// Parses 64 hex digits.
    pub fn from_hex(text: &str) -> Option<StoredKey> {
        parse_hex(text).map(StoredKey)
    }

    /// 64 lowercase hex digits.
    pub fn to_hex(&self) -> String {
        to_hex(&self.0)
    }

    /// True if `proof` proves knowledge of the key behind this hash over exactly
    /// `auth_message`. Constant time in the proof.
    pub fn verify(&self, auth_message: &[u8], proof: &[u8; KEY_LEN]) -> bool {
        let sig = signature(self, auth_message);
        let key = xor(proof, &sig);
        let hash: [u8; KEY_LEN] = Sha256::digest(key).into();
        ct_eq(&hash, &self.0)
    }
}

fn signature(stored: &StoredKey, auth_message: &[u8]) -> [u8; KEY_LEN] {
    // HMAC accepts keys of any length, so this never fails for 32 bytes.
    let Ok(mut mac) = <HmacSha256 as KeyInit>::new_from_slice(&stored.0) else {
        return [0; KEY_LEN];
    };
    mac.update(auth_message);
    mac.finalize().into_bytes().into()
}

fn xor(a: &[u8; KEY_LEN], b: &[u8; KEY_LEN]) -> [u8; KEY_LEN] {
    core::array::from_fn(|i| a[i] ^ b[i])
}

/// Equality whose time does not depend on where the inputs differ.
fn ct_eq(a: &[u8; KEY_LEN], b: &[u8; KEY_LEN]) -> bool {
    let diff = a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y));
    core::hint::black_box(diff) == 0
}

fn parse_hex(text: &str) -> Option<[u8; KEY_LEN]> {
    let t = text.trim().as_bytes();
    if t.len() != 2 * KEY_LEN {
        return None;
    }
    let nibble = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    };
    let mut out = [0u8; KEY_LEN];
    for (i, o) in out.iter_mut().enumerate() {
        *o = nibble(t[2 * i])? << 4 | nibble(t[2 * i + 1])?;
    }
    Some(out)
}

fn to_hex(b: &[u8; KEY_LEN]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(2 * KEY_LEN);
    for &x in b {
        s.push(char::from(DIGITS[usize::from(x >> 4)]));
        s.push(char::from(DIGITS[usize::from(x & 15)]));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_proof_verifies_only_for_its_key_and_message() {
        let key = AccountKey([0x11; KEY_LEN]);
        let stored = key.stored();
        let msg = b"peregrine-login-v2\0\0 nonce and login bytes";
        let proof = key.prove(msg);
        assert!(stored.verify(msg, &proof));
        assert!(!stored.verify(b"another message", &proof));
        assert!(!AccountKey([0x12; KEY_LEN]).stored().verify(msg, &proof));
        for byte in 0..KEY_LEN {
            let mut bad = proof;
            bad[byte] ^= 1;
            assert!(!stored.verify(msg, &bad), "flip in proof byte {byte}");
        }
        assert_ne!(proof, key.0, "the proof is not the key");
        assert_ne!(proof, stored.0);
    }

    #[test]
    fn the_stored_key_is_sha256_of_the_key() {
        // SHA-256 of the bytes 0x00..0x1f.
        let key = AccountKey(core::array::from_fn(|i| i as u8));
        assert_eq!(
            key.stored().to_hex(),
            "630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd"
        );
    }

    #[test]
    fn hex_round_trips_and_rejects_garbage() {
        let key = AccountKey(core::array::from_fn(|i| (i * 7) as u8));
        assert_eq!(AccountKey::from_hex(&key.to_hex()), Some(key.clone()));
        assert_eq!(
            AccountKey::from_hex(&key.to_hex().to_uppercase()),
            Some(key)
        );
        assert!(AccountKey::from_hex("abc").is_none());
        assert!(AccountKey::from_hex(&"zz".repeat(32)).is_none());
        assert_eq!(
            format!("{:?}", AccountKey([1; 32])),
            "AccountKey(<redacted>)"
        );
    }
}
