//! Fixed-layout little-endian codec for [`peregrine_book::Command`], the payload of
//! every journal record.
//!
//! Layout (version 1; offsets in bytes, all integers little-endian; full table in
//! `docs/journal.md`, "Command payload"):
//!
//! ```text
//! 0 version u8 (=1) | 1 tag u8 | 2..8 zero | 8 ts u64 | body by tag:
//! tag 0 New        16 instrument u32, 20 account u32, 24 id u64, 32 client_id u64,
//!                  40 side u8, 41 order_type u8, 42 tif u8, 43 stp u8, 44..48 zero,
//!                  48 price i64, 56 qty i64, 64 expire_at u64          = 72 bytes
//! tag 1 Cancel     16 instrument u32, 20 account u32, 24 id u64,
//!                  32 client_id u64                                    = 40 bytes
//! tag 2 Replace    16 instrument u32, 20 account u32, 24 id u64,
//!                  32 client_id u64, 40 price i64, 48 qty i64          = 56 bytes
//! tag 3 MassCancel 16 instrument u32, 20 account u32, 24 side u8
//!                  (0 buy, 1 sell, 2 both), 25..32 zero                = 32 bytes
//! tag 4 SetStatus  16 instrument u32, 20 status u8 (0 active, 1 halted),
//!                  21..24 zero                                         = 24 bytes
//! tag 5 Tick       (no body)                                           = 16 bytes
//! tag 6 Deposit    16 account u32, 20 asset u32, 24 amount i64,
//!                  32 request_id u64                                   = 40 bytes
//! tag 7 Withdraw   16 account u32, 20 asset u32, 24 amount i64,
//!                  32 request_id u64                                   = 40 bytes
//! tag 8 MassCancelRequest 16 instrument scope u32 (0xFFFF_FFFF: every instrument),
//!                  20 account u32, 24 side u8 (0 buy, 1 sell, 2 both), 25..32 zero,
//!                  32 client_id u64                                    = 40 bytes
//! tag 9 NewExt     tag 0's body, then 72 trigger kind u8, 73 trail unit u8,
//!                  74..76 zero, 76 trail i32, 80 trigger price i64,
//!                  88 display i64                                      = 96 bytes
//! tag 10 CancelList 16 instrument u32, 20 account u32, 24 list id u64,
//!                  32 client_id u64                                    = 40 bytes
//! tag 11 Mmp       16 instrument u32, 20 account u32, 24 op u8 (0 set, 1 reset,
//!                  2 clear), 25..28 zero, 28 max_fills u32, 32 window_ns u64,
//!                  40 max_qty i64, 48 freeze_ns u64, 56 request_id u64 = 64 bytes
//! tag 12 Market    16 instrument u32, 20 op u8 (0 halt, 1 resume, 2 start auction,
//!                  3 uncross), 21 auction kind u8, 22..24 zero,
//!                  24 duration_ns u64                                  = 32 bytes
//! tag 13 List      16 instrument u32, 20 account u32, 24 kind u8 (0 OCO, 1 OTO,
//!                  2 OTOCO), 25..32 zero, 32 client_id u64, then three legs of
//!                  64 at 40, 104, 168: 0 client_id u64, 8 side u8,
//!                  9 order_type u8, 10 tif u8, 11 stp u8, 12 trigger kind u8,
//!                  13 trail unit u8, 14..16 zero, 16 trail i32, 20..24 zero,
//!                  24 price i64, 32 qty i64, 40 expire_at u64, 48 trigger price i64,
//!                  56 display i64 (legs the kind does not use: all zero; the
//!                  legs' order ids are the engine's next ids, not journaled)
//!                                                                      = 232 bytes
//! ```
//!
//! Tags 9 to 13 are the venue's order types (`docs/orders.md`): an extended order, a
//! list cancel, a market-maker protection command, an admin market command, and a
//! whole order list, journaled as one record so a replay enters it atomically
//! ([`Record::List`]).
//!
//! Tag 8 is a whole `MassCancel` request as the client sent it (protocol version 2):
//! the core runs it over every instrument of its scope under its one sequence number,
//! and its client order id is what the `Cancelled`s and the `MassCancelDone` it causes
//! carry, so a replay regenerates the same reports. Tag 3 (one instrument's book
//! command, written before tag 8 existed) still decodes.
//!
//! Tags 6 and 7 are the admin commands of an exchange with balances
//! ([`AdminCommand`]); [`decode_record`] returns either kind as a [`Record`], while
//! [`decode`] (book commands only) refuses them with [`CodecError::NotABookCommand`].
//!
//! The length of a payload is exact per tag; padding must be zero; enum bytes must be
//! known. [`decode`] checks all of it through a bounds-checked reader and returns a
//! [`CodecError`]; it never panics (see `prop_decode_never_panics`). Prices and
//! quantities are carried raw: the engine validates them on replay as it did live.

