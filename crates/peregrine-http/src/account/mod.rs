//! Accounts: per account, the orders and outstanding requests ([`state`]), the
//! exchange session that carries them, and the outputs of every change (user-data
//! stream events, history records).
//!
//! [`Accounts`] is the [`ReportSink`] of every session: reports are applied under the
//! account's mutex (held for microseconds, never across an await), then the changes
//! are published outside it.

pub mod events;
pub mod lists;
pub mod order;
pub mod record;
pub mod state;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use peregrine_types::AccountId;
use tokio::sync::mpsc::UnboundedSender;

use crate::link::session::{SendError, SessionHandle};
use crate::link::{Report, ReportSink, Request};
use crate::market::feed::now_ms;
use crate::market::hub::Hub;
use crate::market::symbols::Symbols;
use crate::telemetry::{OrderStages, OrderStamps};
use crate::venue::Asset;
use order::Order;
use record::{HistoryRecord, OrderRecord};
use state::{AccountState, Answered, Change, Draft, Failure, RespType};

/// Why a request could not be made at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// No session with the exchange for the account.
    Down,
    /// The session's queue is full.
    Busy,
    /// No answer in time (the outcome is unknown).
    Timeout,
    /// The answer: a failure.
    Failed(Failure),
}

struct Slot {
    state: Mutex<AccountState>,
    up: AtomicBool,
    balance_refresh: AtomicBool,
}

/// Every account the gateway trades for.
pub struct Accounts {
    slots: HashMap<u32, Slot>,
    sessions: OnceLock<HashMap<u32, SessionHandle>>,
    symbols: Symbols,
    hub: Arc<Hub>,
    history: Option<UnboundedSender<HistoryRecord>>,
    assets: Vec<Asset>,
    timeout: Duration,
    /// Where new orders' time goes (`/metrics`, `/peregrine/status`).
    pub stages: OrderStages,
}

