//! Tests of [`AccountState`]: one per rule, and a property test of the order state
//! machine against a model of the exchange that emits the reports (accepts, fills,
//! cancels, expiries, replaces, rejects, orders placed elsewhere, dropped sessions).

use std::collections::BTreeMap;

use peregrine_types::{InstrumentId, Side};
use proptest::prelude::*;
use tokio::sync::oneshot::Receiver;

use super::*;
use crate::link::{CancelCause, Ext, Kind, NewOrder, OpenOrder, Report, Stp, Tif};

const INSTRUMENT: InstrumentId = InstrumentId(7);

fn account() -> AccountState {
    let mut st = AccountState::new(100);
    st.adopt_instruments([(INSTRUMENT.0, 0usize)].into_iter().collect());
    st
}

fn draft(coid: u64, client: &str, side: Side, price: i64, qty: i64, tif: Tif) -> Draft {
    Draft {
        symbol: 0,
        client_order_id: client.into(),
        kind: OrderType::Limit,
        wire: NewOrder {
            coid,
            instrument: INSTRUMENT,
            side,
            kind: Kind::Limit,
            tif,
            price,
            qty,
            stp: Stp::None,
            ext: Ext::NONE,
        },
        shown_price: price,
        orig_quote: 0,
    }
}

fn accepted(order_id: u64, coid: u64, side: Side, price: i64, qty: i64) -> Report {
    Report::Accepted {
        order_id,
        coid,
        instrument: INSTRUMENT,
        side,
        kind: Kind::Limit,
        tif: Tif::Gtc,
        stp: Stp::None,
        price,
        qty,
        ext: Ext::NONE,
        parked: false,
        list_id: 0,
        time_ns: 1_000_000 * order_id,
    }
}

fn fill(
    order_id: u64,
    coid: u64,
    trade_id: u64,
    price: i64,
    qty: i64,
    leaves: i64,
    maker: bool,
) -> Report {
    Report::Fill {
        order_id,
        coid,
        trade_id,
        price,
        qty,
        leaves,
        instrument: INSTRUMENT,
        side: Side::Buy,
        maker,
        fee: 0,
        time_ns: 5_000_000,
    }
}

fn cancelled(order_id: u64, coid: u64, request_id: u64, qty: i64, cause: CancelCause) -> Report {
    Report::Cancelled {
        order_id,
        coid,
        request_id,
        qty,
        instrument: INSTRUMENT,
        cause,
        time_ns: 9_000_000,
    }
}

fn apply(st: &mut AccountState, r: Report) -> Vec<Change> {
    let mut out = Vec::new();
    st.apply(&r, &mut out);
    out
}

fn answer<T: std::fmt::Debug>(rx: &mut Receiver<Answered<T>>) -> Option<T> {
    rx.try_recv().ok().map(|a| a.value)
}

#[test]
fn an_ack_is_answered_on_accept_a_result_at_the_end_of_the_read_with_its_fills() {
    let mut st = account();
    let mut ack = st.expect_new(draft(1, "a", Side::Buy, 100, 5, Tif::Gtc), RespType::Ack);
    let mut full = st.expect_new(draft(2, "b", Side::Buy, 101, 5, Tif::Gtc), RespType::Full);
    let ch = apply(&mut st, accepted(10, 1, Side::Buy, 100, 5));
    assert_eq!(ch.len(), 1);
    assert_eq!(
        (ch[0].exec, ch[0].order.status),
        (ExecType::New, Status::New)
    );
    assert_eq!(answer(&mut ack).unwrap().unwrap().order_id, 10);

    apply(&mut st, accepted(11, 2, Side::Buy, 101, 5));
    apply(&mut st, fill(11, 2, 900, 100, 2, 3, false));
    assert!(
        answer(&mut full).is_none(),
        "answered before the end of the read"
    );
    st.end_of_read();
    let o = answer(&mut full).unwrap().unwrap();
    assert_eq!(
        (o.status, o.executed, o.cum_quote),
        (Status::PartiallyFilled, 2, 200)
    );
    assert_eq!(o.entry_fills.len(), 1);
    assert_eq!(o.entry_fills[0].trade_id, 900);
    // A later (maker) fill is not an entry fill.
    apply(&mut st, fill(11, 2, 901, 101, 1, 2, true));
    assert_eq!(st.order(11).unwrap().entry_fills.len(), 1);
}

