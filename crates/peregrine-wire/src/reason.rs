//! The reason-code tables: what each `u16 ReasonCode` means, per message that carries
//! one, generated from the tables of `schema/protocol.xml` (a new code is a new
//! `<reason>` line there). The exchange sends these values and nothing else;
//! `docs/protocol.md` renders its tables from the same schema.
//!
//! | Table | Carried by |
//! |---|---|
//! | [`RejectCode`] | `Rejected.reason`, `CancelRejected.reason` |
//! | [`CancelCode`] | `Cancelled.reason` |
//! | [`LoginCode`] | `LoginRejected.reason` |
//! | [`RecoveryCode`] | `ReplayStart.reason` (order entry); `ReplayResponse.reason`, `SnapshotHeader.reason`, `InstrumentList.reason` (recovery channel) |
//! | [`AdminCode`] | `AdminRejected.reason` |
//! | [`DisconnectCode`] | `Disconnect.reason` |
//!
//! `0` is never in a table: it means "no reason / success". A client must treat a code
//! it does not know as an opaque reason (tables may grow without a version change).

use crate::field::ReasonCode;

/// One row of a reason-code table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReasonEntry {
    /// The wire value.
    pub code: u16,
    /// A short snake_case name, for logs and metrics labels.
    pub name: &'static str,
    /// What it means, for the documentation.
    pub meaning: &'static str,
}

/// One table: its title and rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReasonTable {
    /// The enum's name.
    pub name: &'static str,
    /// Which fields carry it.
    pub carried_by: &'static str,
    /// The rows, by code.
    pub entries: &'static [ReasonEntry],
}

/// Declares a reason-code enum, its table and conversions.
macro_rules! reason_table {
    (
        $(#[doc = $doc:literal])+
        $name:ident, carried by $carried:literal {
            $( $(#[doc = $vdoc:literal])+ $variant:ident = $code:literal, $label:literal, )+
        }
    ) => {
        $(#[doc = $doc])+
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[repr(u16)]
        pub enum $name {
            $( $(#[doc = $vdoc])+ $variant = $code, )+
        }

        impl $name {
            /// Every code, in table order.
            pub const ALL: &'static [$name] = &[ $( $name::$variant ),+ ];

            /// The table, for documentation and tests.
            pub const TABLE: ReasonTable = ReasonTable {
                name: stringify!($name),
                carried_by: $carried,
                entries: &[ $( ReasonEntry {
                    code: $code,
                    name: $label,
                    meaning: concat!($($vdoc),+),
                } ),+ ],
            };

            /// The wire value.
            pub const fn code(self) -> u16 {
                self as u16
            }

            /// The wire field.
            pub const fn reason(self) -> ReasonCode {
                ReasonCode(self as u16)
            }

            /// The code for a wire value, if the table has it.
            pub fn from_code(code: u16) -> Option<$name> {
                Self::ALL.iter().copied().find(|c| c.code() == code)
            }

            /// The short name.
            pub const fn name(self) -> &'static str {
                match self {
                    $( $name::$variant => $label, )+
                }
            }
        }

        impl From<$name> for ReasonCode {
            fn from(c: $name) -> ReasonCode {
                c.reason()
            }
        }
    };
}

include!(concat!(env!("OUT_DIR"), "/reasons.rs"));

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_non_zero_and_round_trip() {
        for t in TABLES {
            let mut codes: Vec<u16> = t.entries.iter().map(|e| e.code).collect();
            let mut names: Vec<&str> = t.entries.iter().map(|e| e.name).collect();
            assert!(
                codes.iter().all(|&c| c != 0),
                "{}: 0 means no reason",
                t.name
            );
            codes.sort_unstable();
            codes.dedup();
            names.sort_unstable();
            names.dedup();
            assert_eq!(codes.len(), t.entries.len(), "{}", t.name);
            assert_eq!(names.len(), t.entries.len(), "{}", t.name);
            assert!(t.entries.iter().all(|e| !e.meaning.is_empty()));
        }
        for c in RejectCode::ALL {
            assert_eq!(RejectCode::from_code(c.code()), Some(*c));
        }
        assert_eq!(RejectCode::from_code(0), None);
        assert_eq!(LoginCode::Throttled.reason(), ReasonCode(2));
        assert_eq!(CancelCode::Expired.name(), "expired");
    }
}
