//! The administrative messages of a logged-on session, and the hand-over of
//! application messages: Heartbeat, TestRequest, ResendRequest, Reject,
//! SequenceReset (both modes), Logout.

use crate::codec::value::parse_u64;
use crate::codec::{tags, Message};
use crate::dict::validate;
use crate::store::MessageStore;

use super::event::{DisconnectReason, Event};
use super::inbound::{body_field, is_gap_fill, too_low_text, Step};
use super::outbound::msg_type as mt;
use super::reject::SessionRejectReason as R;
use super::{Session, State};

impl<S: MessageStore> Session<S> {
    /// A message in sequence that passed every check: its own handling.
    pub(super) fn on_in_sequence<'a>(&mut self, msg: Message<'a>, now: u64) -> Step<'a> {
        let h = msg.header;
        let seq = h.msg_seq_num;
        match h.msg_type {
            mt::HEARTBEAT => {
                self.consume(seq)?;
                Ok(None)
            }
            mt::TEST_REQUEST => match body_field(&msg, tags::TEST_REQ_ID) {
                Some(id) => {
                    self.consume(seq)?;
                    self.send_heartbeat(Some(id), now)?;
                    Ok(None)
                }
                None => {
                    let tag = Some(i64::from(tags::TEST_REQ_ID));
                    self.reject(
                        seq,
                        h.msg_type,
                        R::RequiredTagMissing,
                        tag,
                        msg.route(),
                        now,
                    )
                }
            },
            mt::RESEND_REQUEST => {
                self.consume(seq)?;
                self.on_resend_request(&msg, now)
            }
            mt::REJECT => {
                self.consume(seq)?;
                let ref_seq = body_field(&msg, tags::REF_SEQ_NUM)
                    .and_then(parse_u64)
                    .unwrap_or(0);
                Ok(Some(Event::PeerRejected { ref_seq }))
            }
            mt::SEQUENCE_RESET if is_gap_fill(&msg) => self.on_gap_fill(&msg, now),
            _ => {
                self.consume(seq)?;
                Ok(Some(Event::App(msg)))
            }
        }
    }

    /// A Logout: answered (unless it answers ours) and the connection closed. Its
    /// number is not held against it: in sequence it is consumed; too high, the gap
    /// is asked for at the next Logon; too low without PossDup, our Logout says so.
    pub(super) fn on_logout<'a>(&mut self, msg: &Message<'a>, now: u64) -> Step<'a> {
        let seq = msg.header.msg_seq_num;
        let expected = self.store.next_target_seq();
        if seq == expected {
            self.consume(seq)?;
        }
        let reason = if matches!(self.state, State::LogoutSent { .. }) {
            DisconnectReason::LogoutComplete
        } else {
            let text =
                (seq < expected && !msg.header.poss_dup).then(|| too_low_text(expected, seq));
            self.send_logout(text.as_deref(), now)?;
            DisconnectReason::PeerLogout
        };
        if self.config.reset_on_logout {
            self.store.reset(now)?;
        }
        Ok(self.close(reason))
    }

    pub(super) fn on_resend_request<'a>(&mut self, msg: &Message<'a>, now: u64) -> Step<'a> {
        let h = msg.header;
        let begin = body_field(msg, tags::BEGIN_SEQ_NO);
        let end = body_field(msg, tags::END_SEQ_NO);
        let refuse = |s: &mut Self, reason, tag| {
            s.reject(
                h.msg_seq_num,
                h.msg_type,
                reason,
                Some(i64::from(tag)),
                msg.route(),
                now,
            )
        };
        let (Some(begin), Some(end)) = (begin, end) else {
            let tag = if begin.is_none() {
                tags::BEGIN_SEQ_NO
            } else {
                tags::END_SEQ_NO
            };
            return refuse(self, R::RequiredTagMissing, tag);
        };
        let (Some(begin), Some(end)) = (parse_u64(begin), parse_u64(end)) else {
            return refuse(self, R::IncorrectDataFormat, tags::BEGIN_SEQ_NO);
        };
        if begin == 0 || (end != 0 && end < begin) {
            return refuse(self, R::ValueIncorrect, tags::BEGIN_SEQ_NO);
        }
        self.serve_resend(begin, end, now)?;
        Ok(Some(Event::ResendServed { begin, end }))
    }

    /// SequenceReset in reset mode: MsgSeqNum is ignored (0 included); NewSeqNo may
    /// only raise the expected number (lower: Reject 5, RefTagID 36).
    pub(super) fn on_sequence_reset<'a>(&mut self, msg: &Message<'a>, now: u64) -> Step<'a> {
        let h = msg.header;
        if let Err(v) = validate(msg, &self.config.validation) {
            return self.reject(
                h.msg_seq_num,
                h.msg_type,
                v.into(),
                v.tag(),
                msg.route(),
                now,
            );
        }
        let expected = self.store.next_target_seq();
        let tag = Some(i64::from(tags::NEW_SEQ_NO));
        let refuse = |s: &mut Self, reason| {
            s.send_reject(
                h.msg_seq_num,
                h.msg_type,
                reason,
                tag,
                R::text(reason),
                msg.route(),
                now,
            )?;
            Ok(Some(Event::Rejected {
                ref_seq: h.msg_seq_num,
                reason,
                ref_tag: tag,
            }))
        };
        match body_field(msg, tags::NEW_SEQ_NO).map(parse_u64) {
            None => refuse(self, R::RequiredTagMissing),
            Some(None) => refuse(self, R::IncorrectDataFormat),
            Some(Some(new)) if new < expected => refuse(self, R::ValueIncorrect),
            Some(Some(new)) => {
                self.expect(new)?;
                Ok(None)
            }
        }
    }

    /// SequenceReset-GapFill in sequence: the next expected becomes NewSeqNo (which
    /// must be above MsgSeqNum: Reject 5 otherwise).
    fn on_gap_fill<'a>(&mut self, msg: &Message<'a>, now: u64) -> Step<'a> {
        let h = msg.header;
        let seq = h.msg_seq_num;
        let tag = Some(i64::from(tags::NEW_SEQ_NO));
        let refuse =
            |s: &mut Self, reason| s.reject(seq, h.msg_type, reason, tag, msg.route(), now);
        match body_field(msg, tags::NEW_SEQ_NO).map(parse_u64) {
            None => refuse(self, R::RequiredTagMissing),
            Some(None) => refuse(self, R::IncorrectDataFormat),
            Some(Some(new)) if new <= seq => refuse(self, R::ValueIncorrect),
            Some(Some(new)) => {
                self.expect(new)?;
                Ok(None)
            }
        }
    }
}
