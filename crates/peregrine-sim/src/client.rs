//! The simulated clients: trading sessions that send a random order flow and keep
//! their report stream across disconnects, restarts and failovers; a drop copy of
//! every account; and retention probes that log in from an old position. Each speaks
//! the real protocol through the wire crate's sans-IO [`ClientSession`] (which checks
//! `session_seq` and report-stream continuity) and tells the [`Oracle`] what it saw.

use std::collections::BTreeMap;

use peregrine_exchange::stepped::ConnId;
use peregrine_types::{
    AccountId, ClientOrderId, InstrumentId, OrderId, OrderType, Price, Qty, Rng, Side, StpMode,
    TimeInForce, Timestamp,
};
use peregrine_wire::auth::AccountKey;
use peregrine_wire::field::SessionKind;
use peregrine_wire::v2::client::{ClientSession, LoginParams, Step};
use peregrine_wire::v2::{
    Cancel, ClientHeartbeat, Inbound, MassCancel, NewOrder, Outbound, Replace,
};
use peregrine_wire::MAX_MESSAGE_SIZE;

use crate::oracle::Oracle;

/// The invariants a client checks.
pub const PROTOCOL: &str = "every report stream gap-free, in order (session protocol)";
/// See [`PROTOCOL`].
pub const RETENTION: &str = "every report stream replayable for the configured retention";
/// See [`PROTOCOL`].
pub const EXACTLY_ONCE: &str =
    "every report exactly once and never changed (no acknowledged order lost)";

/// A client with nothing to say sends a heartbeat this often (the exchange closes a
/// session silent for three heartbeat intervals of 1 s).
const HEARTBEAT_NS: u64 = 500_000_000;

/// What a client is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Trades on its own account.
    Trader,
    /// A drop copy of every account (an operator).
    DropCopy,
    /// Logs in from an old position, checks the replay, logs out.
    Probe,
}

/// One connection of a client.
#[derive(Debug)]
pub struct Link {
    /// The node it is connected to.
    pub node: usize,
    /// Its id.
    pub conn: ConnId,
    session: ClientSession,
    rx: Vec<u8>,
    /// Logged in and past the recovery phase.
    pub live: bool,
    /// The session reached `Live` at least once or was refused: a probe is done.
    pub done: bool,
    /// Its position was lost at login (an open-orders snapshot replaced the replay).
    lost: bool,
}

/// A request waiting for its answer.
#[derive(Debug, Clone, Copy)]
pub struct Outstanding {
    /// When it was sent (simulated ns).
    pub at: u64,
    /// The connection it was sent on.
    pub conn: ConnId,
}

/// An order the trader believes is open.
#[derive(Debug, Clone, Copy)]
struct Open {
    instrument: InstrumentId,
    price: i64,
    leaves: i64,
}

/// What a client wants done after it handled input or decided to act.
#[derive(Debug, Default)]
pub struct Out {
    /// Bytes to send on its connection.
    pub send: Vec<u8>,
    /// Close the connection.
    pub close: bool,
    /// Lines for the trace.
    pub notes: Vec<String>,
}

/// One simulated client.
#[derive(Debug)]
pub struct Client {
    /// Index in the run.
    pub id: usize,
    /// What it does.
    pub role: Role,
    /// The account it logs in as.
    pub account: AccountId,
    key: AccountKey,
    /// The stream position it resumes from (next report sequence number; for a drop
    /// copy the engine sequence number of the last report processed).
    pub resume: u64,
    /// Its connection, when connected.
    pub link: Option<Link>,
    next_cid: u64,
    open: BTreeMap<u64, Open>,
    /// Requests sent on the current connection, by client order id.
    pub outstanding: BTreeMap<u64, Outstanding>,
    /// Stops reading until then (a slow reader), simulated ns.
    pub deaf_until: u64,
    /// Not before then may it reconnect.
    pub retry_at: u64,
    /// Reports received (all sessions).
    pub received: u64,
    /// Requests sent.
    pub sent: u64,
    /// Requests whose answer came.
    pub answered: u64,
    /// When it last sent anything (heartbeats keep an idle session alive).
    last_sent: u64,
}

