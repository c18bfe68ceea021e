//! The codec and `docs/protocol.md` against the protocol schema
//! (`schema/protocol.xml`).
//!
//! * The generated sections of `docs/protocol.md` (enumerations, reason codes,
//!   layouts) are exactly what the schema renders to. After editing the schema, run
//!   `PEREGRINE_BLESS=1 cargo test -p peregrine-wire --test schema` to rewrite them.
//! * Every decoder of the codec has exactly the schema's messages of its channels,
//!   with the schema's codes, versions, sizes and field layouts; the reason enums are
//!   the schema's tables; the common header and the packet headers are the schema's.
//! * An independent encoder and decoder written here from the schema alone (it knows
//!   nothing of the codec but its decode and encode entry points) and the codec agree
//!   byte for byte: on messages it builds from random values of every field's
//!   domain, on the codec's own samples, and on every invalid value of every
//!   enumeration, reserved field and text field (the codec refuses exactly those,
//!   naming the field).

#[path = "../schema/model.rs"]
#[allow(dead_code)] // shared with build.rs, which uses other parts of it
mod model;

#[path = "../schema/markdown.rs"]
mod markdown;

#[path = "../schema/rust.rs"]
#[allow(dead_code)] // the generator's tables are read, its code is not run here
mod rust;

use std::path::PathBuf;

use model::{Field, Kind, Message, Schema};
use peregrine_types::Rng;
use peregrine_wire::header::HEADER_FIELDS;
use peregrine_wire::md::packet::{
    stamp_send_time, PacketBuilder, PacketFormat, PacketReader, PACKET_HEADER_FIELDS,
};
use peregrine_wire::md::recovery::Recovery;
use peregrine_wire::md::MdMessage;
use peregrine_wire::reason::TABLES;
use peregrine_wire::{v2, DecodeError, MessageDesc, MAX_MESSAGE_SIZE, PROTOCOL_VERSION};

fn schema() -> Schema {
    match model::parse(include_str!("../schema/protocol.xml")) {
        Ok(s) => s,
        Err(e) => panic!("{e}"),
    }
}

/// A decoder of the codec, by family name: `decode(bytes)` → (re-encoded bytes,
/// consumed), or the error.
type Codec = fn(&[u8]) -> Result<(Vec<u8>, usize), DecodeError>;

/// A family's stream decoder and encoder.
type Decode<M> = fn(&[u8]) -> Result<(M, usize), DecodeError>;
type Encode<M> = fn(&M, &mut [u8]) -> Result<usize, peregrine_wire::EncodeError>;

fn codec(family: &str) -> (Codec, &'static [MessageDesc]) {
    fn run<M>(
        bytes: &[u8],
        decode: Decode<M>,
        encode: Encode<M>,
    ) -> Result<(Vec<u8>, usize), DecodeError> {
        let (m, used) = decode(bytes)?;
        let mut buf = [0u8; MAX_MESSAGE_SIZE];
        let n = encode(&m, &mut buf).expect("a decoded message re-encodes");
        Ok((buf[..n].to_vec(), used))
    }
    match family {
        "Inbound" => (
            |b| run(b, v2::Inbound::decode, v2::Inbound::encode),
            v2::Inbound::MESSAGES,
        ),
        "Outbound" => (
            |b| run(b, v2::Outbound::decode, v2::Outbound::encode),
            v2::Outbound::MESSAGES,
        ),
        "Message" => (
            |b| run(b, v2::Message::decode, v2::Message::encode),
            v2::Message::MESSAGES,
        ),
        "MdMessage" => (
            |b| run(b, MdMessage::decode, MdMessage::encode),
            MdMessage::MESSAGES,
        ),
        "Recovery" => (
            |b| run(b, Recovery::decode, Recovery::encode),
            Recovery::MESSAGES,
        ),
        other => panic!("no codec family {other}: add it here"),
    }
}

/// Each decoder with the schema messages of its channels.
fn families(s: &Schema) -> Vec<(&'static str, Codec, &'static [MessageDesc], Vec<&Message>)> {
    rust::FAMILIES
        .iter()
        .map(|(_, name, channels, _)| {
            let (c, descs) = codec(name);
            (*name, c, descs, s.family(channels))
        })
        .collect()
}

