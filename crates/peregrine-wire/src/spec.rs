//! The layout tables of `docs/protocol.md`, rendered from the same descriptors the
//! codecs are generated from. A test in `tests/docs.rs` fails when the document and
//! the code disagree (run it with `PEREGRINE_BLESS=1` to rewrite the generated part).
//!
//! This module allocates; it is for documentation, not for the hot path.

use core::fmt::Write;

use crate::header::{HEADER_FIELDS, HEADER_SIZE, PROTOCOL_VERSION};
use crate::md::packet::{PACKET_HEADER_FIELDS, PACKET_HEADER_SIZE};
use crate::md::recovery::Recovery;
use crate::md::MdMessage;
use crate::message::{FieldDesc, MessageDesc};
use crate::order_entry::{Inbound, Outbound};

/// Marker line before the generated part of `docs/protocol.md`.
pub const BEGIN_MARKER: &str =
    "<!-- BEGIN GENERATED LAYOUTS (crates/peregrine-wire/src/spec.rs) -->";
/// Marker line after the generated part of `docs/protocol.md`.
pub const END_MARKER: &str = "<!-- END GENERATED LAYOUTS -->";

/// The documented message groups: title and messages.
pub fn groups() -> [(&'static str, Vec<MessageDesc>); 4] {
    let feed = |d: &&MessageDesc| MdMessage::size_of_type(d.msg_type).is_none();
    [
        ("Order entry, client → exchange", Inbound::MESSAGES.to_vec()),
        (
            "Order entry, exchange → client",
            Outbound::MESSAGES.to_vec(),
        ),
        ("Market-data feed messages", MdMessage::MESSAGES.to_vec()),
        (
            "Recovery channel",
            Recovery::MESSAGES.iter().filter(feed).copied().collect(),
        ),
    ]
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

fn message_section(out: &mut String, d: &MessageDesc) {
    let _ = writeln!(
        out,
        "#### {} (type 0x{:02X}, {} bytes)\n",
        d.name, d.msg_type, d.size
    );
    let _ = writeln!(out, "{}\n", one_line(d.doc));
    out.push_str(TABLE_HEAD);
    let _ = writeln!(
        out,
        "| 0 | {HEADER_SIZE} | Header | `header` | length = {}, msg_type = 0x{:02X}, \
         version = {PROTOCOL_VERSION}, reserved = 0 |",
        d.size, d.msg_type
    );
    d.fields.iter().for_each(|f| row(out, f));
    out.push('\n');
}

/// The generated part of `docs/protocol.md` (between the markers, exclusive).
pub fn render_layouts() -> String {
    let mut out = String::new();
    out.push_str("### Summary\n\n| Message | Type | Size | Group |\n|---|---:|---:|---|\n");
    for (title, msgs) in groups() {
        for d in &msgs {
            let _ = writeln!(
                out,
                "| {} | 0x{:02X} | {} | {} |",
                d.name, d.msg_type, d.size, title
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
            message_section(&mut out, d);
        }
    }
    out
}
