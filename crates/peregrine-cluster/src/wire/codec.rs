//! Our own little-endian encoding of raft-rs `Message`s for the peer transport.
//!
//! raft-rs ships rust-protobuf 2 types; decoding peer bytes with rust-protobuf is not
//! bounded the way our decoders must be (untrusted lengths, recursion on unknown
//! groups), so peer traffic uses this fixed layout instead (docs/cluster.md, "Wire").
//! Every count is checked against the bytes that remain before anything is
//! allocated; every enum byte must be known; reserved bytes must be zero.

use bytes::Bytes;
use raft::eraftpb::{
    ConfState, Entry, EntryType, Message, MessageType, Snapshot, SnapshotMetadata,
};

use crate::error::DecodeError;

/// Layout version of a message body.
pub const VERSION: u8 = 1;
/// Bytes of the fixed message header.
pub const MESSAGE_HEADER_LEN: usize = 104;
/// Bytes of each entry's fixed header.
pub const ENTRY_HEADER_LEN: usize = 32;
/// Bytes of the fixed part of a snapshot (index, term, conf-state counts, data length).
pub const SNAPSHOT_HEADER_LEN: usize = 48;

const FLAG_REJECT: u8 = 1;
const FLAG_SNAPSHOT: u8 = 2;

/// Appends the encoding of `m` to `out`.
pub fn encode(m: &Message, out: &mut Vec<u8>) {
    out.reserve(encoded_len(m));
    out.push(VERSION);
    out.push(msg_type_code(m.msg_type));
    let mut flags = 0;
    if m.reject {
        flags |= FLAG_REJECT;
    }
    if m.has_snapshot() {
        flags |= FLAG_SNAPSHOT;
    }
    out.push(flags);
    out.push(0);
    put_u32(out, len_u32(m.entries.len()));
    for v in [
        m.to,
        m.from,
        m.term,
        m.log_term,
        m.index,
        m.commit,
        m.commit_term,
        m.request_snapshot,
        m.reject_hint,
    ] {
        put_u64(out, v);
    }
    out.extend_from_slice(&m.priority.to_le_bytes());
    put_u64(out, m.deprecated_priority);
    put_u32(out, len_u32(m.context.len()));
    put_u32(out, 0);
    out.extend_from_slice(&m.context);
    for e in m.entries.iter() {
        encode_entry(e, out);
    }
    if m.has_snapshot() {
        encode_snapshot(m.get_snapshot(), out);
    }
}

/// Exact size `encode` appends.
pub fn encoded_len(m: &Message) -> usize {
    let entries: usize = m
        .entries
        .iter()
        .map(|e| ENTRY_HEADER_LEN + e.data.len() + e.context.len())
        .sum();
    let snap = if m.has_snapshot() {
        let s = m.get_snapshot();
        let cs = s.get_metadata().get_conf_state();
        SNAPSHOT_HEADER_LEN + 8 * conf_ids(cs) + s.data.len()
    } else {
        0
    };
    MESSAGE_HEADER_LEN + m.context.len() + entries + snap
}

fn conf_ids(cs: &ConfState) -> usize {
    cs.voters.len() + cs.learners.len() + cs.voters_outgoing.len() + cs.learners_next.len()
}

fn encode_entry(e: &Entry, out: &mut Vec<u8>) {
    out.push(entry_type_code(e.entry_type));
    out.push(u8::from(e.sync_log));
    out.extend_from_slice(&[0, 0]);
    put_u32(out, len_u32(e.data.len()));
    put_u32(out, len_u32(e.context.len()));
    put_u32(out, 0);
    put_u64(out, e.term);
    put_u64(out, e.index);
    out.extend_from_slice(&e.data);
    out.extend_from_slice(&e.context);
}

fn encode_snapshot(s: &Snapshot, out: &mut Vec<u8>) {
    let meta = s.get_metadata();
    let cs = meta.get_conf_state();
    put_u64(out, meta.index);
    put_u64(out, meta.term);
    for list in [
        &cs.voters,
        &cs.learners,
        &cs.voters_outgoing,
        &cs.learners_next,
    ] {
        put_u32(out, len_u32(list.len()));
    }
    out.push(u8::from(cs.auto_leave));
    out.extend_from_slice(&[0; 7]);
    put_u64(out, s.data.len() as u64);
    for list in [
        &cs.voters,
        &cs.learners,
        &cs.voters_outgoing,
        &cs.learners_next,
    ] {
        for id in list {
            put_u64(out, *id);
        }
    }
    out.extend_from_slice(&s.data);
}