// ---- the document -------------------------------------------------------------

fn doc_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/protocol.md")
}

fn read_doc() -> String {
    std::fs::read_to_string(doc_path()).expect("docs/protocol.md exists")
}

/// Splits the document into (before, generated, after) around one marker pair.
fn split<'a>(doc: &'a str, begin: &str, end: &str) -> (&'a str, &'a str, &'a str) {
    let b = doc
        .find(begin)
        .unwrap_or_else(|| panic!("docs/protocol.md lacks {begin}"))
        + begin.len()
        + 1;
    let e = doc.find(end).expect("end marker");
    (&doc[..b], &doc[b..e], &doc[e..])
}

#[test]
fn the_generated_sections_of_protocol_md_are_the_schema() {
    let s = schema();
    let mut doc = read_doc();
    let mut stale = Vec::new();
    for block in markdown::blocks(&s) {
        let (before, generated, after) = split(&doc, block.begin, block.end);
        if generated != block.text {
            stale.push(block.begin);
            doc = format!("{before}{}{after}", block.text);
        }
    }
    if std::env::var_os("PEREGRINE_BLESS").is_some() {
        if !stale.is_empty() {
            // Write then rename, so a reader never sees a half-written file.
            let tmp = doc_path().with_extension("md.bless.tmp");
            std::fs::write(&tmp, &doc).expect("write doc");
            std::fs::rename(&tmp, doc_path()).expect("replace doc");
        }
        return;
    }
    assert!(
        stale.is_empty(),
        "docs/protocol.md is stale in {stale:?}: run \
         PEREGRINE_BLESS=1 cargo test -p peregrine-wire --test schema"
    );
}

#[test]
fn protocol_md_prose_names_every_message_and_reason_table() {
    let s = schema();
    let doc = read_doc();
    let mut prose = doc.clone();
    for block in markdown::blocks(&s) {
        let (before, _, after) = split(&prose, block.begin, block.end);
        prose = format!("{before}{after}");
    }
    for m in &s.messages {
        assert!(
            prose.contains(&format!("`{}`", m.name)),
            "the prose of docs/protocol.md never mentions `{}`",
            m.name
        );
    }
    for t in &s.reasons {
        assert!(
            prose.contains(&format!("`{}`", t.name)),
            "the prose never mentions `{}`",
            t.name
        );
    }
}

// ---- structure ----------------------------------------------------------------

fn shape(f: &Field) -> (String, usize, usize, String, String) {
    (
        f.name.clone(),
        f.offset,
        f.size(),
        f.ty.display(),
        f.doc.clone(),
    )
}

#[test]
fn every_decoder_has_exactly_the_messages_of_its_channels() {
    let s = schema();
    for (name, _, descs, msgs) in families(&s) {
        let got: Vec<_> = descs.iter().map(|d| d.name).collect();
        let want: Vec<_> = msgs.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(got, want, "{name}");
        for (d, m) in descs.iter().zip(&msgs) {
            assert_eq!(
                (d.msg_type, d.version, d.size, d.doc),
                (m.msg_type, m.version, m.size, m.doc.as_str()),
                "{}",
                m.name
            );
            let code: Vec<_> = d
                .fields
                .iter()
                .map(|f| {
                    let doc = if f.wire_type == "reserved" {
                        "Must be zero.".to_string()
                    } else {
                        f.doc.to_string()
                    };
                    (
                        f.name.to_string(),
                        f.offset,
                        f.size,
                        f.wire_type.to_string(),
                        doc,
                    )
                })
                .collect();
            let want: Vec<_> = m.fields.iter().map(shape).collect();
            assert_eq!(code, want, "{}: fields", m.name);
        }
    }
}

#[test]
fn the_report_stream_types_are_the_ones_the_schema_marks() {
    let s = schema();
    for (i, d) in v2::Outbound::MESSAGES.iter().enumerate() {
        let m = s.message(d.name).expect("in the schema");
        assert_eq!(
            v2::Outbound::sample(i, &[1]).is_report_type(),
            m.report,
            "{}",
            d.name
        );
    }
}