use peregrine_book::{
    Action, Cancel, CancelList, Command, ExtOrder, MarketCommand, MarketOp, MassCancel, MmpCommand,
    MmpOp, MmpParams, NewOrder, OrderList, Replace, SetStatus, Trigger,
};
use peregrine_ledger::AssetId;
use peregrine_types::{
    AccountId, AuctionKind, ClientOrderId, InstrumentId, InstrumentStatus, ListKind, OrderId,
    OrderType, Price, Qty, Side, StpMode, TimeInForce, Timestamp, TrailUnit, TriggerKind,
};
use peregrine_wire::field::ALL_INSTRUMENTS;

use crate::balances::{AdminCommand, AdminKind};

/// The layout version written in byte 0.
pub const VERSION: u8 = 1;
/// The largest encoded record (an order list). At most 255: a cluster batch stores
/// each record's length in one byte.
pub const MAX_ENCODED: usize = 232;
const _: () = assert!(MAX_ENCODED <= u8::MAX as usize);
/// Bytes before the body: version, tag, padding, timestamp.
pub const HEADER: usize = 16;

const TAG_NEW: u8 = 0;
const TAG_CANCEL: u8 = 1;
const TAG_REPLACE: u8 = 2;
const TAG_MASS_CANCEL: u8 = 3;
const TAG_SET_STATUS: u8 = 4;
const TAG_TICK: u8 = 5;
const TAG_DEPOSIT: u8 = 6;
const TAG_WITHDRAW: u8 = 7;
const TAG_MASS_CANCEL_REQUEST: u8 = 8;
const TAG_NEW_EXT: u8 = 9;
const TAG_CANCEL_LIST: u8 = 10;
const TAG_MMP: u8 = 11;
const TAG_MARKET: u8 = 12;
const TAG_LIST: u8 = 13;
/// Bytes of one leg of a list record.
const LEG: usize = 64;

/// One journal record's payload: a book command, an admin command, or a mass cancel
/// request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Record {
    /// A command for the matching engine.
    Command(Command),
    /// A deposit or withdrawal.
    Admin(AdminCommand),
    /// A mass cancel over one instrument or every instrument.
    MassCancel(MassCancelRequest),
    /// An order list, entered atomically.
    List(ListRecord),
}

impl Record {
    /// The record's command time.
    pub fn ts(&self) -> Timestamp {
        match self {
            Record::Command(c) => c.ts,
            Record::Admin(a) => a.ts,
            Record::MassCancel(m) => m.ts,
            Record::List(l) => l.ts,
        }
    }
}

/// An order list with its time (tag 13). Its legs' ids are assigned by the engine
/// when it runs (journaled as 0 and ignored).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListRecord {
    /// Command time.
    pub ts: Timestamp,
    /// The list (legs the kind does not use are all zero).
    pub list: OrderList,
}

