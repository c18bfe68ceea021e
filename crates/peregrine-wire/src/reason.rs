//! The reason-code tables: what each `u16 ReasonCode` means, per message that carries
//! one. The exchange sends these values and nothing else; `docs/protocol.md` renders
//! its tables from these declarations (the `spec` module), and a test fails if the two
//! drift apart.
//!
//! | Table | Carried by |
//! |---|---|
//! | [`RejectCode`] | `Rejected.reason`, `CancelRejected.reason` |
//! | [`CancelCode`] | `Cancelled.reason` |
//! | [`LoginCode`] | `LoginRejected.reason` |
//! | [`RecoveryCode`] | `ReplayStart.reason` (order entry); `ReplayResponse.reason`, `SnapshotHeader.reason`, `InstrumentList.reason` (recovery channel) |
//! | [`AdminCode`] | `AdminRejected.reason` |
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

reason_table! {
    /// Why a request was refused: `Rejected` (a `NewOrder`) and `CancelRejected` (a
    /// `Cancel`, `Replace` or `MassCancel`). Codes 1..=17 are the matching engine's
    /// (`peregrine_book::RejectReason`, same values).
    RejectCode, carried by "`Rejected.reason`, `CancelRejected.reason`" {
        /// Quantity zero or negative.
        InvalidQty = 1, "invalid_qty",
        /// Price zero or negative.
        InvalidPrice = 2, "invalid_price",
        /// Price not a multiple of the tick size.
        PriceOffTick = 3, "price_off_tick",
        /// Price outside the instrument's band.
        PriceOutOfBand = 4, "price_out_of_band",
        /// Quantity not a multiple of the lot size.
        QtyOffLot = 5, "qty_off_lot",
        /// Quantity below the instrument minimum.
        QtyBelowMin = 6, "qty_below_min",
        /// Quantity above the instrument maximum.
        QtyAboveMax = 7, "qty_above_max",
        /// No such instrument.
        UnknownInstrument = 8, "unknown_instrument",
        /// The instrument is halted: new orders and replaces are refused.
        InstrumentHalted = 9, "instrument_halted",
        /// No live order of the session's account has this id: it never existed, is
        /// done, or belongs to another account (all three get this code, so order ids
        /// cannot be probed).
        UnknownOrder = 10, "unknown_order",
        /// Not sent since version 2 (an order of another account is answered 10).
        NotOwner = 11, "not_owner",
        /// A live order already has this exchange id (internal; not expected).
        DuplicateOrderId = 12, "duplicate_order_id",
        /// The book's order arena is full: it cannot hold another resting order.
        BookFull = 13, "book_full",
        /// A post-only order (or a replace of one) would take liquidity.
        PostOnlyWouldTake = 14, "post_only_would_take",
        /// Time in force not allowed for the order type (market GTC, post-only IOC, ...).
        InvalidTif = 15, "invalid_tif",
        /// GTD expiry not after the command time, or an expiry on a non-GTD order.
        InvalidExpiry = 16, "invalid_expiry",
        /// The account's available balance cannot cover the order.
        InsufficientBalance = 17, "insufficient_balance",
        /// The session is a drop copy: read-only, it may not enter or change orders.
        ReadOnlySession = 18, "read_only_session",
        /// The exchange is at capacity: the commands it executed and has not yet made
        /// durable (on a cluster: replicated to a majority) exceed its limit in number
        /// or in age. Nothing was entered and nothing is journaled (`report_seq` 0);
        /// send again after a short wait (start at 10 ms and back off). A `Cancel` or
        /// `MassCancel` is refused only at twice the limit.
        Busy = 19, "busy",
    }
}

reason_table! {
    /// Why an order (or its rest) left the book without trading: `Cancelled`.
    CancelCode, carried by "`Cancelled.reason`" {
        /// The owner asked (`Cancel`).
        UserRequested = 1, "user_requested",
        /// A `MassCancel`.
        MassCancel = 2, "mass_cancel",
        /// The rest of an IOC or market order that could not trade at once.
        Unfilled = 3, "unfilled",
        /// A FOK order that could not fill completely: nothing traded.
        FokUnfillable = 4, "fok_unfillable",
        /// Self-trade prevention.
        SelfTrade = 5, "self_trade",
        /// A GTD order reached its expiry.
        Expired = 6, "expired",
    }
}

reason_table! {
    /// Why a login failed: `LoginRejected`. The exchange closes the connection after
    /// it.
    LoginCode, carried by "`LoginRejected.reason`" {
        /// Unknown account or a proof that does not verify: the same answer for both,
        /// so accounts cannot be probed.
        BadCredentials = 1, "bad_credentials",
        /// Too many failed logins for this account or from this address: wait
        /// `retry_after_ms` (the delay doubles with each failure, up to a cap).
        Throttled = 2, "throttled",
        /// A version-1 `Login` (a password on the wire): use the version-2 login.
        UnsupportedVersion = 3, "unsupported_version",
        /// The exchange has no free session slot for a logged-in session.
        SessionLimit = 4, "session_limit",
        /// No `Login` arrived within the login timeout of the connection.
        LoginTimeout = 5, "login_timeout",
        /// The proof verified, but the account may not open this session: a drop
        /// copy of another account or of every account needs an operator account, and
        /// a trading session must name its own account as `target`.
        NotPermitted = 6, "not_permitted",
    }
}

reason_table! {
    /// Why a recovery request was answered with less than was asked: a report replay
    /// at login (`ReplayStart`), or a feed replay, snapshot or instrument list on the
    /// recovery channel.
    RecoveryCode, carried by "`ReplayStart.reason`, `ReplayResponse.reason`, `SnapshotHeader.reason`, `InstrumentList.reason`" {
        /// The range is not retained: older than retention (at login, an open-orders
        /// snapshot follows instead), not sent yet, or replay is off.
        NotRetained = 1, "not_retained",
        /// No such instrument.
        UnknownInstrument = 2, "unknown_instrument",
        /// The request names another feed session (the exchange restarted).
        OtherSession = 3, "other_session",
        /// The login asked for report sequence numbers beyond the last one the
        /// exchange has: the client holds reports the exchange does not (it lost
        /// them, or the client confused accounts). An open-orders snapshot follows.
        AheadOfStream = 4, "ahead_of_stream",
    }
}

reason_table! {
    /// Why a balance request was refused: `AdminRejected`.
    AdminCode, carried by "`AdminRejected.reason`" {
        /// Not an admin session (or a query about another account).
        NotAdmin = 1, "not_admin",
        /// Balances are off on this exchange.
        BalancesOff = 2, "balances_off",
        /// Unknown asset.
        UnknownAsset = 3, "unknown_asset",
        /// Unknown account.
        UnknownAccount = 4, "unknown_account",
        /// The amount is not positive.
        BadAmount = 5, "bad_amount",
        /// Insufficient available balance (funds reserved by open orders are never
        /// withdrawn).
        InsufficientBalance = 6, "insufficient_balance",
    }
}

/// Every table, in documentation order.
pub const TABLES: [ReasonTable; 5] = [
    RejectCode::TABLE,
    CancelCode::TABLE,
    LoginCode::TABLE,
    RecoveryCode::TABLE,
    AdminCode::TABLE,
];

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
