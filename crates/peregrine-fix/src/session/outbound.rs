//! Everything the session sends: the standard header, the administrative messages,
//! application messages, and resends.

use crate::codec::{tags, Encoder, FieldError, Message, MessageWriter, Route};
use crate::store::{MessageStore, StoreError};

use super::config::SessionConfig;
use super::reject::SessionRejectReason;
use super::{Session, State};

/// Message types of the session layer.
pub(crate) mod msg_type {
    pub(crate) const HEARTBEAT: &[u8] = b"0";
    pub(crate) const TEST_REQUEST: &[u8] = b"1";
    pub(crate) const RESEND_REQUEST: &[u8] = b"2";
    pub(crate) const REJECT: &[u8] = b"3";
    pub(crate) const SEQUENCE_RESET: &[u8] = b"4";
    pub(crate) const LOGOUT: &[u8] = b"5";
    pub(crate) const LOGON: &[u8] = b"A";
}

/// Starts a message with the standard header (35, 49, 56, 34, 52).
fn start<'e>(
    enc: &'e mut Encoder,
    config: &SessionConfig,
    msg_type: &[u8],
    seq: u64,
    now: u64,
) -> MessageWriter<'e> {
    let mut w = enc.start(msg_type);
    w.bytes(tags::SENDER_COMP_ID, config.sender_comp_id.as_bytes())
        .bytes(tags::TARGET_COMP_ID, config.target_comp_id.as_bytes())
        .uint(tags::MSG_SEQ_NUM, seq)
        .timestamp(tags::SENDING_TIME, now, config.precision);
    w
}

/// Starts a resent message (PossDupFlag=Y, OrigSendingTime).
fn start_resend<'e>(
    enc: &'e mut Encoder,
    config: &SessionConfig,
    msg_type: &[u8],
    seq: u64,
    orig_sending_time: u64,
    now: u64,
) -> MessageWriter<'e> {
    let mut w = enc.start(msg_type);
    w.bytes(tags::SENDER_COMP_ID, config.sender_comp_id.as_bytes())
        .bytes(tags::TARGET_COMP_ID, config.target_comp_id.as_bytes())
        .uint(tags::MSG_SEQ_NUM, seq)
        .bool(tags::POSS_DUP_FLAG, true)
        .timestamp(tags::SENDING_TIME, now, config.precision)
        .timestamp(tags::ORIG_SENDING_TIME, orig_sending_time, config.precision);
    w
}

impl<S: MessageStore> Session<S> {
    /// Whether output goes to the wire now (otherwise it waits in the store for the
    /// resend after the next Logon).
    fn on_wire(&self) -> bool {
        matches!(
            self.state,
            State::Active | State::LogoutSent { .. } | State::AwaitingLogon { .. } | State::Closing
        )
    }

    /// Sequences, stores and queues the message just sealed in the encoder.
    fn emit(&mut self, seq: u64, app: bool, now: u64) -> Result<(), StoreError> {
        let message = self.encoder.message();
        self.store.store_outbound(seq, app.then_some(message))?;
        let live = if app {
            matches!(self.state, State::Active | State::LogoutSent { .. })
        } else {
            self.on_wire()
        };
        if live {
            self.out.extend_from_slice(message);
            self.last_sent = now;
        }
        Ok(())
    }