/// A client's `MassCancel`, journaled whole (tag 8).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MassCancelRequest {
    /// Command time.
    pub ts: Timestamp,
    /// One instrument, or every instrument.
    pub instrument: Option<InstrumentId>,
    /// Whose orders.
    pub account: AccountId,
    /// One side or both.
    pub side: Option<Side>,
    /// The request's client order id.
    pub client_id: ClientOrderId,
}

impl MassCancelRequest {
    /// The book command for one instrument of the scope.
    pub fn book_command(&self, instrument: InstrumentId) -> Command {
        Command {
            ts: self.ts,
            action: Action::MassCancel(MassCancel {
                instrument,
                account: self.account,
                side: self.side,
            }),
        }
    }
}

/// Why a payload is not a valid command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum CodecError {
    /// Shorter than the fixed header.
    #[error("payload of {0} bytes is shorter than the {HEADER}-byte header")]
    TooShort(usize),
    /// Unknown layout version.
    #[error("unknown command layout version {0}")]
    BadVersion(u8),
    /// Unknown action tag.
    #[error("unknown command tag {0}")]
    BadTag(u8),
    /// The length does not match the tag's fixed size.
    #[error("tag {tag}: length {got}, expected {expected}")]
    BadLength {
        /// The tag.
        tag: u8,
        /// The fixed size for that tag.
        expected: usize,
        /// The payload length.
        got: usize,
    },
    /// An enum byte has no meaning.
    #[error("field {field}: unknown value {value}")]
    BadEnum {
        /// The field.
        field: &'static str,
        /// The byte found.
        value: u8,
    },
    /// A padding byte is not zero.
    #[error("non-zero padding at offset {0}")]
    BadPadding(usize),
    /// A valid admin or mass-cancel record where only a book command is accepted
    /// ([`decode`]).
    #[error("tag {0} is not a book command")]
    NotABookCommand(u8),
}

/// The encoded size of a tag's layout.
const fn len_of(tag: u8) -> Option<usize> {
    match tag {
        TAG_NEW => Some(72),
        TAG_CANCEL => Some(40),
        TAG_REPLACE => Some(56),
        TAG_MASS_CANCEL => Some(32),
        TAG_SET_STATUS => Some(24),
        TAG_TICK => Some(16),
        TAG_DEPOSIT | TAG_WITHDRAW | TAG_MASS_CANCEL_REQUEST | TAG_CANCEL_LIST => Some(40),
        TAG_NEW_EXT => Some(96),
        TAG_MMP => Some(64),
        TAG_MARKET => Some(32),
        TAG_LIST => Some(40 + 3 * LEG),
        _ => None,
    }
}

