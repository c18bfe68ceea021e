//! The protocol schema (`schema/protocol.xml`) as data: parsed, laid out and checked.
//!
//! Shared by `build.rs` (which generates the codec from it) and the tests (which
//! render `docs/protocol.md`'s generated sections from it and check the codec
//! against it): each uses part of it, hence the `dead_code` allowance where it is
//! included. Nothing here is in the library.

use std::collections::{BTreeMap, BTreeSet};

/// A primitive integer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Prim {
    U8,
    U16,
    U32,
    U64,
    I64,
}

impl Prim {
    fn parse(s: &str) -> Option<Prim> {
        Some(match s {
            "u8" => Prim::U8,
            "u16" => Prim::U16,
            "u32" => Prim::U32,
            "u64" => Prim::U64,
            "i64" => Prim::I64,
            _ => return None,
        })
    }

    /// Bytes on the wire.
    pub(crate) fn width(self) -> usize {
        match self {
            Prim::U8 => 1,
            Prim::U16 => 2,
            Prim::U32 => 4,
            Prim::U64 | Prim::I64 => 8,
        }
    }

    /// The Rust (and table) name.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Prim::U8 => "u8",
            Prim::U16 => "u16",
            Prim::U32 => "u32",
            Prim::U64 => "u64",
            Prim::I64 => "i64",
        }
    }

    /// The largest value, as a u64 bit pattern.
    pub(crate) fn max(self) -> u64 {
        match self {
            Prim::U8 => u8::MAX.into(),
            Prim::U16 => u16::MAX.into(),
            Prim::U32 => u32::MAX.into(),
            Prim::U64 | Prim::I64 => u64::MAX,
        }
    }
}

/// The Rust type a schema type maps to: `path`, or `Option<path>` when `option`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RustType {
    pub path: String,
    pub option: bool,
}

impl RustType {
    /// The type as Rust source.
    pub(crate) fn source(&self) -> String {
        let path = if self.path.starts_with("crate::") || !self.path.contains("::") {
            self.path.clone()
        } else {
            format!("::{}", self.path)
        };
        if self.option {
            format!("::core::option::Option<{path}>")
        } else {
            path
        }
    }
}

/// One value of an enumeration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EnumValue {
    pub name: String,
    pub value: u64,
    /// The value that means `None` of a `rust-option` enumeration.
    pub none: bool,
    pub doc: String,
}

/// What a field type is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A plain integer: every value valid.
    Int(Prim),
    /// An enumeration: only the listed values.
    Enum(Prim, Vec<EnumValue>),
    /// An id, or `all` for every one.
    Scope(Prim, u64),
    /// Text in `len` bytes, left-aligned, zero-padded, at least `min` characters,
    /// each `graphic` (`!`..=`~`) or any non-zero byte.
    Text {
        len: usize,
        min: usize,
        graphic: bool,
    },
    /// `len` raw bytes, every value valid.
    Bytes(usize),
    /// `len` reserved bytes, all zero.
    Pad(usize),
}

/// A named type of the schema's `<types>` (or a primitive, or raw bytes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Type {
    /// The schema name (`Price`, `Side`, `u64`, `bytes`, `reserved`).
    pub name: String,
    pub kind: Kind,
    /// `None` for primitives, bytes and pads (the generator knows them).
    pub rust: Option<RustType>,
    pub doc: String,
}

impl Type {
    /// Bytes on the wire.
    pub(crate) fn width(&self) -> usize {
        match &self.kind {
            Kind::Int(p) | Kind::Enum(p, _) | Kind::Scope(p, _) => p.width(),
            Kind::Text { len, .. } => *len,
            Kind::Bytes(n) | Kind::Pad(n) => *n,
        }
    }

    /// The wire type as the layout tables print it: `u64`, `u64 OrderId`, `u8 Side`,
    /// `[u8; 32]`, `[u8; 16] Symbol`, `reserved`.
    pub(crate) fn display(&self) -> String {
        match &self.kind {
            Kind::Int(p) if p.name() == self.name => self.name.clone(),
            Kind::Int(p) | Kind::Enum(p, _) | Kind::Scope(p, _) => {
                format!("{} {}", p.name(), self.name)
            }
            Kind::Text { len, .. } => format!("[u8; {len}] {}", self.name),
            Kind::Bytes(n) => format!("[u8; {n}]"),
            Kind::Pad(_) => "reserved".into(),
        }
    }

