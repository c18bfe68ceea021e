//! Decoder fuzzing as property tests. The contract: for any input, a decoder never
//! panics and returns either a message or a typed error; a decoded message re-encodes
//! to exactly the bytes it was decoded from (the encoding is canonical); "need more
//! bytes" always asks for more than was given.

use peregrine_wire::md::packet::{PacketBuilder, PacketReader, DEFAULT_MTU};
use peregrine_wire::md::recovery::Recovery;
use peregrine_wire::md::MdMessage;
use peregrine_wire::{v2, DecodeError, EncodeError};
use proptest::collection::vec;
use proptest::prelude::*;

const CASES: u32 = 10_000;

type Decode<M> = fn(&[u8]) -> Result<(M, usize), DecodeError>;
type Encode<M> = fn(&M, &mut [u8]) -> Result<usize, EncodeError>;

/// Checks the decoder contract for one family on one input.
fn contract<M: Copy>(
    bytes: &[u8],
    decode: Decode<M>,
    encode: Encode<M>,
) -> Result<(), TestCaseError> {
    match decode(bytes) {
        Ok((m, used)) => {
            prop_assert!(used <= bytes.len());
            let mut again = [0u8; 600];
            let n = encode(&m, &mut again).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(&again[..n], &bytes[..used], "canonical re-encoding");
        }
        Err(DecodeError::Incomplete { needed, available }) => {
            prop_assert_eq!(available, bytes.len());
            prop_assert!(needed > available);
        }
        Err(_) => {}
    }
    Ok(())
}

fn all_contracts(bytes: &[u8]) -> Result<(), TestCaseError> {
    contract(bytes, v2::Message::decode, v2::Message::encode)?;
    contract(bytes, v2::Inbound::decode, v2::Inbound::encode)?;
    contract(bytes, v2::Outbound::decode, v2::Outbound::encode)?;
    contract(bytes, Recovery::decode, Recovery::encode)?;
    contract(bytes, MdMessage::decode, MdMessage::encode)
}

/// A valid order-entry or recovery message with a few bytes overwritten: reaches the
/// field validators, which purely random bytes almost never do.
fn mutated_message() -> impl Strategy<Value = Vec<u8>> {
    (
        0u8..2,
        any::<usize>(),
        vec(any::<u64>(), 1..16),
        vec((any::<usize>(), any::<u8>()), 0..4),
    )
        .prop_map(|(family, i, seeds, edits)| {
            let mut buf = [0u8; 600];
            let n = match family {
                0 => Recovery::sample(i, &seeds).encode(&mut buf),
                _ => v2::Message::sample(i, &seeds).encode(&mut buf),
            }
            .unwrap();
            let mut bytes = buf[..n].to_vec();
            for (at, v) in edits {
                bytes[at % n] = v;
            }
            bytes
        })
}

/// Reads a whole packet; checks sequence numbers are consecutive from `first_seq`.
fn read_packet(bytes: &[u8]) -> Result<(), TestCaseError> {
    let Ok(reader) = PacketReader::new(bytes) else {
        return Ok(());
    };
    let first = reader.header().first_seq;
    let mut expect = first;
    for item in reader {
        match item {
            Ok((seq, _)) => {
                prop_assert_eq!(seq, expect);
                expect += 1;
            }
            Err(e) => prop_assert!(!e.is_incomplete(), "datagrams never ask for more: {e}"),
        }
    }
    Ok(())
}

fn mutated_packet() -> impl Strategy<Value = Vec<u8>> {
    let msgs = vec((any::<usize>(), vec(any::<u64>(), 1..8)), 0..30);
    (msgs, vec((any::<usize>(), any::<u8>()), 0..4), any::<u16>()).prop_map(|(msgs, edits, cut)| {
        let mut buf = [0u8; DEFAULT_MTU];
        let mut b = PacketBuilder::new(&mut buf, 1, 1).unwrap();
        for (i, s) in msgs {
            let _ = b.push(MdMessage::sample(i, &s));
        }
        let mut bytes = b.finish().to_vec();
        let n = bytes.len();
        for (at, v) in edits {
            bytes[at % n] = v;
        }
        bytes.truncate(n - usize::from(cut) % 4 * usize::from(cut % 3 == 0));
        bytes
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(CASES))]

    #[test]
    fn prop_decode_never_panics(bytes in vec(any::<u8>(), 0..160)) {
        all_contracts(&bytes)?;
    }

    #[test]
    fn prop_decode_mutated_never_panics(bytes in mutated_message()) {
        all_contracts(&bytes)?;
    }

    #[test]
    fn prop_v2_round_trips_and_prefixes_ask_for_more(
        i in any::<usize>(),
        seeds in vec(any::<u64>(), 1..16),
    ) {
        let m = v2::Message::sample(i, &seeds);
        let mut buf = [0u8; 600];
        let n = m.encode(&mut buf).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(n, m.size());
        prop_assert_eq!(v2::decode(&buf[..n + 3]), Ok((m, n)));
        for p in 0..n {
            prop_assert!(v2::decode(&buf[..p]).unwrap_err().is_incomplete());
        }
    }

    #[test]
    fn prop_packet_decode_never_panics(bytes in vec(any::<u8>(), 0..300)) {
        read_packet(&bytes)?;
    }

    #[test]
    fn prop_packet_decode_mutated_never_panics(bytes in mutated_packet()) {
        read_packet(&bytes)?;
    }
}
