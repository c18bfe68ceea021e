//! Version-2 session messages: the challenge-response login, its answers, the
//! heartbeat that carries the report sequence, and the frame of a report replay.
//!
//! ```text
//! client                                   exchange
//!   connect ───────────────────────────────▶
//!          ◀─────────────────────────────── Challenge (nonce)
//!                                            (a cluster follower: LeaderRedirect
//!                                            instead, and close)
//!   Login (account, kind, target, next_report_seq, proof) ─▶
//!          ◀─────────────────────────────── LoginAccepted | LoginRejected (and close)
//!          ◀─────────────────────────────── InstrumentDefinition × instrument_count
//!          ◀─────────────────────────────── ReplayStart, the missed reports (or an
//!                                            open-orders snapshot), ReplayEnd
//!          ◀─────────────────────────────── live reports, answers, heartbeats
//! ```
//!
//! The proof ([`Login::proof_for`], [`Login::verify`]) uses the key types of the
//! `auth` module; no password or key crosses the wire.

use crate::auth::{AccountKey, StoredKey, DOMAIN, KEY_LEN};
use crate::message::WireMessage;

include!(concat!(env!("OUT_DIR"), "/msg_v2__session.rs"));

/// Bytes of [`Login::auth_message`].
pub const AUTH_MESSAGE_LEN: usize = DOMAIN.len() + KEY_LEN + Login::SIZE;

impl Login {
    /// The bytes the login proof covers: the domain tag ([`DOMAIN`]), the nonce, then
    /// this message as encoded with its `proof` field zeroed (so every field, header
    /// included, is bound to the proof).
    pub fn auth_message(&self, nonce: &[u8; KEY_LEN]) -> [u8; AUTH_MESSAGE_LEN] {
        let mut out = [0u8; AUTH_MESSAGE_LEN];
        out[..DOMAIN.len()].copy_from_slice(DOMAIN);
        out[DOMAIN.len()..DOMAIN.len() + KEY_LEN].copy_from_slice(nonce);
        let blank = Login {
            proof: [0; KEY_LEN],
            ..*self
        };
        // Login::SIZE bytes always fit: the array is sized for them.
        let _ = blank.encode(&mut out[DOMAIN.len() + KEY_LEN..]);
        out
    }

    /// The proof of this login (its `proof` field ignored) answering `nonce`.
    pub fn proof_for(&self, key: &AccountKey, nonce: &[u8; KEY_LEN]) -> [u8; KEY_LEN] {
        key.prove(&self.auth_message(nonce))
    }

    /// True if this login's proof answers `nonce` with the key behind `stored`
    /// (constant time in the proof).
    pub fn verify(&self, stored: &StoredKey, nonce: &[u8; KEY_LEN]) -> bool {
        stored.verify(&self.auth_message(nonce), &self.proof)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::field::{LeaderAddress, Pad, SessionKind};
    use peregrine_types::{AccountId, Timestamp};

    fn login(account: u32) -> Login {
        Login {
            next_report_seq: 7,
            proof: [0; 32],
            account: AccountId(account),
            target: Some(AccountId(account)),
            heartbeat_interval_ms: 1000,
            kind: SessionKind::Trading,
            reserved: Pad,
        }
    }

    #[test]
    fn a_login_proof_binds_the_nonce_the_key_and_every_field() {
        let key = AccountKey([0x11; 32]);
        let stored = key.stored();
        let nonce = [0x22; 32];
        let mut l = login(5);
        l.proof = l.proof_for(&key, &nonce);
        assert!(l.verify(&stored, &nonce));
        assert!(!l.verify(&stored, &[0x23; 32]), "another nonce");
        assert!(
            !l.verify(&AccountKey([0x12; 32]).stored(), &nonce),
            "another key"
        );
        let mut other = l;
        other.next_report_seq = 8;
        assert!(!other.verify(&stored, &nonce), "a field changed in flight");
        let mut other = l;
        other.kind = SessionKind::DropCopy;
        assert!(!other.verify(&stored, &nonce));
    }

    #[test]
    fn a_leader_redirect_round_trips_and_refuses_a_byte_after_the_padding() {
        let m = LeaderRedirect {
            session_seq: 1,
            engine_seq: 0,
            engine_time: Timestamp(0),
            leader_id: 2,
            retry_after_ms: 0,
            reserved: Pad,
            address: LeaderAddress::from_text("10.0.0.2:9100").unwrap(),
        };
        let mut buf = [0u8; LeaderRedirect::SIZE];
        assert_eq!(m.encode(&mut buf), Ok(LeaderRedirect::SIZE));
        let (back, used) = crate::v2::Outbound::decode(&buf).unwrap();
        assert_eq!((back, used), (m.into(), LeaderRedirect::SIZE));
        buf[LeaderRedirect::SIZE - 1] = b'9';
        assert_eq!(
            crate::v2::Outbound::decode(&buf),
            Err(crate::DecodeError::InvalidField {
                field: "address",
                value: u64::from(b'9')
            })
        );
    }
}
