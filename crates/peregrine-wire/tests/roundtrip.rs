//! Round-trip property tests: for every message type of every decoder,
//! `decode(encode(m)) == m` whatever follows it in the stream, the encoding has the
//! declared size, every proper prefix asks for more bytes, and a too-small buffer is
//! refused. Plus a TCP-stream test that reassembles random message sequences from
//! random chunkings.

use peregrine_wire::md::recovery::Recovery;
use peregrine_wire::md::MdMessage;
use peregrine_wire::v2::Message;
use peregrine_wire::{DecodeError, EncodeError, MAX_MESSAGE_SIZE};
use proptest::collection::vec;
use proptest::prelude::*;

/// The round-trip contract for one family's `sample(index, seeds)`.
macro_rules! contract {
    ($fam:ty, $index:expr, $seeds:expr, $tail:expr) => {{
        let m = <$fam>::sample($index, $seeds);
        let mut buf = [0u8; MAX_MESSAGE_SIZE + 32];
        let n = m
            .encode(&mut buf)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(n, m.size());
        buf[n..n + $tail.len()].copy_from_slice($tail);
        prop_assert_eq!(<$fam>::decode(&buf[..n + $tail.len()]), Ok((m, n)));
        for p in 0..n {
            prop_assert!(
                <$fam>::decode(&buf[..p]).unwrap_err().is_incomplete(),
                "{}: prefix {}",
                m.desc().name,
                p
            );
        }
        let too_small = EncodeError::BufferTooSmall {
            needed: n,
            available: n - 1,
        };
        prop_assert_eq!(m.encode(&mut buf[..n - 1]), Err(too_small));
    }};
}

proptest! {
    #[test]
    fn prop_every_order_entry_message_round_trips(
        index in any::<usize>(),
        seeds in vec(any::<u64>(), 1..16),
        tail in vec(any::<u8>(), 0..24),
    ) {
        contract!(Message, index, &seeds, &tail);
    }

    #[test]
    fn prop_every_feed_message_round_trips(
        index in any::<usize>(),
        seeds in vec(any::<u64>(), 1..16),
        tail in vec(any::<u8>(), 0..24),
    ) {
        contract!(MdMessage, index, &seeds, &tail);
    }

    #[test]
    fn prop_every_recovery_message_round_trips(
        index in any::<usize>(),
        seeds in vec(any::<u64>(), 1..16),
        tail in vec(any::<u8>(), 0..24),
    ) {
        contract!(Recovery, index, &seeds, &tail);
    }
}

/// Feeds `wire` to a stream decoder in chunks of the given sizes, through a fixed
/// receive buffer, the way a TCP reader would; returns the decoded messages.
fn reassemble(wire: &[u8], chunks: &[usize]) -> Result<Vec<Message>, DecodeError> {
    let mut rx = [0u8; 4 * MAX_MESSAGE_SIZE];
    let (mut filled, mut sent, mut out) = (0, 0, Vec::new());
    let mut sizes = chunks.iter().cycle();
    while sent < wire.len() {
        let n = (*sizes.next().unwrap_or(&1))
            .min(wire.len() - sent)
            .min(rx.len() - filled);
        rx[filled..filled + n].copy_from_slice(&wire[sent..sent + n]);
        (filled, sent) = (filled + n, sent + n);
        loop {
            match Message::decode(&rx[..filled]) {
                Ok((m, used)) => {
                    out.push(m);
                    rx.copy_within(used..filled, 0);
                    filled -= used;
                }
                Err(e) if e.is_incomplete() => break,
                Err(e) => return Err(e),
            }
        }
    }
    assert_eq!(filled, 0, "no bytes left over");
    Ok(out)
}

proptest! {
    #[test]
    fn prop_stream_reassembles_any_chunking(
        picks in vec((any::<usize>(), vec(any::<u64>(), 1..12)), 0..40),
        chunks in vec(1usize..200, 1..8),
    ) {
        let msgs: Vec<Message> = picks.iter().map(|(i, s)| Message::sample(*i, s)).collect();
        let mut wire = vec![0u8; msgs.len() * MAX_MESSAGE_SIZE];
        let mut len = 0;
        for m in &msgs {
            len += m.encode(&mut wire[len..]).unwrap();
        }
        prop_assert_eq!(reassemble(&wire[..len], &chunks), Ok(msgs));
    }
}