    /// The Rust type of a field of this type.
    pub(crate) fn rust_source(&self) -> String {
        match (&self.kind, &self.rust) {
            (_, Some(r)) => r.source(),
            (Kind::Int(p), None) => p.name().into(),
            (Kind::Bytes(n), None) => format!("[u8; {n}]"),
            (Kind::Pad(n), None) => format!("crate::field::Pad<{n}>"),
            (kind, None) => unreachable!("a declared type without rust: {kind:?}"),
        }
    }
}

/// One field of a layout, with its absolute offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Field {
    pub name: String,
    pub ty: Type,
    pub offset: usize,
    pub doc: String,
}

impl Field {
    pub(crate) fn size(&self) -> usize {
        self.ty.width()
    }

    pub(crate) fn is_pad(&self) -> bool {
        matches!(self.ty.kind, Kind::Pad(_))
    }
}

/// One message type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Message {
    pub name: String,
    pub msg_type: u8,
    pub version: u8,
    pub channels: Vec<String>,
    pub rust_module: String,
    /// The documentation group (`<messages group=...>`).
    pub group: String,
    /// A report of an account's stream (`report="true"`).
    pub report: bool,
    pub doc: String,
    /// Body fields, offsets from the first byte of the message.
    pub fields: Vec<Field>,
    /// Total size, header included.
    pub size: usize,
}

impl Message {
    pub(crate) fn field(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.name == name)
    }

    pub(crate) fn on(&self, channel: &str) -> bool {
        self.channels.iter().any(|c| c == channel)
    }
}

/// A fixed layout that is not a message: the common header, a packet header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Composite {
    pub version: u8,
    pub fields: Vec<Field>,
    pub size: usize,
}

/// One reason code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Reason {
    pub code: u16,
    pub name: String,
    pub doc: String,
}

impl Reason {
    /// The Rust variant: `invalid_qty` → `InvalidQty`.
    pub(crate) fn variant(&self) -> String {
        self.name
            .split('_')
            .map(|w| {
                let mut c = w.chars();
                c.next()
                    .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                    .unwrap_or_default()
            })
            .collect()
    }
}

/// One reason-code table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ReasonTable {
    pub name: String,
    pub carried_by: String,
    pub doc: String,
    pub reasons: Vec<Reason>,
}

/// A version-1 layout that version 2 replaced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Retired {
    pub name: String,
    pub msg_type: u8,
    pub version: u8,
    pub size: usize,
    pub doc: String,
}

/// The whole schema.
#[derive(Debug, Clone)]
pub(crate) struct Schema {
    pub version: u8,
    pub max_message_size: usize,
    /// Declared types, in schema order.
    pub types: Vec<Type>,
    pub header: Composite,
    /// Packet headers, newest first.
    pub packet_headers: Vec<Composite>,
    pub reasons: Vec<ReasonTable>,
    /// Every message, in schema order.
    pub messages: Vec<Message>,
    /// Documentation groups, in schema order.
    pub groups: Vec<String>,
    pub retired: Vec<Retired>,
}

impl Schema {
    /// The messages of a decoder that accepts `channels`, in schema order.
    pub(crate) fn family(&self, channels: &[&str]) -> Vec<&Message> {
        self.messages
            .iter()
            .filter(|m| channels.iter().any(|c| m.on(c)))
            .collect()
    }

    pub(crate) fn message(&self, name: &str) -> Option<&Message> {
        self.messages.iter().find(|m| m.name == name)
    }
}

type Node<'a, 'i> = roxmltree::Node<'a, 'i>;

