//! One order-entry session per account, protocol v1, on a tokio task.
//!
//! The task logs in, then loops: requests from the gateway are encoded and written
//! (everything queued goes out in one `write`), reports read from the socket are
//! converted to [`Report`]s and handed to the [`ReportSink`], a heartbeat goes out
//! after half a second of silence. A lost connection is reported
//! (`connected(false)`: unanswered requests have an unknown outcome), requests that
//! arrive while down are refused (`not_sent`), and the task reconnects with backoff.
//!
//! **End of a read.** The exchange runs a batch of requests, queues every report of
//! the batch for a session and writes them with one `write` after the batch's journal
//! commit. On loopback one `write` arrives in one `read` when the receive buffer has
//! room, so at the end of a read every report of the commands answered so far has
//! arrived: an order's immediate fills are never split from its `Accepted`. The
//! gateway uses this to answer `newOrderRespType=RESULT|FULL` with the fills the
//! order made on entry. Protocol v1 has no explicit end-of-command marker; a split
//! read can only make such an answer show fewer fills than the order made (its state
//! is corrected by the reports that follow).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use peregrine_types::{
    AccountId, ClientOrderId, OrderId, OrderType, Price, Qty, StpMode, TimeInForce, Timestamp,
};
use peregrine_wire::orders::{Cancel, NewOrder as WireNew};
use peregrine_wire::session::{ClientHeartbeat, Login};
use peregrine_wire::stream::RecvBuffer;
use peregrine_wire::{Credential, LiquidityRole, Outbound, WireMessage};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::mpsc;

use super::{CancelCause, Kind, Report, ReportSink, Request, Stp, Tif};

/// Receive buffer per session.
const RX: usize = 256 * 1024;
/// Heartbeat after this much silence.
const HEARTBEAT: Duration = Duration::from_millis(500);
/// Login must complete within this.
const LOGIN_TIMEOUT: Duration = Duration::from_secs(5);
/// Longest wait between reconnects.
const MAX_BACKOFF: Duration = Duration::from_secs(2);

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

/// Starts the session task for `account` on the current runtime.
pub fn spawn(
    addr: SocketAddr,
    account: AccountId,
    password: &str,
    sink: Arc<dyn ReportSink>,
    queue: usize,
) -> SessionHandle {
    let (tx, rx) = mpsc::channel(queue);
    let credential = Credential::from_text(password).unwrap_or(Credential([0; 16]));
    tokio::spawn(run(addr, account, credential, rx, sink));
    SessionHandle { tx }
}

async fn run(
    addr: SocketAddr,
    account: AccountId,
    credential: Credential,
    mut rx: mpsc::Receiver<Request>,
    sink: Arc<dyn ReportSink>,
) {
    let mut backoff = Duration::from_millis(50);
    let mut logged_down = false;
    loop {
        match tokio::time::timeout(LOGIN_TIMEOUT, login(addr, account, credential)).await {
            Ok(Ok((stream, rxbuf))) => {
                eprintln!("gateway: account {account}: session to {addr} up");
                logged_down = false;
                sink.connected(account, true);
                backoff = Duration::from_millis(50);
                let end = serve(stream, rxbuf, account, &mut rx, sink.as_ref()).await;
                sink.connected(account, false);
                eprintln!("gateway: account {account}: session down ({end})");
                if end == "gateway stopping" {
                    return;
                }
            }
            Ok(Err(e)) if !logged_down => {
                eprintln!("gateway: account {account}: cannot log in at {addr}: {e}");
                logged_down = true;
            }
            Err(_) if !logged_down => {
                eprintln!("gateway: account {account}: login at {addr} timed out");
                logged_down = true;
            }
            _ => {}
        }
        // Down: refuse what arrives until the next attempt.
        let retry = tokio::time::sleep(backoff);
        tokio::pin!(retry);
        loop {
            tokio::select! {
                r = rx.recv() => match r {
                    Some(r) => sink.not_sent(account, r.id()),
                    None => return,
                },
                () = &mut retry => break,
            }
        }
        backoff = (backoff * 2).min(MAX_BACKOFF);
    }
}

type Rx = Box<RecvBuffer<RX>>;

