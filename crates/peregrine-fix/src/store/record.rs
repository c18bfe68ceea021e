//! The store file's format: a header, then records.
//!
//! ```text
//! header : "PGNFIX01" (8 bytes) · creation time u64 LE (ns since the epoch)
//! record : payload length u32 LE · CRC-32C u32 LE of (kind · seq · payload)
//!          · kind u8 · seq u64 LE · payload
//! ```
//! Kinds: 1 an outbound application message (`seq` = its MsgSeqNum, payload = the
//! whole message), 2 an outbound administrative message (no payload), 3 the next
//! outbound sequence number moved to `seq`, 4 the next inbound sequence number is
//! `seq`, 5 application state (`seq` and payload chosen by the application that owns
//! the session: the FIX gateway keeps its order table and its position in the
//! exchange's report stream here, so both move with the messages they produced).
//! A reset starts a new file that carries the application state records over.

/// The file's first 8 bytes.
pub(super) const MAGIC: &[u8; 8] = b"PGNFIX01";
/// Bytes of the file header.
pub(super) const FILE_HEADER: usize = 16;
/// Bytes of a record header.
pub(super) const RECORD_HEADER: usize = 17;
/// The largest payload a record may declare; larger is damage, not a message.
pub(super) const MAX_PAYLOAD: u32 = 1 << 20;

/// What a record says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum RecordKind {
    /// An outbound application message.
    AppMessage = 1,
    /// An outbound administrative message (no payload).
    AdminMessage = 2,
    /// The next outbound sequence number moved.
    SenderSeq = 3,
    /// The next inbound sequence number.
    TargetSeq = 4,
    /// Application state (opaque to the store).
    AppState = 5,
}

impl RecordKind {
    fn from_u8(v: u8) -> Option<RecordKind> {
        match v {
            1 => Some(RecordKind::AppMessage),
            2 => Some(RecordKind::AdminMessage),
            3 => Some(RecordKind::SenderSeq),
            4 => Some(RecordKind::TargetSeq),
            5 => Some(RecordKind::AppState),
            _ => None,
        }
    }
}

/// Why a record (or the file header) is unreadable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ScanError {
    /// The file does not start with the magic.
    #[error("not a Peregrine FIX store (bad magic)")]
    BadMagic,
    /// The CRC does not match.
    #[error("CRC mismatch")]
    BadCrc,
    /// The payload length is above the maximum.
    #[error("payload length {0} too large")]
    TooLarge(u32),
    /// Unknown record kind.
    #[error("unknown record kind {0}")]
    BadKind(u8),
    /// Sequence numbers go backwards.
    #[error("sequence {seq} after {prev}")]
    Backwards {
        /// The record's sequence number.
        seq: u64,
        /// The previous one.
        prev: u64,
    },
}

/// What a scan of a whole file found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scanned {
    /// From the file header.
    pub creation_time: u64,
    /// The next outbound sequence number.
    pub next_sender: u64,
    /// The next inbound sequence number.
    pub next_target: u64,
    /// (seq, offset of the payload, payload length) of every application message.
    pub messages: Vec<(u64, u64, u32)>,
    /// (seq, offset of the payload, payload length) of every application state
    /// record, in file order.
    pub app_states: Vec<(u64, u64, u32)>,
    /// Where the valid records end (the file is cut here if longer).
    pub valid_len: u64,
    /// Bytes after `valid_len`: a torn last record (0 if none).
    pub torn_bytes: u64,
}

/// Encodes a record into `out`.
pub(super) fn encode(out: &mut Vec<u8>, kind: RecordKind, seq: u64, payload: &[u8]) {
    let mut crc = crc32c::crc32c(&[kind as u8]);
    crc = crc32c::crc32c_append(crc, &seq.to_le_bytes());
    crc = crc32c::crc32c_append(crc, payload);
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    out.extend_from_slice(&crc.to_le_bytes());
    out.push(kind as u8);
    out.extend_from_slice(&seq.to_le_bytes());
    out.extend_from_slice(payload);
}

/// Encodes a file header.
pub(super) fn file_header(creation_time: u64) -> [u8; FILE_HEADER] {
    let mut h = [0u8; FILE_HEADER];
    h[..8].copy_from_slice(MAGIC);
    h[8..].copy_from_slice(&creation_time.to_le_bytes());
    h
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut v = [0u8; 8];
    v.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(v)
}

/// Reads a whole store file. A damaged or incomplete *last* record is a torn tail
/// (reported in [`Scanned::torn_bytes`], to be cut); damage followed by more records
/// is an error at that record's offset. Never panics, whatever the bytes.
pub fn scan(file: &[u8]) -> Result<Scanned, (u64, ScanError)> {
    if file.len() < FILE_HEADER {
        // A file cut inside its header was never used: a fresh start.
        if file.len() >= MAGIC.len() && &file[..MAGIC.len()] != MAGIC {
            return Err((0, ScanError::BadMagic));
        }
        return Ok(Scanned {
            creation_time: 0,
            next_sender: 1,
            next_target: 1,
            messages: Vec::new(),
            app_states: Vec::new(),
            valid_len: 0,
            torn_bytes: file.len() as u64,
        });
    }
    if &file[..MAGIC.len()] != MAGIC {
        return Err((0, ScanError::BadMagic));
    }
    let mut s = Scanned {
        creation_time: u64_at(file, 8),
        next_sender: 1,
        next_target: 1,
        messages: Vec::new(),
        app_states: Vec::new(),
        valid_len: FILE_HEADER as u64,
        torn_bytes: 0,
    };
    let mut at = FILE_HEADER;
    while at < file.len() {
        match record_at(file, at) {
            Ok((kind, seq, payload_at, len)) => {
                apply(&mut s, kind, seq, payload_at, len).map_err(|e| (at as u64, e))?;
                at = payload_at + len as usize;
                s.valid_len = at as u64;
            }
            Err(RecordFault::Short) => break,
            Err(RecordFault::Bad(e)) => {
                // The last record may be torn by a crash in the middle of a write;
                // a bad record with a good one after it is damage.
                if let Some(next) = next_record_start(file, at) {
                    if next < file.len() && record_at(file, next).is_ok() {
                        return Err((at as u64, e));
                    }
                }
                break;
            }
        }
    }
    s.torn_bytes = file.len() as u64 - s.valid_len;
    Ok(s)
}