/// Parses and checks the schema text; every problem is an `Err` with its place.
pub(crate) fn parse(text: &str) -> Result<Schema, String> {
    let doc = roxmltree::Document::parse(text).map_err(|e| format!("protocol.xml: {e}"))?;
    let root = doc.root_element();
    expect_tag(root, "protocol")?;
    let version = int_attr(root, "version")? as u8;
    let max_message_size = int_attr(root, "max-message-size")? as usize;
    if attr(root, "byte-order")? != "little-endian" {
        return Err("protocol: byte-order must be little-endian".into());
    }
    let mut types: Vec<Type> = Vec::new();
    let mut header = None;
    let mut packet_headers = Vec::new();
    let mut reasons = Vec::new();
    let mut messages = Vec::new();
    let mut groups = Vec::new();
    let mut retired = Vec::new();
    for node in root.children().filter(Node::is_element) {
        match node.tag_name().name() {
            "types" => {
                for t in node.children().filter(Node::is_element) {
                    types.push(parse_type(t)?);
                }
            }
            "header" => {
                let c = parse_composite(node, &types, 0, 1)?;
                if c.size != int_attr(node, "size")? as usize {
                    return Err(format!("header: {} bytes, size says otherwise", c.size));
                }
                header = Some(c);
            }
            "packet-header" => {
                let v = int_attr(node, "version")? as u8;
                packet_headers.push(parse_composite(node, &types, 0, v)?);
            }
            "reasons" => reasons.push(parse_reasons(node)?),
            "messages" => {
                let group = attr(node, "group")?.to_string();
                for m in node.children().filter(Node::is_element) {
                    messages.push(parse_message(m, &types, &group)?);
                }
                groups.push(group);
            }
            "retired" => {
                for m in node.children().filter(Node::is_element) {
                    retired.push(Retired {
                        name: attr(m, "name")?.into(),
                        msg_type: int_attr(m, "type")? as u8,
                        version: int_attr(m, "version")? as u8,
                        size: int_attr(m, "size")? as usize,
                        doc: text_of(m),
                    });
                }
            }
            other => return Err(format!("protocol: unknown element <{other}>")),
        }
    }
    packet_headers.sort_by_key(|p| std::cmp::Reverse(p.version));
    let schema = Schema {
        version,
        max_message_size,
        types,
        header: header.ok_or("protocol: no <header>")?,
        packet_headers,
        reasons,
        messages,
        groups,
        retired,
    };
    check(&schema)?;
    Ok(schema)
}

fn expect_tag(n: Node<'_, '_>, tag: &str) -> Result<(), String> {
    if n.tag_name().name() == tag {
        Ok(())
    } else {
        Err(format!("expected <{tag}>, found <{}>", n.tag_name().name()))
    }
}

fn attr<'a>(n: Node<'a, '_>, name: &str) -> Result<&'a str, String> {
    n.attribute(name)
        .ok_or_else(|| format!("<{} {}>: missing {name}", n.tag_name().name(), place(n)))
}

fn place(n: Node<'_, '_>) -> String {
    n.attribute("name")
        .map_or(String::new(), |v| format!("name={v:?}"))
}

fn int_attr(n: Node<'_, '_>, name: &str) -> Result<u64, String> {
    let s = attr(n, name)?;
    let parsed = match s.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => s.parse(),
    };
    parsed.map_err(|e| format!("<{} {}>: {name}={s:?}: {e}", n.tag_name().name(), place(n)))
}

