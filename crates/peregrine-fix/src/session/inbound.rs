//! The receive path: frame → header view → the checks every message passes (its
//! BeginString, CompIDs, SendingTime) → the sequence rules → the dictionary → the
//! message's own handling (`admin`, `logon`, or the application).

use crate::codec::{
    frame, route_of, tags, Frame, Garble, Message, ParseError, ParseOptions, BEGIN_STRING,
};
use crate::dict::validate;
use crate::store::{MessageStore, StoreError};

use super::event::{DisconnectReason, Event, Received};
use super::outbound::msg_type as mt;
use super::reject::SessionRejectReason as R;
use super::{Session, State};

pub(super) type Step<'a> = Result<Option<Event<'a>>, StoreError>;

/// The first value of `tag` in the body, if any.
pub(super) fn body_field<'a>(msg: &Message<'a>, tag: u32) -> Option<&'a [u8]> {
    msg.fields()
        .flatten()
        .find(|f| f.tag == tag)
        .map(|f| f.value)
}

/// Whether a SequenceReset is in gap-fill mode (123=Y).
pub(super) fn is_gap_fill(msg: &Message<'_>) -> bool {
    body_field(msg, tags::GAP_FILL_FLAG) == Some(b"Y")
}

impl<S: MessageStore> Session<S> {
    /// Offers received bytes (the whole receive buffer, from its first unconsumed
    /// byte). Handles at most one message; call again until [`Received::NeedMore`],
    /// and after each call drain the messages queued behind a filled gap
    /// ([`Session::take_queued`], [`Session::receive_queued`]).
    pub fn receive<'a>(&mut self, buf: &'a [u8], now: u64) -> Result<Received<'a>, StoreError> {
        if matches!(self.state, State::Disconnected | State::Closing) {
            return Ok(Received::Consumed {
                len: buf.len(),
                event: None,
            });
        }
        let (len, event) = match frame(buf, self.config.limits) {
            None => return Ok(Received::NeedMore),
            Some(Frame::Garbled { len, garble }) => (len, self.on_garbled(garble)),
            Some(Frame::Message { len }) => (len, self.on_frame(&buf[..len], now)?),
        };
        Ok(Received::Consumed { len, event })
    }

    /// Handles a message [`Session::take_queued`] returned: it is in sequence now,
    /// and the checks of its arrival (CompIDs, SendingTime) are not made again.
    pub fn receive_queued<'a>(
        &mut self,
        raw: &'a [u8],
        now: u64,
    ) -> Result<Received<'a>, StoreError> {
        self.from_queue = true;
        let r = self.receive(raw, now);
        self.from_queue = false;
        r
    }

    /// A garbled message is ignored (FIX: no Reject, no sequence number); the next
    /// good one shows the gap. Before the Logon, nothing but a Logon is accepted.
    fn on_garbled<'a>(&mut self, garble: Garble) -> Option<Event<'a>> {
        if matches!(self.state, State::AwaitingLogon { .. }) {
            return self.close(DisconnectReason::NotLogon);
        }
        Some(Event::Garbled(garble))
    }

    fn on_frame<'a>(&mut self, raw: &'a [u8], now: u64) -> Step<'a> {
        let options = ParseOptions {
            header_fields_first: self.config.validation.fields_out_of_order,
        };
        match Message::parse_with(raw, options) {
            Ok(msg) => {
                self.heard(now);
                self.on_message(msg, now)
            }
            Err(e) if e.is_garbled() => Ok(self.on_garbled(Garble::Structure)),
            Err(e) => {
                self.heard(now);
                self.on_parse_error(e, raw, now)
            }
        }
    }

    /// Something came from the peer: it is alive.
    fn heard(&mut self, now: u64) {
        if !self.from_queue {
            self.last_received = now;
            self.test_request = None;
        }
    }

    /// Marks the session closing and returns the disconnect event.
    pub(crate) fn close<'a>(&mut self, reason: DisconnectReason) -> Option<Event<'a>> {
        self.state = State::Closing;
        Some(Event::Disconnect(reason))
    }

    pub(super) fn logout_and_close<'a>(&mut self, reason: DisconnectReason, now: u64) -> Step<'a> {
        self.send_logout(Some(reason.text()), now)?;
        Ok(self.close(reason))
    }

    /// Rejects inbound message `seq` (of type `msg_type`, routed by `route`),
    /// consuming its number if it is the expected one.
    pub(super) fn reject<'a>(
        &mut self,
        seq: u64,
        msg_type: &[u8],
        reason: R,
        tag: Option<i64>,
        route: crate::codec::Route<'_>,
        now: u64,
    ) -> Step<'a> {
        self.send_reject(seq, msg_type, reason, tag, reason.text(), route, now)?;
        if seq == self.store.next_target_seq() {
            self.consume(seq)?;
        }
        Ok(Some(Event::Rejected {
            ref_seq: seq,
            reason,
            ref_tag: tag,
        }))
    }

    /// A framed message whose fields cannot be read: rejected when its turn comes
    /// (kept if it arrived ahead of a gap), ignored if it is an old number.
    fn on_parse_error<'a>(&mut self, e: ParseError<'a>, raw: &'a [u8], now: u64) -> Step<'a> {
        if matches!(self.state, State::AwaitingLogon { .. }) {
            return Ok(self.close(DisconnectReason::NotLogon));
        }
        let seq_unreadable = matches!(
            e.error,
            crate::codec::FieldError::Missing(tags::MSG_SEQ_NUM)
                | crate::codec::FieldError::Format(tags::MSG_SEQ_NUM)
                | crate::codec::FieldError::NoValue(tags::MSG_SEQ_NUM)
                | crate::codec::FieldError::Malformed(tags::MSG_SEQ_NUM)
        );
        let Some(seq) = e.msg_seq_num.filter(|_| !seq_unreadable) else {
            return self.logout_and_close(DisconnectReason::NoSeqNum, now);
        };
        let expected = self.store.next_target_seq();
        if seq > expected && !self.from_queue {
            self.too_high(seq, Some(raw), now)?;
            return Ok(None);
        }
        if seq < expected {
            return Ok(None); // a malformed copy of something already processed
        }
        let reason = R::from(e.error);
        self.reject(
            seq,
            e.msg_type,
            reason,
            e.error.ref_tag_id(),
            route_of(raw),
            now,
        )
    }

    fn on_message<'a>(&mut self, msg: Message<'a>, now: u64) -> Step<'a> {
        let h = msg.header;
        let awaiting = matches!(self.state, State::AwaitingLogon { .. });
        if h.begin_string != BEGIN_STRING {
            if awaiting {
                return Ok(self.close(DisconnectReason::NotLogon));
            }
            return self.logout_and_close(DisconnectReason::IncorrectBeginString, now);
        }
        if awaiting {
            return self.on_logon_phase(msg, now);
        }
        if !self.from_queue {
            if let Some(step) = self.check_arrival(&msg, now) {
                return step;
            }
        }
        let t = h.msg_type;
        if t == mt::LOGOUT {
            return self.on_logout(&msg, now);
        }
        if t == mt::LOGON {
            return self.on_logon_in_session(&msg, now);
        }
        if t == mt::SEQUENCE_RESET && !is_gap_fill(&msg) {
            return self.on_sequence_reset(&msg, now);
        }
        let expected = self.store.next_target_seq();
        if h.msg_seq_num > expected && !self.from_queue {
            if t == mt::RESEND_REQUEST {
                // Served at once (the peer may be waiting for it to fill our gap);
                // only its number waits for its turn.
                self.too_high(h.msg_seq_num, None, now)?;
                return match validate(&msg, &self.config.validation) {
                    Ok(()) => self.on_resend_request(&msg, now),
                    Err(v) => self.reject(h.msg_seq_num, t, v.into(), v.tag(), msg.route(), now),
                };
            }
            self.too_high(h.msg_seq_num, Some(msg.raw()), now)?;
            return Ok(None);
        }
        if h.msg_seq_num < expected {
            if t == mt::RESEND_REQUEST {
                // Served whatever its number (below: not counted): refusing a
                // resend only stops the peer from catching up (QuickFIX does the
                // same; its 8_OnlyAdminMessages relies on it).
                return match validate(&msg, &self.config.validation) {
                    Ok(()) => self.on_resend_request(&msg, now),
                    Err(v) => self.reject(h.msg_seq_num, t, v.into(), v.tag(), msg.route(), now),
                };
            }
            return self.too_low(&msg, expected, now);
        }
        if let Some(step) = self.check_poss_dup(&msg, now) {
            return step;
        }
        if let Err(v) = validate(&msg, &self.config.validation) {
            return self.reject(h.msg_seq_num, t, v.into(), v.tag(), msg.route(), now);
        }
        self.on_in_sequence(msg, now)
    }

    /// CompIDs and SendingTime: a message from someone else, or with a clock too far
    /// off, is rejected and the session logged out.
    fn check_arrival<'a>(&mut self, msg: &Message<'a>, now: u64) -> Option<Step<'a>> {
        let h = msg.header;
        let (reason, tag, why) = if h.sender_comp_id != self.config.target_comp_id.as_bytes() {
            (
                R::CompIdProblem,
                tags::SENDER_COMP_ID,
                DisconnectReason::CompIdProblem,
            )
        } else if h.target_comp_id != self.config.sender_comp_id.as_bytes() {
            (
                R::CompIdProblem,
                tags::TARGET_COMP_ID,
                DisconnectReason::CompIdProblem,
            )
        } else if self.config.check_latency
            && h.sending_time.abs_diff(now) > self.config.max_clock_skew_ns
        {
            (
                R::SendingTimeAccuracy,
                tags::SENDING_TIME,
                DisconnectReason::SendingTime,
            )
        } else {
            return None;
        };
        let step = self
            .reject(
                h.msg_seq_num,
                h.msg_type,
                reason,
                Some(i64::from(tag)),
                msg.route(),
                now,
            )
            .and_then(|_| self.logout_and_close(why, now));
        Some(step)
    }

    /// PossDupFlag=Y needs OrigSendingTime (Reject 1), not after SendingTime (Reject
    /// 10 and Logout). SequenceReset is exempt (its gap fills carry what they like).
    fn check_poss_dup<'a>(&mut self, msg: &Message<'a>, now: u64) -> Option<Step<'a>> {
        let h = msg.header;
        if !h.poss_dup || h.msg_type == mt::SEQUENCE_RESET {
            return None;
        }
        let tag = Some(i64::from(tags::ORIG_SENDING_TIME));
        match h.orig_sending_time {
            None => Some(self.reject(
                h.msg_seq_num,
                h.msg_type,
                R::RequiredTagMissing,
                tag,
                msg.route(),
                now,
            )),
            Some(orig) if orig > h.sending_time => Some(
                self.reject(
                    h.msg_seq_num,
                    h.msg_type,
                    R::SendingTimeAccuracy,
                    tag,
                    msg.route(),
                    now,
                )
                .and_then(|_| self.logout_and_close(DisconnectReason::SendingTime, now)),
            ),
            Some(_) => None,
        }
    }

    /// Below the expected number: a PossDup copy is ignored (after its PossDup
    /// checks); anything else means the numbers are lost: Logout, close.
    fn too_low<'a>(&mut self, msg: &Message<'a>, expected: u64, now: u64) -> Step<'a> {
        let received = msg.header.msg_seq_num;
        if !msg.header.poss_dup {
            let text = too_low_text(expected, received);
            self.send_logout(Some(&text), now)?;
            return Ok(self.close(DisconnectReason::SeqTooLow { expected, received }));
        }
        if let Some(step) = self.check_poss_dup(msg, now) {
            return step;
        }
        Ok(None)
    }
}

/// Logout text for a MsgSeqNum below the expected one (the FIX session test cases'
/// wording).
pub(super) fn too_low_text(expected: u64, received: u64) -> String {
    format!("MsgSeqNum too low, expecting {expected} but received {received}")
}