async fn login(
    addr: SocketAddr,
    account: AccountId,
    credential: Credential,
) -> std::io::Result<(TcpStream, Rx)> {
    let mut stream = TcpStream::connect(addr).await?;
    stream.set_nodelay(true)?;
    let mut buf = [0u8; Login::SIZE];
    encode(
        &Login {
            account,
            heartbeat_interval_ms: 1000,
            credential,
        },
        &mut buf,
    );
    stream.write_all(&buf).await?;
    let mut rx: Rx = Box::new(RecvBuffer::new());
    loop {
        match rx.next(Outbound::decode) {
            Ok(Some(Outbound::LoginAccepted(_))) => return Ok((stream, rx)),
            Ok(Some(Outbound::LoginRejected(r))) => {
                return Err(std::io::Error::other(format!(
                    "login rejected, reason {}",
                    r.reason.0
                )))
            }
            Ok(Some(other)) => {
                return Err(std::io::Error::other(format!(
                    "unexpected {other:?} before login"
                )))
            }
            Ok(None) => {}
            Err(e) => return Err(std::io::Error::other(format!("bad login answer: {e:?}"))),
        }
        let n = stream.read(rx.spare()).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        rx.commit(n);
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

/// The wire form of a request (appended to `out`).
pub fn encode_request(account: AccountId, r: &Request, out: &mut Vec<u8>) {
    match *r {
        Request::New(n) => push(
            &WireNew {
                client_order_id: ClientOrderId(n.coid),
                price: Price::from_raw(n.price),
                qty: Qty::from_raw(n.qty),
                expire_at: Timestamp(0),
                instrument: n.instrument,
                side: n.side,
                order_type: match n.kind {
                    Kind::Limit => OrderType::Limit,
                    Kind::Market => OrderType::Market,
                    Kind::PostOnly => OrderType::PostOnly,
                },
                tif: match n.tif {
                    Tif::Gtc => TimeInForce::Gtc,
                    Tif::Ioc => TimeInForce::Ioc,
                    Tif::Fok => TimeInForce::Fok,
                },
                stp: match n.stp {
                    Stp::None => StpMode::None,
                    Stp::CancelNewest => StpMode::CancelNewest,
                    Stp::CancelOldest => StpMode::CancelOldest,
                    Stp::CancelBoth => StpMode::CancelBoth,
                    Stp::Decrement => StpMode::DecrementAndCancel,
                },
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
            &peregrine_wire::admin::BalanceQuery {
                request_id,
                account,
                asset,
            },
            out,
        ),
    }
}

/// The gateway's form of an exchange report (`None` for session messages).
pub fn to_report(m: &Outbound) -> Option<Report> {
    Some(match *m {
        Outbound::Accepted(a) => Report::Accepted {
            order_id: a.order_id.0,
            coid: a.client_order_id.0,
            instrument: a.instrument,
            side: a.side,
            price: a.price.units(),
            qty: a.qty.lots(),
            time_ns: a.engine_time.0,
        },
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
            reserved: b.reserved,
            time_ns: b.engine_time.0,
        },
        Outbound::AdminRejected(a) => Report::BalanceRejected {
            request_id: a.request_id,
            reason: a.reason.0,
        },
        Outbound::LoginAccepted(_) | Outbound::LoginRejected(_) | Outbound::ServerHeartbeat(_) => {
            return None
        }
    })
}

async fn serve(
    stream: TcpStream,
    mut rxbuf: Rx,
    account: AccountId,
    rx: &mut mpsc::Receiver<Request>,
    sink: &dyn ReportSink,
) -> &'static str {
    let (mut rd, mut wr) = stream.into_split();
    let mut out = Vec::with_capacity(4096);
    let mut reports: Vec<Report> = Vec::with_capacity(256);
    let mut heartbeat = tokio::time::interval(HEARTBEAT);
    heartbeat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut last_tx = tokio::time::Instant::now();
    let mut expected_seq = 2u64;
    // Reports already buffered with the login answer.
    if drain(&mut rxbuf, &mut reports, &mut expected_seq).is_err() {
        return "protocol error";
    }
    if !reports.is_empty() {
        sink.deliver(account, &reports);
        reports.clear();
        sink.end_of_read(account);
    }
    loop {
        tokio::select! {
            r = rx.recv() => {
                let Some(r) = r else { return "gateway stopping" };
                encode_request(account, &r, &mut out);
                while let Ok(r) = rx.try_recv() {
                    encode_request(account, &r, &mut out);
                    if out.len() > 60_000 {
                        break;
                    }
                }
                if wr.write_all(&out).await.is_err() {
                    return "write failed";
                }
                out.clear();
                last_tx = tokio::time::Instant::now();
            }
            n = rd.read(rxbuf.spare()) => {
                match n {
                    Ok(0) => return "closed by the exchange",
                    Err(_) => return "read failed",
                    Ok(n) => rxbuf.commit(n),
                }
                let result = drain(&mut rxbuf, &mut reports, &mut expected_seq);
                if !reports.is_empty() {
                    sink.deliver(account, &reports);
                    reports.clear();
                }
                sink.end_of_read(account);
                if let Err(e) = result {
                    return e;
                }
            }
            _ = heartbeat.tick() => {
                if last_tx.elapsed() >= HEARTBEAT {
                    push(&ClientHeartbeat {}, &mut out);
                    if wr.write_all(&out).await.is_err() {
                        return "write failed";
                    }
                    out.clear();
                    last_tx = tokio::time::Instant::now();
                }
            }
        }
    }
}

/// Decodes every whole frame buffered.
fn drain(rx: &mut Rx, reports: &mut Vec<Report>, expected: &mut u64) -> Result<(), &'static str> {
    loop {
        match rx.next(Outbound::decode) {
            Ok(Some(m)) => {
                if m.session_seq() != *expected {
                    return Err("session sequence gap");
                }
                *expected += 1;
                if let Some(r) = to_report(&m) {
                    reports.push(r);
                }
            }
            Ok(None) => return Ok(()),
            Err(_) => return Err("protocol error"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use peregrine_types::{InstrumentId, Side};

    #[test]
    fn requests_encode_to_wire_messages() {
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
        });
        encode_request(AccountId(2), &r, &mut out);
        let (m, used) = peregrine_wire::Inbound::decode(&out).unwrap();
        assert_eq!(used, out.len());
        match m {
            peregrine_wire::Inbound::NewOrder(n) => {
                assert_eq!(n.client_order_id.0, 7);
                assert_eq!(n.price.units(), 10_050);
                assert_eq!(n.order_type, OrderType::PostOnly);
                assert_eq!(n.stp, StpMode::CancelBoth);
                assert_eq!(n.side, Side::Sell);
            }
            other => panic!("{other:?}"),
        }
    }
}
