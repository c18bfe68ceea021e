//! Translations between the wire and the matching core: inbound requests to
//! [`Command`]s, and core [`Event`]s to outbound reports (with who gets each) and
//! feed messages. Pure functions, unit tested here.

use peregrine_book::{
    Action, Cancel, CancelReason, Command, CommandKind, Event, MassCancel, NewOrder, Replace,
};
use peregrine_types::{AccountId, ClientOrderId, InstrumentId, OrderId, Timestamp};
use peregrine_wire::md::{L2Update, MdMessage, Trade};
use peregrine_wire::{orders, reports, LiquidityRole, Outbound, ReasonCode, RequestKind};

/// Who receives an outbound report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dest {
    /// The session that sent the command being executed.
    Requester,
    /// The session owning this exchange order (maker fills, unsolicited cancels).
    OwnerOf(OrderId),
}

/// What the mapping needs to know about the command being executed.
#[derive(Debug, Clone, Copy)]
pub struct Ctx {
    /// Engine sequence number of the command.
    pub engine_seq: u64,
    /// Command time.
    pub ts: Timestamp,
    /// The new order being executed, if the command is one (for the fields that
    /// `Accepted` echoes and the book's event does not carry).
    pub new_order: Option<orders::NewOrder>,
    /// Client id of the cancel or mass cancel being executed (0 otherwise).
    pub request_id: ClientOrderId,
    /// Client id of the order a replace names, before the replace.
    pub orig_client_id: ClientOrderId,
}

/// Up to two reports per event (a fill goes to maker and taker).
pub type Reports = [Option<(Dest, Outbound)>; 2];

/// The command for an order-entry request from `account`. `None` for session
/// messages and for an all-instrument mass cancel (the caller expands it).
pub fn to_command(
    msg: &peregrine_wire::Inbound,
    account: AccountId,
    ts: Timestamp,
) -> Option<Command> {
    use peregrine_wire::Inbound as In;
    let action = match msg {
        In::NewOrder(o) => Action::New(NewOrder {
            instrument: o.instrument,
            id: OrderId(0),
            client_id: o.client_order_id,
            account,
            side: o.side,
            order_type: o.order_type,
            tif: o.tif,
            stp: o.stp,
            price: o.price,
            qty: o.qty,
            expire_at: o.expire_at,
        }),
        In::Cancel(c) => Action::Cancel(Cancel {
            instrument: c.instrument,
            id: c.order_id,
            account,
            client_id: c.client_order_id,
        }),
        In::Replace(r) => Action::Replace(Replace {
            instrument: r.instrument,
            id: r.order_id,
            account,
            client_id: r.client_order_id,
            price: r.new_price,
            qty: r.new_qty,
        }),
        In::MassCancel(m) => Action::MassCancel(MassCancel {
            instrument: m.instrument?,
            account,
            side: m.side,
        }),
        In::Login(_) | In::Logout(_) | In::ClientHeartbeat(_) => return None,
        // Admin requests are answered by the core's admin path, not the engine.
        In::Deposit(_) | In::Withdraw(_) | In::BalanceQuery(_) => return None,
    };
    Some(Command { ts, action })
}

/// The mass cancel of one instrument, for expanding an all-instrument request.
pub fn mass_cancel_of(
    m: &orders::MassCancel,
    instrument: InstrumentId,
    account: AccountId,
    ts: Timestamp,
) -> Command {
    Command {
        ts,
        action: Action::MassCancel(MassCancel {
            instrument,
            account,
            side: m.side,
        }),
    }
}

