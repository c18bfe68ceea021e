//! One order-entry session per account, protocol v2, on a tokio task.
//!
//! The task connects, answers the exchange's challenge with the account's key
//! (`peregrine keygen`), and asks for the account's report stream from a resume
//! point: on the first connection the `next_report_seq` the history store persisted
//! (so the reports of a gateway that stopped or crashed are replayed, not lost), on a
//! reconnection the next report this process has not seen. The exchange replays the
//! reports after that point, then the session goes live: requests from the gateway
//! are encoded and written (everything queued goes out in one `write`), reports read
//! from the socket are converted to [`Report`]s and handed to the [`ReportSink`] with
//! the stream position they reach, a heartbeat goes out after half a second of
//! silence. The sans-IO [`ClientSession`] of `peregrine-wire` checks the handshake
//! order and the continuity of `session_seq` and `report_seq`: a gap or a repeat
//! ends the connection (the reconnection resumes at the last report applied).
//!
//! A lost connection is reported (`connected(false)`: unanswered requests have an
//! unknown outcome), requests that arrive while down or during the replay are refused
//! (`not_sent`), and the task reconnects with backoff (at least the exchange's
//! `retry_after_ms` when it throttles logins).
//!
//! **A cluster.** The session walks its addresses (one, or a cluster's nodes) with
//! [`LeaderWalk`]: a node that is not the leader answers `LeaderRedirect` and the
//! session goes to the leader it names at once (logged); a node that is down,
//! refuses or closes passes to the next; a round of the list with no leader waits
//! (the largest `retry_after_ms` asked for, else a doubling backoff). Once logged
//! in it remembers where: after the session is lost it tries that node first, then
//! the others, resuming the report stream (the cluster's) where it stopped.
//!
//! **End of a read.** The exchange runs a batch of requests, queues every report of
//! the batch for a session and writes them with one `write` after the batch's journal
//! commit. On loopback one `write` arrives in one `read` when the receive buffer has
//! room, so at the end of a read every report of the commands answered so far has
//! arrived: an order's immediate fills are never split from its `Accepted`. The
//! gateway uses this to answer `newOrderRespType=RESULT|FULL` with the fills the
//! order made on entry. A split read can only make such an answer show fewer fills
//! than the order made (its state is corrected by the reports that follow).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use peregrine_client::order_entry::{LeaderWalk, Next};
use peregrine_types::{
    AccountId, ClientOrderId, OrderId, OrderType, Price, Qty, StpMode, TimeInForce, Timestamp,
    TrailUnit,
};
use peregrine_wire::auth::AccountKey;
use peregrine_wire::field::{ListLeg, ListState as WireListState, OrderStage};
use peregrine_wire::stream::RecvBuffer;
use peregrine_wire::v2::client::{ClientSession, LoginParams, Step};
use peregrine_wire::v2::queries::OpenOrdersRequest;
use peregrine_wire::v2::venue::{CancelList, NewOrderExt, NewOrderList};
use peregrine_wire::v2::{Cancel, ClientHeartbeat, NewOrder as WireNew, Outbound};
use peregrine_wire::{LiquidityRole, WireMessage};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::mpsc;

use super::{
    CancelCause, Ext, Kind, ListReport, ListState, NewOrder, OpenOrder, Report, ReportSink,
    Request, Stp, Tif,
};

/// Receive buffer per session.
const RX: usize = 256 * 1024;
/// Heartbeat after this much silence.
const HEARTBEAT: Duration = Duration::from_millis(500);
/// Login and recovery must complete within this.
const LOGIN_TIMEOUT: Duration = Duration::from_secs(10);
/// The request id of the open-orders query sent when there is no resume point.
pub const OPEN_ORDERS_AT_START: u64 = 1;
/// Longest wait between logins the exchange rejected (unless it asks for longer).
const MAX_BACKOFF: Duration = Duration::from_secs(2);
/// The first wait after a rejected login.
const MIN_BACKOFF: Duration = Duration::from_millis(50);
/// The wait before reconnecting after a logged-in session ends (one that drops
/// right after each login, in the replay or later, cannot make the task spin).
const LOST_PAUSE: Duration = Duration::from_millis(50);
/// How long a TCP connect may take before the next node is tried.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// Why a request could not be queued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendError {
    /// The queue to the session is full.
    Busy,
    /// The session task has stopped.
    Closed,
}

