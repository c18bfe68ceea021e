//! Tag numbers used by Peregrine's FIX 4.4 dialect, and which tags belong to the
//! standard header and trailer.
#![allow(
    missing_docs,
    reason = "each constant is the FIX field of the same name"
)]

pub const BEGIN_STRING: u32 = 8;
pub const BODY_LENGTH: u32 = 9;
pub const CHECK_SUM: u32 = 10;
pub const MSG_TYPE: u32 = 35;
pub const SENDER_COMP_ID: u32 = 49;
pub const TARGET_COMP_ID: u32 = 56;
pub const MSG_SEQ_NUM: u32 = 34;
pub const SENDING_TIME: u32 = 52;
pub const POSS_DUP_FLAG: u32 = 43;
pub const POSS_RESEND: u32 = 97;
pub const ORIG_SENDING_TIME: u32 = 122;

// Session messages.
pub const ENCRYPT_METHOD: u32 = 98;
pub const HEART_BT_INT: u32 = 108;
pub const RESET_SEQ_NUM_FLAG: u32 = 141;
pub const USERNAME: u32 = 553;
pub const PASSWORD: u32 = 554;
pub const TEST_REQ_ID: u32 = 112;
pub const BEGIN_SEQ_NO: u32 = 7;
pub const END_SEQ_NO: u32 = 16;
pub const GAP_FILL_FLAG: u32 = 123;
pub const NEW_SEQ_NO: u32 = 36;
pub const REF_SEQ_NUM: u32 = 45;
pub const REF_TAG_ID: u32 = 371;
pub const REF_MSG_TYPE: u32 = 372;
pub const SESSION_REJECT_REASON: u32 = 373;
pub const TEXT: u32 = 58;

// Application messages.
pub const ACCOUNT: u32 = 1;
pub const AVG_PX: u32 = 6;
pub const CL_ORD_ID: u32 = 11;
pub const CUM_QTY: u32 = 14;
pub const EXEC_ID: u32 = 17;
pub const EXEC_INST: u32 = 18;
/// StopPx (99): a stop or stop-limit order's trigger price.
pub const STOP_PX: u32 = 99;
/// PegOffsetValue (211): a pegged or trailing order's offset.
pub const PEG_OFFSET_VALUE: u32 = 211;
/// PegMoveType (835): 0 floating (the peg follows the market), 1 fixed.
pub const PEG_MOVE_TYPE: u32 = 835;
/// PegOffsetType (836): 0 price, 1 basis points, 2 ticks, 3 price tier.
pub const PEG_OFFSET_TYPE: u32 = 836;
/// MaxFloor (111): the most of an order shown at a time (an iceberg).
pub const MAX_FLOOR: u32 = 111;
pub const LAST_PX: u32 = 31;
/// ExecRestatementReason (378).
pub const EXEC_RESTATEMENT_REASON: u32 = 378;
/// Commission (12): a fill's fee (Amt).
pub const COMMISSION: u32 = 12;
/// CommType (13): how Commission is given (3 = absolute).
pub const COMM_TYPE: u32 = 13;
pub const LAST_QTY: u32 = 32;
pub const ORDER_ID: u32 = 37;
pub const ORDER_QTY: u32 = 38;
pub const ORD_STATUS: u32 = 39;
pub const ORD_TYPE: u32 = 40;
pub const ORIG_CL_ORD_ID: u32 = 41;
pub const PRICE: u32 = 44;
pub const SIDE: u32 = 54;
pub const SYMBOL: u32 = 55;
pub const TIME_IN_FORCE: u32 = 59;
pub const TRANSACT_TIME: u32 = 60;
pub const CXL_REJ_REASON: u32 = 102;
pub const ORD_REJ_REASON: u32 = 103;
pub const EXPIRE_TIME: u32 = 126;
pub const EXEC_TYPE: u32 = 150;
pub const LEAVES_QTY: u32 = 151;
pub const CXL_REJ_RESPONSE_TO: u32 = 434;
pub const MASS_CANCEL_REQUEST_TYPE: u32 = 530;
pub const MASS_CANCEL_RESPONSE: u32 = 531;
pub const MASS_CANCEL_REJECT_REASON: u32 = 532;
pub const TOTAL_AFFECTED_ORDERS: u32 = 533;
pub const REF_SEQ_NUM_BIZ: u32 = 45;
pub const BUSINESS_REJECT_REF_ID: u32 = 379;
pub const BUSINESS_REJECT_REASON: u32 = 380;
pub const ORD_STATUS_REQ_ID: u32 = 790;
pub const MASS_STATUS_REQ_ID: u32 = 584;
/// Peregrine's self-trade prevention instruction, the tag FIX later standardised as
/// SelfMatchPreventionInstruction (see docs/fix.md for the values).
pub const SELF_MATCH_PREVENTION_INSTRUCTION: u32 = 2964;

/// Whether `tag` belongs to the FIX 4.4 standard header.
pub const fn is_header(tag: u32) -> bool {
    matches!(
        tag,
        8 | 9
            | 35
            | 49
            | 56
            | 115
            | 128
            | 90
            | 91
            | 50
            | 142
            | 57
            | 143
            | 116
            | 144
            | 129
            | 145
            | 34
            | 43
            | 97
            | 52
            | 122
            | 212
            | 213
            | 347
            | 369
            | 627
            | 628
            | 629
            | 630
    )
}

/// Whether `tag` belongs to the standard trailer.
pub const fn is_trailer(tag: u32) -> bool {
    matches!(tag, 93 | 89 | 10)
}

/// For a length field of a data field pair, the data field's tag: the data field's
/// value is exactly that many bytes and may contain SOH.
pub const fn data_field_of(length_tag: u32) -> Option<u32> {
    match length_tag {
        90 => Some(91),
        93 => Some(89),
        95 => Some(96),
        212 => Some(213),
        348 => Some(349),
        350 => Some(351),
        352 => Some(353),
        354 => Some(355),
        356 => Some(357),
        358 => Some(359),
        360 => Some(361),
        362 => Some(363),
        364 => Some(365),
        445 => Some(446),
        618 => Some(619),
        621 => Some(622),
        _ => None,
    }
}