#[test]
fn the_reason_enums_are_the_schema_tables() {
    let s = schema();
    assert_eq!(TABLES.len(), s.reasons.len());
    for (t, want) in TABLES.iter().zip(&s.reasons) {
        assert_eq!(
            (t.name, t.carried_by),
            (want.name.as_str(), want.carried_by.as_str())
        );
        let got: Vec<_> = t
            .entries
            .iter()
            .map(|e| (e.code, e.name, e.meaning))
            .collect();
        let want: Vec<_> = want
            .reasons
            .iter()
            .map(|r| (r.code, r.name.as_str(), r.doc.as_str()))
            .collect();
        assert_eq!(got, want, "{}", t.name);
    }
}

#[test]
fn the_headers_and_limits_are_the_schema_ones() {
    let s = schema();
    assert_eq!(
        (s.version, s.max_message_size),
        (PROTOCOL_VERSION, MAX_MESSAGE_SIZE)
    );
    let header: Vec<_> = HEADER_FIELDS
        .iter()
        .map(|f| (f.name, f.offset, f.size))
        .collect();
    let want: Vec<_> = s
        .header
        .fields
        .iter()
        .map(|f| (f.name.as_str(), f.offset, f.size()))
        .collect();
    assert_eq!(header, want, "common header");
    let v2 = &s.packet_headers[0];
    assert_eq!(v2.version, 2);
    let packet: Vec<_> = PACKET_HEADER_FIELDS
        .iter()
        .map(|f| (f.name, f.offset, f.size))
        .collect();
    let want: Vec<_> = v2
        .fields
        .iter()
        .map(|f| (f.name.as_str(), f.offset, f.size()))
        .collect();
    assert_eq!(packet, want, "packet header, version 2");
}

/// The value of little-endian field `f` of `bytes`.
fn read(bytes: &[u8], f: &Field) -> u64 {
    let mut le = [0u8; 8];
    le[..f.size().min(8)].copy_from_slice(&bytes[f.offset..f.offset + f.size().min(8)]);
    u64::from_le_bytes(le)
}

#[test]
fn packets_of_both_versions_are_laid_out_as_the_schema_says() {
    let s = schema();
    for p in &s.packet_headers {
        let format = PacketFormat::from_version(p.version).expect("a known packet version");
        let mut buf = [0u8; 256];
        let mut b = PacketBuilder::with_format(&mut buf, format, 0x1122_3344, 77).unwrap();
        b.push(MdMessage::sample(0, &[5])).unwrap();
        let n = b.len();
        stamp_send_time(&mut buf[..n], 0xABCD);
        let bytes = &buf[..n];
        let header = PacketReader::new(bytes).unwrap().header();
        assert_eq!(header.format, format);
        assert_eq!(p.size, format.header_size(), "version {}", p.version);
        for f in &p.fields {
            let want = match f.name.as_str() {
                "session_id" => 0x1122_3344,
                "first_seq" => 77,
                "count" => 1,
                "marker" | "reserved" => 0,
                "version" => u64::from(p.version),
                "send_time" => 0xABCD,
                other => panic!("packet header field {other}: add it here"),
            };
            assert_eq!(read(bytes, f), want, "version {}: {}", p.version, f.name);
        }
        assert_eq!(
            MdMessage::decode(&bytes[p.size..]).map(|(m, _)| m),
            Ok(MdMessage::sample(0, &[5])),
            "the first message follows the version-{} header",
            p.version
        );
    }
}

// ---- an encoder and a decoder written from the schema alone ------------------

/// A random valid value of field `f`, as the bytes of its wire form.
fn valid_value(f: &Field, rng: &mut Rng) -> Vec<u8> {
    let n = f.size();
    match &f.ty.kind {
        Kind::Int(_) | Kind::Scope(..) => {
            let v = match rng.below(4) {
                0 => 0,
                1 => u64::MAX,
                _ => rng.next_u64(),
            };
            v.to_le_bytes()[..n].to_vec()
        }
        Kind::Enum(_, values) => {
            let v = values[rng.below(values.len() as u64) as usize].value;
            v.to_le_bytes()[..n].to_vec()
        }
        Kind::Bytes(_) => (0..n).map(|_| rng.next_u64() as u8).collect(),
        Kind::Pad(_) => vec![0; n],
        Kind::Text { len, min, graphic } => {
            let chars = *min + rng.below((*len - *min + 1) as u64) as usize;
            let mut out = vec![0u8; *len];
            for c in &mut out[..chars] {
                *c = if *graphic {
                    b'!' + rng.below(94) as u8
                } else {
                    1 + rng.below(255) as u8
                };
            }
            out
        }
    }
}