#[test]
fn a_reject_answers_with_its_reason_and_leaves_no_order() {
    let mut st = account();
    let mut rx = st.expect_new(draft(1, "a", Side::Sell, 100, 5, Tif::Gtc), RespType::Full);
    assert!(
        st.client_id_in_use(0, "a"),
        "a pending order's client id is in use"
    );
    let ch = apply(
        &mut st,
        Report::Rejected {
            coid: 1,
            reason: 7,
            time_ns: 0,
        },
    );
    assert!(ch.is_empty());
    assert_eq!(answer(&mut rx).unwrap().unwrap_err(), Failure::Refused(7));
    assert!(!st.client_id_in_use(0, "a"));
    assert!(st.open_orders(None).is_empty());
}

#[test]
fn the_last_fill_finishes_the_order_and_frees_its_client_id() {
    let mut st = account();
    let mut rx = st.expect_new(draft(1, "a", Side::Buy, 100, 4, Tif::Gtc), RespType::Result);
    apply(&mut st, accepted(10, 1, Side::Buy, 100, 4));
    st.end_of_read();
    assert_eq!(answer(&mut rx).unwrap().unwrap().status, Status::New);
    assert!(st.client_id_in_use(0, "a"));
    apply(&mut st, fill(10, 1, 1, 99, 1, 3, true));
    assert_eq!(st.order(10).unwrap().status, Status::PartiallyFilled);
    let ch = apply(&mut st, fill(10, 1, 2, 98, 3, 0, true));
    assert_eq!(
        (ch[0].exec, ch[0].order.status),
        (ExecType::Trade, Status::Filled)
    );
    assert_eq!(ch[0].fill.unwrap().trade_id, 2);
    let o = st.order(10).unwrap();
    assert_eq!((o.executed, o.cum_quote), (4, 99 + 3 * 98));
    assert!(!st.client_id_in_use(0, "a") && st.open_orders(None).is_empty());
    // The id may be used again; the old order is still found by it.
    assert_eq!(st.order_by_client_id(0, "a").unwrap().order_id, 10);
}

#[test]
fn cancels_answer_their_request_and_name_the_cancel_id() {
    let mut st = account();
    let _rx = st.expect_new(draft(1, "a", Side::Buy, 100, 4, Tif::Gtc), RespType::Ack);
    apply(&mut st, accepted(10, 1, Side::Buy, 100, 4));
    let mut rx = st.expect_cancel(50, "c-1".into());
    let ch = apply(&mut st, cancelled(10, 1, 50, 4, CancelCause::Requested));
    assert_eq!(
        (ch[0].exec, ch[0].order.status),
        (ExecType::Canceled, Status::Canceled)
    );
    assert_eq!(ch[0].cancel_client_id.as_deref(), Some("c-1"));
    assert_eq!(answer(&mut rx).unwrap().unwrap().status, Status::Canceled);
    // A cancel of a finished order: refused.
    let mut rx = st.expect_cancel(51, "c-2".into());
    apply(
        &mut st,
        Report::CancelRejected {
            request_id: 51,
            order_id: 10,
            reason: 3,
        },
    );
    assert_eq!(answer(&mut rx).unwrap().unwrap_err(), Failure::Refused(3));
}

#[test]
fn exchange_cancels_end_expired_or_expired_in_match() {
    for (cause, status, exec) in [
        (CancelCause::Unfilled, Status::Expired, ExecType::Expired),
        (
            CancelCause::FokUnfillable,
            Status::Expired,
            ExecType::Expired,
        ),
        (CancelCause::Expired, Status::Expired, ExecType::Expired),
        (CancelCause::Other(99), Status::Expired, ExecType::Expired),
        (
            CancelCause::SelfTrade,
            Status::ExpiredInMatch,
            ExecType::TradePrevention,
        ),
        (CancelCause::Mass, Status::Canceled, ExecType::Canceled),
    ] {
        let mut st = account();
        let mut rx = st.expect_new(draft(1, "a", Side::Buy, 100, 4, Tif::Ioc), RespType::Full);
        apply(&mut st, accepted(10, 1, Side::Buy, 100, 4));
        let ch = apply(&mut st, cancelled(10, 1, 0, 4, cause));
        assert_eq!(
            (ch[0].order.status, ch[0].exec),
            (status, exec),
            "{cause:?}"
        );
        // A final state answers the new-order request at once.
        assert_eq!(answer(&mut rx).unwrap().unwrap().status, status);
    }
}