impl Client {
    /// A client of `account` proving logins with `key`.
    pub fn new(id: usize, role: Role, account: AccountId, key: AccountKey, resume: u64) -> Self {
        Client {
            id,
            role,
            account,
            key,
            resume,
            link: None,
            next_cid: 1,
            open: BTreeMap::new(),
            outstanding: BTreeMap::new(),
            deaf_until: 0,
            retry_at: 0,
            received: 0,
            sent: 0,
            answered: 0,
            last_sent: 0,
        }
    }

    fn params(&self) -> LoginParams {
        match self.role {
            Role::DropCopy => LoginParams {
                account: self.account,
                kind: SessionKind::DropCopy,
                target: None,
                heartbeat_ms: 1000,
                resume_from: self.resume,
            },
            _ => LoginParams::trading(self.account, self.resume),
        }
    }

    /// A new connection `conn` to `node` (the exchange's challenge comes first).
    pub fn connected(&mut self, node: usize, conn: ConnId) {
        self.link = Some(Link {
            node,
            conn,
            session: ClientSession::new(self.params()),
            rx: Vec::new(),
            live: false,
            done: false,
            lost: false,
        });
    }

    /// The connection is gone (closed by either side or by a crash). Requests sent
    /// on it may or may not have been sequenced: the stream replay will tell.
    pub fn disconnected(&mut self) {
        self.link = None;
        self.outstanding.clear();
    }

    /// Bytes from the exchange.
    pub fn on_bytes(
        &mut self,
        bytes: &[u8],
        oracle: &mut Oracle,
        now: u64,
    ) -> Result<Out, (&'static str, String)> {
        let mut out = Out::default();
        let Some(link) = self.link.as_mut() else {
            return Ok(out);
        };
        link.rx.extend_from_slice(bytes);
        let mut at = 0;
        loop {
            let msg = match Outbound::decode(&link.rx[at..]) {
                Ok((m, n)) => {
                    at += n;
                    m
                }
                Err(e) if e.is_incomplete() => break,
                Err(e) => {
                    return Err((
                        PROTOCOL,
                        format!("client {}: undecodable input: {e}", self.id),
                    ))
                }
            };
            let step = link.session.on_message(&msg, &self.key).map_err(|v| {
                let what = format!(
                    "client {} (account {}, {:?}): {v} (message {msg:?})",
                    self.id, self.account, self.role
                );
                (PROTOCOL, what)
            })?;
            match step {
                Step::SendLogin(login) => {
                    let mut buf = [0u8; MAX_MESSAGE_SIZE];
                    let n = Inbound::Login(login)
                        .encode(&mut buf)
                        .map_err(|e| (PROTOCOL, format!("encode login: {e}")))?;
                    out.send.extend_from_slice(&buf[..n]);
                }
                Step::LoggedIn(a) => {
                    if let Some(t) = a.target {
                        oracle
                            .login(t, a.next_report_seq, a.oldest_report_seq)
                            .map_err(|e| (RETENTION, e))?;
                    }
                    out.notes.push(format!(
                        "client {} logged in at node {} (stream next {}, oldest {}, resume {})",
                        self.id, link.node, a.next_report_seq, a.oldest_report_seq, self.resume
                    ));
                }
                Step::Rejected { reason, .. } => {
                    out.notes
                        .push(format!("client {}: login refused ({reason})", self.id));
                    out.close = true;
                    link.done = true;
                }
                Step::Redirect { .. } => {
                    out.close = true;
                }
                Step::Disconnected { reason } => {
                    out.notes.push(format!(
                        "client {}: disconnected (reason {reason})",
                        self.id
                    ));
                    out.close = true;
                }
                Step::RecoveryStarted { replay, reason } => {
                    link.lost = reason != 0;
                    if reason != 0 {
                        out.notes.push(format!(
                            "client {}: position {} lost (reason {reason}), open orders follow",
                            self.id, self.resume
                        ));
                    } else if replay > 0 {
                        out.notes
                            .push(format!("client {}: replaying {replay}", self.id));
                    }
                }
                Step::Report { .. } => {
                    oracle.report(&msg).map_err(|e| (EXACTLY_ONCE, e))?;
                    self.received += 1;
                    self.resume = match self.role {
                        Role::DropCopy => link.session.resume_point(),
                        _ => link.session.next_report_seq(),
                    };
                    if self.role == Role::Trader {
                        answer(
                            &msg,
                            &mut self.open,
                            &mut self.outstanding,
                            &mut self.answered,
                        );
                    }
                }
                Step::RecoveryDone => {
                    link.live = true;
                    match (self.role, &msg) {
                        (Role::DropCopy, Outbound::ReplayEnd(e)) if link.lost => {
                            // After a lost position (an open-orders snapshot) the stream
                            // goes on from where the exchange was when it ended.
                            self.resume = self.resume.max(e.engine_seq);
                        }
                        (Role::DropCopy, _) => {}
                        _ => self.resume = link.session.next_report_seq(),
                    }
                    if self.role == Role::Probe {
                        link.done = true;
                        out.close = true;
                    }
                }
                Step::Other if self.role == Role::Trader && unsequenced_refusal(&msg) => {
                    // Refused before sequencing (backpressure `busy`): answered, and
                    // no report in the stream (issue 27: the client once waited for
                    // a report that never comes, seed 843163084).
                    out.notes
                        .push(format!("client {}: refused unsequenced: {msg:?}", self.id));
                    answer(
                        &msg,
                        &mut self.open,
                        &mut self.outstanding,
                        &mut self.answered,
                    );
                }
                Step::Instrument | Step::SnapshotOrder | Step::Other => {}
            }
        }
        link.rx.drain(..at);
        let _ = now;
        Ok(out)
    }

