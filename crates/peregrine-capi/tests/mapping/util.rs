//! Message and report builders, and a naive model of the challenge's own rules.

use peregrine_capi::{CancelMsg, ModifyMsg, NewOrderMsg, Report, ReportKind};

pub(crate) const BUY: u8 = 0;
pub(crate) const SELL: u8 = 1;

pub(crate) fn new(id: u64, seq: u64, side: u8, price: i64, qty: u32) -> NewOrderMsg {
    NewOrderMsg {
        order_id: id,
        sequence_number: seq,
        price_ticks: price,
        quantity: qty,
        side,
        ioc: 0,
        reserved: [0; 2],
    }
}

pub(crate) fn ioc(id: u64, seq: u64, side: u8, price: i64, qty: u32) -> NewOrderMsg {
    NewOrderMsg {
        ioc: 1,
        ..new(id, seq, side, price, qty)
    }
}

pub(crate) fn cancel(id: u64, seq: u64) -> CancelMsg {
    CancelMsg {
        order_id: id,
        sequence_number: seq,
    }
}

pub(crate) fn modify(id: u64, seq: u64, side: u8, price: i64, qty: u32) -> ModifyMsg {
    ModifyMsg {
        order_id: id,
        sequence_number: seq,
        new_price_ticks: price,
        new_quantity: qty,
        side,
        reserved: [0; 3],
    }
}

fn report(kind: ReportKind, seq: u64, side: u8, id: u64, price: i64, qty: u32) -> Report {
    Report {
        kind: kind as u8,
        side,
        sequence_number: seq,
        order_id: id,
        price_ticks: price,
        quantity: qty,
        ..Report::default()
    }
}

pub(crate) fn order_ack(seq: u64, side: u8, id: u64, price: i64, qty: u32) -> Report {
    report(ReportKind::OrderAck, seq, side, id, price, qty)
}

/// A trade: `side` and `taker` are the aggressor's, `price` the maker's.
pub(crate) fn trade(seq: u64, side: u8, price: i64, qty: u32, maker: u64, taker: u64) -> Report {
    Report {
        maker_order_id: maker,
        taker_order_id: taker,
        ..report(ReportKind::Trade, seq, side, taker, price, qty)
    }
}

pub(crate) fn cancel_ack(seq: u64, side: u8, id: u64, price: i64, qty: u32) -> Report {
    report(ReportKind::CancelAck, seq, side, id, price, qty)
}

pub(crate) fn modify_ack(seq: u64, side: u8, id: u64, price: i64, qty: u32) -> Report {
    report(ReportKind::ModifyAck, seq, side, id, price, qty)
}

pub(crate) fn cancel_reject(seq: u64, id: u64) -> Report {
    report(ReportKind::CancelReject, seq, 0, id, 0, 0)
}

pub(crate) fn modify_reject(seq: u64, id: u64) -> Report {
    report(ReportKind::ModifyReject, seq, 0, id, 0, 0)
}

/// One resting order of the model.
#[derive(Debug, Clone, Copy)]
struct Resting {
    id: u64,
    side: u8,
    price: i64,
    qty: u32,
}

/// The challenge's rules written down directly from its header, independently of
/// Peregrine: price-time priority over a list in arrival order, fills at the maker's
/// price, modify as cancel + reinsert at the back.
#[derive(Debug, Default)]
pub(crate) struct Model {
    resting: Vec<Resting>,
}

impl Model {
    fn take(
        &mut self,
        seq: u64,
        id: u64,
        side: u8,
        limit: i64,
        mut left: u32,
        out: &mut Vec<Report>,
    ) -> u32 {
        while left > 0 {
            let best = self
                .resting
                .iter()
                .enumerate()
                .filter(|(_, r)| {
                    r.side != side
                        && if side == BUY {
                            r.price <= limit
                        } else {
                            r.price >= limit
                        }
                })
                // Best price first; among equal prices the earliest (min_by_key keeps
                // the first of equal keys).
                .min_by_key(|(_, r)| if side == BUY { r.price } else { -r.price })
                .map(|(i, _)| i);
            let Some(i) = best else { break };
            let maker = &mut self.resting[i];
            let q = left.min(maker.qty);
            out.push(trade(seq, side, maker.price, q, maker.id, id));
            maker.qty -= q;
            left -= q;
            if maker.qty == 0 {
                self.resting.remove(i);
            }
        }
        left
    }

    fn find(&self, id: u64) -> Option<usize> {
        self.resting.iter().position(|r| r.id == id)
    }

    pub(crate) fn on_new(&mut self, m: &NewOrderMsg, out: &mut Vec<Report>) {
        let seq = m.sequence_number;
        out.push(order_ack(
            seq,
            m.side,
            m.order_id,
            m.price_ticks,
            m.quantity,
        ));
        let left = self.take(seq, m.order_id, m.side, m.price_ticks, m.quantity, out);
        if left == 0 {
            return;
        }
        if m.ioc != 0 {
            out.push(cancel_ack(seq, m.side, m.order_id, m.price_ticks, left));
        } else {
            self.resting.push(Resting {
                id: m.order_id,
                side: m.side,
                price: m.price_ticks,
                qty: left,
            });
        }
    }

    pub(crate) fn on_cancel(&mut self, m: &CancelMsg, out: &mut Vec<Report>) {
        match self.find(m.order_id) {
            Some(i) => {
                let r = self.resting.remove(i);
                out.push(cancel_ack(m.sequence_number, r.side, r.id, r.price, r.qty));
            }
            None => out.push(cancel_reject(m.sequence_number, m.order_id)),
        }
    }

    pub(crate) fn on_modify(&mut self, m: &ModifyMsg, out: &mut Vec<Report>) {
        let seq = m.sequence_number;
        let Some(i) = self.find(m.order_id) else {
            out.push(modify_reject(seq, m.order_id));
            return;
        };
        self.resting.remove(i);
        let left = self.take(
            seq,
            m.order_id,
            m.side,
            m.new_price_ticks,
            m.new_quantity,
            out,
        );
        if left > 0 {
            self.resting.push(Resting {
                id: m.order_id,
                side: m.side,
                price: m.new_price_ticks,
                qty: left,
            });
        }
        out.push(modify_ack(
            seq,
            m.side,
            m.order_id,
            m.new_price_ticks,
            m.new_quantity,
        ));
    }

    pub(crate) fn best_bid(&self) -> i64 {
        self.resting
            .iter()
            .filter(|r| r.side == BUY)
            .map(|r| r.price)
            .max()
            .unwrap_or(i64::MIN)
    }

    pub(crate) fn best_ask(&self) -> i64 {
        self.resting
            .iter()
            .filter(|r| r.side == SELL)
            .map(|r| r.price)
            .min()
            .unwrap_or(i64::MAX)
    }

    pub(crate) fn depth_at(&self, price: i64, side: u8) -> u64 {
        self.resting
            .iter()
            .filter(|r| r.side == side && r.price == price)
            .map(|r| u64::from(r.qty))
            .sum()
    }
}