#[test]
fn a_replace_changes_price_and_quantity_and_remaps_the_session_id() {
    let mut st = account();
    let _rx = st.expect_new(draft(1, "a", Side::Buy, 100, 10, Tif::Gtc), RespType::Ack);
    apply(&mut st, accepted(10, 1, Side::Buy, 100, 10));
    apply(&mut st, fill(10, 1, 1, 100, 4, 6, true));
    let ch = apply(
        &mut st,
        Report::Replaced {
            order_id: 10,
            coid: 77,
            price: 95,
            qty: 3,
            time_ns: 0,
        },
    );
    assert_eq!(ch[0].exec, ExecType::Replaced);
    let o = st.order(10).unwrap();
    assert_eq!((o.price, o.orig_qty, o.executed, o.coid), (95, 7, 4, 77));
    // Reports under the new session id reach it.
    apply(&mut st, fill(10, 77, 2, 95, 3, 0, true));
    assert_eq!(st.order(10).unwrap().status, Status::Filled);
}

#[test]
fn orders_placed_elsewhere_are_adopted_once_and_unknown_reports_counted() {
    let mut st = account();
    let ch = apply(&mut st, accepted(20, 555, Side::Sell, 120, 3));
    assert_eq!(ch[0].order.client_order_id, "peregrine-555");
    assert_eq!(st.unknown_reports, 1);
    let listed = OpenOrder {
        order_id: 20,
        coid: 555,
        instrument: INSTRUMENT,
        side: Side::Sell,
        kind: Kind::Limit,
        tif: Tif::Gtc,
        price: 120,
        open_qty: 3,
        time_ns: 0,
    };
    assert!(
        apply(&mut st, Report::Open(listed)).is_empty(),
        "listed twice"
    );
    let other = OpenOrder {
        order_id: 21,
        ..listed
    };
    assert_eq!(apply(&mut st, Report::Open(other)).len(), 1);
    assert_eq!(st.open_orders(None).len(), 2);
    // On an instrument the gateway does not serve: not adopted.
    let foreign = Report::Accepted {
        order_id: 22,
        coid: 9,
        instrument: InstrumentId(99),
        side: Side::Buy,
        kind: Kind::Limit,
        tif: Tif::Gtc,
        stp: Stp::None,
        price: 1,
        qty: 1,
        ext: Ext::NONE,
        parked: false,
        list_id: 0,
        time_ns: 0,
    };
    assert!(apply(&mut st, foreign).is_empty());
    assert!(apply(&mut st, fill(404, 1, 1, 1, 1, 0, true)).is_empty());
    assert_eq!(st.unknown_reports, 3);
}

#[test]
fn a_dropped_session_fails_every_waiter_as_unknown() {
    let mut st = account();
    let mut n = st.expect_new(draft(1, "a", Side::Buy, 100, 1, Tif::Gtc), RespType::Full);
    let mut c = st.expect_cancel(2, "x".into());
    let mut b = st.expect_balance(3);
    st.fail_all(Failure::Unknown);
    assert_eq!(answer(&mut n).unwrap().unwrap_err(), Failure::Unknown);
    assert_eq!(answer(&mut c).unwrap().unwrap_err(), Failure::Unknown);
    assert_eq!(answer(&mut b).unwrap().unwrap_err(), Failure::Unknown);
    let mut b = st.expect_balance(4);
    st.forget(4, Failure::NotSent);
    assert_eq!(answer(&mut b).unwrap().unwrap_err(), Failure::NotSent);
}

