//! The generated sections of `docs/protocol.md`, rendered from the schema: the
//! enumerations (section 1.1), the reason-code tables (section 1.2) and the message
//! layouts (section 9). `tests/schema.rs` compares them with the document (and
//! rewrites them with `PEREGRINE_BLESS=1`).

use std::fmt::Write;

use crate::model::{Composite, Field, Kind, Message, Schema, HEADER_SIZE};

/// One generated block: its markers and its text.
pub(crate) struct Block {
    pub begin: &'static str,
    pub end: &'static str,
    pub text: String,
}

/// Every generated block of `docs/protocol.md`.
pub(crate) fn blocks(s: &Schema) -> [Block; 3] {
    [
        Block {
            begin:
                "<!-- BEGIN GENERATED ENUMERATIONS (crates/peregrine-wire/schema/protocol.xml) -->",
            end: "<!-- END GENERATED ENUMERATIONS -->",
            text: enumerations(s),
        },
        Block {
            begin:
                "<!-- BEGIN GENERATED REASON CODES (crates/peregrine-wire/schema/protocol.xml) -->",
            end: "<!-- END GENERATED REASON CODES -->",
            text: reasons(s),
        },
        Block {
            begin: "<!-- BEGIN GENERATED LAYOUTS (crates/peregrine-wire/schema/protocol.xml) -->",
            end: "<!-- END GENERATED LAYOUTS -->",
            text: layouts(s),
        },
    ]
}

fn enumerations(s: &Schema) -> String {
    let mut out = String::from("| Wire type | Values |\n|---|---|\n");
    for t in &s.types {
        let values = match &t.kind {
            Kind::Enum(_, values) => values
                .iter()
                .map(|v| match v.doc.as_str() {
                    "" => format!("{} {}", v.value, v.name),
                    doc => format!("{} {} ({doc})", v.value, v.name),
                })
                .collect::<Vec<_>>()
                .join(", "),
            Kind::Scope(..) | Kind::Text { .. } => t.doc.clone(),
            _ => continue,
        };
        let _ = writeln!(out, "| `{}` | {values} |", t.display());
    }
    out
}

fn reasons(s: &Schema) -> String {
    let mut out = String::new();
    for t in &s.reasons {
        let _ = writeln!(out, "#### {} ({})\n", t.name, t.carried_by);
        out.push_str("| Code | Name | Meaning |\n|---:|---|---|\n");
        for r in &t.reasons {
            let _ = writeln!(out, "| {} | `{}` | {} |", r.code, r.name, r.doc);
        }
        out.push('\n');
    }
    out
}

const TABLE_HEAD: &str = "| Offset | Size | Type | Field | Meaning |\n|---:|---:|---|---|---|\n";

fn row(out: &mut String, f: &Field) {
    let _ = writeln!(
        out,
        "| {} | {} | {} | `{}` | {} |",
        f.offset,
        f.size(),
        f.ty.display(),
        f.name,
        f.doc
    );
}

fn composite(out: &mut String, c: &Composite) {
    out.push_str(TABLE_HEAD);
    c.fields.iter().for_each(|f| row(out, f));
}

fn message(out: &mut String, m: &Message) {
    let _ = writeln!(
        out,
        "#### {} (type 0x{:02X}, {} bytes)\n\n{}\n",
        m.name, m.msg_type, m.size, m.doc
    );
    out.push_str(TABLE_HEAD);
    let _ = writeln!(
        out,
        "| 0 | {HEADER_SIZE} | Header | `header` | length = {}, msg_type = 0x{:02X}, \
         version = {}, reserved = 0 |",
        m.size, m.msg_type, m.version
    );
    m.fields.iter().for_each(|f| row(out, f));
    out.push('\n');
}

fn layouts(s: &Schema) -> String {
    let mut out = String::from(
        "### Summary\n\n| Message | Type | Version | Size | Group |\n|---|---:|---:|---:|---|\n",
    );
    for g in &s.groups {
        for m in s.messages.iter().filter(|m| &m.group == g) {
            let _ = writeln!(
                out,
                "| {} | 0x{:02X} | {} | {} | {g} |",
                m.name, m.msg_type, m.version, m.size
            );
        }
    }
    out.push_str("\n### Common message header\n\n");
    composite(&mut out, &s.header);
    for p in &s.packet_headers {
        let _ = writeln!(
            out,
            "\n### Market-data packet header, version {} ({} bytes)\n",
            p.version, p.size
        );
        composite(&mut out, p);
    }
    for g in &s.groups {
        let _ = writeln!(out, "\n### {g}\n");
        for m in s.messages.iter().filter(|m| &m.group == g) {
            message(&mut out, m);
        }
    }
    out.push_str(
        "\n### Version-1 layouts replaced by version 2\n\n\
         No decoder accepts them: the version-1 `Login` is an unknown type, the others \
         have the wrong version.\n\n\
         | Message | Type | Version | Size | |\n|---|---:|---:|---:|---|\n",
    );
    for r in &s.retired {
        let _ = writeln!(
            out,
            "| {} | 0x{:02X} | {} | {} | {} |",
            r.name, r.msg_type, r.version, r.size, r.doc
        );
    }
    out
}
