//! `docs/protocol.md` must agree with the code: its generated layout section is
//! exactly what `spec::render_layouts` produces from the codec's own descriptors, and
//! it names every message with its size. Run with `PEREGRINE_BLESS=1` to rewrite the
//! generated section after changing a message.

use std::path::PathBuf;

use peregrine_wire::md::recovery::Recovery;
use peregrine_wire::spec::{render_layouts, BEGIN_MARKER, END_MARKER};
use peregrine_wire::Message;

fn doc_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/protocol.md")
}

fn read_doc() -> String {
    std::fs::read_to_string(doc_path()).expect("docs/protocol.md exists")
}

/// Splits the document into (before, generated, after).
fn split(doc: &str) -> (&str, &str, &str) {
    let begin = doc.find(BEGIN_MARKER).expect("begin marker") + BEGIN_MARKER.len() + 1;
    let end = doc.find(END_MARKER).expect("end marker");
    (&doc[..begin], &doc[begin..end], &doc[end..])
}

#[test]
fn generated_layouts_match_the_code() {
    let doc = read_doc();
    let (before, generated, after) = split(&doc);
    let fresh = render_layouts();
    if std::env::var_os("PEREGRINE_BLESS").is_some() {
        // Write then rename, so a test reading the document concurrently never sees
        // a half-written file.
        let tmp = doc_path().with_extension("md.tmp");
        std::fs::write(&tmp, format!("{before}{fresh}{after}")).expect("write doc");
        std::fs::rename(&tmp, doc_path()).expect("replace doc");
        return;
    }
    assert!(
        generated == fresh,
        "docs/protocol.md layout tables are stale; rerun with PEREGRINE_BLESS=1"
    );
}

#[test]
fn protocol_md_mentions_every_message_name_and_size() {
    let doc = read_doc();
    let (before, _, after) = split(&doc);
    let prose = format!("{before}{after}");
    for d in Message::MESSAGES.iter().chain(Recovery::MESSAGES) {
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
