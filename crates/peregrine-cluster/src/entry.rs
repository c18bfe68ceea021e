//! The envelope of normal entries: the service's own data, a state-hash check the
//! leader adds after each snapshot point and each hash point, or a hash point (the
//! leader's timer: every node hashes its state there). raft-rs's own empty entries
//! (a new leader's first entry) carry no envelope and are skipped.

/// Tag of an entry carrying the service's data.
pub const TAG_APP: u8 = 1;
/// Tag of a state-hash check.
pub const TAG_STATE_HASH: u8 = 2;
/// Bytes of a state-hash entry.
pub const STATE_HASH_LEN: usize = 48;
/// Tag of a hash point.
pub const TAG_HASH_POINT: u8 = 3;
/// Bytes of a hash-point entry.
pub const HASH_POINT_LEN: usize = 8;

/// A decoded normal entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Envelope<'a> {
    /// raft-rs's empty entry.
    Empty,
    /// The service's data.
    App(&'a [u8]),
    /// "The state after applying `index` hashes to `hash`" (from the leader).
    StateHash { index: u64, hash: [u8; 32] },
    /// Every node hashes its state after applying this entry (the leader then
    /// replicates its own hash for the others to compare).
    HashPoint,
}

/// Writes the envelope of service data into `out` (cleared first).
pub fn encode_app(data: &[u8], out: &mut Vec<u8>) {
    out.clear();
    out.reserve(1 + data.len());
    out.push(TAG_APP);
    out.extend_from_slice(data);
}

/// The bytes of a state-hash entry.
pub fn encode_state_hash(index: u64, hash: &[u8; 32]) -> [u8; STATE_HASH_LEN] {
    let mut b = [0u8; STATE_HASH_LEN];
    b[0] = TAG_STATE_HASH;
    b[8..16].copy_from_slice(&index.to_le_bytes());
    b[16..48].copy_from_slice(hash);
    b
}

/// The bytes of a hash-point entry.
pub fn encode_hash_point() -> [u8; HASH_POINT_LEN] {
    let mut b = [0u8; HASH_POINT_LEN];
    b[0] = TAG_HASH_POINT;
    b
}

/// Decodes a normal entry's data.
pub fn decode(data: &[u8]) -> Result<Envelope<'_>, String> {
    match data.first() {
        None => Ok(Envelope::Empty),
        Some(&TAG_APP) => Ok(Envelope::App(&data[1..])),
        Some(&TAG_STATE_HASH) if data.len() == STATE_HASH_LEN && data[1..8] == [0; 7] => {
            let mut i = [0u8; 8];
            i.copy_from_slice(&data[8..16]);
            let mut hash = [0u8; 32];
            hash.copy_from_slice(&data[16..48]);
            Ok(Envelope::StateHash {
                index: u64::from_le_bytes(i),
                hash,
            })
        }
        Some(&TAG_HASH_POINT) if data == encode_hash_point() => Ok(Envelope::HashPoint),
        Some(t) => Err(format!("entry tag {t} of {} bytes", data.len())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn envelopes_round_trip() {
        let mut out = Vec::new();
        encode_app(b"xyz", &mut out);
        assert_eq!(decode(&out).unwrap(), Envelope::App(b"xyz"));
        let h = encode_state_hash(9, &[3; 32]);
        assert_eq!(
            decode(&h).unwrap(),
            Envelope::StateHash {
                index: 9,
                hash: [3; 32]
            }
        );
        assert_eq!(decode(&[]).unwrap(), Envelope::Empty);
        assert_eq!(decode(&encode_hash_point()).unwrap(), Envelope::HashPoint);
        assert!(decode(&[TAG_HASH_POINT, 1, 0, 0, 0, 0, 0, 0]).is_err());
        assert!(decode(&[7, 1]).is_err());
        assert!(decode(&h[..40]).is_err());
    }
}