/// Decodes one message body. `body` is sliced (not copied) for entry data, contexts
/// and snapshot data.
pub fn decode(body: &Bytes) -> Result<Message, DecodeError> {
    let mut c = Cursor { buf: body, at: 0 };
    let version = c.u8()?;
    if version != VERSION {
        return Err(DecodeError::BadVersion(version));
    }
    let msg_type = msg_type_from(c.u8()?)?;
    let flags = c.u8()?;
    if flags & !(FLAG_REJECT | FLAG_SNAPSHOT) != 0 {
        return Err(DecodeError::BadFlags(flags));
    }
    c.zero(1)?;
    let n_entries = c.u32()? as usize;
    let mut m = Message {
        msg_type,
        to: c.u64()?,
        from: c.u64()?,
        term: c.u64()?,
        log_term: c.u64()?,
        index: c.u64()?,
        commit: c.u64()?,
        commit_term: c.u64()?,
        request_snapshot: c.u64()?,
        reject_hint: c.u64()?,
        priority: c.u64()? as i64,
        deprecated_priority: c.u64()?,
        reject: flags & FLAG_REJECT != 0,
        ..Default::default()
    };
    let ctx_len = c.u32()? as usize;
    c.zero(4)?;
    m.context = c.bytes(ctx_len)?;
    // Each entry needs at least its header: a count the bytes cannot hold is refused
    // before the vector is allocated.
    if n_entries > c.remaining() / ENTRY_HEADER_LEN {
        return Err(DecodeError::Count {
            what: "entries",
            count: n_entries,
        });
    }
    let mut entries = Vec::with_capacity(n_entries);
    for _ in 0..n_entries {
        entries.push(decode_entry(&mut c)?);
    }
    m.entries = entries.into();
    if flags & FLAG_SNAPSHOT != 0 {
        m.set_snapshot(decode_snapshot(&mut c)?);
    }
    if c.remaining() != 0 {
        return Err(DecodeError::Trailing(c.remaining()));
    }
    Ok(m)
}

fn decode_entry(c: &mut Cursor<'_>) -> Result<Entry, DecodeError> {
    let entry_type = entry_type_from(c.u8()?)?;
    let sync_log = match c.u8()? {
        0 => false,
        1 => true,
        b => return Err(DecodeError::BadFlags(b)),
    };
    c.zero(2)?;
    let data_len = c.u32()? as usize;
    let ctx_len = c.u32()? as usize;
    c.zero(4)?;
    let term = c.u64()?;
    let index = c.u64()?;
    let data = c.bytes(data_len)?;
    let context = c.bytes(ctx_len)?;
    Ok(Entry {
        entry_type,
        term,
        index,
        data,
        context,
        sync_log,
        ..Default::default()
    })
}

fn decode_snapshot(c: &mut Cursor<'_>) -> Result<Snapshot, DecodeError> {
    let index = c.u64()?;
    let term = c.u64()?;
    let mut counts = [0usize; 4];
    for n in &mut counts {
        *n = c.u32()? as usize;
    }
    let auto_leave = match c.u8()? {
        0 => false,
        1 => true,
        b => return Err(DecodeError::BadFlags(b)),
    };
    c.zero(7)?;
    let data_len = c.u64()?;
    let ids: usize = counts.iter().sum();
    if ids > c.remaining() / 8 {
        return Err(DecodeError::Count {
            what: "conf-state ids",
            count: ids,
        });
    }
    let mut lists: [Vec<u64>; 4] = Default::default();
    for (list, n) in lists.iter_mut().zip(counts) {
        list.reserve_exact(n);
        for _ in 0..n {
            list.push(c.u64()?);
        }
    }
    let [voters, learners, voters_outgoing, learners_next] = lists;
    let cs = ConfState {
        voters,
        learners,
        voters_outgoing,
        learners_next,
        auto_leave,
        ..Default::default()
    };
    let data_len = usize::try_from(data_len).map_err(|_| DecodeError::Truncated {
        at: c.at,
        need: usize::MAX,
    })?;
    let data = c.bytes(data_len)?;
    let mut meta = SnapshotMetadata {
        index,
        term,
        ..Default::default()
    };
    meta.set_conf_state(cs);
    let mut s = Snapshot {
        data,
        ..Default::default()
    };
    s.set_metadata(meta);
    Ok(s)
}

