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

use peregrine_book::{
    Action, CancelReason, Command, CommandKind, Event, ExtOrder, ListStatus, MmpStatus,
    RejectReason, TriggerCause,
};
use peregrine_types::{
    AccountId, ClientOrderId, InstrumentId, ListKind, OrderId, OrderType, Qty, Side, StpMode,
    TimeInForce, Timestamp, TriggerKind,
};
use peregrine_wire::field::{self, OrderStage, Pad};
use peregrine_wire::reason::{CancelCode, RejectCode};
use peregrine_wire::v2::reports::{
    Accepted, CancelRejected, Cancelled, Fill, MassCancelDone, Rejected, Replaced,
};
use peregrine_wire::v2::venue::{AcceptedExt, ListStatus as ListStatusMsg, MmpStatus as MmpMsg};
use peregrine_wire::v2::Outbound;
use peregrine_wire::{LiquidityRole, ReasonCode, RequestKind};

use crate::codec::command::ListRecord;

/// What the reports of one command need besides its events. It borrows the
/// command's extended orders rather than copying them (it is built for every
/// command, and most have none).
#[derive(Debug, Clone, Copy)]
pub struct Ctx<'a> {
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
    /// For an extended order or an order list: what `AcceptedExt` echoes per leg.
    pub ext: Option<ExtCtx<'a>>,
    /// Which command it is (the `request_kind` of its refusals, who answers a list's
    /// end).
    pub kind: Option<CommandKind>,
    /// For a `CancelList`: the list and its legs when it ran (their `Cancelled` and
    /// the list's `ListStatus` carry the request's id; other lists' do not).
    pub target: Option<(OrderId, [OrderId; 3])>,
}

/// The extended fields of the orders a command enters: one extended order, or an
/// order list's legs, as the command carries them; their ids are assigned from
/// `first_id` in leg order.
#[derive(Debug, Clone, Copy)]
pub struct ExtCtx<'a> {
    /// The orders (one, or the list's legs).
    pub legs: &'a [ExtOrder],
    /// The exchange id of `legs[0]`.
    pub first_id: OrderId,
    /// For a list: its kind (which legs wait for a release) and id.
    pub list: Option<(ListKind, OrderId)>,
}

impl<'a> ExtCtx<'a> {
    /// The leg with order id `id`, its index.
    fn leg(&self, id: OrderId) -> Option<(usize, &'a ExtOrder)> {
        let i = usize::try_from(id.0.checked_sub(self.first_id.0)?).ok()?;
        self.legs.get(i).map(|l| (i, l))
    }
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

impl<'a> Ctx<'a> {
    /// The context of `cmd` (journaled, so a replay builds the same one);
    /// `orig_client_id` comes from the core's order-ownership map.
    /// `first_id`: the exchange id the engine gave (an extended order) or gives (this
    /// is built before or after it ran, from the journaled command) to its order.
    pub fn of(cmd: &'a Command, engine_seq: u64, orig_client_id: ClientOrderId) -> Ctx<'a> {
        Self::of_with_id(cmd, engine_seq, orig_client_id, OrderId(0))
    }

    /// [`Ctx::of`], with the id an extended order got.
    pub fn of_with_id(
        cmd: &'a Command,
        engine_seq: u64,
        orig_client_id: ClientOrderId,
        id: OrderId,
    ) -> Ctx<'a> {
        let fields = |o: &peregrine_book::NewOrder| NewFields {
            expire_at: o.expire_at,
            order_type: o.order_type,
            tif: o.tif,
            stp: o.stp,
        };
        let (request_id, new, ext, kind) = match &cmd.action {
            Action::New(o) => (o.client_id, Some(fields(o)), None, CommandKind::New),
            Action::NewExt(e) => {
                let ext = ExtCtx {
                    legs: std::slice::from_ref(e),
                    first_id: id,
                    list: None,
                };
                (
                    e.order.client_id,
                    Some(fields(&e.order)),
                    Some(ext),
                    CommandKind::New,
                )
            }
            Action::Cancel(c) => (c.client_id, None, None, CommandKind::Cancel),
            Action::Replace(r) => (r.client_id, None, None, CommandKind::Replace),
            Action::CancelList(c) => (c.client_id, None, None, CommandKind::CancelList),
            Action::Mmp(m) => (ClientOrderId(m.request_id), None, None, CommandKind::Mmp),
            Action::MassCancel(_) => (ClientOrderId(0), None, None, CommandKind::MassCancel),
            Action::SetStatus(_) => (ClientOrderId(0), None, None, CommandKind::SetStatus),
            Action::Market(_) => (ClientOrderId(0), None, None, CommandKind::Market),
            Action::Tick => (ClientOrderId(0), None, None, CommandKind::SetStatus),
        };
        Ctx {
            engine_seq,
            ts: cmd.ts,
            request_id,
            orig_client_id,
            new,
            ext,
            kind: (!matches!(cmd.action, Action::Tick)).then_some(kind),
            target: None,
        }
    }