/// Encodes `cmd` into `buf` and returns the encoded length. Writes every byte of the
/// used prefix (padding included), so a reused buffer leaks nothing from before.
pub fn encode(cmd: &Command, buf: &mut [u8; MAX_ENCODED]) -> usize {
    let mut w = Writer { buf, at: 0 };
    let tag = match cmd.action {
        Action::New(_) => TAG_NEW,
        Action::NewExt(_) => TAG_NEW_EXT,
        Action::CancelList(_) => TAG_CANCEL_LIST,
        Action::Mmp(_) => TAG_MMP,
        Action::Market(_) => TAG_MARKET,
        Action::Cancel(_) => TAG_CANCEL,
        Action::Replace(_) => TAG_REPLACE,
        Action::MassCancel(_) => TAG_MASS_CANCEL,
        Action::SetStatus(_) => TAG_SET_STATUS,
        Action::Tick => TAG_TICK,
    };
    w.u8(VERSION);
    w.u8(tag);
    w.zeros(6);
    w.u64(cmd.ts.0);
    match &cmd.action {
        Action::New(o) => w.new_order(o),
        Action::NewExt(e) => {
            w.new_order(&e.order);
            w.u8(e.trigger.kind as u8);
            w.u8(e.trigger.unit as u8);
            w.zeros(2);
            w.u32(e.trigger.trail as u32);
            w.u64(e.trigger.price.units() as u64);
            w.u64(e.display.lots() as u64);
        }
        Action::CancelList(c) => {
            w.u32(c.instrument.0);
            w.u32(c.account.0);
            w.u64(c.list_id.0);
            w.u64(c.client_id.0);
        }
        Action::Mmp(m) => {
            w.u32(m.instrument.0);
            w.u32(m.account.0);
            let (op, p) = match m.op {
                MmpOp::Set(p) => (0, p),
                MmpOp::Reset => (1, MmpParams::default()),
                MmpOp::Clear => (2, MmpParams::default()),
            };
            w.u8(op);
            w.zeros(3);
            w.u32(p.max_fills);
            w.u64(p.window_ns);
            w.u64(p.max_qty as u64);
            w.u64(p.freeze_ns);
            w.u64(m.request_id);
        }
        Action::Market(m) => {
            w.u32(m.instrument.0);
            let (op, kind, duration) = match m.op {
                MarketOp::Halt => (0, 0, 0),
                MarketOp::Resume => (1, 0, 0),
                MarketOp::StartAuction { kind, duration_ns } => (2, kind as u8, duration_ns),
                MarketOp::Uncross => (3, 0, 0),
            };
            w.u8(op);
            w.u8(kind);
            w.zeros(2);
            w.u64(duration);
        }
        Action::Cancel(c) => w.ids(c.instrument, c.account, c.id, c.client_id),
        Action::Replace(r) => {
            w.ids(r.instrument, r.account, r.id, r.client_id);
            w.u64(r.price.units() as u64);
            w.u64(r.qty.lots() as u64);
        }
        Action::MassCancel(m) => {
            w.u32(m.instrument.0);
            w.u32(m.account.0);
            w.u8(m.side.map_or(2, |s| s as u8));
            w.zeros(7);
        }
        Action::SetStatus(s) => {
            w.u32(s.instrument.0);
            w.u8(match s.status {
                InstrumentStatus::Active => 0,
                InstrumentStatus::Halted => 1,
            });
            w.zeros(3);
        }
        Action::Tick => {}
    }
    debug_assert_eq!(Some(w.at), len_of(tag));
    w.at
}

/// Encodes an admin command into `buf` (tag 6 or 7) and returns the encoded length;
/// writes every byte of the used prefix.
pub fn encode_admin(cmd: &AdminCommand, buf: &mut [u8; MAX_ENCODED]) -> usize {
    let mut w = Writer { buf, at: 0 };
    let tag = match cmd.kind {
        AdminKind::Deposit => TAG_DEPOSIT,
        AdminKind::Withdraw => TAG_WITHDRAW,
    };
    w.u8(VERSION);
    w.u8(tag);
    w.zeros(6);
    w.u64(cmd.ts.0);
    w.u32(cmd.account.0);
    w.u32(cmd.asset.0);
    w.u64(cmd.amount as u64);
    w.u64(cmd.request_id);
    debug_assert_eq!(Some(w.at), len_of(tag));
    w.at
}

/// Encodes a mass cancel request into `buf` (tag 8) and returns the encoded length;
/// writes every byte of the used prefix.
pub fn encode_mass_cancel(m: &MassCancelRequest, buf: &mut [u8; MAX_ENCODED]) -> usize {
    let mut w = Writer { buf, at: 0 };
    w.u8(VERSION);
    w.u8(TAG_MASS_CANCEL_REQUEST);
    w.zeros(6);
    w.u64(m.ts.0);
    w.u32(m.instrument.map_or(ALL_INSTRUMENTS, |i| i.0));
    w.u32(m.account.0);
    w.u8(m.side.map_or(2, |s| s as u8));
    w.zeros(7);
    w.u64(m.client_id.0);
    debug_assert_eq!(Some(w.at), len_of(TAG_MASS_CANCEL_REQUEST));
    w.at
}