/// Every invalid value of field `f` worth trying (empty when every value is valid).
fn invalid_values(f: &Field) -> Vec<Vec<u8>> {
    match &f.ty.kind {
        Kind::Enum(_, values) => (0..=255u8)
            .filter(|b| values.iter().all(|v| v.value != u64::from(*b)))
            .map(|b| {
                let mut v = vec![0u8; f.size()];
                v[0] = b;
                v
            })
            .collect(),
        Kind::Pad(n) => (0..*n)
            .map(|i| {
                let mut v = vec![0u8; *n];
                v[i] = 0x5A;
                v
            })
            .collect(),
        Kind::Text { len, min, graphic } => {
            let mut cases = Vec::new();
            // A character after the padding.
            let mut v = vec![0u8; *len];
            v[0] = b'A';
            v[len - 1] = b'B';
            v[1] = 0;
            cases.push(v);
            if *min > 0 {
                cases.push(vec![0u8; *len]);
            }
            if *graphic {
                for bad in [b' ', 0x7F, 0x80, 0xFF] {
                    let mut v = vec![0u8; *len];
                    v[0] = b'A';
                    v[1] = bad;
                    cases.push(v);
                }
            }
            cases
        }
        Kind::Int(_) | Kind::Scope(..) | Kind::Bytes(_) => Vec::new(),
    }
}

/// Is `bytes` a valid value of field `f`?
fn is_valid(f: &Field, bytes: &[u8]) -> bool {
    match &f.ty.kind {
        Kind::Int(_) | Kind::Scope(..) | Kind::Bytes(_) => true,
        Kind::Enum(_, values) => {
            let v = read(
                bytes,
                &Field {
                    offset: 0,
                    ..f.clone()
                },
            );
            values.iter().any(|x| x.value == v)
        }
        Kind::Pad(_) => bytes.iter().all(|&b| b == 0),
        Kind::Text { min, graphic, .. } => {
            let used = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
            used >= *min
                && bytes[used..].iter().all(|&b| b == 0)
                && bytes[..used].iter().all(|&b| {
                    if *graphic {
                        b.is_ascii_graphic()
                    } else {
                        b != 0
                    }
                })
        }
    }
}

/// Encodes message `m` from one value per field, by the schema.
fn encode(m: &Message, values: &[Vec<u8>]) -> Vec<u8> {
    let mut out = vec![0u8; m.size];
    out[..2].copy_from_slice(&(m.size as u16).to_le_bytes());
    out[2] = m.msg_type;
    out[3] = m.version;
    for (f, v) in m.fields.iter().zip(values) {
        out[f.offset..f.offset + f.size()].copy_from_slice(v);
    }
    out
}

/// Decodes message bytes by the schema: the field values, or the first invalid
/// field's name.
fn decode<'m>(m: &'m Message, bytes: &[u8]) -> Result<Vec<Vec<u8>>, &'m str> {
    assert_eq!(bytes.len(), m.size);
    let header_ok = bytes[..2] == (m.size as u16).to_le_bytes()
        && bytes[2] == m.msg_type
        && bytes[3] == m.version
        && bytes[4..8] == [0; 4];
    assert!(header_ok, "{}: header", m.name);
    m.fields
        .iter()
        .map(|f| {
            let v = &bytes[f.offset..f.offset + f.size()];
            if is_valid(f, v) {
                Ok(v.to_vec())
            } else {
                Err(f.name.as_str())
            }
        })
        .collect()
}

const ROUNDS: u64 = 200;

#[test]
fn the_codec_accepts_and_re_encodes_every_message_the_schema_builds() {
    let s = schema();
    let mut rng = Rng::new(0x5EED_0001);
    for (family, codec, _, msgs) in families(&s) {
        for m in msgs {
            for _ in 0..ROUNDS {
                let values: Vec<_> = m.fields.iter().map(|f| valid_value(f, &mut rng)).collect();
                let bytes = encode(m, &values);
                let got = codec(&bytes);
                assert_eq!(
                    got,
                    Ok((bytes.clone(), m.size)),
                    "{family}: {} built from the schema",
                    m.name
                );
            }
        }
    }
}

