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

use peregrine_types::{AccountId, Timestamp};

use crate::auth::{AccountKey, StoredKey, DOMAIN, KEY_LEN};
use crate::field::{LeaderAddress, Pad, ReasonCode, SessionKind};
use crate::message::{wire_message, WireMessage};

wire_message! {
    /// Exchange → client, unsolicited, first on every connection: the nonce the login
    /// proof must cover. A new connection gets a new nonce.
    Challenge = 0x84, version 2;
    /// Per-session sequence number of this message: 1.
    session_seq: u64,
    /// The matching engine's global sequence number at the time of this message.
    engine_seq: u64,
    /// Engine time of this message, nanoseconds since the Unix epoch.
    engine_time: Timestamp,
    /// 32 random bytes, never reused.
    nonce: [u8; 32],
}

wire_message! {
    /// Client → exchange. Opens a version-2 session, answering the `Challenge`. A
    /// version-1 `Login` (type 0x01) is refused with `LoginRejected` reason 3.
    Login = 0x04, version 2;
    /// The next report sequence number the client expects for its scope: it has seen
    /// every report before it. 0: no replay, start with live reports (the client
    /// rebuilds with `OpenOrdersRequest` if it needs to). For a drop copy of every
    /// account, an engine sequence number instead (see the protocol document).
    next_report_seq: u64,
    /// `key XOR HMAC-SHA256(SHA-256(key), auth_message)`: proves the account's key
    /// over the nonce and every other field of this message (section 4.1).
    proof: [u8; 32],
    /// The account whose key makes the proof.
    account: AccountId,
    /// Whose reports the session receives: the account itself (trading sessions must
    /// name it), another account or 0xFFFF_FFFF for every account (drop copy by an
    /// operator account only).
    target: Option<AccountId>,
    /// Requested heartbeat interval in milliseconds; the exchange may clamp it and
    /// answers with the interval it will use.
    heartbeat_interval_ms: u32,
    /// 0 Trading, 1 DropCopy (read-only).
    kind: SessionKind,
    /// Session options, bit 0: cancel every open order of the account when this
    /// session ends for any reason but a `Logout` (cancel-on-disconnect; protocol
    /// version 3). Other bits must be zero.
    flags: u8,
    /// Must be zero.
    reserved: Pad<2>,
}

/// [`Login::flags`] bit: cancel the account's open orders when the session drops.
pub const LOGIN_CANCEL_ON_DISCONNECT: u8 = 1;

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

wire_message! {
    /// Exchange → client. The login succeeded. Version 2 appends the report-stream
    /// position and the number of instrument definitions that follow.
    LoginAccepted = 0x81, version 2;
    /// Per-session sequence number of this message.
    session_seq: u64,
    /// The matching engine's global sequence number at the time of this message.
    engine_seq: u64,
    /// Engine time of this message, nanoseconds since the Unix epoch.
    engine_time: Timestamp,
    /// The account now logged in.
    account: AccountId,
    /// The heartbeat interval, milliseconds, both sides must keep.
    heartbeat_interval_ms: u32,
    /// The report sequence number of the first live report: the replay that follows
    /// ends just before it.
    next_report_seq: u64,
    /// The oldest report sequence number the exchange still retains for this scope
    /// (a login asking for older reports gets an open-orders snapshot instead).
    oldest_report_seq: u64,
    /// Whose reports the session receives (0xFFFF_FFFF: every account).
    target: Option<AccountId>,
    /// Number of `InstrumentDefinition` messages that follow.
    instrument_count: u32,
    /// The session kind granted.
    kind: SessionKind,
}

wire_message! {
    /// Exchange → client. The login failed; the exchange closes the connection.
    /// Version 2 appends how long to wait before trying again.
    LoginRejected = 0x82, version 2;
    /// Per-session sequence number of this message.
    session_seq: u64,
    /// The matching engine's global sequence number at the time of this message.
    engine_seq: u64,
    /// Engine time of this message, nanoseconds since the Unix epoch.
    engine_time: Timestamp,
    /// Why: a login reason code (protocol document, reason-code tables).
    reason: ReasonCode,
    /// Must be zero.
    reserved: Pad<2>,
    /// Milliseconds before a new attempt can succeed (throttling); 0 if not throttled.
    retry_after_ms: u32,
}

wire_message! {
    /// Exchange → client, instead of the `Challenge`, by a cluster node that is not
    /// the leader: where to send order entry. The node closes the connection after
    /// it; the client connects to `address` (or, with no leader known, tries again
    /// after `retry_after_ms`).
    LeaderRedirect = 0x87, version 2;
    /// Per-session sequence number of this message: 1.
    session_seq: u64,
    /// The matching engine's global sequence number at the time of this message.
    engine_seq: u64,
    /// Engine time of this message, nanoseconds since the Unix epoch.
    engine_time: Timestamp,
    /// The leader's node id; 0: no leader known yet.
    leader_id: u64,
    /// Milliseconds to wait before trying again when no leader is known; 0 otherwise.
    retry_after_ms: u32,
    /// Must be zero.
    reserved: Pad<4>,
    /// The leader's order-entry address, ASCII `host:port` padded with zero bytes
    /// (all zeros when no leader is known).
    address: LeaderAddress,
}

wire_message! {
    /// Exchange → client. Liveness signal, sent when the exchange has sent nothing
    /// for one heartbeat interval. Version 2 appends the report-stream position, so an
    /// idle client can check it has every report.
    ServerHeartbeat = 0x83, version 2;
    /// Per-session sequence number of this message.
    session_seq: u64,
    /// The matching engine's global sequence number at the time of this message.
    engine_seq: u64,
    /// Engine time of this message, nanoseconds since the Unix epoch.
    engine_time: Timestamp,
    /// The report sequence number the next report of the session's scope will carry.
    next_report_seq: u64,
}

wire_message! {
    /// Exchange → client. Starts the recovery phase of a login: `count` reports follow
    /// (sequence numbers `from_seq ..`), or, when `reason` is non-zero, none and an
    /// open-orders snapshot instead (`OpenOrder`s and an `OpenOrdersEnd`). A
    /// `ReplayEnd` always closes the phase.
    ReplayStart = 0x85, version 2;
    /// Per-session sequence number of this message.
    session_seq: u64,
    /// The matching engine's global sequence number at the time of this message.
    engine_seq: u64,
    /// Engine time of this message, nanoseconds since the Unix epoch.
    engine_time: Timestamp,
    /// The first report sequence number replayed (the login's `next_report_seq`).
    from_seq: u64,
    /// One past the last one replayed (the `LoginAccepted`'s `next_report_seq`).
    to_seq: u64,
    /// Number of reports that follow (0 with a non-zero reason).
    count: u64,
    /// 0: the replay follows; else a recovery reason code (1: older than retention,
    /// 4: ahead of the stream).
    reason: ReasonCode,
}

wire_message! {
    /// Exchange → client. Ends the recovery phase: live reports follow, starting at
    /// `next_report_seq`.
    ReplayEnd = 0x86, version 2;
    /// Per-session sequence number of this message.
    session_seq: u64,
    /// The matching engine's global sequence number at the time of this message.
    engine_seq: u64,
    /// Engine time of this message, nanoseconds since the Unix epoch.
    engine_time: Timestamp,
    /// The report sequence number of the first live report.
    next_report_seq: u64,
    /// Reports replayed.
    count: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn login(account: u32) -> Login {
        Login {
            next_report_seq: 7,
            proof: [0; 32],
            account: AccountId(account),
            target: Some(AccountId(account)),
            heartbeat_interval_ms: 1000,
            kind: SessionKind::Trading,
            flags: 0,
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
