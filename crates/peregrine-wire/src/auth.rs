//! The version-2 login proof: challenge-response over a per-account key, with the
//! exchange storing only a hash of it (the core of SCRAM, RFC 5802, over SHA-256).
//!
//! * Each account has a random 32-byte **key** ([`AccountKey`]), held by the client.
//! * The exchange stores `stored = SHA-256(key)` ([`StoredKey`]), never the key: a
//!   copy of the exchange's configuration does not let anyone log in.
//! * On a new connection the exchange sends a fresh 32-byte nonce (`Challenge`).
//! * The client sends `proof = key XOR HMAC-SHA256(stored, auth_message)`, where
//!   `auth_message` binds the nonce and every other field of the `Login`
//!   ([`auth_message`]).
//! * The exchange recomputes the HMAC (it knows `stored`), recovers
//!   `key' = proof XOR HMAC`, and accepts if `SHA-256(key') == stored` (compared in
//!   constant time).
//!
//! Neither the key nor anything reusable crosses the wire: the proof is bound to one
//! nonce and one set of login fields. (Like SCRAM, an eavesdropper who also stole the
//! stored hash could recover the key; TLS closes that.)

use hmac::{KeyInit, Mac};
use sha2::{Digest, Sha256};

use crate::v2::session::Login;
use crate::WireMessage;

/// Bytes of a key, a stored key, a nonce and a proof.
pub const KEY_LEN: usize = 32;

/// Domain separation prefix of [`auth_message`].
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

    /// The proof for `login` (whose `proof` field is ignored) answering `nonce`.
    pub fn prove(&self, nonce: &[u8; KEY_LEN], login: &Login) -> [u8; KEY_LEN] {
        let sig = signature(&self.stored(), nonce, login);
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

    /// True if `login.proof` proves knowledge of the key behind this hash for
    /// `nonce` and exactly `login`'s other fields. Constant time in the proof.
    pub fn verify(&self, nonce: &[u8; KEY_LEN], login: &Login) -> bool {
        let sig = signature(self, nonce, login);
        let key = xor(&login.proof, &sig);
        let hash: [u8; KEY_LEN] = Sha256::digest(key).into();
        ct_eq(&hash, &self.0)
    }
}

/// The bytes the HMAC covers: [`DOMAIN`], the nonce, then the `Login` message as
/// encoded with its `proof` field zeroed (so every field, header included, is bound).
pub fn auth_message(
    nonce: &[u8; KEY_LEN],
    login: &Login,
) -> [u8; DOMAIN.len() + KEY_LEN + Login::SIZE] {
    let mut out = [0u8; DOMAIN.len() + KEY_LEN + Login::SIZE];
    out[..DOMAIN.len()].copy_from_slice(DOMAIN);
    out[DOMAIN.len()..DOMAIN.len() + KEY_LEN].copy_from_slice(nonce);
    let blank = Login {
        proof: [0; KEY_LEN],
        ..*login
    };
    // Login::SIZE bytes always fit: the array is sized for them.
    let _ = blank.encode(&mut out[DOMAIN.len() + KEY_LEN..]);
    out
}

fn signature(stored: &StoredKey, nonce: &[u8; KEY_LEN], login: &Login) -> [u8; KEY_LEN] {
    // HMAC accepts keys of any length, so this never fails for 32 bytes.
    let Ok(mut mac) = <HmacSha256 as KeyInit>::new_from_slice(&stored.0) else {
        return [0; KEY_LEN];
    };
    mac.update(&auth_message(nonce, login));
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
    use crate::field::{Pad, SessionKind};
    use peregrine_types::AccountId;

    fn login(account: u32) -> Login {
        Login {
            next_report_seq: 7,
            proof: [0; KEY_LEN],
            account: AccountId(account),
            target: Some(AccountId(account)),
            heartbeat_interval_ms: 1000,
            kind: SessionKind::Trading,
            reserved: Pad,
        }
    }

    #[test]
    fn a_proof_verifies_only_for_its_nonce_key_and_fields() {
        let key = AccountKey([0x11; KEY_LEN]);
        let stored = key.stored();
        let nonce = [0x22; KEY_LEN];
        let mut l = login(5);
        l.proof = key.prove(&nonce, &l);
        assert!(stored.verify(&nonce, &l));
        assert!(!stored.verify(&[0x23; KEY_LEN], &l), "another nonce");
        assert!(
            !AccountKey([0x12; KEY_LEN]).stored().verify(&nonce, &l),
            "another key"
        );
        let mut other = l;
        other.next_report_seq = 8;
        assert!(!stored.verify(&nonce, &other), "a field changed in flight");
        let mut other = l;
        other.kind = SessionKind::DropCopy;
        assert!(!stored.verify(&nonce, &other));
        for byte in 0..KEY_LEN {
            let mut bad = l;
            bad.proof[byte] ^= 1;
            assert!(!stored.verify(&nonce, &bad), "flip in proof byte {byte}");
        }
    }

    #[test]
    fn the_proof_does_not_reveal_the_key() {
        let key = AccountKey([0x5A; KEY_LEN]);
        let l = login(1);
        let proof = key.prove(&[1; KEY_LEN], &l);
        assert_ne!(proof, key.0);
        assert_ne!(proof, key.stored().0);
    }

    #[test]
    fn known_answer_pins_the_construction() {
        // key = 0x00..0x1f; stored = SHA-256(key); a fixed nonce and login.
        let key = AccountKey(core::array::from_fn(|i| i as u8));
        assert_eq!(
            key.stored().to_hex(),
            "630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd"
        );
        let mut l = login(1);
        l.proof = key.prove(&[0xAB; KEY_LEN], &l);
        assert!(key.stored().verify(&[0xAB; KEY_LEN], &l));
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