struct Cursor<'a> {
    buf: &'a Bytes,
    at: usize,
}

impl Cursor<'_> {
    fn remaining(&self) -> usize {
        self.buf.len() - self.at
    }

    fn take(&mut self, n: usize) -> Result<&[u8], DecodeError> {
        if n > self.remaining() {
            return Err(DecodeError::Truncated {
                at: self.at,
                need: n,
            });
        }
        let s = &self.buf[self.at..self.at + n];
        self.at += n;
        Ok(s)
    }

    fn bytes(&mut self, n: usize) -> Result<Bytes, DecodeError> {
        if n > self.remaining() {
            return Err(DecodeError::Truncated {
                at: self.at,
                need: n,
            });
        }
        let b = self.buf.slice(self.at..self.at + n);
        self.at += n;
        Ok(b)
    }

    fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.take(1)?[0])
    }

    fn u32(&mut self) -> Result<u32, DecodeError> {
        let mut a = [0; 4];
        a.copy_from_slice(self.take(4)?);
        Ok(u32::from_le_bytes(a))
    }

    fn u64(&mut self) -> Result<u64, DecodeError> {
        let mut a = [0; 8];
        a.copy_from_slice(self.take(8)?);
        Ok(u64::from_le_bytes(a))
    }

    fn zero(&mut self, n: usize) -> Result<(), DecodeError> {
        let at = self.at;
        if self.take(n)?.iter().any(|b| *b != 0) {
            return Err(DecodeError::Reserved { at });
        }
        Ok(())
    }
}

fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn put_u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// Lengths come from in-memory buffers that the frame cap (< 4 GiB) bounds.
fn len_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

const MSG_TYPES: [MessageType; 19] = [
    MessageType::MsgHup,
    MessageType::MsgBeat,
    MessageType::MsgPropose,
    MessageType::MsgAppend,
    MessageType::MsgAppendResponse,
    MessageType::MsgRequestVote,
    MessageType::MsgRequestVoteResponse,
    MessageType::MsgSnapshot,
    MessageType::MsgHeartbeat,
    MessageType::MsgHeartbeatResponse,
    MessageType::MsgUnreachable,
    MessageType::MsgSnapStatus,
    MessageType::MsgCheckQuorum,
    MessageType::MsgTransferLeader,
    MessageType::MsgTimeoutNow,
    MessageType::MsgReadIndex,
    MessageType::MsgReadIndexResp,
    MessageType::MsgRequestPreVote,
    MessageType::MsgRequestPreVoteResponse,
];

fn msg_type_code(t: MessageType) -> u8 {
    MSG_TYPES.iter().position(|x| *x == t).unwrap_or(0) as u8
}

fn msg_type_from(b: u8) -> Result<MessageType, DecodeError> {
    MSG_TYPES
        .get(usize::from(b))
        .copied()
        .ok_or(DecodeError::BadEnum {
            what: "msg_type",
            value: b,
        })
}

fn entry_type_code(t: EntryType) -> u8 {
    match t {
        EntryType::EntryNormal => 0,
        EntryType::EntryConfChange => 1,
        EntryType::EntryConfChangeV2 => 2,
    }
}

fn entry_type_from(b: u8) -> Result<EntryType, DecodeError> {
    match b {
        0 => Ok(EntryType::EntryNormal),
        1 => Ok(EntryType::EntryConfChange),
        2 => Ok(EntryType::EntryConfChangeV2),
        _ => Err(DecodeError::BadEnum {
            what: "entry_type",
            value: b,
        }),
    }
}

#[cfg(test)]
#[path = "codec_tests.rs"]
mod tests;
