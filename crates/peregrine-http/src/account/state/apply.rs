//! Applying an exchange report to an account: orders accepted, filled, cancelled,
//! adopted, and lists moved; the waiting requests answered.

use super::*;

impl AccountState {
    /// The cancel request waiting under `id` (not a cancel-list one: its legs'
    /// `Cancelled` reports carry its id too, and its answer is the `ListStatus`).
    fn take_cancel(&mut self, id: u64) -> Option<Waiter> {
        match self.waiters.get(&id) {
            Some(Waiter::Cancel { .. }) => self.waiters.remove(&id),
            _ => None,
        }
    }

    /// A list's status report.
    fn list_report(&mut self, l: ListReport, out: &mut Vec<Change>) {
        let _ = out;
        let ms = l.time_ns / 1_000_000;
        match l.state {
            ListState::Rejected => {
                if let Some(Waiter::List { draft, tx, .. }) = self.waiters.remove(&l.coid) {
                    for c in draft.leg_coids {
                        self.waiters.remove(&c);
                    }
                    tx.send(Err(Failure::Refused(l.reason)));
                }
            }
            ListState::Accepted => {
                let legs: Vec<u64> = l.legs.iter().copied().filter(|&x| x != 0).collect();
                let list = match self.waiters.get_mut(&l.coid) {
                    Some(Waiter::List { draft, list_id, .. }) => {
                        *list_id = Some(l.list_id);
                        OrderList {
                            list_id: l.list_id,
                            symbol: draft.symbol,
                            client_list_id: draft.client_list_id.clone(),
                            kind: l.kind,
                            legs,
                            done: false,
                            rejected: false,
                            time_ms: ms,
                            update_ms: ms,
                        }
                    }
                    _ => {
                        let Some(&symbol) = self.symbols.get(&l.instrument.0) else {
                            self.unknown_reports += 1;
                            return;
                        };
                        OrderList {
                            list_id: l.list_id,
                            symbol,
                            client_list_id: format!("peregrine-{}", l.coid),
                            kind: l.kind,
                            legs,
                            done: false,
                            rejected: false,
                            time_ms: ms,
                            update_ms: ms,
                        }
                    }
                };
                self.list_changes.push(list.clone());
                self.lists.insert(l.list_id, list);
                self.list_order.push_back(l.list_id);
                while self.list_order.len() > LISTS_KEPT {
                    if let Some(old) = self.list_order.pop_front() {
                        self.lists.remove(&old);
                    }
                }
            }
            ListState::Done => {
                let list = self.lists.get_mut(&l.list_id).map(|x| {
                    x.done = true;
                    x.update_ms = ms;
                    x.clone()
                });
                if let Some(x) = &list {
                    self.list_changes.push(x.clone());
                }
                if let Some(Waiter::CancelList { tx }) = self.waiters.remove(&l.request_id) {
                    match list {
                        Some(x) => tx.send(Ok(x)),
                        None => tx.send(Err(Failure::Unknown)),
                    }
                }
            }
        }
    }

    fn retire(&mut self, order_id: u64) {
        self.closed.push_back(order_id);
        while self.closed.len() > CLOSED_KEPT {
            if let Some(old) = self.closed.pop_front() {
                if let Some(o) = self.orders.remove(&old) {
                    self.by_coid.remove(&o.coid);
                }
            }
        }
    }