/// Encodes an order list record into `buf` (tag 13) and returns the encoded length;
/// writes every byte of the used prefix (unused legs as zeros).
pub fn encode_list(l: &ListRecord, buf: &mut [u8; MAX_ENCODED]) -> usize {
    let mut w = Writer { buf, at: 0 };
    let list = &l.list;
    w.u8(VERSION);
    w.u8(TAG_LIST);
    w.zeros(6);
    w.u64(l.ts.0);
    w.u32(list.instrument.0);
    w.u32(list.account.0);
    w.u8(list.kind as u8);
    w.zeros(7);
    w.u64(list.client_id.0);
    for (i, leg) in list.legs.iter().enumerate() {
        if i >= list.kind.legs() {
            w.zeros(LEG);
            continue;
        }
        let o = &leg.order;
        w.u64(o.client_id.0);
        w.u8(o.side as u8);
        w.u8(o.order_type as u8);
        w.u8(o.tif as u8);
        w.u8(o.stp as u8);
        w.u8(leg.trigger.kind as u8);
        w.u8(leg.trigger.unit as u8);
        w.zeros(2);
        w.u32(leg.trigger.trail as u32);
        w.zeros(4);
        w.u64(o.price.units() as u64);
        w.u64(o.qty.lots() as u64);
        w.u64(o.expire_at.0);
        w.u64(leg.trigger.price.units() as u64);
        w.u64(leg.display.lots() as u64);
    }
    debug_assert_eq!(Some(w.at), len_of(TAG_LIST));
    w.at
}

/// Encodes any record into `buf`; returns the encoded length.
pub fn encode_record(rec: &Record, buf: &mut [u8; MAX_ENCODED]) -> usize {
    match rec {
        Record::Command(c) => encode(c, buf),
        Record::Admin(a) => encode_admin(a, buf),
        Record::MassCancel(m) => encode_mass_cancel(m, buf),
        Record::List(l) => encode_list(l, buf),
    }
}

/// Decodes one book command; any defect is a typed error, never a panic. An admin or
/// mass-cancel record is [`CodecError::NotABookCommand`] (use [`decode_record`]).
pub fn decode(bytes: &[u8]) -> Result<Command, CodecError> {
    match decode_record(bytes)? {
        Record::Command(c) => Ok(c),
        Record::Admin(a) => Err(CodecError::NotABookCommand(match a.kind {
            AdminKind::Deposit => TAG_DEPOSIT,
            AdminKind::Withdraw => TAG_WITHDRAW,
        })),
        Record::MassCancel(_) => Err(CodecError::NotABookCommand(TAG_MASS_CANCEL_REQUEST)),
        Record::List(_) => Err(CodecError::NotABookCommand(TAG_LIST)),
    }
}

