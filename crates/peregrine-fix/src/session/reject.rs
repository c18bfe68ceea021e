//! SessionRejectReason (373) and what each malformed input maps to.

use crate::codec::FieldError;
use crate::dict::Violation;

/// FIX 4.4 SessionRejectReason values Peregrine sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u16)]
pub enum SessionRejectReason {
    /// 0: the tag is not a number.
    InvalidTagNumber = 0,
    /// 1: a required tag is missing.
    RequiredTagMissing = 1,
    /// 2: a FIX 4.4 tag that this message type does not have.
    TagNotDefinedForMsgType = 2,
    /// 4: `tag=` with no value.
    TagWithoutValue = 4,
    /// 5: the value is not allowed (an unknown enum value, a wrong BodyLength or
    /// CheckSum).
    ValueIncorrect = 5,
    /// 6: the value is not of the tag's type.
    IncorrectDataFormat = 6,
    /// 9: SenderCompID/TargetCompID are not this session's.
    CompIdProblem = 9,
    /// 10: SendingTime too far from our clock, or OrigSendingTime after SendingTime.
    SendingTimeAccuracy = 10,
    /// 11: MsgType not valid.
    InvalidMsgType = 11,
    /// 13: a tag appears more than once.
    TagAppearsMoreThanOnce = 13,
    /// 14: a tag out of the required order (header after body, body after trailer).
    TagOutOfOrder = 14,
    /// 15: a repeating group's entry does not start with its first field.
    RepeatingGroupFieldsOutOfOrder = 15,
    /// 16: a NumInGroup that does not match the group's entries.
    IncorrectNumInGroupCount = 16,
    /// 99: anything else.
    Other = 99,
}

impl SessionRejectReason {
    /// The value of tag 373.
    pub const fn code(self) -> u16 {
        self as u16
    }

    /// Text (58) sent with the Reject.
    pub const fn text(self) -> &'static str {
        match self {
            Self::InvalidTagNumber => "Invalid tag number",
            Self::RequiredTagMissing => "Required tag missing",
            Self::TagNotDefinedForMsgType => "Tag not defined for this message type",
            Self::TagWithoutValue => "Tag specified without a value",
            Self::ValueIncorrect => "Value is incorrect (out of range) for this tag",
            Self::IncorrectDataFormat => "Incorrect data format for value",
            Self::CompIdProblem => "CompID problem",
            Self::SendingTimeAccuracy => "SendingTime accuracy problem",
            Self::InvalidMsgType => "Invalid MsgType",
            Self::TagAppearsMoreThanOnce => "Tag appears more than once",
            Self::TagOutOfOrder => "Tag specified out of required order",
            Self::RepeatingGroupFieldsOutOfOrder => "Repeating group fields out of order",
            Self::IncorrectNumInGroupCount => "Incorrect NumInGroup count for repeating group",
            Self::Other => "Other",
        }
    }
}

impl From<FieldError> for SessionRejectReason {
    fn from(e: FieldError) -> Self {
        match e {
            FieldError::InvalidTag(_) => Self::InvalidTagNumber,
            FieldError::NoValue(_) => Self::TagWithoutValue,
            FieldError::Malformed(_) | FieldError::Format(_) => Self::IncorrectDataFormat,
            FieldError::Repeated(_) => Self::TagAppearsMoreThanOnce,
            FieldError::OutOfOrder(_) => Self::TagOutOfOrder,
            FieldError::Missing(_) => Self::RequiredTagMissing,
            FieldError::Value(_) => Self::ValueIncorrect,
            FieldError::TooManyFields => Self::Other,
        }
    }
}

impl From<Violation> for SessionRejectReason {
    fn from(v: Violation) -> Self {
        match v {
            Violation::InvalidMsgType => Self::InvalidMsgType,
            Violation::Field(e) => e.into(),
            Violation::InvalidTag(_) => Self::InvalidTagNumber,
            Violation::NotDefinedForMessage(_) => Self::TagNotDefinedForMsgType,
            Violation::Format(_) => Self::IncorrectDataFormat,
            Violation::Value(_) => Self::ValueIncorrect,
            Violation::Repeated(_) => Self::TagAppearsMoreThanOnce,
            Violation::GroupOrder(_) => Self::RepeatingGroupFieldsOutOfOrder,
            Violation::GroupCount(_) => Self::IncorrectNumInGroupCount,
            Violation::Missing(_) => Self::RequiredTagMissing,
        }
    }
}
