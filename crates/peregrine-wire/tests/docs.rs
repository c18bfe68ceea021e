//! `docs/protocol.md` must agree with the code: its generated layout section is
//! exactly what `spec::render_layouts` produces from the codec's own descriptors, its
//! reason-code tables exactly what `spec::render_reasons` produces from
//! `peregrine_wire::reason`, and it names every message with its size. Run with
//! `PEREGRINE_BLESS=1 cargo test -p peregrine-wire --test docs -- --test-threads=1` to
//! rewrite the generated sections after changing a message or a table.

use std::path::PathBuf;

use peregrine_wire::md::recovery::Recovery;
use peregrine_wire::reason::TABLES;
use peregrine_wire::spec::{
    render_layouts, render_reasons, BEGIN_MARKER, BEGIN_REASONS, END_MARKER, END_REASONS,
};
use peregrine_wire::v2;

fn doc_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/protocol.md")
}

fn read_doc() -> String {
    std::fs::read_to_string(doc_path()).expect("docs/protocol.md exists")
}

/// Splits the document into (before, generated, after) around one marker pair.
fn split<'a>(doc: &'a str, begin: &str, end: &str) -> (&'a str, &'a str, &'a str) {
    let b = doc.find(begin).expect("begin marker") + begin.len() + 1;
    let e = doc.find(end).expect("end marker");
    (&doc[..b], &doc[b..e], &doc[e..])
}

/// Checks (or, with `PEREGRINE_BLESS`, rewrites) one generated block.
fn check_block(begin: &str, end: &str, fresh: String, what: &str) {
    let doc = read_doc();
    let (before, generated, after) = split(&doc, begin, end);
    if std::env::var_os("PEREGRINE_BLESS").is_some() {
        // Write then rename, so a test reading the document concurrently never sees
        // a half-written file.
        let tmp = doc_path().with_extension(format!("md.{what}.tmp"));
        std::fs::write(&tmp, format!("{before}{fresh}{after}")).expect("write doc");
        std::fs::rename(&tmp, doc_path()).expect("replace doc");
        return;
    }
    assert!(
        generated == fresh,
        "docs/protocol.md {what} are stale; rerun with PEREGRINE_BLESS=1"
    );
}

#[test]
fn generated_layouts_match_the_code() {
    check_block(BEGIN_MARKER, END_MARKER, render_layouts(), "layout tables");
}

#[test]
fn generated_reason_codes_match_the_code() {
    check_block(
        BEGIN_REASONS,
        END_REASONS,
        render_reasons(),
        "reason-code tables",
    );
}

#[test]
fn protocol_md_mentions_every_message_name_and_size() {
    let doc = read_doc();
    let (before, _, after) = split(&doc, BEGIN_MARKER, END_MARKER);
    let prose = format!("{before}{after}");
    for d in v2::Message::MESSAGES.iter().chain(Recovery::MESSAGES) {
        let heading = format!(
            "#### {} (type 0x{:02X}, {} bytes)",
            d.name, d.msg_type, d.size
        );
        assert!(doc.contains(&heading), "missing layout heading: {heading}");
        assert!(
            prose.contains(&format!("`{}`", d.name)),
            "prose never mentions `{}`",
            d.name
        );
    }
}

#[test]
fn protocol_md_prose_names_every_reason_table() {
    let doc = read_doc();
    let (before, _, after) = split(&doc, BEGIN_REASONS, END_REASONS);
    let prose = format!("{before}{after}");
    for t in TABLES {
        assert!(
            prose.contains(&format!("`{}`", t.name)),
            "prose never mentions `{}`",
            t.name
        );
    }
}
