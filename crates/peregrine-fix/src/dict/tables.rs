//! Lookup tables built at compile time from the generated dictionary (`fix44`), so
//! that validating a field is array indexing and bit tests, not searches: per tag
//! its type, whether the header view reads it, and its enumeration (a 128-bit mask
//! when every value is one character); per validated MsgType the tags it allows
//! outside groups, its group count tags and its required tags as bit sets; and the
//! one-character MsgTypes by byte.

use super::{fix44, FieldType, MessageDef, MAX_TAG};
use crate::codec::tags::{is_header, is_trailer};

const WORDS: usize = MAX_TAG as usize / 64 + 1;

/// A set of FIX 4.4 tags (1..=`MAX_TAG`), one bit each.
#[derive(Clone, Copy)]
pub(crate) struct TagSet([u64; WORDS]);

impl TagSet {
    pub(crate) const EMPTY: TagSet = TagSet([0; WORDS]);

    const fn with(mut self, tag: u32) -> TagSet {
        self.0[(tag / 64) as usize] |= 1 << (tag % 64);
        self
    }

    /// Adds `tag`; false if it was there already.
    #[inline]
    pub(crate) fn insert(&mut self, tag: u32) -> bool {
        let (w, b) = ((tag / 64) as usize, tag % 64);
        let fresh = self.0[w] & (1 << b) == 0;
        self.0[w] |= 1 << b;
        fresh
    }

    #[inline]
    pub(crate) fn contains(&self, tag: u32) -> bool {
        tag <= MAX_TAG && self.0[(tag / 64) as usize] & (1 << (tag % 64)) != 0
    }

    /// Whether every tag of `self` is in `other`.
    #[inline]
    pub(crate) fn within(&self, other: &TagSet) -> bool {
        let mut i = 0;
        while i < WORDS {
            if self.0[i] & !other.0[i] != 0 {
                return false;
            }
            i += 1;
        }
        true
    }
}

/// No enumeration.
pub(crate) const NO_ENUM: u8 = u8::MAX;

/// What validation needs of one tag.
#[derive(Clone, Copy)]
pub(crate) struct TagInfo {
    pub ty: FieldType,
    /// A header or trailer field (read by the header view, skipped here).
    pub skip: bool,
    /// Index into `fix44::ENUMS`, or [`NO_ENUM`].
    pub enumeration: u8,
}

/// Every tag 0..=`MAX_TAG`.
pub(crate) static TAGS: [TagInfo; MAX_TAG as usize + 1] = tags();

const fn tags() -> [TagInfo; MAX_TAG as usize + 1] {
    let mut t = [TagInfo {
        ty: FieldType::Undefined,
        skip: false,
        enumeration: NO_ENUM,
    }; MAX_TAG as usize + 1];
    let mut tag = 0;
    while tag <= MAX_TAG as usize {
        t[tag].ty = fix44::FIELD_TYPES[tag];
        t[tag].skip = is_header(tag as u32) || is_trailer(tag as u32);
        tag += 1;
    }
    assert!(fix44::ENUMS.len() < NO_ENUM as usize);
    let mut i = 0;
    while i < fix44::ENUMS.len() {
        t[fix44::ENUMS[i].0 as usize].enumeration = i as u8;
        i += 1;
    }
    t
}

/// For each enumeration of `fix44::ENUMS`: the mask of its values if every one is a
/// single ASCII character (bit = the byte), else 0 (checked by search).
pub(crate) static ENUM_MASKS: [u128; fix44::ENUMS.len()] = enum_masks();

const fn enum_masks() -> [u128; fix44::ENUMS.len()] {
    let mut m = [0u128; fix44::ENUMS.len()];
    let mut i = 0;
    while i < fix44::ENUMS.len() {
        let values = fix44::ENUMS[i].1;
        let mut mask = 0u128;
        let mut j = 0;
        while j < values.len() {
            let v = values[j];
            if v.len() != 1 || v[0] >= 128 {
                mask = 0;
                break;
            }
            mask |= 1 << v[0];
            j += 1;
        }
        m[i] = mask;
        i += 1;
    }
    m
}

/// A validated message's layout as bit sets.
pub(crate) struct MessageSets {
    /// Tags allowed outside any repeating group.
    pub fields: TagSet,
    /// The count tags of its repeating groups.
    pub counts: TagSet,
    /// Tags that must be present.
    pub required: TagSet,
}

pub(crate) static MESSAGE_SETS: [MessageSets; fix44::MESSAGES.len()] = message_sets();

const fn set_of(tags: &[u32]) -> TagSet {
    let mut s = TagSet::EMPTY;
    let mut i = 0;
    while i < tags.len() {
        s = s.with(tags[i]);
        i += 1;
    }
    s
}

const fn message_sets() -> [MessageSets; fix44::MESSAGES.len()] {
    const E: MessageSets = MessageSets {
        fields: TagSet::EMPTY,
        counts: TagSet::EMPTY,
        required: TagSet::EMPTY,
    };
    let mut out = [E; fix44::MESSAGES.len()];
    let mut i = 0;
    while i < fix44::MESSAGES.len() {
        let m: &MessageDef = &fix44::MESSAGES[i];
        let mut counts = TagSet::EMPTY;
        let mut g = 0;
        while g < m.groups.len() {
            counts = counts.with(m.groups[g].count);
            g += 1;
        }
        out[i] = MessageSets {
            fields: set_of(m.fields),
            counts,
            required: set_of(m.required),
        };
        i += 1;
    }
    out
}

/// A one-character MsgType: 0 not one, 1 a MsgType not validated field by field,
/// 2 + i the validated message `fix44::MESSAGES[i]`.
pub(crate) static ONE_CHAR_MSG_TYPES: [u8; 128] = one_char_msg_types();

const fn one_char_msg_types() -> [u8; 128] {
    let mut t = [0u8; 128];
    let mut i = 0;
    while i < fix44::MSG_TYPES.len() {
        let m = fix44::MSG_TYPES[i];
        if m.len() == 1 {
            t[m[0] as usize] = 1;
        }
        i += 1;
    }
    let mut i = 0;
    while i < fix44::MESSAGES.len() {
        let m = fix44::MESSAGES[i].msg_type;
        assert!(m.len() == 1 && t[m[0] as usize] == 1);
        t[m[0] as usize] = 2 + i as u8;
        i += 1;
    }
    t
}
