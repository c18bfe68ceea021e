//! One message against the dictionary: one pass over the body, nothing allocated.

use crate::codec::time::is_utc_timestamp;
use crate::codec::value::parse_u64;
use crate::codec::{FieldError, Message};

use super::tables::{TagSet, ENUM_MASKS, MESSAGE_SETS, NO_ENUM, TAGS};
use super::{
    classify_msg_type, defined_in, enum_list, enum_values, field_type, message_def_at, FieldType,
    GroupDef, Validation, MAX_TAG,
};

/// Why a message fails the dictionary; each maps to one SessionRejectReason.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Violation {
    /// MsgType is not a FIX 4.4 MsgType (reason 11).
    InvalidMsgType,
    /// A field cannot be read (the codec's error: reasons 0, 4, 6).
    Field(FieldError),
    /// The tag is not a FIX 4.4 field (reason 0).
    InvalidTag(u32),
    /// The tag is a FIX 4.4 field, not one of this message type (reason 2).
    NotDefinedForMessage(u32),
    /// The value is not of the field's type (reason 6).
    Format(u32),
    /// The value is not one of the field's enumerated values (reason 5).
    Value(u32),
    /// The tag appears twice outside a repeating group (reason 13).
    Repeated(u32),
    /// A group entry does not start with the group's first field (reason 15).
    GroupOrder(u32),
    /// A group's NumInGroup does not match its entries (reason 16; the count tag).
    GroupCount(u32),
    /// A required field is missing (reason 1).
    Missing(u32),
}

