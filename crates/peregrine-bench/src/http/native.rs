//! The same orders over the native protocol, straight to the exchange, in the same
//! run: what the gateway adds on top of it.

use std::io::{ErrorKind, Read, Write};
use std::net::SocketAddr;
use std::os::fd::AsFd;
use std::path::Path;
use std::time::{Duration, Instant};

use peregrine_client::keys::KeyFile;
use peregrine_client::order_entry::Connection;
use peregrine_types::{AccountId, InstrumentId, Side};
use peregrine_wire::v2::client::LoginParams;
use peregrine_wire::v2::Outbound;

use super::report::{hist, Row, Table};
use super::{pace, BenchError};
use peregrine_http::link::session::encode_request;
use peregrine_http::link::{Kind, NewOrder, Request, Stp, Tif};

/// Open loop at `rate` orders/s for `secs`: IOC buys at 50.00 from account 2 (a
/// protocol v2 session, its key from `keys`), latency from the scheduled send time to
/// the exchange's `Cancelled` (the last report of the order, as the gateway's answer
/// waits for it).
pub fn run(exchange: SocketAddr, keys: &Path, rate: u64, secs: f64) -> Result<Table, BenchError> {
    let other = |e: &dyn std::fmt::Display| BenchError::Other(format!("native session: {e}"));
    let key = KeyFile::key_of(keys, AccountId(2)).map_err(|e| other(&e))?;
    let (mut c, _) = Connection::connect(
        exchange,
        LoginParams::trading(AccountId(2), 0),
        key,
        Duration::from_secs(5),
    )
    .map_err(|e| other(&e))?;
    c.recover(|_| {}).map_err(|e| other(&e))?;
    let (mut s, mut rx, _) = c.into_parts();
    s.set_nonblocking(true)?;
    let gap = Duration::from_nanos(1_000_000_000 / rate.max(1));
    let start = Instant::now() + Duration::from_millis(100);
    let end = start + Duration::from_secs_f64(secs);
    let mut dues: Vec<Instant> = Vec::with_capacity((rate as f64 * secs) as usize + 16);
    let mut next = start;
    let mut done = 0usize;
    let mut h = hist();
    let mut out = Vec::with_capacity(256);
    pace::tight_timers();
    let drain_until = end + Duration::from_secs(10);
    loop {
        let now = Instant::now();
        let mut busy = false;
        while next <= now && next < end {
            dues.push(next);
            let coid = dues.len() as u64;
            encode_request(
                AccountId(2),
                &Request::New(NewOrder {
                    coid,
                    instrument: InstrumentId(1),
                    side: Side::Buy,
                    kind: Kind::Limit,
                    tif: Tif::Ioc,
                    price: 5_000,
                    qty: 1,
                    stp: Stp::None,
                    ext: Default::default(),
                }),
                &mut out,
            );
            next += gap;
        }
        if !out.is_empty() {
            let mut off = 0;
            while off < out.len() {
                match s.write(&out[off..]) {
                    Ok(n) => off += n,
                    Err(e) if e.kind() == ErrorKind::WouldBlock => std::thread::yield_now(),
                    Err(e) => return Err(e.into()),
                }
            }
            out.clear();
            busy = true;
        }
        match s.read(rx.spare()) {
            Ok(0) => return Err(BenchError::Other("the exchange closed the session".into())),
            Ok(n) => {
                rx.commit(n);
                let t = Instant::now();
                while let Ok(Some(m)) = rx.next(Outbound::decode) {
                    if let Outbound::Cancelled(c) = m {
                        if let Some(due) = dues.get((c.client_order_id.0 as usize).wrapping_sub(1))
                        {
                            h.record((t - *due).as_nanos() as u64).ok();
                            done += 1;
                        }
                    }
                }
                busy = true;
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => {}
            Err(e) => return Err(e.into()),
        }
        if now >= end && done == dues.len() || now > drain_until {
            break;
        }
        if !busy {
            // Block until a report arrives or the next send is due.
            let until = if next < end { next } else { drain_until };
            pace::wait(&[s.as_fd()], Some(until.min(drain_until)));
        }
    }
    Ok(Table {
        title: format!("Native protocol NewOrder → Cancelled, open loop {rate}/s, {secs} s (same orders, same run)"),
        rows: vec![Row::from_hist("native: scheduled send → last report", &h, secs)],
        notes: vec![format!("{} sent, {} answered", dues.len(), done)],
    })
}