    /// Sends an administrative message with the next sequence number.
    pub(crate) fn send_admin(
        &mut self,
        msg_type: &[u8],
        now: u64,
        body: impl FnOnce(&mut MessageWriter<'_>),
    ) -> Result<u64, StoreError> {
        let seq = self.store.next_sender_seq();
        let mut w = start(&mut self.encoder, &self.config, msg_type, seq, now);
        body(&mut w);
        w.seal();
        self.emit(seq, false, now)?;
        Ok(seq)
    }

    /// Sends an application message: `body` writes the fields after the standard
    /// header. The message is stored (for resends) and gets the next sequence number
    /// even when the session is not logged on: then it reaches the peer by the resend
    /// that follows its next Logon. Returns its MsgSeqNum.
    pub fn send_app(
        &mut self,
        msg_type: &[u8],
        now: u64,
        body: impl FnOnce(&mut MessageWriter<'_>),
    ) -> Result<u64, StoreError> {
        let seq = self.store.next_sender_seq();
        let mut w = start(&mut self.encoder, &self.config, msg_type, seq, now);
        body(&mut w);
        w.seal();
        self.emit(seq, true, now)?;
        Ok(seq)
    }

    pub(crate) fn send_logon(&mut self, now: u64) -> Result<(), StoreError> {
        let heartbeat_secs = self.heartbeat_ns / 1_000_000_000;
        let reset = self.logon_reset;
        let initiator = self.config.role == super::Role::Initiator;
        let username = if initiator {
            self.config.username.clone()
        } else {
            None
        };
        let password = if initiator {
            self.config.password.clone()
        } else {
            None
        };
        self.send_admin(msg_type::LOGON, now, |w| {
            w.uint(tags::ENCRYPT_METHOD, 0)
                .uint(tags::HEART_BT_INT, heartbeat_secs);
            if reset {
                w.bool(tags::RESET_SEQ_NUM_FLAG, true);
            }
            if let Some(u) = &username {
                w.text(tags::USERNAME, u);
            }
            if let Some(p) = &password {
                w.text(tags::PASSWORD, p);
            }
        })?;
        Ok(())
    }

    pub(crate) fn send_heartbeat(
        &mut self,
        test_req_id: Option<&[u8]>,
        now: u64,
    ) -> Result<(), StoreError> {
        self.send_admin(msg_type::HEARTBEAT, now, |w| {
            if let Some(id) = test_req_id {
                w.bytes(tags::TEST_REQ_ID, id);
            }
        })?;
        Ok(())
    }

    /// Sends a TestRequest (the peer must answer with a Heartbeat echoing its
    /// TestReqID); returns the TestReqID. The session sends one by itself after an
    /// interval of silence.
    pub fn send_test_request(&mut self, now: u64) -> Result<u64, StoreError> {
        self.test_counter += 1;
        let id = self.test_counter;
        self.send_admin(msg_type::TEST_REQUEST, now, |w| {
            w.uint(tags::TEST_REQ_ID, id);
        })?;
        self.test_request = Some(id);
        Ok(id)
    }

    /// Sends a SequenceReset in reset mode (123=N): from now on our messages are
    /// numbered from `new_seq` (which must be above the next number), and the peer
    /// expects that. For an operator fixing a session by hand; gap fills are the
    /// normal way numbers move.
    pub fn reset_sequence(&mut self, new_seq: u64, now: u64) -> Result<(), StoreError> {
        let seq = self.store.next_sender_seq();
        if new_seq <= seq {
            return Ok(());
        }
        let mut w = start(
            &mut self.encoder,
            &self.config,
            msg_type::SEQUENCE_RESET,
            seq,
            now,
        );
        w.bool(tags::GAP_FILL_FLAG, false)
            .uint(tags::NEW_SEQ_NO, new_seq);
        w.seal();
        self.emit(seq, false, now)?;
        self.store.advance_sender_seq(new_seq)
    }

    pub(crate) fn send_resend_request(&mut self, begin: u64, now: u64) -> Result<(), StoreError> {
        self.send_admin(msg_type::RESEND_REQUEST, now, |w| {
            w.uint(tags::BEGIN_SEQ_NO, begin).uint(tags::END_SEQ_NO, 0);
        })?;
        Ok(())
    }

    /// Sends a session-level Reject of the inbound message `ref_seq`, routed back
    /// the way it came (its OnBehalfOf fields become our DeliverTo fields and the
    /// other way round).
    #[allow(clippy::too_many_arguments, reason = "one Reject's fields")]
    pub(crate) fn send_reject(
        &mut self,
        ref_seq: u64,
        ref_msg_type: &[u8],
        reason: SessionRejectReason,
        ref_tag: Option<i64>,
        text: &str,
        route: Route<'_>,
        now: u64,
    ) -> Result<(), StoreError> {
        self.send_admin(msg_type::REJECT, now, |w| {
            for (tags, values) in [
                (Route::DELIVER_TO, route.on_behalf_of),
                (Route::ON_BEHALF_OF, route.deliver_to),
            ] {
                for (tag, value) in tags.into_iter().zip(values) {
                    if let Some(v) = value {
                        w.bytes(tag, v);
                    }
                }
            }
            w.uint(tags::REF_SEQ_NUM, ref_seq);
            if let Some(tag) = ref_tag {
                w.int(tags::REF_TAG_ID, tag);
            }
            if !ref_msg_type.is_empty() {
                w.bytes(tags::REF_MSG_TYPE, ref_msg_type);
            }
            w.uint(tags::SESSION_REJECT_REASON, u64::from(reason.code()))
                .text(tags::TEXT, text);
        })?;
        Ok(())
    }

    /// Answers a delivered application message whose fields are malformed with a
    /// session-level Reject (SessionRejectReason from the field error; the message
    /// was consumed when it was delivered).
    pub fn reject_app(
        &mut self,
        msg: &Message<'_>,
        error: FieldError,
        now: u64,
    ) -> Result<(), StoreError> {
        let reason = SessionRejectReason::from(error);
        self.send_reject(
            msg.header.msg_seq_num,
            msg.msg_type(),
            reason,
            error.ref_tag_id(),
            reason.text(),
            msg.route(),
            now,
        )
    }

    /// Sends a Logout, with Text (58) if given.
    pub(crate) fn send_logout(&mut self, text: Option<&str>, now: u64) -> Result<(), StoreError> {
        self.send_admin(msg_type::LOGOUT, now, |w| {
            if let Some(text) = text {
                w.text(tags::TEXT, text);
            }
        })?;
        Ok(())
    }

    /// A Logout that takes no sequence number from the session: the answer to a
    /// Logon that failed authentication, so an impostor cannot move the real
    /// session's numbers.
    pub(crate) fn send_unsequenced_logout(&mut self, text: &str, now: u64) {
        let seq = self.store.next_sender_seq();
        let mut w = start(&mut self.encoder, &self.config, msg_type::LOGOUT, seq, now);
        w.text(tags::TEXT, text);
        let m = w.seal();
        self.out.extend_from_slice(m);
    }

    /// Starts a Logout from our side; the session disconnects when the peer answers
    /// (or after `logout_timeout_ns`).
    pub fn logout(&mut self, text: &str, now: u64) -> Result<(), StoreError> {
        if matches!(self.state, State::Active) {
            self.send_logout(Some(text), now)?;
            self.state = State::LogoutSent { at: now };
        }
        Ok(())
    }

    /// Answers a ResendRequest: the stored application messages in range again
    /// (PossDupFlag=Y, OrigSendingTime), and SequenceReset-GapFill over everything
    /// else (administrative messages, and numbers never stored).
    pub(crate) fn serve_resend(
        &mut self,
        begin: u64,
        end: u64,
        now: u64,
    ) -> Result<(), StoreError> {
        let last = self.store.next_sender_seq() - 1;
        let end = if end == 0 || end > last { last } else { end };
        if begin > end {
            return Ok(());
        }
        let Session {
            store,
            encoder,
            out,
            config,
            ..
        } = self;
        let mut cursor = begin;
        store.outbound_range(begin, end, &mut |seq, stored| {
            let Ok(m) = Message::parse(stored) else {
                return; // never: our own bytes; the gap fill below covers it
            };
            if seq > cursor {
                gap_fill(encoder, config, cursor, seq, now);
                out.extend_from_slice(encoder.message());
            }
            let mut w = start_resend(
                encoder,
                config,
                m.msg_type(),
                seq,
                m.header.sending_time,
                now,
            );
            w.raw(m.body());
            out.extend_from_slice(w.seal());
            cursor = seq + 1;
        })?;
        if cursor <= end {
            gap_fill(&mut self.encoder, &self.config, cursor, end + 1, now);
            self.out.extend_from_slice(self.encoder.message());
        }
        self.last_sent = now;
        Ok(())
    }
}

/// SequenceReset-GapFill from `seq` to `new_seq`.
fn gap_fill(enc: &mut Encoder, config: &SessionConfig, seq: u64, new_seq: u64, now: u64) {
    let mut w = start_resend(enc, config, msg_type::SEQUENCE_RESET, seq, now, now);
    w.bool(tags::GAP_FILL_FLAG, true)
        .uint(tags::NEW_SEQ_NO, new_seq);
    w.seal();
}
