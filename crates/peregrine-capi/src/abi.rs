//! The C layout of the challenge's messages and reports (`api/matching_engine_api.h`
//! of flash1-dev/matching-engine-benchmark), field for field. Layout tests at the end
//! pin sizes and offsets to the header's.

use std::ffi::c_void;

/// A new limit order (`new_order_t`, 32 bytes).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NewOrderMsg {
    /// Client-chosen order id.
    pub order_id: u64,
    /// The message's sequence number (carried by every report it causes).
    pub sequence_number: u64,
    /// Limit price in integer ticks.
    pub price_ticks: i64,
    /// Quantity.
    pub quantity: u32,
    /// 0 buy, 1 sell.
    pub side: u8,
    /// 1: immediate-or-cancel.
    pub ioc: u8,
    /// Padding.
    pub reserved: [u8; 2],
}

/// A cancel (`cancel_t`, 16 bytes).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CancelMsg {
    /// The order to cancel.
    pub order_id: u64,
    /// The message's sequence number.
    pub sequence_number: u64,
}

/// A modify (`modify_t`, 32 bytes): cancel + reinsert at a new price and quantity.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ModifyMsg {
    /// The order to modify.
    pub order_id: u64,
    /// The message's sequence number.
    pub sequence_number: u64,
    /// New limit price in ticks.
    pub new_price_ticks: i64,
    /// New open quantity.
    pub new_quantity: u32,
    /// The order's side, 0 buy, 1 sell.
    pub side: u8,
    /// Padding.
    pub reserved: [u8; 3],
}

/// The payload of a tagged message; `MsgTagged::kind` says which arm is live.
#[repr(C)]
#[derive(Clone, Copy)]
pub union MsgBody {
    /// `kind` 0.
    pub new_order: NewOrderMsg,
    /// `kind` 1.
    pub cancel: CancelMsg,
    /// `kind` 2.
    pub modify: ModifyMsg,
}

impl core::fmt::Debug for MsgBody {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("MsgBody { .. }")
    }
}

/// One element of a batch (`me_msg_t`, 40 bytes).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct TaggedMsg {
    /// 0 new order, 1 cancel, 2 modify.
    pub kind: u8,
    /// Padding.
    pub reserved: [u8; 7],
    /// The message.
    pub body: MsgBody,
}

impl core::fmt::Debug for TaggedMsg {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("TaggedMsg")
            .field("kind", &self.kind)
            .finish()
    }
}

/// The six report kinds (`me_report_type_t`).
#[repr(u8)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReportKind {
    /// One per accepted new order.
    OrderAck = 0,
    /// One per fill, at the maker's price, with the aggressor's sequence number.
    Trade = 1,
    /// One per successful cancel and one per IOC residual.
    CancelAck = 2,
    /// One per successful modify.
    ModifyAck = 3,
    /// A cancel of an order that is not resting.
    CancelReject = 4,
    /// A modify of an order that is not resting.
    ModifyReject = 5,
}

/// A report (`me_report_t`, 64 bytes, one cache line).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Report {
    /// A [`ReportKind`] value.
    pub kind: u8,
    /// The originating order's side (0 buy, 1 sell), where meaningful.
    pub side: u8,
    /// Padding.
    pub reserved: [u8; 6],
    /// The sequence number of the message that caused the report (for a trade, the
    /// aggressor's).
    pub sequence_number: u64,
    /// The order the report concerns (for a trade, the taker).
    pub order_id: u64,
    /// Price in ticks (a trade: the maker's resting price).
    pub price_ticks: i64,
    /// Quantity.
    pub quantity: u32,
    /// Padding.
    pub reserved2: u32,
    /// Trades only: the resting order.
    pub maker_order_id: u64,
    /// Trades only: the incoming order.
    pub taker_order_id: u64,
    /// Padding to 64 bytes.
    pub reserved3: u64,
}

/// The report transport the caller hands to `engine_init` (`me_transport_t`): a
/// queue of reports with C function pointers.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct Transport {
    /// Creates a queue of at least `capacity` reports.
    pub create: Option<unsafe extern "C" fn(capacity: u32) -> *mut c_void>,
    /// Enqueues one report: 1 on success, 0 when full.
    pub push: Option<unsafe extern "C" fn(handle: *mut c_void, report: *const Report) -> i32>,
    /// Dequeues up to `max` reports (consumer side).
    pub drain: Option<unsafe extern "C" fn(handle: *mut c_void, out: *mut Report, max: u32) -> u32>,
    /// Publishes buffered writes.
    pub flush: Option<unsafe extern "C" fn(handle: *mut c_void)>,
    /// Destroys a queue.
    pub destroy: Option<unsafe extern "C" fn(handle: *mut c_void)>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    #[test]
    fn sizes_match_the_header() {
        assert_eq!(size_of::<NewOrderMsg>(), 32);
        assert_eq!(size_of::<CancelMsg>(), 16);
        assert_eq!(size_of::<ModifyMsg>(), 32);
        assert_eq!(size_of::<TaggedMsg>(), 40);
        assert_eq!(size_of::<Report>(), 64);
        assert_eq!(size_of::<Transport>(), 5 * size_of::<usize>());
    }

    #[test]
    fn offsets_match_the_header() {
        assert_eq!(offset_of!(NewOrderMsg, price_ticks), 16);
        assert_eq!(offset_of!(NewOrderMsg, quantity), 24);
        assert_eq!(offset_of!(NewOrderMsg, side), 28);
        assert_eq!(offset_of!(NewOrderMsg, ioc), 29);
        assert_eq!(offset_of!(ModifyMsg, new_price_ticks), 16);
        assert_eq!(offset_of!(ModifyMsg, new_quantity), 24);
        assert_eq!(offset_of!(ModifyMsg, side), 28);
        assert_eq!(offset_of!(TaggedMsg, body), 8);
        assert_eq!(offset_of!(Report, sequence_number), 8);
        assert_eq!(offset_of!(Report, order_id), 16);
        assert_eq!(offset_of!(Report, price_ticks), 24);
        assert_eq!(offset_of!(Report, quantity), 32);
        assert_eq!(offset_of!(Report, maker_order_id), 40);
        assert_eq!(offset_of!(Report, taker_order_id), 48);
    }
}
