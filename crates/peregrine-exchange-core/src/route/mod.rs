//! Translations between the wire and the matching core: inbound requests to
//! [`Command`]s, core events to private reports ([`reports`]: which account's stream
//! each belongs to) and to feed messages, instrument specs to definitions
//! ([`reference`](mod@reference)). Pure functions, unit tested.

pub mod reference;
pub mod reports;

use peregrine_book::{
    Action, Cancel, CancelList, Command, Event, MmpCommand, MmpOp, MmpParams, NewOrder, Replace,
};
use peregrine_types::{AccountId, OrderId, Timestamp};
use peregrine_wire::field::{MmpAction, Pad};
use peregrine_wire::md::{AuctionIndicative, L2Update, MarketStatus, MdMessage, Trade};
use peregrine_wire::v2::Inbound;

/// The book command for an order-entry request from `account`: `None` for session
/// messages, mass cancels (journaled whole, run by the core over their scope), order
/// lists (journaled whole), market controls (admins only), queries and admin
/// requests (answered by the core's own paths).
pub fn to_command(msg: &Inbound, account: AccountId, ts: Timestamp) -> Option<Command> {
    let action = match msg {
        Inbound::NewOrder(o) => Action::New(NewOrder {
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
        Inbound::Cancel(c) => Action::Cancel(Cancel {
            instrument: c.instrument,
            id: c.order_id,
            account,
            client_id: c.client_order_id,
        }),
        Inbound::Replace(r) => Action::Replace(Replace {
            instrument: r.instrument,
            id: r.order_id,
            account,
            client_id: r.client_order_id,
            price: r.new_price,
            qty: r.new_qty,
        }),
        Inbound::NewOrderExt(m) => Action::NewExt(reports::ext_order(m, account)),
        Inbound::CancelList(c) => Action::CancelList(CancelList {
            instrument: c.instrument,
            list_id: c.list_id,
            account,
            client_id: c.client_order_id,
        }),
        Inbound::MmpRequest(m) => Action::Mmp(MmpCommand {
            instrument: m.instrument,
            account,
            op: match m.action {
                MmpAction::Set => MmpOp::Set(MmpParams {
                    window_ns: m.window_ns,
                    max_qty: m.max_qty.lots(),
                    max_fills: m.max_fills,
                    freeze_ns: m.freeze_ns,
                }),
                MmpAction::Reset => MmpOp::Reset,
                MmpAction::Clear => MmpOp::Clear,
                // Only the exchange reports a trip: a request for one is read as a
                // `Set` of zero limits, which the book refuses (`invalid_mmp`).
                MmpAction::Triggered => MmpOp::Set(MmpParams::default()),
            },
            request_id: m.request_id,
        }),
        Inbound::MassCancel(_)
        | Inbound::NewOrderList(_)
        | Inbound::MarketControl(_)
        | Inbound::Login(_)
        | Inbound::Logout(_)
        | Inbound::ClientHeartbeat(_)
        | Inbound::OrderStatusRequest(_)
        | Inbound::OpenOrdersRequest(_)
        | Inbound::Deposit(_)
        | Inbound::Withdraw(_)
        | Inbound::BalanceQuery(_) => return None,
    };
    Some(Command { ts, action })
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
        Event::PhaseChanged(p) => Some(
            MarketStatus {
                ends_at: p.ends_at,
                engine_time: ts,
                instrument: p.instrument,
                phase: p.phase,
                reserved: Pad,
            }
            .into(),
        ),
        Event::Indicative(i) => Some(
            AuctionIndicative {
                price: i.price,
                volume: i.volume,
                surplus: i.surplus,
                engine_time: ts,
                instrument: i.instrument,
                surplus_side: i.surplus_side,
                reserved: Pad,
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