#[test]
fn closed_orders_are_kept_up_to_the_bound() {
    let mut st = account();
    for i in 0..(CLOSED_KEPT as u64 + 10) {
        apply(&mut st, accepted(1000 + i, 5000 + i, Side::Buy, 100, 1));
        apply(&mut st, fill(1000 + i, 5000 + i, i, 100, 1, 0, true));
    }
    assert!(
        st.order(1000).is_none(),
        "the oldest closed order is dropped"
    );
    assert!(st.order(1000 + CLOSED_KEPT as u64 + 9).is_some());
}

/// One step of the model exchange.
#[derive(Debug, Clone)]
enum Step {
    /// A new order from this gateway; the exchange accepts it (or rejects it) and
    /// it may trade at once (fills of `lots` each, up to its quantity) or, for
    /// IOC, lose its rest.
    Place {
        qty: i64,
        price: i64,
        ioc: bool,
        reject: bool,
        lots: Vec<i64>,
        resp: u8,
    },
    /// Another party trades with open order `pick` (by index), `qty` at most.
    Trade { pick: usize, qty: i64 },
    /// This gateway cancels open order `pick` (`stale`: one already finished).
    Cancel { pick: usize, stale: bool },
    /// The exchange replaces open order `pick`'s price and open quantity.
    Replace { pick: usize, price: i64, open: i64 },
    /// An order entered by another session of the account.
    Elsewhere { qty: i64 },
    /// The session drops (every waiter fails).
    Drop,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => (1i64..20, 90i64..110, any::<bool>(), prop::bool::weighted(0.1), prop::collection::vec(1i64..8, 0..3), 0u8..3)
            .prop_map(|(qty, price, ioc, reject, lots, resp)| Step::Place { qty, price, ioc, reject, lots, resp }),
        3 => (0usize..8, 1i64..10).prop_map(|(pick, qty)| Step::Trade { pick, qty }),
        2 => (0usize..8, prop::bool::weighted(0.2)).prop_map(|(pick, stale)| Step::Cancel { pick, stale }),
        1 => (0usize..8, 90i64..110, 1i64..20).prop_map(|(pick, price, open)| Step::Replace { pick, price, open }),
        1 => (1i64..20).prop_map(|qty| Step::Elsewhere { qty }),
        1 => Just(Step::Drop),
    ]
}

/// What the exchange knows of one order.
#[derive(Debug, Clone)]
struct Truth {
    client: String,
    coid: u64,
    price: i64,
    orig: i64,
    filled: i64,
    quote: i128,
    open: bool,
    status: Status,
}

struct Model {
    st: AccountState,
    orders: BTreeMap<u64, Truth>,
    next_order: u64,
    next_trade: u64,
    next_req: u64,
    waiting: Vec<(u64, Receiver<Answered<NewAnswer>>)>,
}

impl Model {
    fn send(&mut self, r: Report) -> Vec<Change> {
        apply(&mut self.st, r)
    }

    fn open_ids(&self) -> Vec<u64> {
        self.orders
            .iter()
            .filter(|(_, t)| t.open)
            .map(|(id, _)| *id)
            .collect()
    }

    fn trade(&mut self, id: u64, qty: i64, maker: bool) {
        let t = self.orders.get_mut(&id).unwrap();
        let qty = qty.min(t.orig - t.filled);
        if qty <= 0 {
            return;
        }
        t.filled += qty;
        t.quote += i128::from(t.price) * i128::from(qty);
        let leaves = t.orig - t.filled;
        if leaves == 0 {
            t.open = false;
            t.status = Status::Filled;
        } else {
            t.status = Status::PartiallyFilled;
        }
        let (coid, price) = (t.coid, t.price);
        self.next_trade += 1;
        let ch = self.send(fill(id, coid, self.next_trade, price, qty, leaves, maker));
        assert_eq!(ch.len(), 1);
        assert_eq!(ch[0].exec, ExecType::Trade);
    }