    /// Applies one report; pushes the resulting changes onto `out`.
    pub fn apply(&mut self, r: &Report, out: &mut Vec<Change>) {
        match *r {
            Report::Accepted {
                order_id,
                coid,
                instrument,
                price,
                qty,
                time_ns,
                side,
                kind,
                tif,
                stp,
                ext,
                parked,
                list_id,
            } => {
                let foreign = Foreign {
                    symbol: self.symbols.get(&instrument.0).copied(),
                    kind,
                    tif,
                    stp,
                };
                let cond = Conditional {
                    ext,
                    parked,
                    list_id,
                };
                self.accepted(
                    order_id, coid, price, qty, side, foreign, cond, time_ns, out,
                );
            }
            Report::Triggered { order_id, time_ns } => {
                let Some(o) = self.orders.get_mut(&order_id) else {
                    self.unknown_reports += 1;
                    return;
                };
                let ms = time_ns / 1_000_000;
                o.working_ms = Some(ms);
                o.update_ms = ms;
                out.push(Change {
                    order: o.clone(),
                    exec: ExecType::Working,
                    fill: None,
                    cancel_client_id: None,
                    time_ns,
                });
            }
            Report::List(l) => self.list_report(l, out),
            Report::Open(o) => self.listed(o, out),
            Report::Rejected { coid, reason, .. } => {
                if let Some(w) = self.waiters.remove(&coid) {
                    fail(w, Failure::Refused(reason));
                }
            }
            Report::Fill {
                order_id,
                trade_id,
                price,
                qty,
                leaves,
                maker,
                fee,
                time_ns,
                ..
            } => {
                let Some(o) = self.orders.get_mut(&order_id) else {
                    self.unknown_reports += 1;
                    return;
                };
                let f = Fill {
                    trade_id,
                    price,
                    qty,
                    maker,
                    fee,
                    time_ms: time_ns / 1_000_000,
                };
                o.fill(f, leaves, !maker);
                out.push(Change {
                    order: o.clone(),
                    exec: ExecType::Trade,
                    fill: Some(f),
                    cancel_client_id: None,
                    time_ns,
                });
                if leaves == 0 {
                    self.finish(order_id);
                }
            }
            Report::Cancelled {
                order_id,
                request_id,
                cause,
                time_ns,
                ..
            } => {
                let Some(o) = self.orders.get_mut(&order_id) else {
                    self.unknown_reports += 1;
                    if let Some(Waiter::Cancel { tx, .. }) = self.take_cancel(request_id) {
                        tx.send(Err(Failure::Refused(0)));
                    }
                    return;
                };
                // A list leg cancelled by the list's resolution is `EXPIRED` on
                // Binance; by a cancel of the list, `CANCELED`.
                let cause = match cause {
                    crate::link::CancelCause::ListCancelled if request_id != 0 => {
                        crate::link::CancelCause::Requested
                    }
                    c => c,
                };
                let exec = o.cancel(cause, time_ns / 1_000_000);
                let order = o.clone();
                let mut cancel_client_id = None;
                if let Some(Waiter::Cancel { tx, new_client_id }) = self.take_cancel(request_id) {
                    cancel_client_id = Some(new_client_id);
                    tx.send(Ok(order.clone()));
                }
                out.push(Change {
                    order,
                    exec,
                    fill: None,
                    cancel_client_id,
                    time_ns,
                });
                self.finish(order_id);
            }
            Report::CancelRejected {
                request_id, reason, ..
            } => {
                if let Some(w) = self.waiters.remove(&request_id) {
                    fail(w, Failure::Refused(reason));
                }
            }
            Report::Replaced {
                order_id,
                coid,
                price,
                qty,
                time_ns,
            } => {
                let Some(o) = self.orders.get_mut(&order_id) else {
                    self.unknown_reports += 1;
                    return;
                };
                self.by_coid.remove(&o.coid);
                o.coid = coid;
                o.price = price;
                o.orig_qty = o.executed + qty;
                o.update_ms = time_ns / 1_000_000;
                self.by_coid.insert(coid, order_id);
                out.push(Change {
                    order: o.clone(),
                    exec: ExecType::Replaced,
                    fill: None,
                    cancel_client_id: None,
                    time_ns,
                });
            }
            Report::Balance {
                request_id,
                available,
                reserved,
                ..
            } => {
                if let Some(Waiter::Balance { tx }) = self.waiters.remove(&request_id) {
                    tx.send(Ok((available, reserved)));
                }
            }
            Report::BalanceRejected { request_id, reason } => {
                if let Some(w) = self.waiters.remove(&request_id) {
                    fail(w, Failure::Refused(reason));
                }
            }
        }
    }

    /// An open order the exchange listed: adopted when unknown (no change if known).
    fn listed(&mut self, o: OpenOrder, out: &mut Vec<Change>) {
        if self.orders.contains_key(&o.order_id) {
            return;
        }
        let Some(&symbol) = self.symbols.get(&o.instrument.0) else {
            return;
        };
        let time_ms = o.time_ns / 1_000_000;
        let order = Order {
            symbol,
            order_id: o.order_id,
            coid: o.coid,
            client_order_id: format!("peregrine-{}", o.coid),
            side: o.side,
            kind: order_type(o.kind),
            tif: o.tif,
            stp: Stp::None,
            price: o.price,
            orig_qty: o.open_qty,
            executed: 0,
            cum_quote: 0,
            status: Status::New,
            time_ms,
            update_ms: time_ms,
            entry_fills: Vec::new(),
            orig_quote: 0,
            ext: crate::link::Ext::NONE,
            list_id: -1,
            working_ms: Some(time_ms),
        };
        self.adopt(order, o.time_ns, out);
    }