impl Violation {
    /// The tag at fault, if any (RefTagID).
    pub fn tag(self) -> Option<i64> {
        match self {
            Violation::InvalidMsgType => None,
            Violation::Field(e) => e.ref_tag_id(),
            Violation::InvalidTag(t)
            | Violation::NotDefinedForMessage(t)
            | Violation::Format(t)
            | Violation::Value(t)
            | Violation::Repeated(t)
            | Violation::GroupOrder(t)
            | Violation::GroupCount(t)
            | Violation::Missing(t) => Some(i64::from(t)),
        }
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

/// Checks `msg` against the dictionary (see the module docs of `dict`): one pass
/// over the body, each field checked by table lookups (`dict::tables`).
pub fn validate(msg: &Message<'_>, v: &Validation) -> Result<(), Violation> {
    if !v.use_data_dictionary {
        return Ok(());
    }
    let Some(layout) = classify_msg_type(msg.msg_type()) else {
        return Err(Violation::InvalidMsgType);
    };
    let layout = layout.map(|i| (message_def_at(i), &MESSAGE_SETS[i]));
    // Tags seen outside groups, and Peregrine's extension tag.
    let (mut seen, mut extension_seen) = (TagSet::EMPTY, false);
    let mut open = [None::<Open>; MAX_DEPTH];
    let mut depth = 0;
    for field in msg.fields() {
        let f = field.map_err(Violation::Field)?;
        let tag = f.tag;
        let (ty, enumeration) = match TAGS.get(tag as usize) {
            // Header and trailer fields: read by the header view (out of place
            // only when allowed).
            Some(info) if info.skip => continue,
            Some(info) => (info.ty, info.enumeration),
            None => (field_type(tag), NO_ENUM),
        };
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
        let valid = if enumeration != NO_ENUM {
            in_enum_at(ty, usize::from(enumeration), f.value)
        } else if tag > MAX_TAG {
            enum_values(tag).is_none_or(|values| in_enum(ty, values, f.value))
        } else {
            true
        };
        if !valid {
            return Err(Violation::Value(tag));
        }
        let Some((def, sets)) = layout else { continue };
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
            let defined = if tag <= MAX_TAG {
                sets.fields.contains(tag)
            } else {
                defined_in(def, tag)
            };
            if !defined {
                if v.allow_unknown_message_fields {
                    continue;
                }
                return Err(Violation::NotDefinedForMessage(tag));
            }
            let fresh = if tag <= MAX_TAG {
                seen.insert(tag)
            } else {
                !std::mem::replace(&mut extension_seen, true)
            };
            if !fresh {
                return Err(Violation::Repeated(tag));
            }
        }
        if sets.counts.contains(tag) {
            let group = def
                .groups
                .iter()
                .find(|g| g.count == tag)
                .expect("a count tag of the message's groups");
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
    if let Some((def, sets)) = layout {
        if !sets.required.within(&seen) {
            // The first missing one in the standard's order.
            let missing = def.required.iter().find(|&&t| !seen.contains(t));
            return Err(Violation::Missing(
                *missing.expect("a required tag not seen"),
            ));
        }
    }
    Ok(())
}

/// Whether `v` is a value of the enumeration `fix44::ENUMS[i]`: a bit test when its
/// values are single characters, else a search.
#[inline]
fn in_enum_at(ty: FieldType, i: usize, v: &[u8]) -> bool {
    let mask = ENUM_MASKS[i];
    if mask == 0 {
        return in_enum(ty, enum_list(i), v);
    }
    let one = |x: &[u8]| matches!(x, [b] if *b < 128 && mask & (1u128 << *b) != 0);
    match ty {
        FieldType::MultipleValue => v.split(|&b| b == b' ').all(one),
        _ => one(v),
    }
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

/// Whether `v` is well formed for `ty` (FIX 4.4's data types).
pub(crate) fn format_ok(ty: FieldType, v: &[u8]) -> bool {
    match ty {
        FieldType::Undefined | FieldType::Str | FieldType::MultipleValue | FieldType::Data => true,
        FieldType::Int => digits(v.strip_prefix(b"-").unwrap_or(v)),
        FieldType::Length | FieldType::NumInGroup | FieldType::SeqNum => digits(v),
        FieldType::Float => float(v),
        FieldType::Char => v.len() == 1,
        FieldType::Boolean => v == b"Y" || v == b"N",
        FieldType::MonthYear => month_year(v),
        FieldType::UtcTimestamp => is_utc_timestamp(v),
        FieldType::UtcTimeOnly => time_only(v),
        FieldType::Date => date(v),
    }
}

fn digits(v: &[u8]) -> bool {
    !v.is_empty() && v.iter().all(u8::is_ascii_digit)
}

/// An optional `-`, digits with at most one `.`, at least one digit.
fn float(v: &[u8]) -> bool {
    let v = v.strip_prefix(b"-").unwrap_or(v);
    let mut dots = 0;
    let mut any = false;
    for &b in v {
        match b {
            b'0'..=b'9' => any = true,
            b'.' => dots += 1,
            _ => return false,
        }
    }
    any && dots <= 1
}

fn number(v: &[u8]) -> Option<u32> {
    v.iter().try_fold(0u32, |acc, &b| {
        b.is_ascii_digit().then(|| acc * 10 + u32::from(b - b'0'))
    })
}

/// `YYYYMMDD` with a real month and a day 1..=31.
fn date(v: &[u8]) -> bool {
    v.len() == 8 && year_month(&v[..6]) && number(&v[6..]).is_some_and(|d| (1..=31).contains(&d))
}

fn year_month(v: &[u8]) -> bool {
    number(&v[..4]).is_some() && number(&v[4..6]).is_some_and(|m| (1..=12).contains(&m))
}

/// `YYYYMM`, `YYYYMMDD`, or `YYYYMMwN` (week 1..=5).
fn month_year(v: &[u8]) -> bool {
    match v.len() {
        6 => year_month(v),
        8 if v[6] == b'w' => year_month(&v[..6]) && (b'1'..=b'5').contains(&v[7]),
        8 => date(v),
        _ => false,
    }
}

/// `HH:MM:SS` or `HH:MM:SS.sss`.
fn time_only(v: &[u8]) -> bool {
    let hms = v.len() >= 8
        && v[2] == b':'
        && v[5] == b':'
        && number(&v[..2]).is_some_and(|h| h < 24)
        && number(&v[3..5]).is_some_and(|m| m < 60)
        && number(&v[6..8]).is_some_and(|s| s <= 60);
    hms && match v.len() {
        8 => true,
        12 => v[8] == b'.' && number(&v[9..]).is_some(),
        _ => false,
    }
}