/// Decodes one record of either kind; any defect is a typed error, never a panic.
pub fn decode_record(bytes: &[u8]) -> Result<Record, CodecError> {
    if bytes.len() < HEADER {
        return Err(CodecError::TooShort(bytes.len()));
    }
    let mut r = Reader { bytes, at: 0 };
    let version = r.u8()?;
    if version != VERSION {
        return Err(CodecError::BadVersion(version));
    }
    let tag = r.u8()?;
    let expected = len_of(tag).ok_or(CodecError::BadTag(tag))?;
    if bytes.len() != expected {
        return Err(CodecError::BadLength {
            tag,
            expected,
            got: bytes.len(),
        });
    }
    r.zeros(6)?;
    let ts = Timestamp(r.u64()?);
    let action = match tag {
        TAG_NEW => Action::New(new_order(&mut r)?),
        TAG_NEW_EXT => {
            let order = new_order(&mut r)?;
            let kind = r.enum_u8("trigger", TriggerKind::from_u8)?;
            let unit = r.enum_u8("trail_unit", TrailUnit::from_u8)?;
            r.zeros(2)?;
            let trail = r.u32()? as i32;
            Action::NewExt(ExtOrder {
                order,
                trigger: Trigger {
                    kind,
                    unit,
                    trail,
                    price: Price::from_raw(r.i64()?),
                },
                display: Qty::from_raw(r.i64()?),
            })
        }
        TAG_CANCEL_LIST => Action::CancelList(CancelList {
            instrument: InstrumentId(r.u32()?),
            account: AccountId(r.u32()?),
            list_id: OrderId(r.u64()?),
            client_id: ClientOrderId(r.u64()?),
        }),
        TAG_MMP => Action::Mmp(mmp(&mut r)?),
        TAG_MARKET => Action::Market(market(&mut r)?),
        TAG_LIST => return Ok(Record::List(list(&mut r, ts)?)),
        TAG_CANCEL => {
            let (instrument, account, id, client_id) = r.ids()?;
            Action::Cancel(Cancel {
                instrument,
                id,
                account,
                client_id,
            })
        }
        TAG_REPLACE => {
            let (instrument, account, id, client_id) = r.ids()?;
            Action::Replace(Replace {
                instrument,
                id,
                account,
                client_id,
                price: Price::from_raw(r.i64()?),
                qty: Qty::from_raw(r.i64()?),
            })
        }
        TAG_MASS_CANCEL => Action::MassCancel(mass_cancel(&mut r)?),
        TAG_MASS_CANCEL_REQUEST => {
            let m = mass_cancel(&mut r)?;
            let instrument = (m.instrument.0 != ALL_INSTRUMENTS).then_some(m.instrument);
            return Ok(Record::MassCancel(MassCancelRequest {
                ts,
                instrument,
                account: m.account,
                side: m.side,
                client_id: ClientOrderId(r.u64()?),
            }));
        }
        TAG_SET_STATUS => Action::SetStatus(set_status(&mut r)?),
        TAG_DEPOSIT | TAG_WITHDRAW => {
            let kind = if tag == TAG_DEPOSIT {
                AdminKind::Deposit
            } else {
                AdminKind::Withdraw
            };
            return Ok(Record::Admin(AdminCommand {
                ts,
                kind,
                account: AccountId(r.u32()?),
                asset: AssetId(r.u32()?),
                amount: r.i64()?,
                request_id: r.u64()?,
            }));
        }
        _ => Action::Tick,
    };
    Ok(Record::Command(Command { ts, action }))
}

fn new_order(r: &mut Reader<'_>) -> Result<NewOrder, CodecError> {
    let (instrument, account, id, client_id) = r.ids()?;
    let side = r.enum_u8("side", Side::from_u8)?;
    let order_type = r.enum_u8("order_type", OrderType::from_u8)?;
    let tif = r.enum_u8("tif", TimeInForce::from_u8)?;
    let stp = r.enum_u8("stp", StpMode::from_u8)?;
    r.zeros(4)?;
    Ok(NewOrder {
        instrument,
        id,
        client_id,
        account,
        side,
        order_type,
        tif,
        stp,
        price: Price::from_raw(r.i64()?),
        qty: Qty::from_raw(r.i64()?),
        expire_at: Timestamp(r.u64()?),
    })
}

fn mmp(r: &mut Reader<'_>) -> Result<MmpCommand, CodecError> {
    let instrument = InstrumentId(r.u32()?);
    let account = AccountId(r.u32()?);
    let op = r.u8()?;
    r.zeros(3)?;
    let params = MmpParams {
        max_fills: r.u32()?,
        window_ns: r.u64()?,
        max_qty: r.i64()?,
        freeze_ns: r.u64()?,
    };
    let op = match op {
        0 => MmpOp::Set(params),
        1 if params == MmpParams::default() => MmpOp::Reset,
        2 if params == MmpParams::default() => MmpOp::Clear,
        1 | 2 => return Err(CodecError::BadPadding(28)),
        value => {
            return Err(CodecError::BadEnum {
                field: "mmp op",
                value,
            })
        }
    };
    Ok(MmpCommand {
        instrument,
        account,
        op,
        request_id: r.u64()?,
    })
}