/// The private reports for one event.
pub fn reports_for(ev: &Event, ctx: &Ctx) -> Reports {
    let (seq, t) = (ctx.engine_seq, ctx.ts);
    match ev {
        Event::Accepted(a) => {
            let o = ctx.new_order;
            let msg = reports::Accepted {
                session_seq: 0,
                engine_seq: seq,
                engine_time: t,
                order_id: a.id,
                client_order_id: a.client_id,
                price: a.price,
                qty: a.qty,
                expire_at: o.map_or(Timestamp(0), |o| o.expire_at),
                instrument: a.instrument,
                side: a.side,
                order_type: o.map_or(peregrine_types::OrderType::Limit, |o| o.order_type),
                tif: o.map_or(peregrine_types::TimeInForce::Gtc, |o| o.tif),
                stp: o.map_or(peregrine_types::StpMode::None, |o| o.stp),
            };
            [Some((Dest::Requester, msg.into())), None]
        }
        Event::Rejected(r) => {
            let reason = ReasonCode(r.reason.code());
            let msg: Outbound = match r.command {
                CommandKind::New => reports::Rejected {
                    session_seq: 0,
                    engine_seq: seq,
                    engine_time: t,
                    client_order_id: r.client_id,
                    instrument: r.instrument,
                    reason,
                }
                .into(),
                kind => reports::CancelRejected {
                    session_seq: 0,
                    engine_seq: seq,
                    engine_time: t,
                    client_order_id: r.client_id,
                    order_id: r.id,
                    instrument: Some(r.instrument),
                    reason,
                    request_kind: match kind {
                        CommandKind::Replace => RequestKind::Replace,
                        CommandKind::MassCancel => RequestKind::MassCancel,
                        _ => RequestKind::Cancel,
                    },
                }
                .into(),
            };
            [Some((Dest::Requester, msg)), None]
        }
        Event::Fill(f) => {
            let fill = |id, client, leaves, side, role| reports::Fill {
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
            };
            let maker = fill(
                f.maker_id,
                f.maker_client_id,
                f.maker_leaves,
                f.taker_side.opposite(),
                LiquidityRole::Maker,
            );
            let taker = fill(
                f.taker_id,
                f.taker_client_id,
                f.taker_leaves,
                f.taker_side,
                LiquidityRole::Taker,
            );
            [
                Some((Dest::OwnerOf(f.maker_id), maker.into())),
                Some((Dest::OwnerOf(f.taker_id), taker.into())),
            ]
        }
        Event::Cancelled(c) => {
            let request_id = match c.reason {
                CancelReason::UserRequested | CancelReason::MassCancel => ctx.request_id,
                _ => ClientOrderId(0),
            };
            let msg = reports::Cancelled {
                session_seq: 0,
                engine_seq: seq,
                engine_time: t,
                order_id: c.id,
                client_order_id: c.client_id,
                request_id,
                cancelled_qty: c.qty,
                instrument: c.instrument,
                reason: ReasonCode(c.reason as u16),
                side: c.side,
            };
            [Some((Dest::OwnerOf(c.id), msg.into())), None]
        }
        Event::Replaced(r) => {
            let msg = reports::Replaced {
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
            };
            [Some((Dest::Requester, msg.into())), None]
        }
        Event::LevelChanged(_) | Event::MassCancelled(_) | Event::StatusChanged(_) => [None, None],
    }
}

/// The public feed message for one event, if any.
pub fn feed_for(ev: &Event, ts: Timestamp) -> Option<MdMessage> {
    match ev {
        Event::Fill(f) => Some(
            Trade {
                trade_id: f.trade_id,
                price: f.price,
                qty: f.qty,
                engine_time: ts,
                instrument: f.instrument,
                aggressor_side: f.taker_side,
            }
            .into(),
        ),
        Event::LevelChanged(l) => Some(
            L2Update {
                price: l.price,
                qty: l.qty,
                engine_time: ts,
                instrument: l.instrument,
                order_count: l.count,
                side: l.side,
            }
            .into(),
        ),
        _ => None,
    }
}

/// The feed message of a commitment.
pub fn commitment_message(c: &peregrine_commit::Commitment) -> MdMessage {
    peregrine_wire::md::Commitment {
        tick_seq: c.tick_seq,
        timestamp: Timestamp(c.timestamp),
        tx_count: c.tx_count,
        trade_count: c.trade_count,
        state_hash: c.state_hash,
        merkle_root: c.merkle_root,
    }
    .into()
}

#[cfg(test)]
mod tests;
