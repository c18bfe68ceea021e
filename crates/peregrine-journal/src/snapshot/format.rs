//! Snapshot file layout: a 40-byte little-endian header, then the blob.
//!
//! ```text
//! offset size field
//!      0    8 magic     b"PGSNAPSH"
//!      8    4 version   1
//!     12    4 reserved  0
//!     16    8 last_seq  last journal seq the blob includes
//!     24    8 blob_len  bytes of blob that follow the header
//!     32    4 crc       CRC32 of bytes 0..32 followed by the blob
//!     36    4 reserved  0
//!     40    n blob
//! ```

/// Snapshot header size.
pub const SNAPSHOT_HEADER_LEN: usize = 40;
/// Snapshot format version written by this crate.
pub const SNAPSHOT_VERSION: u32 = 1;
const MAGIC: &[u8; 8] = b"PGSNAPSH";

/// Why a snapshot file was rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SnapshotDefect {
    /// Shorter than the header.
    TooShort,
    /// Magic or version do not match, or reserved bytes are set.
    BadHeader,
    /// File length is not header + `blob_len`.
    LengthMismatch,
    /// The CRC does not match.
    CrcMismatch,
    /// `last_seq` in the header differs from the file name.
    NameMismatch,
    /// The file could not be read.
    Unreadable,
}

impl std::fmt::Display for SnapshotDefect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self, f)
    }
}

/// Builds the header for `blob` covering sequence numbers up to `last_seq`.
pub(super) fn header(last_seq: u64, blob: &[u8]) -> [u8; SNAPSHOT_HEADER_LEN] {
    let mut h = [0u8; SNAPSHOT_HEADER_LEN];
    h[..8].copy_from_slice(MAGIC);
    h[8..12].copy_from_slice(&SNAPSHOT_VERSION.to_le_bytes());
    h[16..24].copy_from_slice(&last_seq.to_le_bytes());
    h[24..32].copy_from_slice(&(blob.len() as u64).to_le_bytes());
    let crc = crc_of(&h, blob);
    h[32..36].copy_from_slice(&crc.to_le_bytes());
    h
}

fn crc_of(header: &[u8], blob: &[u8]) -> u32 {
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(&header[..32]);
    hasher.update(blob);
    hasher.finalize()
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut x = [0u8; 8];
    x.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(x)
}

/// Verifies a whole snapshot file and returns `(last_seq, blob range start)`.
pub(super) fn verify(file: &[u8]) -> Result<u64, SnapshotDefect> {
    if file.len() < SNAPSHOT_HEADER_LEN {
        return Err(SnapshotDefect::TooShort);
    }
    let h = &file[..SNAPSHOT_HEADER_LEN];
    let version_ok = h[8..12] == SNAPSHOT_VERSION.to_le_bytes();
    let reserved_ok = h[12..16] == [0; 4] && h[36..40] == [0; 4];
    if &h[..8] != MAGIC || !version_ok || !reserved_ok {
        return Err(SnapshotDefect::BadHeader);
    }
    let blob = &file[SNAPSHOT_HEADER_LEN..];
    if u64_at(h, 24) != blob.len() as u64 {
        return Err(SnapshotDefect::LengthMismatch);
    }
    if crc_of(h, blob).to_le_bytes() != h[32..36] {
        return Err(SnapshotDefect::CrcMismatch);
    }
    Ok(u64_at(h, 16))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(seq: u64, blob: &[u8]) -> Vec<u8> {
        let mut f = header(seq, blob).to_vec();
        f.extend_from_slice(blob);
        f
    }

    #[test]
    fn round_trip_and_layout() {
        let f = file(77, b"state");
        assert_eq!(&f[..8], b"PGSNAPSH");
        assert_eq!(&f[16..24], &77u64.to_le_bytes());
        assert_eq!(&f[24..32], &5u64.to_le_bytes());
        assert_eq!(verify(&f), Ok(77));
    }

    #[test]
    fn every_byte_flip_is_detected() {
        let f = file(3, b"some engine state");
        for i in 0..f.len() {
            let mut g = f.clone();
            g[i] ^= 0x10;
            assert!(verify(&g).is_err(), "flip at {i} undetected");
        }
    }

    #[test]
    fn truncation_is_detected() {
        let f = file(3, b"some engine state");
        assert_eq!(verify(&f[..10]), Err(SnapshotDefect::TooShort));
        assert_eq!(
            verify(&f[..f.len() - 1]),
            Err(SnapshotDefect::LengthMismatch)
        );
    }
}