fn market(r: &mut Reader<'_>) -> Result<MarketCommand, CodecError> {
    let instrument = InstrumentId(r.u32()?);
    let (op, kind) = (r.u8()?, r.u8()?);
    r.zeros(2)?;
    let duration = r.u64()?;
    let simple = kind == 0 && duration == 0;
    let op = match op {
        0 if simple => MarketOp::Halt,
        1 if simple => MarketOp::Resume,
        3 if simple => MarketOp::Uncross,
        2 => MarketOp::StartAuction {
            kind: AuctionKind::from_u8(kind).ok_or(CodecError::BadEnum {
                field: "auction kind",
                value: kind,
            })?,
            duration_ns: duration,
        },
        0 | 1 | 3 => return Err(CodecError::BadPadding(21)),
        value => {
            return Err(CodecError::BadEnum {
                field: "market op",
                value,
            })
        }
    };
    Ok(MarketCommand { instrument, op })
}

fn list(r: &mut Reader<'_>, ts: Timestamp) -> Result<ListRecord, CodecError> {
    let instrument = InstrumentId(r.u32()?);
    let account = AccountId(r.u32()?);
    let kind = r.enum_u8("list kind", ListKind::from_u8)?;
    r.zeros(7)?;
    let client_id = ClientOrderId(r.u64()?);
    let mut legs = [ExtOrder::plain(blank_order(instrument, account)); 3];
    for (i, leg) in legs.iter_mut().enumerate() {
        if i >= kind.legs() {
            r.zeros(LEG)?;
            continue;
        }
        let client_id = ClientOrderId(r.u64()?);
        let side = r.enum_u8("side", Side::from_u8)?;
        let order_type = r.enum_u8("order_type", OrderType::from_u8)?;
        let tif = r.enum_u8("tif", TimeInForce::from_u8)?;
        let stp = r.enum_u8("stp", StpMode::from_u8)?;
        let tkind = r.enum_u8("trigger", TriggerKind::from_u8)?;
        let unit = r.enum_u8("trail_unit", TrailUnit::from_u8)?;
        r.zeros(2)?;
        let trail = r.u32()? as i32;
        r.zeros(4)?;
        let order = NewOrder {
            instrument,
            // The engine numbers a list's legs when it runs it (live and in replay).
            id: OrderId(0),
            client_id,
            account,
            side,
            order_type,
            tif,
            stp,
            price: Price::from_raw(r.i64()?),
            qty: Qty::from_raw(r.i64()?),
            expire_at: Timestamp(r.u64()?),
        };
        let trigger = Trigger {
            kind: tkind,
            unit,
            trail,
            price: Price::from_raw(r.i64()?),
        };
        *leg = ExtOrder {
            order,
            trigger,
            display: Qty::from_raw(r.i64()?),
        };
    }
    Ok(ListRecord {
        ts,
        list: OrderList {
            instrument,
            account,
            kind,
            client_id,
            legs,
        },
    })
}

/// An all-zero order (an unused list leg).
pub fn blank_order(instrument: InstrumentId, account: AccountId) -> NewOrder {
    NewOrder {
        instrument,
        id: OrderId(0),
        client_id: ClientOrderId(0),
        account,
        side: Side::Buy,
        order_type: OrderType::Limit,
        tif: TimeInForce::Gtc,
        stp: StpMode::None,
        price: Price::from_raw(0),
        qty: Qty::ZERO,
        expire_at: Timestamp(0),
    }
}