/// A handle to one account's session.
#[derive(Debug, Clone)]
pub struct SessionHandle {
    tx: mpsc::Sender<Request>,
}

impl SessionHandle {
    /// Queues a request (never waits).
    pub fn send(&self, r: Request) -> Result<(), SendError> {
        self.tx.try_send(r).map_err(|e| match e {
            mpsc::error::TrySendError::Full(_) => SendError::Busy,
            mpsc::error::TrySendError::Closed(_) => SendError::Closed,
        })
    }
}

/// What one account's session needs.
#[derive(Clone)]
pub struct SessionSpec {
    /// The exchange's order-entry addresses: one, or a cluster's nodes.
    pub addrs: Vec<SocketAddr>,
    /// The account.
    pub account: AccountId,
    /// Its key (proves the login; never sent).
    pub key: AccountKey,
    /// The first report to ask for: the history store's persisted position (0: none
    /// persisted, start live).
    pub resume_from: u64,
    /// Requests that may wait for the session.
    pub queue: usize,
}

impl std::fmt::Debug for SessionSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionSpec")
            .field("addrs", &self.addrs)
            .field("account", &self.account)
            .field("resume_from", &self.resume_from)
            .finish_non_exhaustive()
    }
}

/// Starts the session task on the current runtime.
pub fn spawn(spec: SessionSpec, sink: Arc<dyn ReportSink>) -> SessionHandle {
    let (tx, rx) = mpsc::channel(spec.queue);
    tokio::spawn(run(spec, rx, sink));
    SessionHandle { tx }
}

/// How a connection ended.
struct End {
    why: String,
    /// The exchange refused the login: wait at least `retry_after` (and back off).
    rejected: bool,
    /// Wait at least this long before the next attempt.
    retry_after: Duration,
    /// A node that is not the leader: the leader's id and `host:port` (if known).
    redirect: Option<(u64, Option<String>)>,
}

impl End {
    fn now(why: impl Into<String>) -> End {
        End {
            why: why.into(),
            rejected: false,
            retry_after: Duration::ZERO,
            redirect: None,
        }
    }

    fn retry_after_ms(&self) -> u32 {
        u32::try_from(self.retry_after.as_millis()).unwrap_or(u32::MAX)
    }
}

/// Refuses what arrives for `d`. False: the gateway is stopping.
async fn refuse_for(
    d: Duration,
    rx: &mut mpsc::Receiver<Request>,
    sink: &dyn ReportSink,
    account: AccountId,
) -> bool {
    let retry = tokio::time::sleep(d);
    tokio::pin!(retry);
    loop {
        tokio::select! {
            r = rx.recv() => match r {
                Some(r) => sink.not_sent(account, r.id()),
                None => return false,
            },
            () = &mut retry => return true,
        }
    }
}