enum RecordFault {
    Short,
    Bad(ScanError),
}

fn record_at(file: &[u8], at: usize) -> Result<(RecordKind, u64, usize, u32), RecordFault> {
    if file.len() - at < RECORD_HEADER {
        return Err(RecordFault::Short);
    }
    let len = u32_at(file, at);
    if len > MAX_PAYLOAD {
        return Err(RecordFault::Bad(ScanError::TooLarge(len)));
    }
    let payload_at = at + RECORD_HEADER;
    if file.len() - payload_at < len as usize {
        return Err(RecordFault::Short);
    }
    let crc = u32_at(file, at + 4);
    let body = &file[at + 8..payload_at + len as usize];
    if crc32c::crc32c(body) != crc {
        return Err(RecordFault::Bad(ScanError::BadCrc));
    }
    let kind = RecordKind::from_u8(file[at + 8])
        .ok_or(RecordFault::Bad(ScanError::BadKind(file[at + 8])))?;
    Ok((kind, u64_at(file, at + 9), payload_at, len))
}

/// Where the record after the one at `at` would start, if its length is sane.
fn next_record_start(file: &[u8], at: usize) -> Option<usize> {
    if file.len() - at < RECORD_HEADER {
        return None;
    }
    let len = u32_at(file, at);
    (len <= MAX_PAYLOAD).then(|| at + RECORD_HEADER + len as usize)
}

fn apply(
    s: &mut Scanned,
    kind: RecordKind,
    seq: u64,
    payload_at: usize,
    len: u32,
) -> Result<(), ScanError> {
    match kind {
        RecordKind::AppMessage | RecordKind::AdminMessage => {
            if seq < s.next_sender {
                return Err(ScanError::Backwards {
                    seq,
                    prev: s.next_sender,
                });
            }
            if kind == RecordKind::AppMessage {
                s.messages.push((seq, payload_at as u64, len));
            }
            s.next_sender = seq + 1;
        }
        RecordKind::SenderSeq => s.next_sender = seq.max(s.next_sender),
        RecordKind::TargetSeq => s.next_target = seq,
        RecordKind::AppState => s.app_states.push((seq, payload_at as u64, len)),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(records: &[(RecordKind, u64, &[u8])]) -> Vec<u8> {
        let mut f = file_header(42).to_vec();
        for &(k, s, p) in records {
            encode(&mut f, k, s, p);
        }
        f
    }

    #[test]
    fn scans_sequence_numbers_and_messages() {
        let f = file(&[
            (RecordKind::AppMessage, 1, b"one"),
            (RecordKind::AdminMessage, 2, b""),
            (RecordKind::TargetSeq, 5, b""),
            (RecordKind::AppMessage, 3, b"three"),
            (RecordKind::SenderSeq, 10, b""),
        ]);
        let s = scan(&f).unwrap();
        assert_eq!(s.creation_time, 42);
        assert_eq!(s.next_sender, 10);
        assert_eq!(s.next_target, 5);
        assert_eq!(s.messages.len(), 2);
        let (seq, at, len) = s.messages[1];
        assert_eq!(
            (seq, &f[at as usize..at as usize + len as usize]),
            (3, &b"three"[..])
        );
        assert_eq!(s.torn_bytes, 0);
    }

    #[test]
    fn a_torn_last_record_is_cut_and_earlier_damage_refused() {
        let f = file(&[
            (RecordKind::AppMessage, 1, b"one"),
            (RecordKind::AppMessage, 2, b"two"),
        ]);
        for cut in FILE_HEADER..f.len() {
            let s = scan(&f[..cut]).unwrap();
            assert!(s.next_sender <= 3 && s.valid_len + s.torn_bytes == cut as u64);
        }
        // Flip a byte in the last record: torn tail.
        let mut last = f.clone();
        let n = last.len();
        last[n - 1] ^= 1;
        let s = scan(&last).unwrap();
        assert_eq!(
            (s.next_sender, s.torn_bytes),
            (2, (RECORD_HEADER + 3) as u64)
        );
        // Flip a byte in the first record: damage, refused with its offset.
        let mut first = f.clone();
        first[FILE_HEADER + RECORD_HEADER] ^= 1;
        assert_eq!(scan(&first), Err((FILE_HEADER as u64, ScanError::BadCrc)));
        let mut magic = f;
        magic[0] = b'X';
        assert_eq!(scan(&magic), Err((0, ScanError::BadMagic)));
    }
}