    /// The trader's next request, if it has something to send now; a heartbeat from
    /// any idle client.
    pub fn act(
        &mut self,
        rng: &mut Rng,
        oracle: &mut Oracle,
        now: u64,
        epoch_ns: u64,
        trade: bool,
    ) -> Out {
        let mut out = Out::default();
        let Some(link) = self.link.as_ref().filter(|l| l.live) else {
            return out;
        };
        if !trade || self.role != Role::Trader || self.outstanding.len() >= 8 {
            if now.saturating_sub(self.last_sent) >= HEARTBEAT_NS {
                let mut buf = [0u8; MAX_MESSAGE_SIZE];
                if let Ok(n) = Inbound::ClientHeartbeat(ClientHeartbeat {}).encode(&mut buf) {
                    out.send.extend_from_slice(&buf[..n]);
                    self.last_sent = now;
                }
            }
            return out;
        }
        self.last_sent = now;
        let conn = link.conn;
        let cid = self.next_cid;
        self.next_cid += 1;
        let msg = self.request(rng, ClientOrderId(cid), epoch_ns);
        oracle.sent(self.account, &msg);
        let mut buf = [0u8; MAX_MESSAGE_SIZE];
        if let Ok(n) = msg.encode(&mut buf) {
            out.send.extend_from_slice(&buf[..n]);
            self.outstanding.insert(cid, Outstanding { at: now, conn });
            self.sent += 1;
        }
        out
    }

