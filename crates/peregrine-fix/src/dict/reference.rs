//! The validation as first written (searches per field: `message_def`, binary
//! searches of the layouts and enumerations), kept for the tests: the table-driven
//! [`super::validate`] must give the same verdict on every message
//! (`dict::tests::prop_the_table_driven_validation_equals_the_reference`).

use crate::codec::tags::{is_header, is_trailer};
use crate::codec::value::parse_u64;
use crate::codec::Message;

use super::validate::{format_ok, Violation};
use super::{
    defined_in, enum_values, field_type, is_msg_type, message_def, FieldType, GroupDef, Validation,
    MAX_TAG,
};

/// Tags seen outside groups: one bit per FIX 4.4 tag, one for Peregrine's extension.
struct Seen {
    bits: [u64; (MAX_TAG as usize) / 64 + 1],
    extension: bool,
}

impl Seen {
    fn insert(&mut self, tag: u32) -> bool {
        if tag > MAX_TAG {
            return !std::mem::replace(&mut self.extension, true);
        }
        let (w, b) = ((tag / 64) as usize, tag % 64);
        let fresh = self.bits[w] & (1 << b) == 0;
        self.bits[w] |= 1 << b;
        fresh
    }

    fn contains(&self, tag: u32) -> bool {
        tag <= MAX_TAG && self.bits[(tag / 64) as usize] & (1 << (tag % 64)) != 0
    }
}

/// An open repeating group: its definition, the count declared, the entries so far.
#[derive(Clone, Copy)]
struct Open {
    group: &'static GroupDef,
    declared: u64,
    entries: u64,
}

/// How deep groups nest in the validated messages (Parties → PartySubIDs is 2).
const MAX_DEPTH: usize = 4;

/// Checks `msg` against the dictionary (see the module docs of `dict`).
pub(crate) fn validate(msg: &Message<'_>, v: &Validation) -> Result<(), Violation> {
    if !v.use_data_dictionary {
        return Ok(());
    }
    let msg_type = msg.msg_type();
    if !is_msg_type(msg_type) {
        return Err(Violation::InvalidMsgType);
    }
    let def = message_def(msg_type);
    let mut seen = Seen {
        bits: [0; (MAX_TAG as usize) / 64 + 1],
        extension: false,
    };
    let mut open = [None::<Open>; MAX_DEPTH];
    let mut depth = 0;
    for field in msg.fields() {
        let f = field.map_err(Violation::Field)?;
        let tag = f.tag;
        if is_header(tag) || is_trailer(tag) {
            continue; // read by the header view (out of place only when allowed)
        }
        let ty = field_type(tag);
        if ty == FieldType::Undefined {
            let refuse = if tag >= 5000 {
                v.user_defined_fields
            } else {
                !v.allow_unknown_message_fields
            };
            if refuse {
                return Err(Violation::InvalidTag(tag));
            }
            continue;
        }
        if !format_ok(ty, f.value) {
            return Err(Violation::Format(tag));
        }
        if let Some(values) = enum_values(tag) {
            if !in_enum(ty, values, f.value) {
                return Err(Violation::Value(tag));
            }
        }
        let Some(def) = def else { continue };
        // Inside the innermost open group that has this tag; groups it closes must
        // have had their declared number of entries.
        let mut in_group = false;
        while depth > 0 {
            let g = open[depth - 1].as_mut().expect("open below depth");
            if g.group.members.binary_search(&tag).is_ok() {
                if tag == g.group.delimiter {
                    g.entries += 1;
                    if g.entries > g.declared {
                        return Err(Violation::GroupCount(g.group.count));
                    }
                } else if g.entries == 0 {
                    return Err(Violation::GroupOrder(tag));
                }
                in_group = true;
                break;
            }
            if g.entries != g.declared {
                return Err(Violation::GroupCount(g.group.count));
            }
            depth -= 1;
        }
        if !in_group {
            if !defined_in(def, tag) {
                if v.allow_unknown_message_fields {
                    continue;
                }
                return Err(Violation::NotDefinedForMessage(tag));
            }
            if !seen.insert(tag) {
                return Err(Violation::Repeated(tag));
            }
        }
        if let Some(group) = def.groups.iter().find(|g| g.count == tag) {
            if depth == MAX_DEPTH {
                return Err(Violation::GroupCount(tag));
            }
            let declared = parse_u64(f.value).ok_or(Violation::Format(tag))?;
            open[depth] = Some(Open {
                group,
                declared,
                entries: 0,
            });
            depth += 1;
        }
    }
    for g in open[..depth].iter().flatten() {
        if g.entries != g.declared {
            return Err(Violation::GroupCount(g.group.count));
        }
    }
    if let Some(def) = def {
        if let Some(&missing) = def.required.iter().find(|&&t| !seen.contains(t)) {
            return Err(Violation::Missing(missing));
        }
    }
    Ok(())
}

/// Whether `v` is a value of `values` (each space-separated value, for a
/// MultipleValueString).
fn in_enum(ty: FieldType, values: &[&[u8]], v: &[u8]) -> bool {
    let one = |x: &[u8]| values.binary_search(&x).is_ok();
    match ty {
        FieldType::MultipleValue => v.split(|&b| b == b' ').all(one),
        _ => one(v),
    }
}