impl std::fmt::Debug for Accounts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Accounts")
            .field("accounts", &self.slots.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl Accounts {
    /// State for `accounts`; sessions are attached with [`Accounts::attach`].
    pub fn new(
        accounts: &[u32],
        symbols: Symbols,
        hub: Arc<Hub>,
        history: Option<UnboundedSender<HistoryRecord>>,
        assets: Vec<Asset>,
        timeout: Duration,
    ) -> Accounts {
        let first = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_micros() as u64);
        let instruments: HashMap<u32, usize> = symbols
            .all()
            .iter()
            .enumerate()
            .map(|(i, s)| (s.id().0, i))
            .collect();
        let slots = accounts
            .iter()
            .map(|&a| {
                let mut state = AccountState::new(first);
                state.adopt_instruments(instruments.clone());
                (
                    a,
                    Slot {
                        state: Mutex::new(state),
                        up: AtomicBool::new(false),
                        balance_refresh: AtomicBool::new(false),
                    },
                )
            })
            .collect();
        Accounts {
            slots,
            sessions: OnceLock::new(),
            symbols,
            hub,
            history,
            assets,
            timeout,
            stages: OrderStages::default(),
        }
    }

    /// Attaches the sessions (once).
    pub fn attach(&self, sessions: HashMap<u32, SessionHandle>) {
        let _ = self.sessions.set(sessions);
    }

    /// The account's state, locked. Panics on an account the gateway does not
    /// trade for (callers resolve accounts from API keys, which are all configured).
    pub fn lock(&self, account: AccountId) -> MutexGuard<'_, AccountState> {
        self.slots[&account.0]
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Is the account's exchange session up?
    pub fn is_up(&self, account: AccountId) -> bool {
        // Relaxed: a status flag, read for reporting and fast refusal.
        self.slots
            .get(&account.0)
            .is_some_and(|s| s.up.load(Ordering::Relaxed))
    }

    /// Assets (with balances).
    pub fn assets(&self) -> &[Asset] {
        &self.assets
    }

    fn send(&self, account: AccountId, r: Request) -> Result<(), Refusal> {
        let Some(h) = self.sessions.get().and_then(|s| s.get(&account.0)) else {
            return Err(Refusal::Down);
        };
        if !self.is_up(account) {
            return Err(Refusal::Down);
        }
        h.send(r).map_err(|e| match e {
            SendError::Busy => Refusal::Busy,
            SendError::Closed => Refusal::Down,
        })
    }

    /// Waits for the answer to request `id`; its value and when it was given.
    async fn wait<T>(
        &self,
        account: AccountId,
        id: u64,
        rx: tokio::sync::oneshot::Receiver<Answered<Result<T, Failure>>>,
    ) -> Result<(T, Instant), Refusal> {
        match tokio::time::timeout(self.timeout, rx).await {
            Ok(Ok(Answered { value: Ok(v), at })) => Ok((v, at)),
            Ok(Ok(Answered { value: Err(f), .. })) => Err(Refusal::Failed(f)),
            Ok(Err(_)) => Err(Refusal::Failed(Failure::Unknown)),
            Err(_) => {
                self.lock(account).forget(id, Failure::Unknown);
                Err(Refusal::Timeout)
            }
        }
    }

    /// Places an order: registers it, sends it, waits for the answer `resp` asks
    /// for. `draft.wire.coid` is filled in here. `arrived` and `entered`: when the
    /// request reached the service and its handler; the answer comes with the
    /// order's stamps so far (the caller records them once its response is built).
    pub async fn place(
        &self,
        account: AccountId,
        mut draft: Draft,
        resp: RespType,
        (arrived, entered): (Instant, Instant),
    ) -> Result<(Order, OrderStamps), Refusal> {
        let (id, rx) = {
            let mut st = self.lock(account);
            let id = st.next_id();
            draft.wire.coid = id;
            let rx = st.expect_new(draft.clone(), resp);
            (id, rx)
        };
        if let Err(e) = self.send(account, Request::New(draft.wire)) {
            self.lock(account).forget(id, Failure::NotSent);
            return Err(e);
        }
        let queued = Instant::now();
        let (order, answered) = self.wait(account, id, rx).await?;
        let stamps = OrderStamps {
            arrived,
            entered,
            queued,
            answered,
            resumed: Instant::now(),
        };
        Ok((order, stamps))
    }

    /// Enters an order list (`legs` in the exchange's leg order); answers with the
    /// list once every leg's acceptance has arrived.
    pub async fn place_list(
        &self,
        account: AccountId,
        mut draft: lists::ListDraft,
        mut legs: Vec<Draft>,
        kind: peregrine_types::ListKind,
    ) -> Result<lists::OrderList, Refusal> {
        let instrument = self.symbols.all()[draft.symbol].id();
        let (id, rx, req) = {
            let mut st = self.lock(account);
            let id = st.next_id();
            let mut wire = [legs[0].wire; 3];
            for (n, leg) in legs.iter_mut().enumerate() {
                leg.wire.coid = st.next_id();
                wire[n] = leg.wire;
            }
            draft.leg_coids = legs.iter().map(|l| l.wire.coid).collect();
            let req = Request::NewList(crate::link::NewList {
                coid: id,
                instrument,
                kind,
                legs: wire,
                len: legs.len(),
            });
            let rx = st.expect_list(id, draft, legs);
            (id, rx, req)
        };
        if let Err(e) = self.send(account, req) {
            self.lock(account).forget(id, Failure::NotSent);
            return Err(e);
        }
        self.wait(account, id, rx).await.map(|(v, _)| v)
    }

    /// Cancels every live leg of `list`; answers with the list once it is done.
    pub async fn cancel_list(
        &self,
        account: AccountId,
        list: &lists::OrderList,
    ) -> Result<lists::OrderList, Refusal> {
        let instrument = self.symbols.all()[list.symbol].id();
        let (id, rx) = {
            let mut st = self.lock(account);
            let id = st.next_id();
            (id, st.expect_cancel_list(id))
        };
        let req = Request::CancelList {
            coid: id,
            list_id: list.list_id,
            instrument,
        };
        if let Err(e) = self.send(account, req) {
            self.lock(account).forget(id, Failure::NotSent);
            return Err(e);
        }
        self.wait(account, id, rx).await.map(|(v, _)| v)
    }

    /// Cancels an order.
    pub async fn cancel(
        &self,
        account: AccountId,
        order: &Order,
        new_client_id: String,
    ) -> Result<Order, Refusal> {
        let instrument = self.symbols.all()[order.symbol].id();
        let (id, rx) = {
            let mut st = self.lock(account);
            let id = st.next_id();
            let rx = st.expect_cancel(id, new_client_id);
            (id, rx)
        };
        let req = Request::Cancel {
            coid: id,
            order_id: order.order_id,
            instrument,
        };
        if let Err(e) = self.send(account, req) {
            self.lock(account).forget(id, Failure::NotSent);
            return Err(e);
        }
        self.wait(account, id, rx).await.map(|(v, _)| v)
    }

    /// One asset's balance: (available, reserved).
    pub async fn balance(&self, account: AccountId, asset: u32) -> Result<(i64, i64), Refusal> {
        let (id, rx) = {
            let mut st = self.lock(account);
            let id = st.next_id();
            let rx = st.expect_balance(id);
            (id, rx)
        };
        if let Err(e) = self.send(
            account,
            Request::Balance {
                request_id: id,
                asset,
            },
        ) {
            self.lock(account).forget(id, Failure::NotSent);
            return Err(e);
        }
        self.wait(account, id, rx).await.map(|(v, _)| v)
    }

    /// A read barrier: one round trip on the account's session. Reports the
    /// exchange queued for this session before it answers (fills of this account's
    /// resting orders caused by other sessions, say) are applied when this returns,
    /// so a query that follows sees them. A no-op when the session is down.
    pub async fn sync(&self, account: AccountId) {
        let asset = self.assets.first().map_or(0, |a| a.id);
        let _ = self.balance(account, asset).await;
    }

    /// `listStatus` events for lists that changed.
    fn publish_lists(&self, account: AccountId, lists: &[lists::OrderList]) {
        let Some(topic) = self.hub.user(account.0) else {
            return;
        };
        if !topic.wanted() {
            return;
        }
        let now = now_ms();
        let st = self.lock(account);
        for l in lists {
            let sym = &self.symbols.all()[l.symbol];
            topic.publish(events::list_status(sym, l, |id| st.order(id).cloned(), now));
        }
    }

    fn publish(self: &Arc<Self>, account: AccountId, changes: Vec<Change>) {
        let now = now_ms();
        if let Some(topic) = self.hub.user(account.0) {
            if topic.wanted() {
                for ch in &changes {
                    let sym = &self.symbols.all()[ch.order.symbol];
                    topic.publish(events::execution_report(sym, ch, now));
                }
                if !self.assets.is_empty() {
                    self.refresh_balances(account, &changes);
                }
            }
        }
        if let Some(tx) = &self.history {
            for change in changes {
                let instrument = self.symbols.all()[change.order.symbol].id().0;
                let _ = tx.send(HistoryRecord::Order(OrderRecord {
                    account: account.0,
                    instrument,
                    change,
                }));
            }
        }
    }

    /// After changes, sends the user stream an `outboundAccountPosition` with the
    /// balances of the assets involved (at most one refresh in flight per account).
    fn refresh_balances(self: &Arc<Self>, account: AccountId, changes: &[Change]) {
        let slot = &self.slots[&account.0];
        if slot.balance_refresh.swap(true, Ordering::AcqRel) {
            return;
        }
        let mut assets: Vec<(u32, String, u32)> = Vec::new();
        for ch in changes {
            let sym = &self.symbols.all()[ch.order.symbol];
            for name in [&sym.base, &sym.quote] {
                if let Some(a) = self.assets.iter().find(|a| &a.symbol == name) {
                    if !assets.iter().any(|x| x.0 == a.id) {
                        assets.push((a.id, a.symbol.clone(), a.decimals));
                    }
                }
            }
        }
        let me = Arc::clone(self);
        tokio::spawn(async move {
            let mut balances = Vec::new();
            for (id, name, decimals) in assets {
                if let Ok((free, locked)) = me.balance(account, id).await {
                    balances.push(events::PositionBalance {
                        a: name,
                        f: peregrine_types::decimal::format_scaled(free, decimals),
                        l: peregrine_types::decimal::format_scaled(locked, decimals),
                    });
                }
            }
            me.slots[&account.0]
                .balance_refresh
                .store(false, Ordering::Release);
            if balances.is_empty() {
                return;
            }
            let now = now_ms();
            let ev = events::AccountPosition {
                e: "outboundAccountPosition",
                event_time: now,
                u: now,
                balances,
            };
            if let Some(topic) = me.hub.user(account.0) {
                topic.publish(serde_json::to_string(&ev).unwrap_or_default());
            }
        });
    }
}