    fn request(&mut self, rng: &mut Rng, cid: ClientOrderId, epoch_ns: u64) -> Inbound {
        let pick = rng.below(100);
        if pick < 18 && !self.open.is_empty() {
            let (&id, o) = self.nth_open(rng);
            return Inbound::Cancel(Cancel {
                client_order_id: cid,
                order_id: OrderId(id),
                instrument: o.instrument,
            });
        }
        if pick < 28 && !self.open.is_empty() {
            let (&id, o) = self.nth_open(rng);
            let price = o.price + rng.range(0, 4) as i64 - 2;
            let qty = (o.leaves + rng.range(0, 6) as i64 - 3).max(1);
            return Inbound::Replace(Replace {
                client_order_id: cid,
                order_id: OrderId(id),
                new_price: Price::from_raw(price),
                new_qty: Qty::from_raw(qty),
                instrument: o.instrument,
            });
        }
        if pick < 30 {
            let instrument = rng
                .chance(1, 2)
                .then(|| InstrumentId(1 + rng.below(2) as u32));
            let side = rng.chance(1, 3).then(|| side(rng));
            return Inbound::MassCancel(MassCancel {
                client_order_id: cid,
                instrument,
                side,
            });
        }
        let side = side(rng);
        let center = 10_000i64;
        let off = rng.range(0, 10) as i64 - 5;
        let price = match side {
            Side::Buy => center + off,
            Side::Sell => center - off,
        };
        let (order_type, tif) = match rng.below(100) {
            0..=59 => (OrderType::Limit, TimeInForce::Gtc),
            60..=74 => (OrderType::Limit, TimeInForce::Ioc),
            75..=79 => (OrderType::Limit, TimeInForce::Fok),
            80..=84 => (OrderType::Limit, TimeInForce::Gtd),
            85..=89 => (OrderType::Market, TimeInForce::Ioc),
            _ => (OrderType::PostOnly, TimeInForce::Gtc),
        };
        let expire_at = if tif == TimeInForce::Gtd {
            Timestamp(epoch_ns + rng.range(1, 300) * 1_000_000)
        } else {
            Timestamp(0)
        };
        let stp = match rng.below(10) {
            0 => StpMode::CancelNewest,
            1 => StpMode::CancelOldest,
            2 => StpMode::DecrementAndCancel,
            _ => StpMode::None,
        };
        Inbound::NewOrder(NewOrder {
            client_order_id: cid,
            price: Price::from_raw(price),
            qty: Qty::from_raw(rng.range(1, 20) as i64),
            expire_at,
            instrument: InstrumentId(1 + rng.below(2) as u32),
            side,
            order_type,
            tif,
            stp,
        })
    }

    fn nth_open(&self, rng: &mut Rng) -> (&u64, &Open) {
        let n = rng.below(self.open.len() as u64) as usize;
        self.open
            .iter()
            .nth(n)
            .unwrap_or_else(|| unreachable!("non-empty"))
    }

    /// Where its session is (for the liveness report).
    pub fn phase(&self) -> Option<peregrine_wire::v2::client::Phase> {
        self.link.as_ref().map(|l| l.session.phase())
    }

    /// A probe is finished (its replay checked, or refused).
    pub fn probe_done(&self) -> bool {
        self.link.as_ref().is_some_and(|l| l.done)
    }
}

/// A request's refusal that was not sequenced (`report_seq` 0: backpressure's
/// `busy`): the answer to the request, but no report of the account's stream.
fn unsequenced_refusal(msg: &Outbound) -> bool {
    match msg {
        Outbound::Rejected(r) => r.report_seq == 0,
        Outbound::CancelRejected(r) => r.report_seq == 0,
        _ => false,
    }
}

fn side(rng: &mut Rng) -> Side {
    if rng.chance(1, 2) {
        Side::Buy
    } else {
        Side::Sell
    }
}

/// A trader's report: its open orders, and the answer to an outstanding request.
fn answer(
    msg: &Outbound,
    open: &mut BTreeMap<u64, Open>,
    outstanding: &mut BTreeMap<u64, Outstanding>,
    answered: &mut u64,
) {
    let mut done = |cid: ClientOrderId| {
        if outstanding.remove(&cid.0).is_some() {
            *answered += 1;
        }
    };
    match msg {
        Outbound::Accepted(a) => {
            done(a.client_order_id);
            if a.tif == TimeInForce::Gtc || a.tif == TimeInForce::Gtd {
                open.insert(
                    a.order_id.0,
                    Open {
                        instrument: a.instrument,
                        price: a.price.units(),
                        leaves: a.qty.lots(),
                    },
                );
            }
        }
        Outbound::Rejected(r) => done(r.client_order_id),
        Outbound::CancelRejected(r) => done(r.client_order_id),
        Outbound::MassCancelDone(m) => done(m.request_id),
        Outbound::Fill(f) => {
            if f.leaves_qty.lots() == 0 {
                open.remove(&f.order_id.0);
            } else if let Some(o) = open.get_mut(&f.order_id.0) {
                o.leaves = f.leaves_qty.lots();
            }
        }
        Outbound::Cancelled(c) => {
            if c.request_id.0 != 0 {
                done(c.request_id);
            }
            open.remove(&c.order_id.0);
        }
        Outbound::Replaced(r) => {
            done(r.client_order_id);
            if let Some(o) = open.get_mut(&r.order_id.0) {
                o.price = r.new_price.units();
                o.leaves = r.new_qty.lots();
            }
        }
        _ => {}
    }
}
