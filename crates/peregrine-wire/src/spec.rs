//! The generated parts of `docs/protocol.md`: the layout tables, rendered from the
//! same descriptors the codecs are generated from, and the reason-code tables,
//! rendered from [`crate::reason`]. A test in `tests/docs.rs` fails when the document
//! and the code disagree (run it with `PEREGRINE_BLESS=1` to rewrite the generated
//! parts).
//!
//! This module allocates; it is for documentation, not for the hot path.

use core::fmt::Write;

use crate::header::{HEADER_FIELDS, HEADER_SIZE};
use crate::md::packet::{PACKET_HEADER_FIELDS, PACKET_HEADER_SIZE};
use crate::md::recovery::Recovery;
use crate::md::MdMessage;
use crate::message::{FieldDesc, MessageDesc};
use crate::reason::TABLES;
use crate::v2;

/// Marker line before the generated layouts of `docs/protocol.md`.
pub const BEGIN_MARKER: &str =
    "<!-- BEGIN GENERATED LAYOUTS (crates/peregrine-wire/src/spec.rs) -->";
/// Marker line after the generated layouts of `docs/protocol.md`.
pub const END_MARKER: &str = "<!-- END GENERATED LAYOUTS -->";
/// Marker line before the generated reason-code tables of `docs/protocol.md`.
pub const BEGIN_REASONS: &str =
    "<!-- BEGIN GENERATED REASON CODES (crates/peregrine-wire/src/reason.rs) -->";
/// Marker line after the generated reason-code tables of `docs/protocol.md`.
pub const END_REASONS: &str = "<!-- END GENERATED REASON CODES -->";

/// The documented message groups of the current protocol: title and messages.
pub fn groups() -> [(&'static str, Vec<MessageDesc>); 4] {
    let not_feed = |d: &&MessageDesc| MdMessage::size_of_type(d.msg_type).is_none();
    let not_shared = |d: &&MessageDesc| v2::Outbound::size_of_type(d.msg_type).is_none();
    [
        (
            "Order entry, client → exchange",
            v2::Inbound::MESSAGES.to_vec(),
        ),
        (
            "Order entry, exchange → client",
            v2::Outbound::MESSAGES.to_vec(),
        ),
        ("Market-data feed messages", MdMessage::MESSAGES.to_vec()),
        (
            "Recovery channel",
            Recovery::MESSAGES
                .iter()
                .filter(not_feed)
                .filter(not_shared)
                .copied()
                .collect(),
        ),
    ]
}

/// Version-1 layouts that version 2 replaced or extended (same type code, smaller
/// size), or retired (the version-1 `Login`).
pub fn retired() -> Vec<MessageDesc> {
    crate::Message::MESSAGES
        .iter()
        .filter(|d| {
            v2::Message::MESSAGES
                .iter()
                .all(|n| n.msg_type != d.msg_type || n.version != d.version)
        })
        .copied()
        .collect()
}

/// Collapses a doc comment into one line of table text.
fn one_line(doc: &str) -> String {
    doc.split_whitespace().collect::<Vec<_>>().join(" ")
}

const TABLE_HEAD: &str = "| Offset | Size | Type | Field | Meaning |\n|---:|---:|---|---|---|\n";

fn row(out: &mut String, f: &FieldDesc) {
    let doc = one_line(f.doc);
    let _ = writeln!(
        out,
        "| {} | {} | {} | `{}` | {doc} |",
        f.offset, f.size, f.wire_type, f.name
    );
}

fn field_rows(out: &mut String, fields: &[FieldDesc]) {
    out.push_str(TABLE_HEAD);
    fields.iter().for_each(|f| row(out, f));
}

fn message_section(out: &mut String, d: &MessageDesc, suffix: &str) {
    let _ = writeln!(
        out,
        "#### {} (type 0x{:02X}, {} bytes){suffix}\n",
        d.name, d.msg_type, d.size
    );
    let _ = writeln!(out, "{}\n", one_line(d.doc));
    out.push_str(TABLE_HEAD);
    let _ = writeln!(
        out,
        "| 0 | {HEADER_SIZE} | Header | `header` | length = {}, msg_type = 0x{:02X}, \
         version = {}, reserved = 0 |",
        d.size, d.msg_type, d.version
    );
    d.fields.iter().for_each(|f| row(out, f));
    out.push('\n');
}

/// The generated layouts of `docs/protocol.md` (between the markers, exclusive).
pub fn render_layouts() -> String {
    let mut out = String::new();
    out.push_str(
        "### Summary\n\n| Message | Type | Version | Size | Group |\n|---|---:|---:|---:|---|\n",
    );
    for (title, msgs) in groups() {
        for d in &msgs {
            let _ = writeln!(
                out,
                "| {} | 0x{:02X} | {} | {} | {} |",
                d.name, d.msg_type, d.version, d.size, title
            );
        }
    }
    out.push_str("\n### Common message header\n\n");
    field_rows(&mut out, &HEADER_FIELDS);
    let _ = writeln!(
        out,
        "\n### Market-data packet header ({PACKET_HEADER_SIZE} bytes)\n"
    );
    field_rows(&mut out, &PACKET_HEADER_FIELDS);
    for (title, msgs) in groups() {
        let _ = writeln!(out, "\n### {title}\n");
        for d in &msgs {
            message_section(&mut out, d, "");
        }
    }
    out.push_str(
        "\n### Version-1 layouts replaced by version 2\n\n\
         A version-2 decoder refuses these (`BadVersion`, or `UnknownType` for the \
         version-1 `Login`).\n\n",
    );
    for d in &retired() {
        message_section(&mut out, d, ", version 1");
    }
    out
}

/// The generated reason-code tables of `docs/protocol.md` (between the markers,
/// exclusive).
pub fn render_reasons() -> String {
    let mut out = String::new();
    for t in TABLES {
        let _ = writeln!(out, "#### {} ({})\n", t.name, t.carried_by);
        out.push_str("| Code | Name | Meaning |\n|---:|---|---|\n");
        for e in t.entries {
            let _ = writeln!(
                out,
                "| {} | `{}` | {} |",
                e.code,
                e.name,
                one_line(e.meaning)
            );
        }
        out.push('\n');
    }
    out
}