/// The sink handed to the sessions: an `Arc<Accounts>` (so changes can spawn
/// balance refreshes).
#[derive(Debug, Clone)]
pub struct AccountsSink(pub Arc<Accounts>);

impl ReportSink for AccountsSink {
    fn deliver(&self, account: AccountId, reports: &[Report], next_report_seq: u64) {
        let mut changes = Vec::new();
        let lists = {
            let mut st = self.0.lock(account);
            for r in reports {
                st.apply(r, &mut changes);
            }
            st.take_list_changes()
        };
        if !changes.is_empty() {
            self.0.publish(account, changes);
        }
        if !lists.is_empty() {
            self.0.publish_lists(account, &lists);
        }
        // After the changes, on the same channel: the writer stores the position in
        // the transaction that stores them (or a later one), never before.
        if let Some(tx) = &self.0.history {
            let _ = tx.send(HistoryRecord::Cursor {
                account: account.0,
                next_report_seq,
            });
        }
    }

    fn end_of_read(&self, account: AccountId) {
        self.0.lock(account).end_of_read();
    }

    fn connected(&self, account: AccountId, up: bool) {
        if let Some(s) = self.0.slots.get(&account.0) {
            s.up.store(up, Ordering::Release);
        }
        if !up {
            self.0.lock(account).fail_all(Failure::Unknown);
        }
    }

    fn not_sent(&self, account: AccountId, request_id: u64) {
        self.0.lock(account).forget(request_id, Failure::NotSent);
    }
}