/// The element's text, whitespace collapsed (one line of table text).
fn text_of(n: Node<'_, '_>) -> String {
    let raw: String = n
        .children()
        .filter(Node::is_text)
        .filter_map(|t| t.text())
        .collect();
    raw.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn rust_of(n: Node<'_, '_>) -> Result<Option<RustType>, String> {
    match (n.attribute("rust"), n.attribute("rust-option")) {
        (Some(p), None) => Ok(Some(RustType {
            path: p.into(),
            option: false,
        })),
        (None, Some(p)) => Ok(Some(RustType {
            path: p.into(),
            option: true,
        })),
        (None, None) => Err(format!(
            "<{} {}>: no rust type",
            n.tag_name().name(),
            place(n)
        )),
        (Some(_), Some(_)) => Err(format!("{}: both rust and rust-option", place(n))),
    }
}

fn prim_attr(n: Node<'_, '_>) -> Result<Prim, String> {
    let s = attr(n, "primitive")?;
    Prim::parse(s).ok_or_else(|| format!("{}: unknown primitive {s:?}", place(n)))
}

fn parse_type(n: Node<'_, '_>) -> Result<Type, String> {
    let name = attr(n, "name")?.to_string();
    let kind = match n.tag_name().name() {
        "integer" => Kind::Int(prim_attr(n)?),
        "scope" => Kind::Scope(prim_attr(n)?, int_attr(n, "all")?),
        "enum" => {
            let prim = prim_attr(n)?;
            let mut values = Vec::new();
            for v in n.children().filter(Node::is_element) {
                expect_tag(v, "value")?;
                values.push(EnumValue {
                    name: attr(v, "name")?.into(),
                    value: int_attr(v, "value")?,
                    none: v.attribute("none") == Some("true"),
                    doc: text_of(v),
                });
            }
            Kind::Enum(prim, values)
        }
        "text" => Kind::Text {
            len: int_attr(n, "length")? as usize,
            min: int_attr(n, "min-length")? as usize,
            graphic: match attr(n, "chars")? {
                "graphic" => true,
                "non-zero" => false,
                other => return Err(format!("{name}: chars={other:?}")),
            },
        },
        other => return Err(format!("<types>: unknown type element <{other}>")),
    };
    Ok(Type {
        name,
        kind,
        rust: rust_of(n)?,
        doc: text_of(n),
    })
}

/// The type a `<field>` or `<pad>` names.
fn field_type(n: Node<'_, '_>, types: &[Type]) -> Result<Type, String> {
    if n.tag_name().name() == "pad" {
        let len = int_attr(n, "length")? as usize;
        return Ok(Type {
            name: "reserved".into(),
            kind: Kind::Pad(len),
            rust: None,
            doc: String::new(),
        });
    }
    let t = attr(n, "type")?;
    if let Some(p) = Prim::parse(t) {
        return Ok(Type {
            name: t.into(),
            kind: Kind::Int(p),
            rust: None,
            doc: String::new(),
        });
    }
    if t == "bytes" {
        return Ok(Type {
            name: "bytes".into(),
            kind: Kind::Bytes(int_attr(n, "length")? as usize),
            rust: None,
            doc: String::new(),
        });
    }
    types
        .iter()
        .find(|d| d.name == t)
        .cloned()
        .ok_or_else(|| format!("field {}: unknown type {t:?}", place(n)))
}

/// Lays out the `<field>`/`<pad>` children of `n` from `start`.
fn parse_fields(n: Node<'_, '_>, types: &[Type], start: usize) -> Result<Vec<Field>, String> {
    let mut offset = start;
    let mut fields = Vec::new();
    for f in n.children().filter(Node::is_element) {
        let tag = f.tag_name().name();
        if tag == "doc" {
            continue;
        }
        if tag != "field" && tag != "pad" {
            return Err(format!("{}: unexpected <{tag}>", place(n)));
        }
        let ty = field_type(f, types)?;
        let field = Field {
            name: attr(f, "name")?.into(),
            offset,
            doc: if tag == "pad" {
                "Must be zero.".into()
            } else {
                text_of(f)
            },
            ty,
        };
        offset += field.size();
        fields.push(field);
    }
    Ok(fields)
}

fn parse_composite(
    n: Node<'_, '_>,
    types: &[Type],
    start: usize,
    version: u8,
) -> Result<Composite, String> {
    let fields = parse_fields(n, types, start)?;
    let size = fields.last().map_or(start, |f| f.offset + f.size());
    Ok(Composite {
        version,
        fields,
        size,
    })
}

/// Bytes of the common header.
pub(crate) const HEADER_SIZE: usize = 8;

fn parse_message(n: Node<'_, '_>, types: &[Type], group: &str) -> Result<Message, String> {
    expect_tag(n, "message")?;
    let doc = n
        .children()
        .find(|c| c.has_tag_name("doc"))
        .map(text_of)
        .unwrap_or_default();
    let fields = parse_fields(n, types, HEADER_SIZE)?;
    let size = fields.last().map_or(HEADER_SIZE, |f| f.offset + f.size());
    Ok(Message {
        name: attr(n, "name")?.into(),
        msg_type: u8::try_from(int_attr(n, "type")?).map_err(|e| format!("{}: {e}", place(n)))?,
        version: int_attr(n, "version")? as u8,
        channels: attr(n, "channels")?
            .split_whitespace()
            .map(String::from)
            .collect(),
        rust_module: attr(n, "rust-module")?.into(),
        group: group.into(),
        report: n.attribute("report") == Some("true"),
        doc,
        fields,
        size,
    })
}

fn parse_reasons(n: Node<'_, '_>) -> Result<ReasonTable, String> {
    let mut reasons = Vec::new();
    let mut doc = String::new();
    for r in n.children().filter(Node::is_element) {
        if r.has_tag_name("doc") {
            doc = text_of(r);
            continue;
        }
        expect_tag(r, "reason")?;
        reasons.push(Reason {
            code: u16::try_from(int_attr(r, "value")?).map_err(|e| format!("{}: {e}", place(r)))?,
            name: attr(r, "name")?.into(),
            doc: text_of(r),
        });
    }
    Ok(ReasonTable {
        name: attr(n, "name")?.into(),
        carried_by: attr(n, "carried-by")?.into(),
        doc,
        reasons,
    })
}

/// The channels a message may name.
pub(crate) const CHANNELS: [&str; 5] = [
    "order-entry.in",
    "order-entry.out",
    "feed",
    "recovery.in",
    "recovery.out",
];

/// The three fields every exchange → client order-entry message starts with.
pub(crate) const COMMON_OUT: [&str; 3] = ["session_seq", "engine_seq", "engine_time"];

/// The rules of `protocol.xml`'s own comment, checked: any violation is an error.
fn check(s: &Schema) -> Result<(), String> {
    let mut errors = Vec::new();
    let mut names = BTreeSet::new();
    for t in &s.types {
        if !names.insert(t.name.clone()) {
            errors.push(format!("type {} declared twice", t.name));
        }
        if let Kind::Enum(p, values) = &t.kind {
            let mut seen = BTreeSet::new();
            for v in values {
                if v.value > p.max() || !seen.insert(v.value) {
                    errors.push(format!(
                        "{}: value {} repeated or too wide",
                        t.name, v.value
                    ));
                }
            }
            let nones = values.iter().filter(|v| v.none).count();
            let option = t.rust.as_ref().is_some_and(|r| r.option);
            if (nones == 1) != option {
                errors.push(format!(
                    "{}: a rust-option enum has exactly one none value",
                    t.name
                ));
            }
        }
    }
    let mut by_code: BTreeMap<u8, &str> = BTreeMap::new();
    let mut message_names = BTreeSet::new();
    for m in &s.messages {
        let at = format!("message {} (0x{:02X})", m.name, m.msg_type);
        if !message_names.insert(m.name.as_str()) {
            errors.push(format!("{at}: name used twice"));
        }
        if m.size > s.max_message_size {
            errors.push(format!("{at}: {} bytes exceed the cap", m.size));
        }
        if m.version == 0 || m.version > s.version {
            errors.push(format!("{at}: version {}", m.version));
        }
        if m.channels.is_empty() {
            errors.push(format!("{at}: no channel"));
        }
        for c in &m.channels {
            if !CHANNELS.contains(&c.as_str()) {
                errors.push(format!("{at}: unknown channel {c}"));
            }
        }
        if let Some(other) = by_code.insert(m.msg_type, &m.name) {
            errors.push(format!("{at}: type code also used by {other}"));
        }
        if m.on("order-entry.in") && m.msg_type >= 0x80 {
            errors.push(format!(
                "{at}: client → exchange codes have the top bit clear"
            ));
        }
        if m.on("order-entry.out") {
            if m.msg_type < 0x80 {
                errors.push(format!(
                    "{at}: exchange → client codes have the top bit set"
                ));
            }
            let first: Vec<&str> = m.fields.iter().take(3).map(|f| f.name.as_str()).collect();
            if first != COMMON_OUT {
                errors.push(format!("{at}: must start with {COMMON_OUT:?}"));
            }
        }
        if m.report
            && !(m.on("order-entry.out")
                && m.field("report_seq").is_some()
                && m.field("account").is_some())
        {
            errors.push(format!(
                "{at}: a report is an order-entry.out message with report_seq and account"
            ));
        }
        let mut field_names = BTreeSet::new();
        for f in &m.fields {
            if !field_names.insert(f.name.as_str()) {
                errors.push(format!("{at}: field {} twice", f.name));
            }
            if f.is_pad() != (f.name == "reserved") {
                errors.push(format!(
                    "{at}: field {}: padding is named `reserved`, and nothing else is",
                    f.name
                ));
            }
            let align = match &f.ty.kind {
                Kind::Int(p) | Kind::Enum(p, _) | Kind::Scope(p, _) => p.width(),
                _ => 1,
            };
            if f.offset % align != 0 {
                errors.push(format!(
                    "{at}: field {} at offset {} is not aligned to its {} bytes",
                    f.name, f.offset, align
                ));
            }
        }
    }
    for t in &s.reasons {
        let mut codes = BTreeSet::new();
        let mut rnames = BTreeSet::new();
        for r in &t.reasons {
            if r.code == 0 || !codes.insert(r.code) || !rnames.insert(r.name.as_str()) {
                errors.push(format!(
                    "{}: code {} ({}) zero or repeated",
                    t.name, r.code, r.name
                ));
            }
            let snake = r
                .name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
            if !snake || r.doc.is_empty() {
                errors.push(format!(
                    "{}: {} must be snake_case with a meaning",
                    t.name, r.name
                ));
            }
        }
    }
    for r in &s.retired {
        let live = s
            .messages
            .iter()
            .any(|m| m.msg_type == r.msg_type && m.version == r.version);
        if live {
            errors.push(format!("retired {} is still a live layout", r.name));
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(format!("protocol.xml:\n  {}", errors.join("\n  ")))
    }
}