#[test]
fn the_schema_decoder_accepts_and_re_encodes_every_sample_of_the_codec() {
    let s = schema();
    let mut rng = Rng::new(0x5EED_0002);
    for (family, codec, descs, msgs) in families(&s) {
        for (i, m) in msgs.iter().enumerate() {
            assert_eq!(descs[i].name, m.name);
            for _ in 0..ROUNDS {
                let seeds: Vec<u64> = (0..16).map(|_| rng.next_u64()).collect();
                let bytes = sample(family, i, &seeds);
                let values = decode(m, &bytes)
                    .unwrap_or_else(|f| panic!("{family}: the codec's {} has a bad {f}", m.name));
                assert_eq!(encode(m, &values), bytes, "{}", m.name);
                assert_eq!(codec(&bytes), Ok((bytes.clone(), m.size)));
            }
        }
    }
}

fn sample(family: &str, i: usize, seeds: &[u64]) -> Vec<u8> {
    let mut buf = [0u8; MAX_MESSAGE_SIZE];
    let n = match family {
        "Inbound" => v2::Inbound::sample(i, seeds).encode(&mut buf),
        "Outbound" => v2::Outbound::sample(i, seeds).encode(&mut buf),
        "Message" => v2::Message::sample(i, seeds).encode(&mut buf),
        "MdMessage" => MdMessage::sample(i, seeds).encode(&mut buf),
        "Recovery" => Recovery::sample(i, seeds).encode(&mut buf),
        other => panic!("no family {other}"),
    }
    .expect("a sample encodes");
    buf[..n].to_vec()
}

#[test]
fn the_codec_refuses_exactly_the_values_the_schema_refuses() {
    let s = schema();
    let mut rng = Rng::new(0x5EED_0003);
    let mut checked = 0;
    for (family, codec, _, msgs) in families(&s) {
        for m in msgs {
            let values: Vec<_> = m.fields.iter().map(|f| valid_value(f, &mut rng)).collect();
            for (k, f) in m.fields.iter().enumerate() {
                for bad in invalid_values(f) {
                    let mut vs = values.clone();
                    vs[k] = bad.clone();
                    let bytes = encode(m, &vs);
                    assert_eq!(decode(m, &bytes), Err(f.name.as_str()));
                    let field = match codec(&bytes) {
                        Err(DecodeError::InvalidField { field, .. }) => field,
                        other => panic!("{family}: {}.{} = {bad:?}: {other:?}", m.name, f.name),
                    };
                    assert_eq!(field, f.name, "{}", m.name);
                    checked += 1;
                }
            }
            // The header: another version, another length, a reserved byte.
            let good = encode(m, &values);
            let mut bytes = good.clone();
            bytes[3] = m.version % 2 + 1;
            assert!(
                matches!(codec(&bytes), Err(DecodeError::BadVersion { .. })),
                "{}: version",
                m.name
            );
            let mut bytes = good.clone();
            bytes[0] = bytes[0].wrapping_add(1);
            let refused = codec(&bytes);
            assert!(
                matches!(refused, Err(DecodeError::LengthMismatch { .. })),
                "{}: length: {refused:?}",
                m.name
            );
            let mut bytes = good;
            bytes[5] = 1;
            assert!(codec(&bytes).is_err(), "{}: header reserved", m.name);
        }
    }
    assert!(checked > 1_000, "{checked} invalid values tried");
}

#[test]
fn no_decoder_accepts_a_retired_layout() {
    let s = schema();
    assert!(!s.retired.is_empty());
    for (_, codec, _, _) in families(&s) {
        for r in &s.retired {
            let mut bytes = vec![0u8; r.size];
            bytes[..2].copy_from_slice(&(r.size as u16).to_le_bytes());
            bytes[2] = r.msg_type;
            bytes[3] = r.version;
            let refused = codec(&bytes);
            assert!(
                matches!(
                    refused,
                    Err(DecodeError::UnknownType(_) | DecodeError::BadVersion { .. })
                ),
                "{} v{}: {refused:?}",
                r.name,
                r.version
            );
        }
    }
}