async fn run(spec: SessionSpec, mut rx: mpsc::Receiver<Request>, sink: Arc<dyn ReportSink>) {
    let account = spec.account;
    let mut walk = LeaderWalk::new(spec.addrs.clone());
    let mut resume = spec.resume_from;
    let mut backoff = MIN_BACKOFF;
    let mut last_error = String::new();
    loop {
        let addr = match walk.next() {
            Next::Try(addr) => addr,
            // A round of the nodes found no leader: down until the next one.
            Next::Wait(d) => {
                if !refuse_for(d, &mut rx, sink.as_ref(), account).await {
                    return;
                }
                continue;
            }
        };
        let mut was_logged_in = false;
        let end = match tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(addr)).await {
            Ok(Ok(stream)) => {
                let mut conn = Conn::new(stream, &spec, addr, resume);
                let end = conn.run(&mut rx, sink.as_ref()).await;
                if conn.live {
                    sink.connected(account, false);
                    backoff = MIN_BACKOFF;
                }
                if conn.logged_in {
                    walk.logged_in(addr);
                    was_logged_in = true;
                    last_error.clear(); // the next outage is logged again
                }
                resume = conn.resume;
                end
            }
            Ok(Err(e)) => End::now(format!("cannot connect to {addr}: {e}")),
            Err(_) => End::now(format!("cannot connect to {addr}: timed out")),
        };
        if end.why == "gateway stopping" {
            return;
        }
        let mut followed = false;
        let pause = if let Some((leader_id, address)) = &end.redirect {
            // On to the leader at once (the walk bounds the hops of a round).
            if let Some(to) = walk.redirected_to(address.as_deref(), end.retry_after_ms()) {
                eprintln!(
                    "gateway: account {account}: {addr} is not the leader; \
                     following the redirect to leader {leader_id} at {to}"
                );
                followed = true;
            }
            Duration::ZERO
        } else if end.rejected {
            let pause = backoff.max(end.retry_after);
            backoff = (backoff * 2).min(MAX_BACKOFF);
            pause
        } else if was_logged_in {
            LOST_PAUSE
        } else {
            // A node down or closing before the login: the next one at once.
            Duration::ZERO
        };
        // Logged once while the same thing keeps happening, whichever node it is.
        let kind = end.why.replace(&addr.to_string(), "<node>");
        if !followed && kind != last_error {
            eprintln!("gateway: account {account}: session down ({})", end.why);
            last_error = kind;
        }
        if !pause.is_zero() && !refuse_for(pause, &mut rx, sink.as_ref(), account).await {
            return;
        }
    }
}

type Rx = Box<RecvBuffer<RX>>;

/// One connection.
struct Conn<'a> {
    stream: TcpStream,
    rxbuf: Rx,
    spec: &'a SessionSpec,
    /// The node this connection is to.
    addr: SocketAddr,
    session: ClientSession,
    /// Where to resume on the next connection.
    resume: u64,
    /// Past the recovery phase.
    live: bool,
    /// The exchange accepted the login.
    logged_in: bool,
}

impl<'a> Conn<'a> {
    fn new(stream: TcpStream, spec: &'a SessionSpec, addr: SocketAddr, resume: u64) -> Self {
        Conn {
            stream,
            rxbuf: Box::new(RecvBuffer::new()),
            spec,
            addr,
            session: ClientSession::new(LoginParams::trading(spec.account, resume)),
            resume,
            live: false,
            logged_in: false,
        }
    }

    async fn run(&mut self, rx: &mut mpsc::Receiver<Request>, sink: &dyn ReportSink) -> End {
        let _ = self.stream.set_nodelay(true);
        let account = self.spec.account;
        let mut out: Vec<u8> = Vec::with_capacity(4096);
        let mut reports: Vec<Report> = Vec::with_capacity(256);
        let mut heartbeat = tokio::time::interval(HEARTBEAT);
        heartbeat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut last_tx = tokio::time::Instant::now();
        let login_deadline = tokio::time::Instant::now() + LOGIN_TIMEOUT;
        loop {
            let deadline = tokio::time::sleep_until(login_deadline);
            tokio::select! {
                r = rx.recv() => {
                    let Some(r) = r else { return End::now("gateway stopping") };
                    if !self.live {
                        sink.not_sent(account, r.id());
                        continue;
                    }
                    encode_request(account, &r, &mut out);
                    while let Ok(r) = rx.try_recv() {
                        encode_request(account, &r, &mut out);
                        if out.len() > 60_000 {
                            break;
                        }
                    }
                    if self.stream.write_all(&out).await.is_err() {
                        return End::now("write failed");
                    }
                    out.clear();
                    last_tx = tokio::time::Instant::now();
                }
                n = self.stream.read(self.rxbuf.spare()) => {
                    match n {
                        Ok(0) => return End::now("closed by the exchange"),
                        Err(e) => return End::now(format!("read failed: {e}")),
                        Ok(n) => self.rxbuf.commit(n),
                    }
                    let result = self.drain(&mut reports, &mut out, sink);
                    if !reports.is_empty() {
                        sink.deliver(account, &reports, self.resume);
                        reports.clear();
                    }
                    if self.live {
                        sink.end_of_read(account);
                    }
                    if !out.is_empty() {
                        if self.stream.write_all(&out).await.is_err() {
                            return End::now("write failed");
                        }
                        out.clear();
                        last_tx = tokio::time::Instant::now();
                    }
                    if let Err(e) = result {
                        return e;
                    }
                }
                _ = heartbeat.tick(), if self.live => {
                    if last_tx.elapsed() >= HEARTBEAT {
                        push(&ClientHeartbeat {}, &mut out);
                        if self.stream.write_all(&out).await.is_err() {
                            return End::now("write failed");
                        }
                        out.clear();
                        last_tx = tokio::time::Instant::now();
                    }
                }
                () = deadline, if !self.live => {
                    return End::now("login and recovery did not finish in time");
                }
            }
        }
    }

