//! The client side of the feed's TCP recovery service: a book snapshot, or a replay
//! of a range of feed messages.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use peregrine_types::InstrumentId;
use peregrine_wire::md::recovery::{Recovery, ReplayRequest, SnapshotRequest};
use peregrine_wire::md::MdMessage;
use peregrine_wire::stream::RecvBuffer;
use peregrine_wire::WireMessage;

use crate::error::{ClientError, IoContext};
use crate::md::book::L2Book;

const TIMEOUT: Duration = Duration::from_secs(5);

/// A book from the recovery service.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// The book.
    pub book: L2Book,
    /// The feed session it belongs to.
    pub session_id: u64,
    /// The last feed sequence number it reflects (the feed continues at
    /// `as_of_seq + 1`).
    pub as_of_seq: u64,
}

fn connect(addr: SocketAddr) -> Result<TcpStream, ClientError> {
    let stream = TcpStream::connect_timeout(&addr, TIMEOUT)
        .doing(|| format!("connecting to the recovery service {addr}"))?;
    stream
        .set_read_timeout(Some(TIMEOUT))
        .doing(|| "setting the read timeout".into())?;
    Ok(stream)
}

fn fill(
    stream: &mut TcpStream,
    rx: &mut RecvBuffer<65536>,
    during: &'static str,
) -> Result<(), ClientError> {
    let n = stream
        .read(rx.spare())
        .doing(|| "reading from the recovery service".into())?;
    if n == 0 {
        return Err(ClientError::Closed(during));
    }
    rx.commit(n);
    Ok(())
}

/// Fetches one instrument's book from the recovery service.
pub fn snapshot(addr: SocketAddr, instrument: InstrumentId) -> Result<Snapshot, ClientError> {
    let mut stream = connect(addr)?;
    let mut buf = [0u8; SnapshotRequest::SIZE];
    SnapshotRequest {
        request_id: 1,
        instrument,
    }
    .encode(&mut buf)?;
    stream
        .write_all(&buf)
        .doing(|| "sending the snapshot request".into())?;
    let mut rx = Box::new(RecvBuffer::<65536>::new());
    let (mut book, mut session_id) = (L2Book::default(), 0);
    loop {
        while let Some(m) = rx.next(Recovery::decode)? {
            match m {
                Recovery::SnapshotHeader(h) => {
                    if h.reason.0 != 0 {
                        return Err(ClientError::Unexpected(format!(
                            "snapshot refused, reason {}",
                            h.reason.0
                        )));
                    }
                    session_id = h.session_id;
                }
                Recovery::SnapshotLevel(l) => book.update(l.side, l.price.units(), l.qty.lots()),
                Recovery::SnapshotEnd(e) => {
                    return Ok(Snapshot {
                        book,
                        session_id,
                        as_of_seq: e.as_of_seq,
                    })
                }
                other => {
                    return Err(ClientError::Unexpected(format!(
                        "recovery message {other:?}"
                    )))
                }
            }
        }
        fill(&mut stream, &mut rx, "mid-snapshot")?;
    }
}

/// Fetches feed messages `first..first + count` from the recovery service, in
/// order, asking again while each answer is partial. `Ok(None)` when the service no
/// longer retains (part of) the range.
pub fn replay(
    addr: SocketAddr,
    session_id: u64,
    first: u64,
    count: u64,
) -> Result<Option<Vec<(u64, MdMessage)>>, ClientError> {
    let mut stream = connect(addr)?;
    let mut rx = Box::new(RecvBuffer::<65536>::new());
    let mut got: Vec<(u64, MdMessage)> = Vec::with_capacity(count.min(1 << 16) as usize);
    let end = first + count;
    while first + (got.len() as u64) < end {
        let next = first + got.len() as u64;
        let mut buf = [0u8; ReplayRequest::SIZE];
        ReplayRequest {
            session_id,
            first_seq: next,
            count: u16::try_from(end - next).unwrap_or(u16::MAX),
        }
        .encode(&mut buf)?;
        stream
            .write_all(&buf)
            .doing(|| "sending the replay request".into())?;
        // The answer: a response, then exactly `count` feed messages.
        let mut expected: Option<u64> = None;
        let mut received = 0u64;
        loop {
            while let Some(m) = rx.next(Recovery::decode)? {
                let seq = next + received;
                let msg = match m {
                    Recovery::ReplayResponse(r) => {
                        if expected.is_some() {
                            return Err(ClientError::Unexpected("two replay responses".into()));
                        }
                        if r.first_seq != next {
                            return Err(ClientError::Unexpected(
                                "replay of the wrong range".into(),
                            ));
                        }
                        if r.count == 0 {
                            return Ok(None);
                        }
                        expected = Some(u64::from(r.count));
                        continue;
                    }
                    Recovery::Trade(t) if expected.is_some() => MdMessage::Trade(t),
                    Recovery::L2Update(u) if expected.is_some() => MdMessage::L2Update(u),
                    Recovery::Commitment(c) if expected.is_some() => MdMessage::Commitment(c),
                    other => {
                        return Err(ClientError::Unexpected(format!(
                            "recovery message {other:?}"
                        )))
                    }
                };
                got.push((seq, msg));
                received += 1;
            }
            if expected == Some(received) {
                break;
            }
            fill(&mut stream, &mut rx, "mid-replay")?;
        }
    }
    Ok(Some(got))
}
