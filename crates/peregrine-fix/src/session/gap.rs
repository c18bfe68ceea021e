//! Inbound gaps: the ResendRequest we send when a message arrives too high, the
//! messages queued behind the gap until it is filled, and asking again when a
//! resend fills only part of it.
//!
//! A message above the expected number is kept (bounded by `max_queued_bytes`) and
//! processed in order once everything before it has arrived (the caller drains the
//! queue with [`Session::take_queued`]); a ResendRequest or a Logon ahead of the gap
//! is acted on at once and only its number is kept. One ResendRequest (from the
//! expected number to infinity) covers the gap; another is sent when a message
//! arrives too high again after the resend filled part of the gap (the peer
//! answered and stopped short) or after a heartbeat interval without progress.

use std::collections::BTreeMap;

use crate::store::{MessageStore, StoreError};

use super::Session;

/// The gap we asked a resend for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Gap {
    /// The expected number when we last asked.
    asked_from: u64,
    /// When we last asked.
    asked_at: u64,
    /// The highest number seen above the gap: it is filled once that is reached.
    until: u64,
}

/// Messages that arrived ahead of the gap, by MsgSeqNum; `None` keeps only the
/// number (a message already acted on).
#[derive(Debug, Default)]
pub(super) struct Queue {
    messages: BTreeMap<u64, Option<Vec<u8>>>,
    bytes: usize,
}

impl Queue {
    pub(super) fn clear(&mut self) {
        self.messages.clear();
        self.bytes = 0;
    }

    /// Drops every entry below `next`.
    fn drop_below(&mut self, next: u64) {
        while let Some(entry) = self.messages.first_entry() {
            if *entry.key() >= next {
                break;
            }
            let m = entry.remove();
            self.bytes -= m.map_or(0, |m| m.len());
        }
    }

    fn insert(&mut self, seq: u64, raw: Option<&[u8]>, max_bytes: usize) {
        if self.messages.contains_key(&seq) {
            return;
        }
        let len = raw.map_or(0, <[u8]>::len);
        if self.bytes + len > max_bytes {
            return; // the resend (to infinity) brings it again
        }
        self.bytes += len;
        self.messages.insert(seq, raw.map(<[u8]>::to_vec));
    }

    /// Whether anything is queued.
    pub(super) fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }
}

impl<S: MessageStore> Session<S> {
    /// The inbound message `seq` was processed: the next expected is `seq + 1`.
    pub(super) fn consume(&mut self, seq: u64) -> Result<(), StoreError> {
        self.expect(seq + 1)
    }

    /// The next expected inbound number becomes `next` (gap fill, reset, consume).
    pub(super) fn expect(&mut self, next: u64) -> Result<(), StoreError> {
        self.store.set_next_target_seq(next)?;
        self.queue.drop_below(next);
        if self.gap.is_some_and(|g| g.until < next) {
            self.gap = None;
        }
        Ok(())
    }

    /// Message `seq` arrived above the expected number: keep it (`raw`, or only its
    /// number when it was acted on already) and ask for the gap, unless a request
    /// for it is still being answered.
    pub(super) fn too_high(
        &mut self,
        seq: u64,
        raw: Option<&[u8]>,
        now: u64,
    ) -> Result<(), StoreError> {
        self.queue.insert(seq, raw, self.config.max_queued_bytes);
        let expected = self.store.next_target_seq();
        let ask = match &mut self.gap {
            None => true,
            Some(g) => {
                g.until = g.until.max(seq);
                // The peer answered part of it and went on, or nothing came for a
                // heartbeat interval: ask again from where we are.
                expected > g.asked_from
                    || now.saturating_sub(g.asked_at) >= self.heartbeat_ns.max(1_000_000_000)
            }
        };
        if ask {
            self.send_resend_request(expected, now)?;
            let until = self.gap.map_or(seq, |g| g.until.max(seq));
            self.gap = Some(Gap {
                asked_from: expected,
                asked_at: now,
                until,
            });
        }
        Ok(())
    }

    /// When the next expected message is queued, moves it into `into` (replacing its
    /// contents) for the caller to hand to [`Session::receive_queued`], and returns
    /// `true`. Numbers kept without a message are consumed on the way. Call after
    /// every [`Session::receive`] until it returns `false`.
    pub fn take_queued(&mut self, into: &mut Vec<u8>) -> Result<bool, StoreError> {
        loop {
            let expected = self.store.next_target_seq();
            self.queue.drop_below(expected);
            let Some(entry) = self.queue.messages.first_entry() else {
                return Ok(false);
            };
            if *entry.key() != expected {
                return Ok(false);
            }
            match entry.remove() {
                Some(m) => {
                    self.queue.bytes -= m.len();
                    *into = m;
                    return Ok(true);
                }
                None => self.consume(expected)?,
            }
        }
    }

    /// Whether messages wait behind an inbound gap.
    pub fn has_queued(&self) -> bool {
        !self.queue.is_empty()
    }
}