    /// Decodes and steps every whole frame buffered; reports go to `reports`, what
    /// must be sent (the login) to `out`.
    fn drain(
        &mut self,
        reports: &mut Vec<Report>,
        out: &mut Vec<u8>,
        sink: &dyn ReportSink,
    ) -> Result<(), End> {
        let account = self.spec.account;
        loop {
            let m = match self.rxbuf.next(Outbound::decode) {
                Ok(Some(m)) => m,
                Ok(None) => return Ok(()),
                Err(e) => return Err(End::now(format!("protocol error: {e:?}"))),
            };
            let step = self
                .session
                .on_message(&m, &self.spec.key)
                .map_err(|v| End::now(format!("protocol violation: {v}")))?;
            match step {
                Step::SendLogin(login) => push(&login, out),
                Step::LoggedIn(a) => {
                    self.logged_in = true;
                    if a.oldest_report_seq > self.resume && self.resume != 0 {
                        eprintln!(
                            "gateway: account {account}: the exchange keeps reports from {} on; \
                             {} .. {} are gone (an open-orders snapshot replaces them)",
                            a.oldest_report_seq,
                            self.resume,
                            a.oldest_report_seq - 1
                        );
                    }
                }
                Step::Rejected {
                    reason,
                    retry_after_ms,
                } => {
                    return Err(End {
                        why: format!("login rejected, reason {reason}"),
                        rejected: true,
                        retry_after: Duration::from_millis(u64::from(retry_after_ms)),
                        redirect: None,
                    })
                }
                // A cluster node that is not the leader: `run` follows it.
                Step::Redirect {
                    leader_id,
                    address,
                    retry_after_ms,
                } => {
                    let to = address.as_ref().and_then(|a| a.as_text());
                    return Err(End {
                        why: format!(
                            "{} redirected to the cluster leader {leader_id} at {:?}",
                            self.addr,
                            to.unwrap_or("")
                        ),
                        rejected: false,
                        retry_after: Duration::from_millis(u64::from(retry_after_ms)),
                        redirect: Some((leader_id, to.map(str::to_owned))),
                    });
                }
                Step::Instrument => {}
                // Answers outside the stream: a balance query's answer, refusals
                // before sequencing (report_seq 0), query answers; heartbeats.
                Step::Other => {
                    if let Some(r) = to_report(&m) {
                        reports.push(r);
                    }
                }
                Step::RecoveryStarted { replay, reason } => {
                    if reason != 0 {
                        eprintln!(
                            "gateway: account {account}: report stream position {} lost \
                             (reason {reason}): resynchronising from the open orders",
                            self.resume
                        );
                    } else if replay > 0 {
                        eprintln!(
                            "gateway: account {account}: replaying {replay} report(s) from {}",
                            self.resume
                        );
                    }
                }
                Step::Report { .. } => {
                    if let Some(r) = to_report(&m) {
                        reports.push(r);
                    }
                    self.resume = self.session.next_report_seq();
                }
                Step::SnapshotOrder => {
                    if let Some(r) = to_report(&m) {
                        reports.push(r);
                    }
                }
                Step::RecoveryDone => {
                    let fresh = self.resume == 0;
                    self.resume = self.session.next_report_seq();
                    self.live = true;
                    if fresh {
                        // No position to resume from: learn the account's open orders.
                        push(
                            &OpenOrdersRequest {
                                request_id: OPEN_ORDERS_AT_START,
                                account: Some(account),
                                instrument: None,
                            },
                            out,
                        );
                    }
                    if !reports.is_empty() {
                        sink.deliver(account, reports, self.resume);
                        reports.clear();
                    }
                    eprintln!(
                        "gateway: account {account}: session to {} up (next report {})",
                        self.addr, self.resume
                    );
                    sink.connected(account, true);
                }
                // The exchange ends the session and says why: reconnect and resume.
                Step::Disconnected { reason } => {
                    return Err(End::now(format!(
                        "the exchange ended the session (disconnect reason {reason})"
                    )));
                }
            }
        }
    }
}