    fn adopt(&mut self, order: Order, time_ns: u64, out: &mut Vec<Change>) {
        out.push(Change {
            order: order.clone(),
            exec: ExecType::New,
            fill: None,
            cancel_client_id: None,
            time_ns,
        });
        self.by_coid.insert(order.coid, order.order_id);
        self.open_ids.insert(
            (order.symbol, order.client_order_id.clone()),
            order.order_id,
        );
        self.orders.insert(order.order_id, order);
    }

    #[allow(clippy::too_many_arguments)]
    fn accepted(
        &mut self,
        order_id: u64,
        coid: u64,
        price: i64,
        qty: i64,
        side: Side,
        foreign: Foreign,
        cond: Conditional,
        time_ns: u64,
        out: &mut Vec<Change>,
    ) {
        let time_ms = time_ns / 1_000_000;
        let list_id = if cond.list_id == 0 {
            -1
        } else {
            cond.list_id as i64
        };
        let working_ms = (!cond.parked).then_some(time_ms);
        let (draft, resp) = match self.waiters.get_mut(&coid) {
            Some(Waiter::New {
                draft,
                resp,
                order_id: slot,
                ..
            }) => {
                *slot = Some(order_id);
                (Some(draft.clone()), *resp)
            }
            _ => (None, RespType::Ack),
        };
        let order = match draft {
            Some(d) => Order {
                symbol: d.symbol,
                order_id,
                coid,
                client_order_id: d.client_order_id,
                side,
                kind: d.kind,
                tif: d.wire.tif,
                stp: d.wire.stp,
                price: d.shown_price,
                orig_qty: qty,
                executed: 0,
                cum_quote: 0,
                status: Status::New,
                time_ms,
                update_ms: time_ms,
                entry_fills: Vec::new(),
                orig_quote: d.orig_quote,
                ext: cond.ext,
                list_id,
                working_ms,
            },
            None => {
                // Not placed by this process: another session of the account, or this
                // gateway before a restart (replayed). Adopted when its instrument is
                // known; its Binance client id is not, so it gets one.
                self.unknown_reports += 1;
                Order {
                    symbol: foreign.symbol.unwrap_or(usize::MAX),
                    order_id,
                    coid,
                    client_order_id: format!("peregrine-{coid}"),
                    side,
                    kind: OrderType::of(foreign.kind, cond.ext.trigger),
                    tif: foreign.tif,
                    stp: foreign.stp,
                    price,
                    orig_qty: qty,
                    executed: 0,
                    cum_quote: 0,
                    status: Status::New,
                    time_ms,
                    update_ms: time_ms,
                    entry_fills: Vec::new(),
                    orig_quote: 0,
                    ext: cond.ext,
                    list_id,
                    working_ms,
                }
            }
        };
        if order.symbol == usize::MAX {
            return;
        }
        out.push(Change {
            order: order.clone(),
            exec: ExecType::New,
            fill: None,
            cancel_client_id: None,
            time_ns,
        });
        self.by_coid.insert(coid, order_id);
        self.open_ids
            .insert((order.symbol, order.client_order_id.clone()), order_id);
        self.orders.insert(order_id, order.clone());
        if resp == RespType::Ack {
            if let Some(Waiter::New { tx: Some(tx), .. }) = self.waiters.remove(&coid) {
                tx.send(Ok(order));
            }
        }
    }

    /// The order reached a final state: answer its new-order request now.
    fn finish(&mut self, order_id: u64) {
        let Some(o) = self.orders.get(&order_id) else {
            return;
        };
        if let Some(Waiter::New { tx: Some(tx), .. }) = self.waiters.remove(&o.coid) {
            tx.send(Ok(o.clone()));
        }
        let key = (o.symbol, o.client_order_id.clone());
        if self.open_ids.get(&key) == Some(&order_id) {
            self.open_ids.remove(&key);
        }
        self.retire(order_id);
    }
}

/// An accepted order's trigger, iceberg and list.
#[derive(Debug, Clone, Copy)]
struct Conditional {
    ext: crate::link::Ext,
    parked: bool,
    list_id: u64,
}

/// What an accepted order's report says about it, for adopting it.
#[derive(Debug, Clone, Copy)]
struct Foreign {
    symbol: Option<usize>,
    kind: Kind,
    tif: Tif,
    stp: Stp,
}

fn order_type(kind: Kind) -> OrderType {
    OrderType::of(kind, peregrine_types::TriggerKind::None)
}