fn mass_cancel(r: &mut Reader<'_>) -> Result<MassCancel, CodecError> {
    let instrument = InstrumentId(r.u32()?);
    let account = AccountId(r.u32()?);
    let side = match r.u8()? {
        2 => None,
        v => Some(Side::from_u8(v).ok_or(CodecError::BadEnum {
            field: "side",
            value: v,
        })?),
    };
    r.zeros(7)?;
    Ok(MassCancel {
        instrument,
        account,
        side,
    })
}

fn set_status(r: &mut Reader<'_>) -> Result<SetStatus, CodecError> {
    let instrument = InstrumentId(r.u32()?);
    let status = match r.u8()? {
        0 => InstrumentStatus::Active,
        1 => InstrumentStatus::Halted,
        value => {
            return Err(CodecError::BadEnum {
                field: "status",
                value,
            })
        }
    };
    r.zeros(3)?;
    Ok(SetStatus { instrument, status })
}

struct Writer<'a> {
    buf: &'a mut [u8; MAX_ENCODED],
    at: usize,
}

impl Writer<'_> {
    fn new_order(&mut self, o: &NewOrder) {
        self.ids(o.instrument, o.account, o.id, o.client_id);
        self.u8(o.side as u8);
        self.u8(o.order_type as u8);
        self.u8(o.tif as u8);
        self.u8(o.stp as u8);
        self.zeros(4);
        self.u64(o.price.units() as u64);
        self.u64(o.qty.lots() as u64);
        self.u64(o.expire_at.0);
    }
    fn put<const N: usize>(&mut self, b: [u8; N]) {
        self.buf[self.at..self.at + N].copy_from_slice(&b);
        self.at += N;
    }
    fn u8(&mut self, v: u8) {
        self.put([v]);
    }
    fn u32(&mut self, v: u32) {
        self.put(v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.put(v.to_le_bytes());
    }
    fn zeros(&mut self, n: usize) {
        self.buf[self.at..self.at + n].fill(0);
        self.at += n;
    }
    fn ids(&mut self, i: InstrumentId, a: AccountId, id: OrderId, c: ClientOrderId) {
        self.u32(i.0);
        self.u32(a.0);
        self.u64(id.0);
        self.u64(c.0);
    }
}

/// A bounds-checked cursor. The length was checked against the tag before the body is
/// read, so `Short` only guards against a layout bug; it is an error, not a panic.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take<const N: usize>(&mut self) -> Result<[u8; N], CodecError> {
        let got = self
            .bytes
            .get(self.at..self.at + N)
            .and_then(|s| <[u8; N]>::try_from(s).ok())
            .ok_or(CodecError::TooShort(self.bytes.len()))?;
        self.at += N;
        Ok(got)
    }
    fn u8(&mut self) -> Result<u8, CodecError> {
        Ok(self.take::<1>()?[0])
    }
    fn u32(&mut self) -> Result<u32, CodecError> {
        self.take().map(u32::from_le_bytes)
    }
    fn u64(&mut self) -> Result<u64, CodecError> {
        self.take().map(u64::from_le_bytes)
    }
    fn i64(&mut self) -> Result<i64, CodecError> {
        self.take().map(i64::from_le_bytes)
    }
    fn zeros(&mut self, n: usize) -> Result<(), CodecError> {
        for _ in 0..n {
            let at = self.at;
            if self.u8()? != 0 {
                return Err(CodecError::BadPadding(at));
            }
        }
        Ok(())
    }
    fn enum_u8<T>(&mut self, field: &'static str, f: fn(u8) -> Option<T>) -> Result<T, CodecError> {
        let value = self.u8()?;
        f(value).ok_or(CodecError::BadEnum { field, value })
    }
    fn ids(&mut self) -> Result<(InstrumentId, AccountId, OrderId, ClientOrderId), CodecError> {
        Ok((
            InstrumentId(self.u32()?),
            AccountId(self.u32()?),
            OrderId(self.u64()?),
            ClientOrderId(self.u64()?),
        ))
    }
}

#[cfg(test)]
#[path = "command_tests.rs"]
mod tests;
