//! The cluster's on-disk records as a restarting node reads them back
//! (crates/peregrine-cluster/src/log): entry headers, hard-state and snapshot marks,
//! normal-entry envelopes, snapshot payloads and snapshot files. Contract: never
//! panics; a fixed-size record that decodes re-encodes to the same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use peregrine_cluster::entry;
use peregrine_cluster::log::records::{
    decode_hard_state, decode_snapshot_mark, encode_hard_state, encode_snapshot_mark,
    EntryHeader,
};
use peregrine_cluster::log::snapshot::{SnapshotData, SnapshotFile};

fuzz_target!(|data: &[u8]| {
    let Some((&which, p)) = data.split_first() else {
        return;
    };
    match which % 6 {
        0 => {
            if let Ok((h, rest)) = EntryHeader::decode(p) {
                assert_eq!(&h.encode()[..], &p[..p.len() - rest.len()]);
            }
        }
        1 => {
            if let Ok(hs) = decode_hard_state(p) {
                assert_eq!(&encode_hard_state(&hs)[..], p);
            }
        }
        2 => {
            if let Ok((index, term)) = decode_snapshot_mark(p) {
                assert_eq!(&encode_snapshot_mark(index, term)[..], p);
            }
        }
        3 => {
            let _ = entry::decode(p);
        }
        4 => {
            let _ = SnapshotData::decode(&bytes::Bytes::copy_from_slice(p));
        }
        _ => {
            let _ = SnapshotFile::decode(p.to_vec());
        }
    }
});