fn encode<M: WireMessage>(m: &M, out: &mut [u8]) {
    // `out` is exactly M::SIZE: encoding cannot fail.
    let _ = m.encode(out);
}

fn push<M: WireMessage>(m: &M, out: &mut Vec<u8>) {
    let start = out.len();
    out.resize(start + M::SIZE, 0);
    encode(m, &mut out[start..]);
}

fn kind_of(t: OrderType) -> Kind {
    match t {
        OrderType::Market => Kind::Market,
        OrderType::PostOnly => Kind::PostOnly,
        _ => Kind::Limit,
    }
}

fn tif_of(t: TimeInForce) -> Tif {
    match t {
        TimeInForce::Ioc => Tif::Ioc,
        TimeInForce::Fok => Tif::Fok,
        _ => Tif::Gtc,
    }
}

fn stp_of(s: StpMode) -> Stp {
    match s {
        StpMode::CancelNewest => Stp::CancelNewest,
        StpMode::CancelOldest => Stp::CancelOldest,
        StpMode::CancelBoth => Stp::CancelBoth,
        StpMode::DecrementAndCancel => Stp::Decrement,
        _ => Stp::None,
    }
}

fn wire_type(k: Kind) -> OrderType {
    match k {
        Kind::Limit => OrderType::Limit,
        Kind::Market => OrderType::Market,
        Kind::PostOnly => OrderType::PostOnly,
    }
}

fn wire_tif(t: Tif) -> TimeInForce {
    match t {
        Tif::Gtc => TimeInForce::Gtc,
        Tif::Ioc => TimeInForce::Ioc,
        Tif::Fok => TimeInForce::Fok,
    }
}

fn wire_stp(s: Stp) -> StpMode {
    match s {
        Stp::None => StpMode::None,
        Stp::CancelNewest => StpMode::CancelNewest,
        Stp::CancelOldest => StpMode::CancelOldest,
        Stp::CancelBoth => StpMode::CancelBoth,
        Stp::Decrement => StpMode::DecrementAndCancel,
    }
}

fn trail_unit(e: &Ext) -> TrailUnit {
    if e.trail_bps == 0 {
        TrailUnit::None
    } else {
        TrailUnit::Bps
    }
}

/// One leg of a `NewOrderList`.
fn leg(n: &NewOrder) -> ListLeg {
    ListLeg {
        client_order_id: ClientOrderId(n.coid),
        price: Price::from_raw(n.price),
        qty: Qty::from_raw(n.qty),
        expire_at: Timestamp(0),
        stop_price: Price::from_raw(n.ext.stop_price),
        display_qty: Qty::from_raw(n.ext.display_qty),
        trail: n.ext.trail_bps,
        side: n.side,
        order_type: wire_type(n.kind),
        tif: wire_tif(n.tif),
        stp: wire_stp(n.stp),
        trigger: n.ext.trigger,
        trail_unit: trail_unit(&n.ext),
    }
}