    fn exchange_cancel(
        &mut self,
        id: u64,
        request_id: u64,
        cause: CancelCause,
        status: Status,
    ) -> Vec<Change> {
        let t = self.orders.get_mut(&id).unwrap();
        t.open = false;
        t.status = status;
        let (coid, left) = (t.coid, t.orig - t.filled);
        self.send(cancelled(id, coid, request_id, left, cause))
    }

    fn run(&mut self, s: &Step) {
        match s.clone() {
            Step::Place {
                qty,
                price,
                ioc,
                reject,
                lots,
                resp,
            } => {
                self.next_req += 1;
                let coid = 1_000 + self.next_req;
                let tif = if ioc { Tif::Ioc } else { Tif::Gtc };
                let resp = [RespType::Ack, RespType::Result, RespType::Full][usize::from(resp)];
                let rx = self.st.expect_new(
                    draft(coid, &format!("c{coid}"), Side::Buy, price, qty, tif),
                    resp,
                );
                if reject {
                    self.send(Report::Rejected {
                        coid,
                        reason: 4,
                        time_ns: 0,
                    });
                    let mut rx = rx;
                    assert_eq!(answer(&mut rx).unwrap().unwrap_err(), Failure::Refused(4));
                    return;
                }
                self.next_order += 1;
                let id = self.next_order;
                self.orders.insert(
                    id,
                    Truth {
                        client: format!("c{coid}"),
                        coid,
                        price,
                        orig: qty,
                        filled: 0,
                        quote: 0,
                        open: true,
                        status: Status::New,
                    },
                );
                let ch = self.send(accepted(id, coid, Side::Buy, price, qty));
                assert_eq!(ch.len(), 1);
                for l in lots {
                    if self.orders[&id].open {
                        self.trade(id, l, false);
                    }
                }
                if ioc && self.orders[&id].open {
                    self.exchange_cancel(id, 0, CancelCause::Unfilled, Status::Expired);
                }
                self.st.end_of_read();
                self.waiting.push((id, rx));
            }
            Step::Trade { pick, qty } => {
                let open = self.open_ids();
                if let Some(&id) = open.get(pick % open.len().max(1)) {
                    self.trade(id, qty, true);
                }
            }
            Step::Cancel { pick, stale } => {
                let ids: Vec<u64> = if stale {
                    self.orders
                        .iter()
                        .filter(|(_, t)| !t.open)
                        .map(|(id, _)| *id)
                        .collect()
                } else {
                    self.open_ids()
                };
                let Some(&id) = ids.get(pick % ids.len().max(1)) else {
                    return;
                };
                self.next_req += 1;
                let req = 5_000 + self.next_req;
                let mut rx = self.st.expect_cancel(req, format!("x{req}"));
                if stale {
                    self.send(Report::CancelRejected {
                        request_id: req,
                        order_id: id,
                        reason: 2,
                    });
                    assert_eq!(answer(&mut rx).unwrap().unwrap_err(), Failure::Refused(2));
                } else {
                    let ch =
                        self.exchange_cancel(id, req, CancelCause::Requested, Status::Canceled);
                    assert_eq!(
                        ch[0].cancel_client_id.as_deref(),
                        Some(format!("x{req}").as_str())
                    );
                    assert_eq!(answer(&mut rx).unwrap().unwrap().status, Status::Canceled);
                }
            }
            Step::Replace { pick, price, open } => {
                let ids = self.open_ids();
                let Some(&id) = ids.get(pick % ids.len().max(1)) else {
                    return;
                };
                self.next_req += 1;
                let coid = 9_000 + self.next_req;
                let t = self.orders.get_mut(&id).unwrap();
                t.coid = coid;
                t.price = price;
                t.orig = t.filled + open;
                self.send(Report::Replaced {
                    order_id: id,
                    coid,
                    price,
                    qty: open,
                    time_ns: 0,
                });
            }
            Step::Elsewhere { qty } => {
                self.next_order += 1;
                let id = self.next_order;
                self.next_req += 1;
                let coid = 20_000 + self.next_req;
                self.orders.insert(
                    id,
                    Truth {
                        client: format!("peregrine-{coid}"),
                        coid,
                        price: 100,
                        orig: qty,
                        filled: 0,
                        quote: 0,
                        open: true,
                        status: Status::New,
                    },
                );
                let ch = self.send(accepted(id, coid, Side::Buy, 100, qty));
                assert_eq!(ch[0].order.client_order_id, format!("peregrine-{coid}"));
            }
            Step::Drop => self.st.fail_all(Failure::Unknown),
        }
    }

