//! Version-2 reports from core events: which account's stream each report belongs to,
//! and its fields. A pure function of the command and its events, so replaying the
//! journal regenerates the same reports (the fields `Accepted` echoes come from the
//! journaled command, never from the wire request).
//!
//! Rules that hold for every report made here:
//! * an order of another account is refused as unknown: `NotOwner` (11) becomes
//!   `UnknownOrder` (10), so ids cannot be probed;
//! * `report_seq` is left 0: the core stamps it with the account's next number;
//! * a mass cancel's `Cancelled`s carry its client order id, so does its refusal
//!   (`CancelRejected`), and its terminal answer (`MassCancelDone`) is made by
//!   [`mass_cancel_done`] once every instrument ran.

use peregrine_book::{Action, CancelReason, Command, CommandKind, Event, RejectReason};
use peregrine_types::{
    AccountId, ClientOrderId, InstrumentId, OrderType, Side, StpMode, TimeInForce, Timestamp,
};
use peregrine_wire::field::Pad;
use peregrine_wire::reason::{CancelCode, RejectCode};
use peregrine_wire::v2::reports::{
    Accepted, CancelRejected, Cancelled, Fill, MassCancelDone, Rejected, Replaced,
};
use peregrine_wire::v2::Outbound;
use peregrine_wire::{LiquidityRole, ReasonCode, RequestKind};

/// What the reports of one command need besides its events.
#[derive(Debug, Clone, Copy)]
pub struct Ctx {
    /// Engine sequence number of the command.
    pub engine_seq: u64,
    /// Command time.
    pub ts: Timestamp,
    /// The command's own client order id (new order, cancel, replace, mass cancel):
    /// the `request_id` of the `Cancelled`s it causes.
    pub request_id: ClientOrderId,
    /// For a replace: the order's client order id before it.
    pub orig_client_id: ClientOrderId,
    /// For a new order: what `Accepted` echoes.
    pub new: Option<NewFields>,
}

/// The fields of a new order that `Accepted` echoes and the event does not carry.
#[derive(Debug, Clone, Copy)]
pub struct NewFields {
    /// Expiry (0 unless Gtd).
    pub expire_at: Timestamp,
    /// Order type.
    pub order_type: OrderType,
    /// Time in force.
    pub tif: TimeInForce,
    /// Self-trade prevention.
    pub stp: StpMode,
}

impl Ctx {
    /// The context of `cmd` (journaled, so a replay builds the same one);
    /// `orig_client_id` comes from the core's order-ownership map.
    pub fn of(cmd: &Command, engine_seq: u64, orig_client_id: ClientOrderId) -> Ctx {
        let (request_id, new) = match &cmd.action {
            Action::New(o) => (
                o.client_id,
                Some(NewFields {
                    expire_at: o.expire_at,
                    order_type: o.order_type,
                    tif: o.tif,
                    stp: o.stp,
                }),
            ),
            Action::Cancel(c) => (c.client_id, None),
            Action::Replace(r) => (r.client_id, None),
            _ => (ClientOrderId(0), None),
        };
        Ctx {
            engine_seq,
            ts: cmd.ts,
            request_id,
            orig_client_id,
            new,
        }
    }
}

/// A report of an account's stream.
pub type Report = (AccountId, Outbound);