/// The wire form of a request (appended to `out`): a plain order is a `NewOrder`,
/// one with a trigger or an iceberg a `NewOrderExt` (protocol v3).
pub fn encode_request(account: AccountId, r: &Request, out: &mut Vec<u8>) {
    match *r {
        Request::New(n) if n.ext.is_none() => push(
            &WireNew {
                client_order_id: ClientOrderId(n.coid),
                price: Price::from_raw(n.price),
                qty: Qty::from_raw(n.qty),
                expire_at: Timestamp(0),
                instrument: n.instrument,
                side: n.side,
                order_type: wire_type(n.kind),
                tif: wire_tif(n.tif),
                stp: wire_stp(n.stp),
            },
            out,
        ),
        Request::New(n) => push(
            &NewOrderExt {
                client_order_id: ClientOrderId(n.coid),
                price: Price::from_raw(n.price),
                qty: Qty::from_raw(n.qty),
                expire_at: Timestamp(0),
                stop_price: Price::from_raw(n.ext.stop_price),
                display_qty: Qty::from_raw(n.ext.display_qty),
                instrument: n.instrument,
                trail: n.ext.trail_bps,
                side: n.side,
                order_type: wire_type(n.kind),
                tif: wire_tif(n.tif),
                stp: wire_stp(n.stp),
                trigger: n.ext.trigger,
                trail_unit: trail_unit(&n.ext),
                reserved: peregrine_wire::field::Pad,
            },
            out,
        ),
        Request::NewList(l) => {
            let mut legs = [ListLeg::UNUSED; 3];
            for (w, n) in legs.iter_mut().zip(&l.legs[..l.len]) {
                *w = leg(n);
            }
            push(
                &NewOrderList::new(ClientOrderId(l.coid), l.instrument, l.kind, legs),
                out,
            )
        }
        Request::CancelList {
            coid,
            list_id,
            instrument,
        } => push(
            &CancelList {
                client_order_id: ClientOrderId(coid),
                list_id: OrderId(list_id),
                instrument,
            },
            out,
        ),
        Request::Cancel {
            coid,
            order_id,
            instrument,
        } => push(
            &Cancel {
                client_order_id: ClientOrderId(coid),
                order_id: OrderId(order_id),
                instrument,
            },
            out,
        ),
        Request::Balance { request_id, asset } => push(
            &peregrine_wire::v2::BalanceQuery {
                request_id,
                account,
                asset,
            },
            out,
        ),
    }
}

