//! The feed's TCP recovery service, snapshot half: a subscriber sends a
//! `SnapshotRequest` for an instrument and gets `SnapshotHeader`, every level (bids
//! best first, then asks best first) and `SnapshotEnd`, as of a feed sequence number.
//!
//! It runs on the thread that owns the engine, between batches, after the batch's
//! feed packets were sent, so `as_of_seq` (the last feed sequence number sent) exactly
//! matches the book. Replay of a sequence range is not retained yet: a
//! `ReplayRequest` is answered with count 0 and reason [`REPLAY_NOT_RETAINED`].
//!
//! Sockets are non-blocking; a client whose answer does not fit in its socket buffer
//! within one write is dropped (a snapshot of a small book is a few kilobytes).

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};

use crate::balances::VenueEngine as MatchingEngine;
use peregrine_types::{Side, Timestamp};
use peregrine_wire::md::recovery::{
    Recovery, ReplayResponse, SnapshotEnd, SnapshotHeader, SnapshotLevel, SnapshotRequest,
};
use peregrine_wire::stream::RecvBuffer;
use peregrine_wire::{ReasonCode, WireMessage};

/// `ReplayResponse.reason`: the range is not retained (replay not implemented).
pub const REPLAY_NOT_RETAINED: u16 = 1;
/// `SnapshotHeader.reason`: no such instrument.
pub const SNAPSHOT_UNKNOWN_INSTRUMENT: u16 = 2;

/// Most levels per side sent in a snapshot.
const MAX_LEVELS: usize = 10_000;
/// Most recovery clients at once.
const MAX_CLIENTS: usize = 16;

#[derive(Debug)]
struct Client {
    stream: TcpStream,
    rx: Box<RecvBuffer<1024>>,
}

/// The recovery listener and its clients.
#[derive(Debug)]
pub struct RecoveryServer {
    listener: TcpListener,
    clients: Vec<Client>,
    out: Vec<u8>,
}

impl RecoveryServer {
    /// Binds the listener.
    pub fn bind(addr: SocketAddr) -> std::io::Result<Self> {
        let listener = TcpListener::bind(addr)?;
        listener.set_nonblocking(true)?;
        Ok(RecoveryServer {
            listener,
            clients: Vec::new(),
            out: Vec::with_capacity(1 << 16),
        })
    }

    /// The bound address.
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Accepts, reads and answers. `as_of_seq` is the last feed sequence number sent.
    pub fn poll(
        &mut self,
        engine: &MatchingEngine,
        session_id: u64,
        as_of_seq: u64,
        now: Timestamp,
    ) {
        while let Ok((stream, peer)) = self.listener.accept() {
            if self.clients.len() >= MAX_CLIENTS || stream.set_nonblocking(true).is_err() {
                crate::log!("recovery: refused {peer}");
                continue;
            }
            let _ = stream.set_nodelay(true);
            self.clients.push(Client {
                stream,
                rx: Box::new(RecvBuffer::new()),
            });
        }
        let ctx = (engine, session_id, as_of_seq, now);
        let mut i = 0;
        while i < self.clients.len() {
            if serve(&mut self.clients[i], &mut self.out, ctx) {
                i += 1;
            } else {
                self.clients.swap_remove(i);
            }
        }
    }
}

type Ctx<'a> = (&'a MatchingEngine, u64, u64, Timestamp);

/// Reads and answers one client; false when it must be dropped.
fn serve(c: &mut Client, out: &mut Vec<u8>, ctx: Ctx<'_>) -> bool {
    match c.stream.read(c.rx.spare()) {
        Ok(0) => return false,
        Ok(n) => c.rx.commit(n),
        Err(e) if e.kind() == ErrorKind::WouldBlock => return true,
        Err(_) => return false,
    }
    out.clear();
    loop {
        match c.rx.next(Recovery::decode) {
            Ok(Some(Recovery::SnapshotRequest(r))) => snapshot(&r, out, ctx),
            Ok(Some(Recovery::ReplayRequest(r))) => put(
                out,
                &ReplayResponse {
                    session_id: r.session_id,
                    first_seq: r.first_seq,
                    count: 0,
                    reason: ReasonCode(REPLAY_NOT_RETAINED),
                },
            ),
            Ok(None) => break,
            Ok(Some(_)) | Err(_) => return false,
        }
    }
    out.is_empty() || c.stream.write_all(out).is_ok()
}

fn snapshot(r: &SnapshotRequest, out: &mut Vec<u8>, (engine, session_id, as_of_seq, now): Ctx<'_>) {
    let header_at = out.len();
    let mut header = SnapshotHeader {
        request_id: r.request_id,
        session_id,
        as_of_seq,
        engine_time: now,
        instrument: r.instrument,
        level_count: 0,
        reason: ReasonCode::NONE,
    };
    put(out, &header);
    let mut count = 0u32;
    match engine.book(r.instrument) {
        Some(book) => {
            for side in [Side::Buy, Side::Sell] {
                book.visit_depth(side, MAX_LEVELS, &mut |price, qty, order_count| {
                    put(
                        out,
                        &SnapshotLevel {
                            price,
                            qty,
                            order_count,
                            side,
                        },
                    );
                    count += 1;
                });
            }
        }
        None => header.reason = ReasonCode(SNAPSHOT_UNKNOWN_INSTRUMENT),
    }
    header.level_count = count;
    // Rewrite the header in place with the final count (same size).
    let _ = header.encode(&mut out[header_at..header_at + SnapshotHeader::SIZE]);
    put(
        out,
        &SnapshotEnd {
            request_id: r.request_id,
            as_of_seq,
            instrument: r.instrument,
            level_count: count,
        },
    );
}

fn put<M: WireMessage>(out: &mut Vec<u8>, m: &M) {
    let at = out.len();
    out.resize(at + M::SIZE, 0);
    let _ = m.encode(&mut out[at..]);
}