/// The reports of one event: up to two (a fill goes to maker and taker).
pub fn reports_for(ev: &Event, ctx: &Ctx) -> [Option<Report>; 2] {
    let (seq, t) = (ctx.engine_seq, ctx.ts);
    match ev {
        Event::Accepted(a) => {
            let n = ctx.new;
            let msg = Accepted {
                session_seq: 0,
                engine_seq: seq,
                engine_time: t,
                order_id: a.id,
                client_order_id: a.client_id,
                price: a.price,
                qty: a.qty,
                expire_at: n.map_or(Timestamp(0), |n| n.expire_at),
                instrument: a.instrument,
                side: a.side,
                order_type: n.map_or(OrderType::Limit, |n| n.order_type),
                tif: n.map_or(TimeInForce::Gtc, |n| n.tif),
                stp: n.map_or(StpMode::None, |n| n.stp),
                report_seq: 0,
                account: a.account,
            };
            [Some((a.account, msg.into())), None]
        }
        Event::Rejected(r) => {
            let reason = reject_code(r.reason);
            let msg: Outbound = match r.command {
                CommandKind::New => Rejected {
                    session_seq: 0,
                    engine_seq: seq,
                    engine_time: t,
                    client_order_id: r.client_id,
                    instrument: r.instrument,
                    reason,
                    reserved: Pad,
                    report_seq: 0,
                    account: r.account,
                }
                .into(),
                kind => CancelRejected {
                    session_seq: 0,
                    engine_seq: seq,
                    engine_time: t,
                    // A mass cancel is not an order: the book's refusal carries no
                    // client id, the request's is in the context.
                    client_order_id: match kind {
                        CommandKind::MassCancel => ctx.request_id,
                        _ => r.client_id,
                    },
                    order_id: r.id,
                    instrument: Some(r.instrument),
                    reason,
                    request_kind: match kind {
                        CommandKind::Replace => RequestKind::Replace,
                        CommandKind::MassCancel => RequestKind::MassCancel,
                        _ => RequestKind::Cancel,
                    },
                    reserved: Pad,
                    report_seq: 0,
                    account: r.account,
                }
                .into(),
            };
            [Some((r.account, msg)), None]
        }
        Event::Fill(f) => {
            let fill = |id, client, leaves, side, role, account| Fill {
                session_seq: 0,
                engine_seq: seq,
                engine_time: t,
                order_id: id,
                client_order_id: client,
                trade_id: f.trade_id,
                price: f.price,
                qty: f.qty,
                leaves_qty: leaves,
                instrument: f.instrument,
                side,
                role,
                reserved: Pad,
                report_seq: 0,
                account,
            };
            let maker = fill(
                f.maker_id,
                f.maker_client_id,
                f.maker_leaves,
                f.taker_side.opposite(),
                LiquidityRole::Maker,
                f.maker_account,
            );
            let taker = fill(
                f.taker_id,
                f.taker_client_id,
                f.taker_leaves,
                f.taker_side,
                LiquidityRole::Taker,
                f.taker_account,
            );
            [
                Some((f.maker_account, maker.into())),
                Some((f.taker_account, taker.into())),
            ]
        }
        Event::Cancelled(c) => {
            let request_id = match c.reason {
                CancelReason::UserRequested | CancelReason::MassCancel => ctx.request_id,
                _ => ClientOrderId(0),
            };
            let msg = Cancelled {
                session_seq: 0,
                engine_seq: seq,
                engine_time: t,
                order_id: c.id,
                client_order_id: c.client_id,
                request_id,
                cancelled_qty: c.qty,
                instrument: c.instrument,
                reason: cancel_code(c.reason),
                side: c.side,
                reserved: Pad,
                report_seq: 0,
                account: c.account,
            };
            [Some((c.account, msg.into())), None]
        }
        Event::Replaced(r) => {
            let msg = Replaced {
                session_seq: 0,
                engine_seq: seq,
                engine_time: t,
                order_id: r.id,
                client_order_id: r.client_id,
                orig_client_order_id: ctx.orig_client_id,
                new_price: r.price,
                new_qty: r.qty,
                instrument: r.instrument,
                priority_kept: r.priority_kept,
                reserved: Pad,
                report_seq: 0,
                account: r.account,
            };
            [Some((r.account, msg.into())), None]
        }
        Event::LevelChanged(_) | Event::MassCancelled(_) | Event::StatusChanged(_) => [None, None],
    }
}

/// The terminal answer of a mass cancel that cancelled `cancelled` orders.
pub fn mass_cancel_done(
    ctx: &Ctx,
    account: AccountId,
    request_id: ClientOrderId,
    instrument: Option<InstrumentId>,
    side: Option<Side>,
    cancelled: u32,
) -> Report {
    let msg = MassCancelDone {
        session_seq: 0,
        engine_seq: ctx.engine_seq,
        engine_time: ctx.ts,
        request_id,
        report_seq: 0,
        cancelled,
        instrument,
        account,
        side,
    };
    (account, msg.into())
}

/// The wire code of an engine reject: the same value, except that an order of
/// another account is answered as unknown.
pub fn reject_code(r: RejectReason) -> ReasonCode {
    match r {
        RejectReason::NotOwner => RejectCode::UnknownOrder.reason(),
        other => ReasonCode(other.code()),
    }
}

/// The wire code of an engine cancel reason.
pub fn cancel_code(c: CancelReason) -> ReasonCode {
    match c {
        CancelReason::UserRequested => CancelCode::UserRequested,
        CancelReason::MassCancel => CancelCode::MassCancel,
        CancelReason::Unfilled => CancelCode::Unfilled,
        CancelReason::FokUnfillable => CancelCode::FokUnfillable,
        CancelReason::SelfTrade => CancelCode::SelfTrade,
        CancelReason::Expired => CancelCode::Expired,
    }
    .reason()
}

#[cfg(test)]
#[path = "reports_tests.rs"]
mod tests;
