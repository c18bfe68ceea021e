//! The Logon: the first message of a connection (acceptor: the peer's Logon and our
//! answer; initiator: the answer to ours), and a Logon with ResetSeqNumFlag on a
//! logged-on session (both sequences start again at 1).

use crate::codec::value::parse_u64;
use crate::codec::{tags, Message};
use crate::dict::validate;
use crate::store::MessageStore;

use super::event::{DisconnectReason, Event};
use super::inbound::{body_field, too_low_text, Step};
use super::outbound::msg_type as mt;
use super::{Role, Session, State};

/// Constant-time comparison of a secret (no early exit on the first difference).
fn same_secret(a: &[u8], b: &[u8]) -> bool {
    let mut diff = a.len() ^ b.len();
    for (i, &x) in a.iter().enumerate() {
        diff |= usize::from(x ^ b.get(i).copied().unwrap_or(0));
    }
    diff == 0
}

/// Whether a Logon carries ResetSeqNumFlag=Y.
fn asks_reset(msg: &Message<'_>) -> bool {
    body_field(msg, tags::RESET_SEQ_NUM_FLAG) == Some(b"Y")
}

impl<S: MessageStore> Session<S> {
    /// Refuses a Logon with a Logout that takes no sequence number, and closes.
    fn refuse_logon<'a>(&mut self, why: &'static str, now: u64) -> Step<'a> {
        self.send_unsequenced_logout(why, now);
        Ok(self.close(DisconnectReason::LogonRefused(why)))
    }

    pub(super) fn on_logon_phase<'a>(&mut self, msg: Message<'a>, now: u64) -> Step<'a> {
        let h = msg.header;
        if self.config.role == Role::Initiator && h.msg_type == mt::LOGOUT {
            return Ok(self.close(DisconnectReason::LogonRejectedByPeer));
        }
        if h.msg_type != mt::LOGON {
            return Ok(self.close(DisconnectReason::NotLogon));
        }
        if h.sender_comp_id != self.config.target_comp_id.as_bytes()
            || h.target_comp_id != self.config.sender_comp_id.as_bytes()
        {
            return self.refuse_logon("CompID problem", now);
        }
        if self.config.check_latency && h.sending_time.abs_diff(now) > self.config.max_clock_skew_ns
        {
            return self.refuse_logon("SendingTime accuracy problem", now);
        }
        if let Err(v) = validate(&msg, &self.config.validation) {
            return self.refuse_logon(super::reject::SessionRejectReason::from(v).text(), now);
        }
        if self.config.role == Role::Acceptor {
            if let Some(refusal) = self.check_logon(&msg, true) {
                return self.refuse_logon(refusal, now);
            }
            let reset = asks_reset(&msg);
            if reset && h.msg_seq_num != 1 {
                return self.refuse_logon("ResetSeqNumFlag with MsgSeqNum other than 1", now);
            }
            if reset || self.config.reset_on_logon {
                self.store.reset(now)?;
            }
            // Our answer carries 141=Y when the peer's Logon did.
            self.logon_reset = reset;
        }
        let expected = self.store.next_target_seq();
        if h.msg_seq_num < expected {
            let text = too_low_text(expected, h.msg_seq_num);
            self.send_unsequenced_logout(&text, now);
            return Ok(self.close(DisconnectReason::SeqTooLow {
                expected,
                received: h.msg_seq_num,
            }));
        }
        if self.config.role == Role::Acceptor {
            self.send_logon(now)?;
        }
        self.state = State::Active;
        if h.msg_seq_num == expected {
            self.consume(h.msg_seq_num)?;
        } else {
            // Acted on now; its number waits for the gap before it to be filled.
            self.too_high(h.msg_seq_num, None, now)?;
        }
        Ok(Some(Event::LoggedOn {
            reset: self.logon_reset
                || (self.config.role == Role::Acceptor && self.config.reset_on_logon),
            heartbeat_secs: (self.heartbeat_ns / 1_000_000_000) as u32,
        }))
    }

    /// A Logon on a logged-on session: with ResetSeqNumFlag=Y and MsgSeqNum 1, both
    /// sequences start again at 1 and we answer with our own Logon (141=Y, number 1);
    /// anything else is a duplicate Logon: Logout, close.
    pub(super) fn on_logon_in_session<'a>(&mut self, msg: &Message<'a>, now: u64) -> Step<'a> {
        if !asks_reset(msg) {
            return self.logout_and_close(DisconnectReason::DuplicateLogon, now);
        }
        if msg.header.msg_seq_num != 1 {
            return self.logout_and_close(DisconnectReason::BadReset, now);
        }
        if let Err(v) = validate(msg, &self.config.validation) {
            let h = msg.header;
            return self.reject(
                h.msg_seq_num,
                h.msg_type,
                v.into(),
                v.tag(),
                msg.route(),
                now,
            );
        }
        if let Some(refusal) = self.check_logon(msg, false) {
            return self.logout_and_close(DisconnectReason::LogonRefused(refusal), now);
        }
        self.store.reset(now)?;
        self.gap = None;
        self.queue.clear();
        self.test_request = None;
        self.logon_reset = true;
        self.send_logon(now)?;
        self.consume(1)?;
        Ok(Some(Event::LoggedOn {
            reset: true,
            heartbeat_secs: (self.heartbeat_ns / 1_000_000_000) as u32,
        }))
    }

    /// Credentials (when `credentials`), EncryptMethod and HeartBtInt of a Logon
    /// (the acceptor's checks; the initiator takes the interval it asked for); sets
    /// the heartbeat interval. `Some(reason)` refuses it.
    fn check_logon(&mut self, msg: &Message<'_>, credentials: bool) -> Option<&'static str> {
        if credentials && self.config.role == Role::Acceptor {
            let ok = |want: &Option<String>, tag| match want {
                None => true,
                Some(w) => body_field(msg, tag).is_some_and(|got| same_secret(got, w.as_bytes())),
            };
            // Both checked, whichever fails, so the time taken does not tell which.
            let user_ok = ok(&self.config.username, tags::USERNAME);
            let password_ok = ok(&self.config.password, tags::PASSWORD);
            if !(user_ok & password_ok) {
                return Some("authentication failed");
            }
        }
        if body_field(msg, tags::ENCRYPT_METHOD) != Some(b"0") {
            return Some("EncryptMethod (98) must be 0");
        }
        if self.config.role == Role::Initiator {
            return None;
        }
        let (lo, hi) = self.config.heartbeat_bounds;
        match body_field(msg, tags::HEART_BT_INT).and_then(parse_u64) {
            Some(hb) if (u64::from(lo)..=u64::from(hi)).contains(&hb) => {
                self.heartbeat_ns = hb * 1_000_000_000;
                None
            }
            _ => Some("HeartBtInt (108) missing or out of range"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::same_secret;

    #[test]
    fn secrets_compare_exactly() {
        assert!(same_secret(b"abc", b"abc"));
        assert!(!same_secret(b"abc", b"abd"));
        assert!(!same_secret(b"abc", b"abcd"));
        assert!(!same_secret(b"", b"a"));
        assert!(same_secret(b"", b""));
    }
}
