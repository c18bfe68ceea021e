//! The receive path: frame → header checks → Logon phase or sequence rules → the
//! message's own handling.

use crate::codec::header::find_seq;
use crate::codec::value::{parse_bool, parse_u64};
use crate::codec::{frame, tags, Frame, Message, ParseError};
use crate::store::{MessageStore, StoreError};

use super::event::{DisconnectReason, Event, Received};
use super::outbound::msg_type as mt;
use super::reject::{garble_reject, SessionRejectReason as R};
use super::{Role, Session, State};

type Step<'a> = Result<Option<Event<'a>>, StoreError>;

/// The first value of `tag` in the body, if any.
fn body_field<'a>(msg: &Message<'a>, tag: u32) -> Option<&'a [u8]> {
    msg.fields()
        .flatten()
        .find(|f| f.tag == tag)
        .map(|f| f.value)
}

/// Constant-time comparison of a secret (no early exit on the first difference).
fn same_secret(a: &[u8], b: &[u8]) -> bool {
    let mut diff = a.len() ^ b.len();
    for (i, &x) in a.iter().enumerate() {
        diff |= usize::from(x ^ b.get(i).copied().unwrap_or(0));
    }
    diff == 0
}

impl<S: MessageStore> Session<S> {
    /// Offers received bytes (the whole receive buffer, from its first unconsumed
    /// byte). Handles at most one message; call again until [`Received::NeedMore`].
    pub fn receive<'a>(&mut self, buf: &'a [u8], now: u64) -> Result<Received<'a>, StoreError> {
        if matches!(self.state, State::Disconnected | State::Closing) {
            return Ok(Received::Consumed {
                len: buf.len(),
                event: None,
            });
        }
        let len = match frame(buf, self.config.limits) {
            Ok(None) => return Ok(Received::NeedMore),
            Err(e) => {
                if self.is_logged_on() {
                    self.send_logout(DisconnectReason::Framing(e).text(), now)?;
                }
                let event = self.close(DisconnectReason::Framing(e));
                return Ok(Received::Consumed {
                    len: buf.len(),
                    event,
                });
            }
            Ok(Some(Frame::Garbled { len, garble })) => {
                self.last_received = now;
                let event = if self.is_logged_on() {
                    let (reason, tag, text) = garble_reject(garble);
                    let seq = find_seq(&buf[..len]).unwrap_or(0);
                    self.send_reject(seq, b"", reason, Some(tag), text, now)?;
                    Some(Event::Garbled(garble))
                } else {
                    self.close(DisconnectReason::NotLogon)
                };
                return Ok(Received::Consumed { len, event });
            }
            Ok(Some(Frame::Message { len })) => len,
        };
        self.last_received = now;
        self.test_request = None;
        let event = match Message::parse(&buf[..len]) {
            Ok(msg) => self.on_message(msg, now)?,
            Err(e) => self.on_parse_error(e, now)?,
        };
        Ok(Received::Consumed { len, event })
    }

    /// Marks the session closing and returns the disconnect event.
    pub(crate) fn close<'a>(&mut self, reason: DisconnectReason) -> Option<Event<'a>> {
        self.state = State::Closing;
        Some(Event::Disconnect(reason))
    }

    fn logout_and_close<'a>(&mut self, reason: DisconnectReason, now: u64) -> Step<'a> {
        self.send_logout(reason.text(), now)?;
        Ok(self.close(reason))
    }

    /// Consumes the in-sequence message `seq` (the next expected becomes `seq + 1`).
    fn consume(&mut self, seq: u64) -> Result<(), StoreError> {
        self.store.set_next_target_seq(seq + 1)?;
        if self.resend_until.is_some_and(|until| seq >= until) {
            self.resend_until = None;
        }
        Ok(())
    }

    /// Rejects the in-sequence message `seq` and consumes it.
    fn reject<'a>(
        &mut self,
        seq: u64,
        msg_type: &[u8],
        reason: R,
        tag: Option<u32>,
        now: u64,
    ) -> Step<'a> {
        self.send_reject(seq, msg_type, reason, tag, reason.text(), now)?;
        self.consume(seq)?;
        Ok(Some(Event::Rejected {
            ref_seq: seq,
            reason,
            ref_tag: tag,
        }))
    }

    /// Asks for everything from `expected` on, unless a request is already open.
    fn request_resend(&mut self, expected: u64, seen: u64, now: u64) -> Result<(), StoreError> {
        match self.resend_until {
            Some(until) => self.resend_until = Some(until.max(seen)),
            None => {
                self.send_resend_request(expected, now)?;
                self.resend_until = Some(seen);
            }
        }
        Ok(())
    }

    fn on_parse_error<'a>(&mut self, e: ParseError<'a>, now: u64) -> Step<'a> {
        if matches!(self.state, State::AwaitingLogon { .. }) {
            return Ok(self.close(DisconnectReason::NotLogon));
        }
        let seq_bad = matches!(e.error.tag(), Some(tags::MSG_SEQ_NUM));
        let Some(seq) = e.msg_seq_num.filter(|_| !seq_bad) else {
            return self.logout_and_close(DisconnectReason::NoSeqNum, now);
        };
        let expected = self.store.next_target_seq();
        if seq == expected {
            return self.reject(seq, e.msg_type, R::from(e.error), e.error.tag(), now);
        }
        if seq > expected {
            self.request_resend(expected, seq, now)?;
        }
        // Below expected: a malformed duplicate of something already processed.
        Ok(None)
    }

    fn on_message<'a>(&mut self, msg: Message<'a>, now: u64) -> Step<'a> {
        let h = msg.header;
        let awaiting = matches!(self.state, State::AwaitingLogon { .. });
        if h.sender_comp_id != self.config.target_comp_id.as_bytes()
            || h.target_comp_id != self.config.sender_comp_id.as_bytes()
        {
            if awaiting {
                return self.refuse_logon("CompID problem", now);
            }
            let tag = if h.sender_comp_id != self.config.target_comp_id.as_bytes() {
                tags::SENDER_COMP_ID
            } else {
                tags::TARGET_COMP_ID
            };
            self.reject(h.msg_seq_num, h.msg_type, R::CompIdProblem, Some(tag), now)?;
            return self.logout_and_close(DisconnectReason::CompIdProblem, now);
        }
        if h.sending_time.abs_diff(now) > self.config.max_clock_skew_ns {
            if awaiting {
                return self.refuse_logon("SendingTime accuracy problem", now);
            }
            self.reject(
                h.msg_seq_num,
                h.msg_type,
                R::SendingTimeAccuracy,
                Some(tags::SENDING_TIME),
                now,
            )?;
            return self.logout_and_close(DisconnectReason::SendingTime, now);
        }
        if h.poss_dup && h.msg_type != mt::SEQUENCE_RESET && !awaiting {
            match h.orig_sending_time {
                None if h.msg_seq_num == self.store.next_target_seq() => {
                    return self.reject(
                        h.msg_seq_num,
                        h.msg_type,
                        R::RequiredTagMissing,
                        Some(tags::ORIG_SENDING_TIME),
                        now,
                    );
                }
                Some(orig) if orig > h.sending_time => {
                    self.reject(
                        h.msg_seq_num,
                        h.msg_type,
                        R::SendingTimeAccuracy,
                        Some(tags::ORIG_SENDING_TIME),
                        now,
                    )?;
                    return self.logout_and_close(DisconnectReason::SendingTime, now);
                }
                _ => {}
            }
        }
        match self.state {
            State::AwaitingLogon { .. } => self.on_logon_phase(msg, now),
            State::Active | State::LogoutSent { .. } => self.on_logged_on(msg, now),
            State::Disconnected | State::Closing => Ok(None),
        }
    }

    /// Refuses a Logon with a Logout that takes no sequence number, and closes.
    fn refuse_logon<'a>(&mut self, why: &'static str, now: u64) -> Step<'a> {
        self.send_unsequenced_logout(why, now);
        Ok(self.close(DisconnectReason::LogonRefused(why)))
    }

    fn on_logon_phase<'a>(&mut self, msg: Message<'a>, now: u64) -> Step<'a> {
        let h = msg.header;
        if self.config.role == Role::Initiator && h.msg_type == mt::LOGOUT {
            return Ok(self.close(DisconnectReason::LogonRejectedByPeer));
        }
        if h.msg_type != mt::LOGON {
            return Ok(self.close(DisconnectReason::NotLogon));
        }
        if self.config.role == Role::Acceptor {
            if let Some(refusal) = self.check_logon(&msg) {
                return self.refuse_logon(refusal, now);
            }
            if body_field(&msg, tags::RESET_SEQ_NUM_FLAG).and_then(parse_bool) == Some(true) {
                if h.msg_seq_num != 1 {
                    return self.refuse_logon("ResetSeqNumFlag with MsgSeqNum other than 1", now);
                }
                self.store.reset(now)?;
                self.logon_reset = true;
            }
        }
        let expected = self.store.next_target_seq();
        if h.msg_seq_num < expected {
            self.send_unsequenced_logout("MsgSeqNum too low", now);
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
            self.request_resend(expected, h.msg_seq_num, now)?;
        }
        Ok(Some(Event::LoggedOn {
            reset: self.logon_reset,
            heartbeat_secs: (self.heartbeat_ns / 1_000_000_000) as u32,
        }))
    }

    /// Acceptor: credentials, EncryptMethod and HeartBtInt of a Logon; sets the
    /// heartbeat interval. `Some(reason)` refuses it.
    fn check_logon(&mut self, msg: &Message<'_>) -> Option<&'static str> {
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
        if body_field(msg, tags::ENCRYPT_METHOD) != Some(b"0") {
            return Some("EncryptMethod (98) must be 0");
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

    fn on_logged_on<'a>(&mut self, msg: Message<'a>, now: u64) -> Step<'a> {
        let h = msg.header;
        let t = h.msg_type;
        if t == mt::LOGON {
            return self.logout_and_close(DisconnectReason::DuplicateLogon, now);
        }
        let gap_fill = t == mt::SEQUENCE_RESET
            && body_field(&msg, tags::GAP_FILL_FLAG).and_then(parse_bool) == Some(true);
        if t == mt::SEQUENCE_RESET && !gap_fill {
            return self.on_sequence_reset(&msg, now);
        }
        let expected = self.store.next_target_seq();
        if h.msg_seq_num > expected {
            self.request_resend(expected, h.msg_seq_num, now)?;
            return match t {
                mt::RESEND_REQUEST => self.on_resend_request(&msg, now),
                mt::LOGOUT => self.on_logout(now),
                _ => Ok(None), // dropped: it comes again with the resend
            };
        }
        if h.msg_seq_num < expected {
            if h.poss_dup {
                return Ok(None); // a duplicate of what was processed
            }
            self.send_logout("MsgSeqNum too low", now)?;
            return Ok(self.close(DisconnectReason::SeqTooLow {
                expected,
                received: h.msg_seq_num,
            }));
        }
        if gap_fill {
            return self.on_gap_fill(&msg, now);
        }
        match t {
            mt::HEARTBEAT | mt::REJECT | mt::TEST_REQUEST | mt::RESEND_REQUEST | mt::LOGOUT => {}
            _ => {
                self.consume(h.msg_seq_num)?;
                return Ok(Some(Event::App(msg)));
            }
        }
        match t {
            mt::TEST_REQUEST => match body_field(&msg, tags::TEST_REQ_ID) {
                Some(id) => {
                    self.consume(h.msg_seq_num)?;
                    self.send_heartbeat(Some(id), now)?;
                    Ok(None)
                }
                None => self.reject(
                    h.msg_seq_num,
                    t,
                    R::RequiredTagMissing,
                    Some(tags::TEST_REQ_ID),
                    now,
                ),
            },
            mt::RESEND_REQUEST => {
                self.consume(h.msg_seq_num)?;
                self.on_resend_request(&msg, now)
            }
            mt::REJECT => {
                self.consume(h.msg_seq_num)?;
                let ref_seq = body_field(&msg, tags::REF_SEQ_NUM)
                    .and_then(parse_u64)
                    .unwrap_or(0);
                Ok(Some(Event::PeerRejected { ref_seq }))
            }
            mt::LOGOUT => {
                self.consume(h.msg_seq_num)?;
                self.on_logout(now)
            }
            _ => {
                self.consume(h.msg_seq_num)?; // Heartbeat
                Ok(None)
            }
        }
    }

    fn on_logout<'a>(&mut self, now: u64) -> Step<'a> {
        if matches!(self.state, State::LogoutSent { .. }) {
            return Ok(self.close(DisconnectReason::LogoutComplete));
        }
        self.send_logout(DisconnectReason::PeerLogout.text(), now)?;
        Ok(self.close(DisconnectReason::PeerLogout))
    }

    fn on_resend_request<'a>(&mut self, msg: &Message<'a>, now: u64) -> Step<'a> {
        let seq = msg.header.msg_seq_num;
        let t = msg.header.msg_type;
        let begin = body_field(msg, tags::BEGIN_SEQ_NO);
        let end = body_field(msg, tags::END_SEQ_NO);
        let (Some(begin), Some(end)) = (begin, end) else {
            let tag = if begin.is_none() {
                tags::BEGIN_SEQ_NO
            } else {
                tags::END_SEQ_NO
            };
            return self.reject_consumed(seq, t, R::RequiredTagMissing, tag, now);
        };
        let (Some(begin), Some(end)) = (parse_u64(begin), parse_u64(end)) else {
            return self.reject_consumed(seq, t, R::IncorrectDataFormat, tags::BEGIN_SEQ_NO, now);
        };
        if begin == 0 || (end != 0 && end < begin) {
            return self.reject_consumed(seq, t, R::ValueIncorrect, tags::BEGIN_SEQ_NO, now);
        }
        self.serve_resend(begin, end, now)?;
        Ok(Some(Event::ResendServed { begin, end }))
    }

    /// A Reject of a message already consumed (or one beyond a gap, served anyway).
    fn reject_consumed<'a>(
        &mut self,
        seq: u64,
        t: &[u8],
        reason: R,
        tag: u32,
        now: u64,
    ) -> Step<'a> {
        self.send_reject(seq, t, reason, Some(tag), reason.text(), now)?;
        Ok(Some(Event::Rejected {
            ref_seq: seq,
            reason,
            ref_tag: Some(tag),
        }))
    }

    /// SequenceReset in reset mode: MsgSeqNum is ignored; NewSeqNo may only go up.
    fn on_sequence_reset<'a>(&mut self, msg: &Message<'a>, now: u64) -> Step<'a> {
        let seq = msg.header.msg_seq_num;
        let t = msg.header.msg_type;
        let expected = self.store.next_target_seq();
        match body_field(msg, tags::NEW_SEQ_NO).map(parse_u64) {
            None => self.reject_consumed(seq, t, R::RequiredTagMissing, tags::NEW_SEQ_NO, now),
            Some(None) => {
                self.reject_consumed(seq, t, R::IncorrectDataFormat, tags::NEW_SEQ_NO, now)
            }
            Some(Some(new)) if new < expected => {
                self.reject_consumed(seq, t, R::ValueIncorrect, tags::NEW_SEQ_NO, now)
            }
            Some(Some(new)) => {
                self.store.set_next_target_seq(new)?;
                if self.resend_until.is_some_and(|until| new > until) {
                    self.resend_until = None;
                }
                Ok(None)
            }
        }
    }

    /// SequenceReset-GapFill in sequence: the next expected becomes NewSeqNo.
    fn on_gap_fill<'a>(&mut self, msg: &Message<'a>, now: u64) -> Step<'a> {
        let seq = msg.header.msg_seq_num;
        let t = msg.header.msg_type;
        match body_field(msg, tags::NEW_SEQ_NO).map(parse_u64) {
            None => self.reject(seq, t, R::RequiredTagMissing, Some(tags::NEW_SEQ_NO), now),
            Some(None) => self.reject(seq, t, R::IncorrectDataFormat, Some(tags::NEW_SEQ_NO), now),
            Some(Some(new)) if new <= seq => {
                self.reject(seq, t, R::ValueIncorrect, Some(tags::NEW_SEQ_NO), now)
            }
            Some(Some(new)) => {
                self.consume(new - 1)?;
                Ok(None)
            }
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