    /// Names the list a `CancelList` cancels (see [`Ctx::target`]).
    pub fn with_target(mut self, list: Option<peregrine_book::ListState>) -> Ctx<'a> {
        self.target = list.map(|l| (l.id, l.legs));
        self
    }

    fn targets_leg(&self, id: OrderId) -> bool {
        self.target.is_some_and(|(_, legs)| legs.contains(&id))
    }

    /// The context of an order list whose legs got ids from `first_id` on.
    pub fn of_list(rec: &'a ListRecord, engine_seq: u64, first_id: OrderId) -> Ctx<'a> {
        Ctx {
            engine_seq,
            ts: rec.ts,
            request_id: rec.list.client_id,
            orig_client_id: ClientOrderId(0),
            new: None,
            ext: Some(ExtCtx {
                legs: &rec.list.legs[..rec.list.kind.legs()],
                first_id,
                list: Some((rec.list.kind, first_id)),
            }),
            kind: Some(CommandKind::NewList),
            target: None,
        }
    }
}

/// `AcceptedExt` for an accepted order of the command's extended context.
fn accepted_ext(a: &peregrine_book::event::Accepted, ctx: &Ctx<'_>) -> Option<Outbound> {
    let ext = ctx.ext.as_ref()?;
    let (i, leg) = ext.leg(a.id)?;
    let o = &leg.order;
    let (list_id, pending) = match ext.list {
        Some((kind, id)) => (id, kind != ListKind::Oco && i > 0),
        None => (OrderId(0), false),
    };
    let stage = if pending {
        OrderStage::PendingRelease
    } else if leg.trigger.kind != TriggerKind::None {
        OrderStage::WaitingTrigger
    } else {
        OrderStage::Active
    };
    Some(
        AcceptedExt {
            session_seq: 0,
            engine_seq: ctx.engine_seq,
            engine_time: ctx.ts,
            order_id: a.id,
            client_order_id: a.client_id,
            price: a.price,
            qty: a.qty,
            expire_at: o.expire_at,
            stop_price: leg.trigger.price,
            display_qty: leg.display,
            list_id,
            report_seq: 0,
            instrument: a.instrument,
            account: a.account,
            trail: u32::try_from(leg.trigger.trail).unwrap_or(0),
            side: a.side,
            order_type: o.order_type,
            tif: o.tif,
            stp: o.stp,
            trigger: leg.trigger.kind,
            trail_unit: leg.trigger.unit,
            stage,
            reserved: Pad,
        }
        .into(),
    )
}

/// `0xFFFF_FFFF_FFFF_FFFF`: the `request_id` of a cancel-on-disconnect's reports.
pub const CANCEL_ON_DISCONNECT: ClientOrderId = ClientOrderId(u64::MAX);

/// A report of an account's stream.
pub type Report = (AccountId, Outbound);

/// The reports of one event: up to two (a fill goes to maker and taker).
pub fn reports_for(ev: &Event, ctx: &Ctx<'_>) -> [Option<Report>; 2] {
    let (seq, t) = (ctx.engine_seq, ctx.ts);
    match ev {
        Event::Accepted(a) => {
            if let Some(msg) = accepted_ext(a, ctx) {
                return [Some((a.account, msg)), None];
            }
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
        Event::Rejected(r) if matches!(r.command, CommandKind::Market | CommandKind::SetStatus) => {
            // Admin phase commands are answered to the requester by the core.
            [None, None]
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
                        CommandKind::CancelList => RequestKind::CancelList,
                        CommandKind::Mmp => RequestKind::Mmp,
                        CommandKind::Market => RequestKind::MarketControl,
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
            let fill = |id, client, leaves, side, role, account, fee| Fill {
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
                fee_asset: 0,
                fee,
            };
            let (maker_role, taker_role) = if f.auction {
                (LiquidityRole::Auction, LiquidityRole::Auction)
            } else {
                (LiquidityRole::Maker, LiquidityRole::Taker)
            };
            let maker = fill(
                f.maker_id,
                f.maker_client_id,
                f.maker_leaves,
                f.taker_side.opposite(),
                maker_role,
                f.maker_account,
                f.maker_fee,
            );
            let taker = fill(
                f.taker_id,
                f.taker_client_id,
                f.taker_leaves,
                f.taker_side,
                taker_role,
                f.taker_account,
                f.taker_fee,
            );
            [
                Some((f.maker_account, maker.into())),
                Some((f.taker_account, taker.into())),
            ]
        }
        Event::Cancelled(c) => {
            let request_id = match c.reason {
                CancelReason::UserRequested | CancelReason::MassCancel => ctx.request_id,
                CancelReason::ListCancelled if ctx.targets_leg(c.id) => ctx.request_id,
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
        Event::Triggered(tr) => {
            let t = tr;
            let msg = peregrine_wire::v2::venue::Triggered {
                session_seq: 0,
                engine_seq: seq,
                engine_time: ctx.ts,
                order_id: t.id,
                client_order_id: t.client_id,
                trigger_price: t.trigger_price,
                last_price: t.last_price,
                report_seq: 0,
                instrument: t.instrument,
                account: t.account,
                side: t.side,
                cause: match t.cause {
                    TriggerCause::Price => field::TriggerCause::Price,
                    TriggerCause::Released => field::TriggerCause::Released,
                },
                reserved: Pad,
            };
            [Some((t.account, msg.into())), None]
        }
        Event::List(l) => [Some((l.account, list_status(l, ctx).into())), None],
        Event::Mmp(m) => {
            let msg = MmpMsg {
                session_seq: 0,
                engine_seq: seq,
                engine_time: t,
                request_id: match m.status {
                    MmpStatus::Triggered | MmpStatus::Thawed => 0,
                    _ => ctx.request_id.0,
                },
                window_ns: m.params.window_ns,
                max_qty: Qty::from_raw(m.params.max_qty),
                freeze_ns: m.params.freeze_ns,
                window_qty: Qty::from_raw(m.window_qty),
                report_seq: 0,
                instrument: m.instrument,
                account: m.account,
                max_fills: m.params.max_fills,
                window_fills: m.window_fills,
                action: match m.status {
                    MmpStatus::Set => field::MmpAction::Set,
                    MmpStatus::Reset | MmpStatus::Thawed => field::MmpAction::Reset,
                    MmpStatus::Cleared => field::MmpAction::Clear,
                    MmpStatus::Triggered => field::MmpAction::Triggered,
                },
                reserved: Pad,
            };
            [Some((m.account, msg.into())), None]
        }
        Event::LevelChanged(_)
        | Event::MassCancelled(_)
        | Event::PhaseChanged(_)
        | Event::Indicative(_) => [None, None],
    }
}

/// `ListStatus` for a list event.
fn list_status(l: &peregrine_book::ListUpdate, ctx: &Ctx<'_>) -> ListStatusMsg {
    let request_id = match l.status {
        ListStatus::Accepted | ListStatus::Rejected => l.client_id,
        ListStatus::Done if ctx.target.is_some_and(|(id, _)| id == l.list_id) => ctx.request_id,
        ListStatus::Done => ClientOrderId(0),
    };
    ListStatusMsg {
        session_seq: 0,
        engine_seq: ctx.engine_seq,
        engine_time: ctx.ts,
        list_id: l.list_id,
        client_list_id: l.client_id,
        request_id,
        leg0: l.legs[0],
        leg1: l.legs[1],
        leg2: l.legs[2],
        report_seq: 0,
        instrument: l.instrument,
        account: l.account,
        reason: l.reason.map_or(ReasonCode::NONE, reject_code),
        kind: l.kind,
        status: match l.status {
            ListStatus::Accepted => field::ListState::Accepted,
            ListStatus::Rejected => field::ListState::Rejected,
            ListStatus::Done => field::ListState::Done,
        },
        leg: l.leg,
        reserved: Pad,
    }
}

/// The terminal answer of a mass cancel that cancelled `cancelled` orders.
pub fn mass_cancel_done(
    ctx: &Ctx<'_>,
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
        CancelReason::ListCancelled => CancelCode::ListCancelled,
        CancelReason::Mmp => CancelCode::Mmp,
        CancelReason::BookFull => CancelCode::BookFull,
        CancelReason::PostOnlyWouldTake => CancelCode::PostOnlyWouldTake,
        CancelReason::Refused => CancelCode::Refused,
    }
    .reason()
}

/// Builds the `NewOrderExt`'s book order. Its `order` carries the instrument, the
/// session's account, the client's fields; ids are the engine's.
pub fn ext_order(m: &peregrine_wire::v2::venue::NewOrderExt, account: AccountId) -> ExtOrder {
    ExtOrder {
        order: peregrine_book::NewOrder {
            instrument: m.instrument,
            id: OrderId(0),
            client_id: m.client_order_id,
            account,
            side: m.side,
            order_type: m.order_type,
            tif: m.tif,
            stp: m.stp,
            price: m.price,
            qty: m.qty,
            expire_at: m.expire_at,
        },
        trigger: peregrine_book::Trigger {
            kind: m.trigger,
            unit: m.trail_unit,
            trail: i32::try_from(m.trail).unwrap_or(-1),
            price: m.stop_price,
        },
        display: m.display_qty,
    }
}

/// Builds the book's order list of a `NewOrderList` from `account` at `ts`.
pub fn order_list(
    m: &peregrine_wire::v2::venue::NewOrderList,
    account: AccountId,
    ts: Timestamp,
) -> ListRecord {
    let leg = |l: &field::ListLeg| ExtOrder {
        order: peregrine_book::NewOrder {
            instrument: m.instrument,
            id: OrderId(0),
            client_id: l.client_order_id,
            account,
            side: l.side,
            order_type: l.order_type,
            tif: l.tif,
            stp: l.stp,
            price: l.price,
            qty: l.qty,
            expire_at: l.expire_at,
        },
        trigger: peregrine_book::Trigger {
            kind: l.trigger,
            unit: l.trail_unit,
            trail: i32::try_from(l.trail).unwrap_or(-1),
            price: l.stop_price,
        },
        display: l.display_qty,
    };
    let blank = ExtOrder::plain(crate::codec::command::blank_order(m.instrument, account));
    let wire = m.legs();
    let mut legs = [leg(&wire[0]), leg(&wire[1]), leg(&wire[2])];
    for l in legs.iter_mut().skip(m.kind.legs()) {
        *l = blank;
    }
    ListRecord {
        ts,
        list: peregrine_book::OrderList {
            instrument: m.instrument,
            account,
            kind: m.kind,
            client_id: m.client_list_id,
            legs,
        },
    }
}

#[cfg(test)]
#[path = "reports_tests.rs"]
mod tests;