    /// The gateway's view equals the exchange's, order by order.
    fn check(&mut self) -> Result<(), TestCaseError> {
        for (id, t) in &self.orders {
            let Some(o) = self.st.order(*id) else {
                prop_assert!(false, "order {id} unknown to the gateway");
                unreachable!()
            };
            prop_assert_eq!(o.status, t.status, "order {}", id);
            prop_assert_eq!(o.executed, t.filled);
            prop_assert_eq!(o.orig_qty, t.orig);
            prop_assert_eq!(o.cum_quote, t.quote);
            prop_assert_eq!(o.price, t.price);
            prop_assert!(o.executed <= o.orig_qty);
            // An open order holds its client id; a finished one frees it.
            prop_assert_eq!(
                self.st.client_id_in_use(0, &t.client),
                t.open,
                "order {}",
                id
            );
        }
        let mut open: Vec<u64> = self
            .st
            .open_orders(None)
            .iter()
            .map(|o| o.order_id)
            .collect();
        open.sort_unstable();
        prop_assert_eq!(open, self.open_ids());
        // Every new-order request got its answer, consistent with the exchange.
        for (id, rx) in &mut self.waiting {
            if let Some(a) = answer(rx) {
                match a {
                    Ok(o) => prop_assert_eq!(o.order_id, *id),
                    Err(f) => prop_assert_eq!(f, Failure::Unknown),
                }
            }
        }
        self.waiting.retain(|(_, rx)| !rx.is_terminated());
        prop_assert!(
            self.waiting.is_empty(),
            "a new-order request left unanswered"
        );
        Ok(())
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(if cfg!(miri) { 8 } else { 256 }))]
    /// Any sequence of exchange activity: the gateway's orders match the exchange's
    /// (status, filled quantity and amount, quantity, price), its open orders are
    /// exactly the exchange's, and every request is answered.
    #[test]
    fn prop_order_state_follows_the_exchange_reports(steps in prop::collection::vec(step(), 1..60)) {
        let mut m = Model {
            st: account(),
            orders: BTreeMap::new(),
            next_order: 0,
            next_trade: 0,
            next_req: 0,
            waiting: Vec::new(),
        };
        for s in &steps {
            m.run(s);
            m.check()?;
        }
    }
}

/// Conditional orders, fees and order lists (issue 31).
mod conditional {
    use super::*;
    use crate::link::{ListReport, ListState};
    use peregrine_types::{ListKind, TriggerKind};

    fn stop_ext() -> Ext {
        Ext {
            trigger: TriggerKind::StopLoss,
            stop_price: 99,
            trail_bps: 0,
            display_qty: 0,
        }
    }

    fn parked(order_id: u64, coid: u64, list_id: u64) -> Report {
        match accepted(order_id, coid, Side::Sell, 98, 2) {
            Report::Accepted {
                order_id,
                coid,
                instrument,
                side,
                kind,
                tif,
                stp,
                price,
                qty,
                time_ns,
                ..
            } => Report::Accepted {
                order_id,
                coid,
                instrument,
                side,
                kind,
                tif,
                stp,
                price,
                qty,
                ext: stop_ext(),
                parked: true,
                list_id,
                time_ns,
            },
            _ => unreachable!(),
        }
    }