/// The gateway's form of an exchange report (`None` for session messages and
/// reports the gateway has no use for).
pub fn to_report(m: &Outbound) -> Option<Report> {
    Some(match *m {
        Outbound::Accepted(a) => Report::Accepted {
            order_id: a.order_id.0,
            coid: a.client_order_id.0,
            instrument: a.instrument,
            side: a.side,
            kind: kind_of(a.order_type),
            tif: tif_of(a.tif),
            stp: stp_of(a.stp),
            price: a.price.units(),
            qty: a.qty.lots(),
            ext: Ext::NONE,
            parked: false,
            list_id: 0,
            time_ns: a.engine_time.0,
        },
        Outbound::AcceptedExt(a) => Report::Accepted {
            order_id: a.order_id.0,
            coid: a.client_order_id.0,
            instrument: a.instrument,
            side: a.side,
            kind: kind_of(a.order_type),
            tif: tif_of(a.tif),
            stp: stp_of(a.stp),
            price: a.price.units(),
            qty: a.qty.lots(),
            ext: Ext {
                trigger: a.trigger,
                stop_price: a.stop_price.units(),
                // Ticks are not offered by this gateway; an order in ticks placed
                // elsewhere shows no trailing delta.
                trail_bps: if a.trail_unit == TrailUnit::Bps {
                    a.trail
                } else {
                    0
                },
                display_qty: a.display_qty.lots(),
            },
            parked: a.stage != OrderStage::Active,
            list_id: a.list_id.0,
            time_ns: a.engine_time.0,
        },
        Outbound::Triggered(t) => Report::Triggered {
            order_id: t.order_id.0,
            time_ns: t.engine_time.0,
        },
        Outbound::ListStatus(l) => Report::List(ListReport {
            list_id: l.list_id.0,
            request_id: l.request_id.0,
            coid: l.client_list_id.0,
            legs: [l.leg0.0, l.leg1.0, l.leg2.0],
            instrument: l.instrument,
            kind: l.kind,
            state: match l.status {
                WireListState::Accepted => ListState::Accepted,
                WireListState::Rejected => ListState::Rejected,
                WireListState::Done => ListState::Done,
            },
            reason: l.reason.0,
            time_ns: l.engine_time.0,
        }),
        Outbound::Rejected(r) => Report::Rejected {
            coid: r.client_order_id.0,
            reason: r.reason.0,
            time_ns: r.engine_time.0,
        },
        Outbound::Fill(f) => Report::Fill {
            order_id: f.order_id.0,
            coid: f.client_order_id.0,
            trade_id: f.trade_id,
            price: f.price.units(),
            qty: f.qty.lots(),
            leaves: f.leaves_qty.lots(),
            instrument: f.instrument,
            side: f.side,
            maker: f.role == LiquidityRole::Maker,
            fee: f.fee,
            time_ns: f.engine_time.0,
        },
        Outbound::Cancelled(c) => Report::Cancelled {
            order_id: c.order_id.0,
            coid: c.client_order_id.0,
            request_id: c.request_id.0,
            qty: c.cancelled_qty.lots(),
            instrument: c.instrument,
            cause: CancelCause::from_code(c.reason.0),
            time_ns: c.engine_time.0,
        },
        Outbound::CancelRejected(c) => Report::CancelRejected {
            request_id: c.client_order_id.0,
            order_id: c.order_id.0,
            reason: c.reason.0,
        },
        Outbound::Replaced(r) => Report::Replaced {
            order_id: r.order_id.0,
            coid: r.client_order_id.0,
            price: r.new_price.units(),
            qty: r.new_qty.lots(),
            time_ns: r.engine_time.0,
        },
        Outbound::Balance(b) => Report::Balance {
            request_id: b.request_id,
            asset: b.asset,
            available: b.available,
            reserved: b.held,
            time_ns: b.engine_time.0,
        },
        Outbound::AdminRejected(a) => Report::BalanceRejected {
            request_id: a.request_id,
            reason: a.reason.0,
        },
        Outbound::OpenOrder(o) => Report::Open(OpenOrder {
            order_id: o.order_id.0,
            coid: o.client_order_id.0,
            instrument: o.instrument,
            side: o.side,
            kind: kind_of(o.order_type),
            tif: tif_of(o.tif),
            price: o.price.units(),
            open_qty: o.open_qty.lots(),
            time_ns: o.engine_time.0,
        }),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use peregrine_types::{InstrumentId, Side};
    use peregrine_wire::v2::{Inbound, Outbound};

    #[test]
    fn requests_encode_to_v2_wire_messages() {
        let mut out = Vec::new();
        let r = Request::New(super::super::NewOrder {
            coid: 7,
            instrument: InstrumentId(1),
            side: Side::Sell,
            kind: Kind::PostOnly,
            tif: Tif::Gtc,
            price: 10_050,
            qty: 3,
            stp: Stp::CancelBoth,
            ext: Ext::NONE,
        });
        encode_request(AccountId(2), &r, &mut out);
        encode_request(
            AccountId(2),
            &Request::Balance {
                request_id: 9,
                asset: 1,
            },
            &mut out,
        );
        let (m, used) = Inbound::decode(&out).unwrap();
        match m {
            Inbound::NewOrder(n) => {
                assert_eq!(n.client_order_id.0, 7);
                assert_eq!(n.price.units(), 10_050);
                assert_eq!(n.order_type, OrderType::PostOnly);
                assert_eq!(n.stp, StpMode::CancelBoth);
                assert_eq!(n.side, Side::Sell);
            }
            other => panic!("{other:?}"),
        }
        match Inbound::decode(&out[used..]).unwrap().0 {
            Inbound::BalanceQuery(b) => {
                assert_eq!((b.request_id, b.account, b.asset), (9, AccountId(2), 1))
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_accepted_report_carries_what_adopting_the_order_needs() {
        let a = peregrine_wire::v2::reports::Accepted {
            session_seq: 3,
            engine_seq: 10,
            engine_time: Timestamp(5_000_000),
            order_id: OrderId(44),
            client_order_id: ClientOrderId(8),
            price: Price::from_raw(10_100),
            qty: Qty::from_raw(2),
            expire_at: Timestamp(0),
            instrument: InstrumentId(1),
            side: Side::Buy,
            order_type: OrderType::Limit,
            tif: TimeInForce::Ioc,
            stp: StpMode::CancelOldest,
            report_seq: 17,
            account: AccountId(2),
        };
        let r = to_report(&Outbound::Accepted(a)).unwrap();
        assert_eq!(
            r,
            Report::Accepted {
                order_id: 44,
                coid: 8,
                instrument: InstrumentId(1),
                side: Side::Buy,
                kind: Kind::Limit,
                tif: Tif::Ioc,
                stp: Stp::CancelOldest,
                price: 10_100,
                qty: 2,
                ext: Ext::NONE,
                parked: false,
                list_id: 0,
                time_ns: 5_000_000,
            }
        );
    }

    fn stop_limit(coid: u64) -> NewOrder {
        NewOrder {
            coid,
            instrument: InstrumentId(1),
            side: Side::Sell,
            kind: Kind::Limit,
            tif: Tif::Gtc,
            price: 9_850,
            qty: 2,
            stp: Stp::None,
            ext: Ext {
                trigger: peregrine_types::TriggerKind::StopLoss,
                stop_price: 9_900,
                trail_bps: 0,
                display_qty: 1,
            },
        }
    }

    #[test]
    fn a_stop_or_iceberg_is_a_new_order_ext_and_a_list_a_new_order_list() {
        let mut out = Vec::new();
        encode_request(AccountId(2), &Request::New(stop_limit(7)), &mut out);
        let (m, used) = Inbound::decode(&out).unwrap();
        match m {
            Inbound::NewOrderExt(n) => {
                assert_eq!(
                    (
                        n.client_order_id.0,
                        n.stop_price.units(),
                        n.display_qty.lots(),
                        n.trail
                    ),
                    (7, 9_900, 1, 0)
                );
                assert_eq!(
                    (n.trigger, n.trail_unit, n.order_type),
                    (
                        peregrine_types::TriggerKind::StopLoss,
                        TrailUnit::None,
                        OrderType::Limit
                    )
                );
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(used, out.len());
        // A trailing stop in basis points.
        let mut trailing = stop_limit(8);
        trailing.ext.stop_price = 0;
        trailing.ext.trail_bps = 50;
        let mut out = Vec::new();
        encode_request(AccountId(2), &Request::New(trailing), &mut out);
        match Inbound::decode(&out).unwrap().0 {
            Inbound::NewOrderExt(n) => assert_eq!((n.trail, n.trail_unit), (50, TrailUnit::Bps)),
            other => panic!("{other:?}"),
        }
        let mut second = stop_limit(10);
        second.kind = Kind::PostOnly;
        second.ext = Ext::NONE;
        second.price = 10_400;
        let list = super::super::NewList {
            coid: 11,
            instrument: InstrumentId(1),
            kind: peregrine_types::ListKind::Oco,
            legs: [stop_limit(9), second, stop_limit(0)],
            len: 2,
        };
        let mut out = Vec::new();
        encode_request(AccountId(2), &Request::NewList(list), &mut out);
        match Inbound::decode(&out).unwrap().0 {
            Inbound::NewOrderList(l) => {
                let legs = l.legs();
                assert_eq!(
                    (
                        legs[0].client_order_id.0,
                        legs[1].client_order_id.0,
                        legs[1].price.units()
                    ),
                    (9, 10, 10_400)
                );
                assert_eq!(legs[1].order_type, OrderType::PostOnly);
                assert_eq!(legs[2], ListLeg::UNUSED, "an unused leg is all zero");
            }
            other => panic!("{other:?}"),
        }
    }
}
