//! Property test of feed gap handling: whatever order, loss and duplication packets
//! arrive with, a subscriber that follows `FeedSequencer` (and replays gaps) applies
//! every sequence number exactly once, in order.

use peregrine_wire::md::packet::{PacketFormat, PacketHeader};
use peregrine_wire::md::sequencer::{FeedSequencer, SeqCheck};
use proptest::collection::vec;
use proptest::prelude::*;

/// Packets covering 1..=total, in order, with the given sizes (cycled).
fn packets(sizes: &[u16]) -> Vec<PacketHeader> {
    let mut out = Vec::new();
    let mut first = 1;
    for &count in sizes {
        out.push(PacketHeader {
            session_id: 1,
            first_seq: first,
            count,
            send_time: 0,
            format: PacketFormat::V2,
        });
        first += u64::from(count);
    }
    out
}

/// Feeds one packet; replays gaps; records applied sequence numbers.
fn deliver(s: &mut FeedSequencer, p: &PacketHeader, applied: &mut Vec<u64>) {
    loop {
        match s.check(p) {
            SeqCheck::Apply { skip } => {
                applied.extend(p.first_seq + u64::from(skip)..p.next_seq());
                return;
            }
            SeqCheck::Gap { from, to } => {
                applied.extend(from..to); // replayed over the recovery channel
                s.recovered_to(to);
            }
            SeqCheck::InSync | SeqCheck::Duplicate | SeqCheck::EndOfSession => return,
            SeqCheck::OtherSession { .. } => unreachable!("one session"),
        }
    }
}

proptest! {
    #[test]
    fn prop_sequencer_applies_each_seq_once_in_order(
        sizes in vec(0u16..6, 1..30),
        order in vec(any::<prop::sample::Index>(), 0..80),
    ) {
        let all = packets(&sizes);
        let mut s = FeedSequencer::new(1, 1);
        let mut applied = Vec::new();
        for i in &order {
            deliver(&mut s, &all[i.index(all.len())], &mut applied);
        }
        // The last packet finally arrives (or the session ends): close any gap.
        deliver(&mut s, &all[all.len() - 1], &mut applied);
        let end = all[all.len() - 1].next_seq();
        prop_assert_eq!(applied, (1..end).collect::<Vec<_>>());
        prop_assert_eq!(s.next_seq(), end);
    }
}