    #[test]
    fn a_stop_waits_unworking_then_works_from_its_trigger_and_fills_carry_the_fee() {
        let mut st = account();
        let mut d = draft(1, "s", Side::Sell, 98, 2, Tif::Gtc);
        d.kind = OrderType::StopLossLimit;
        let mut rx = st.expect_new(d, RespType::Ack);
        let ch = apply(&mut st, parked(10, 1, 0));
        assert_eq!(ch[0].order.working_ms, None);
        let o = answer(&mut rx).unwrap().unwrap();
        assert_eq!(
            (o.kind, o.ext.stop_price, o.list_id),
            (OrderType::StopLossLimit, 99, -1)
        );
        let ch = apply(
            &mut st,
            Report::Triggered {
                order_id: 10,
                time_ns: 7_000_000,
            },
        );
        assert_eq!(
            (ch[0].exec, ch[0].order.working_ms),
            (ExecType::Working, Some(7))
        );
        assert_eq!(ch[0].exec.name(), "NEW");
        let mut f = fill(10, 1, 5, 98, 2, 0, true);
        if let Report::Fill { fee, .. } = &mut f {
            *fee = -3;
        }
        let ch = apply(&mut st, f);
        assert_eq!(ch[0].fill.map(|f| f.fee), Some(-3));
        assert_eq!(ch[0].order.status, Status::Filled);
    }

    #[test]
    fn a_foreign_stop_is_adopted_with_its_api_type() {
        let mut st = account();
        apply(&mut st, parked(20, 77, 0));
        assert_eq!(st.order(20).unwrap().kind, OrderType::StopLossLimit);
    }

    fn list(state: ListState, coid: u64, request_id: u64) -> Report {
        Report::List(ListReport {
            list_id: 30,
            request_id,
            coid,
            legs: [30, 31, 0],
            instrument: INSTRUMENT,
            kind: ListKind::Oco,
            state,
            reason: 0,
            time_ns: 1_000_000,
        })
    }

    #[test]
    fn a_list_is_answered_with_its_legs_and_its_end_is_reported() {
        let mut st = account();
        let draft_list = ListDraft {
            symbol: 0,
            client_list_id: "my-list".into(),
            kind: ListKind::Oco,
            leg_coids: vec![2, 3],
        };
        let legs = vec![
            draft(2, "below", Side::Sell, 98, 2, Tif::Gtc),
            draft(3, "above", Side::Sell, 104, 2, Tif::Gtc),
        ];
        let mut rx = st.expect_list(1, draft_list, legs);
        apply(&mut st, list(ListState::Accepted, 1, 1));
        apply(&mut st, parked(30, 2, 30));
        apply(&mut st, accepted(31, 3, Side::Sell, 104, 2));
        assert!(
            answer(&mut rx).is_none(),
            "answered before the end of the read"
        );
        st.end_of_read();
        let l = answer(&mut rx).unwrap().unwrap();
        assert_eq!(
            (l.list_id, l.legs.clone(), l.client_list_id.as_str()),
            (30, vec![30, 31], "my-list")
        );
        assert_eq!(st.order(30).unwrap().client_order_id, "below");
        assert_eq!(st.order(30).unwrap().list_id, 30);
        assert_eq!(st.take_list_changes().len(), 1);
        // A cancel of the list is answered by its end.
        let mut cancel = st.expect_cancel_list(40);
        apply(&mut st, list(ListState::Done, 1, 40));
        let done = answer(&mut cancel).unwrap().unwrap();
        assert!(done.done);
        assert_eq!(done.order_status(), "ALL_DONE");
        assert!(st.lists().iter().all(|l| l.done));
    }

    #[test]
    fn a_rejected_list_fails_its_request_and_forgets_its_legs() {
        let mut st = account();
        let d = ListDraft {
            symbol: 0,
            client_list_id: "x".into(),
            kind: ListKind::Oco,
            leg_coids: vec![2, 3],
        };
        let legs = vec![
            draft(2, "a", Side::Sell, 98, 2, Tif::Gtc),
            draft(3, "b", Side::Sell, 104, 2, Tif::Gtc),
        ];
        let mut rx = st.expect_list(1, d, legs);
        let mut r = list(ListState::Rejected, 1, 1);
        if let Report::List(l) = &mut r {
            l.reason = 35;
            l.list_id = 0;
        }
        apply(&mut st, r);
        assert_eq!(answer(&mut rx).unwrap().unwrap_err(), Failure::Refused(35));
        // The legs' drafts are gone: a late accept of one is a foreign order.
        apply(&mut st, accepted(50, 2, Side::Sell, 98, 2));
        assert_eq!(st.order(50).unwrap().client_order_id, "peregrine-2");
    }
}
