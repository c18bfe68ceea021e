//! The feed's recovery service, protocol v1: book snapshots and replays of missed
//! feed messages, over TCP, blocking (called from the feed thread and from the
//! history writer's resume, off the async runtime).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use peregrine_types::{InstrumentId, Side};
use peregrine_wire::md::recovery::{Recovery, ReplayRequest, SnapshotRequest};
use peregrine_wire::md::MdMessage;
use peregrine_wire::stream::RecvBuffer;
use peregrine_wire::WireMessage;

use super::{FeedEvent, FeedPos};

/// Connect, read and write timeout.
const TIMEOUT: Duration = Duration::from_secs(3);
/// Most messages one replay request asks for (the service caps at 8,192).
const REPLAY_CHUNK: u64 = 8_192;

/// A book from the recovery service.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// Feed session the sequence number belongs to.
    pub session: u64,
    /// Includes every feed message up to this one.
    pub as_of: u64,
    /// Bids, best first.
    pub bids: Vec<(i64, i64)>,
    /// Asks, best first.
    pub asks: Vec<(i64, i64)>,
}

/// Why recovery failed.
#[derive(Debug, thiserror::Error)]
pub enum RecoveryError {
    /// Socket trouble.
    #[error("recovery service: {0}")]
    Io(#[from] std::io::Error),
    /// A bad or unexpected message.
    #[error("recovery service: {0}")]
    Protocol(String),
}

fn connect(addr: SocketAddr) -> Result<TcpStream, RecoveryError> {
    let s = TcpStream::connect_timeout(&addr, TIMEOUT)?;
    s.set_read_timeout(Some(TIMEOUT))?;
    s.set_write_timeout(Some(TIMEOUT))?;
    s.set_nodelay(true)?;
    Ok(s)
}

fn send<M: WireMessage>(s: &mut TcpStream, m: &M) -> Result<(), RecoveryError> {
    let mut buf = [0u8; 64];
    let n = m
        .encode(&mut buf)
        .map_err(|e| RecoveryError::Protocol(format!("{e:?}")))?;
    s.write_all(&buf[..n])?;
    Ok(())
}

fn next(s: &mut TcpStream, rx: &mut RecvBuffer<65_536>) -> Result<Recovery, RecoveryError> {
    loop {
        match rx.next(Recovery::decode) {
            Ok(Some(m)) => return Ok(m),
            Ok(None) => {}
            Err(e) => return Err(RecoveryError::Protocol(format!("{e:?}"))),
        }
        let n = s.read(rx.spare())?;
        if n == 0 {
            return Err(RecoveryError::Protocol(
                "connection closed mid-answer".into(),
            ));
        }
        rx.commit(n);
    }
}

/// Fetches one instrument's book.
pub fn snapshot(addr: SocketAddr, instrument: InstrumentId) -> Result<Snapshot, RecoveryError> {
    let mut s = connect(addr)?;
    send(
        &mut s,
        &SnapshotRequest {
            request_id: 1,
            instrument,
        },
    )?;
    let mut rx = Box::new(RecvBuffer::<65_536>::new());
    let mut snap = Snapshot {
        session: 0,
        as_of: 0,
        bids: Vec::new(),
        asks: Vec::new(),
    };
    loop {
        match next(&mut s, &mut rx)? {
            Recovery::SnapshotHeader(h) => {
                if h.reason.0 != 0 {
                    return Err(RecoveryError::Protocol(format!(
                        "snapshot of instrument {instrument} refused, reason {}",
                        h.reason.0
                    )));
                }
                snap.session = h.session_id;
            }
            Recovery::SnapshotLevel(l) => {
                let level = (l.price.units(), l.qty.lots());
                match l.side {
                    Side::Buy => snap.bids.push(level),
                    Side::Sell => snap.asks.push(level),
                }
            }
            Recovery::SnapshotEnd(e) => {
                snap.as_of = e.as_of_seq;
                return Ok(snap);
            }
            other => {
                return Err(RecoveryError::Protocol(format!(
                    "unexpected {other:?} in a snapshot"
                )))
            }
        }
    }
}

/// Converts a feed message; `None` for messages the gateway does not use.
pub fn to_event(m: &MdMessage) -> Option<FeedEvent> {
    match *m {
        MdMessage::Trade(t) => Some(FeedEvent::Trade {
            instrument: t.instrument,
            trade_id: t.trade_id,
            price: t.price.units(),
            qty: t.qty.lots(),
            aggressor: t.aggressor_side,
            time_ns: t.engine_time.0,
        }),
        MdMessage::L2Update(u) => Some(FeedEvent::Level {
            instrument: u.instrument,
            side: u.side,
            price: u.price.units(),
            qty: u.qty.lots(),
            time_ns: u.engine_time.0,
        }),
        MdMessage::Commitment(_) => None,
    }
}

/// Fetches feed messages `first..end` of `session`, in order. `Ok(None)` when the
/// service no longer holds (part of) the range (or serves another session).
pub fn replay(
    addr: SocketAddr,
    session: u64,
    first: u64,
    end: u64,
) -> Result<Option<Vec<(FeedPos, FeedEvent)>>, RecoveryError> {
    let mut s = connect(addr)?;
    let mut rx = Box::new(RecvBuffer::<65_536>::new());
    let mut out = Vec::new();
    let mut next_seq = first;
    while next_seq < end {
        let want = (end - next_seq).min(REPLAY_CHUNK);
        send(
            &mut s,
            &ReplayRequest {
                session_id: session,
                first_seq: next_seq,
                count: want as u16,
            },
        )?;
        let count = match next(&mut s, &mut rx)? {
            Recovery::ReplayResponse(r) if r.first_seq == next_seq => u64::from(r.count),
            other => {
                return Err(RecoveryError::Protocol(format!(
                    "unexpected {other:?} answering a replay"
                )))
            }
        };
        if count == 0 {
            return Ok(None);
        }
        for _ in 0..count {
            let msg = match next(&mut s, &mut rx)? {
                Recovery::Trade(t) => MdMessage::Trade(t),
                Recovery::L2Update(u) => MdMessage::L2Update(u),
                Recovery::Commitment(c) => MdMessage::Commitment(c),
                other => {
                    return Err(RecoveryError::Protocol(format!(
                        "unexpected {other:?} in a replay"
                    )))
                }
            };
            if let Some(ev) = to_event(&msg) {
                out.push((
                    FeedPos {
                        session,
                        seq: next_seq,
                    },
                    ev,
                ));
            }
            next_seq += 1;
        }
    }
    Ok(Some(out))
}
