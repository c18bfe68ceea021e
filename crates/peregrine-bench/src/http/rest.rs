//! The REST order benchmark: an open-loop HTTP/1.1 client on keep-alive
//! connections (one thread, non-blocking sockets), and the TCP floor.

use std::collections::VecDeque;
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::{AsFd, BorrowedFd};
use std::time::{Duration, Instant};

use super::report::{hist, Row, Table};
use super::{pace, BenchError};
use peregrine_http::dialect::auth::sign_hex;
use peregrine_http::market::feed::now_ms;
use peregrine_http::telemetry::{difference, quantile, StageSnapshot};

/// API key and secret of the bench's account 1 (the stack configures it).
pub const KEY: (&str, &str) = ("bench-key-one", "bench-secret-one");

/// A blocking GET; the body.
pub fn get(addr: SocketAddr, path: &str) -> std::io::Result<String> {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(2))?;
    s.set_read_timeout(Some(Duration::from_secs(5)))?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n"
    )?;
    let mut out = String::new();
    s.read_to_string(&mut out)?;
    Ok(out
        .split_once("\r\n\r\n")
        .map_or(String::new(), |(_, b)| b.to_owned()))
}

/// The gateway's new-order stage histograms (from `/peregrine/status`).
pub fn stages(addr: SocketAddr) -> Result<Vec<StageSnapshot>, BenchError> {
    let body = get(addr, "/peregrine/status")?;
    let mut v: serde_json::Value =
        serde_json::from_str(&body).map_err(|e| BenchError::Other(format!("status: {e}")))?;
    serde_json::from_value(v["order_stages"].take())
        .map_err(|e| BenchError::Other(format!("status order_stages: {e}")))
}

/// What the orders of one rate spent in each stage: the difference of two
/// [`stages`] snapshots, quantiles interpolated inside the buckets.
pub fn stages_table(
    rate: u64,
    secs: f64,
    before: &[StageSnapshot],
    after: &[StageSnapshot],
) -> Table {
    let rows = after
        .iter()
        .map(|a| {
            let was = before
                .iter()
                .find(|b| b.stage == a.stage)
                .map_or(&[][..], |b| &b.buckets[..]);
            let d = difference(&a.buckets, was);
            let q = |x| quantile(&d, x).unwrap_or(0);
            let n: u64 = d.iter().map(|b| b.1).sum();
            Row {
                name: format!("inside: {}", a.stage),
                n,
                p50: q(0.5),
                p90: q(0.9),
                p99: q(0.99),
                p999: q(0.999),
                max: d.last().map_or(0, |b| b.0),
                per_sec: n as f64 / secs.max(1e-9),
            }
        })
        .collect();
    Table {
        title: format!(
            "Inside the gateway at {rate}/s: POST /api/v3/order by stage (its /peregrine/status, \
             buckets at most 12.5% wide, interpolated; max = the top bucket's bound)"
        ),
        rows,
        notes: vec![
            "checks: signature, parameters, limits; exchange: session task, exchange round trip, \
             reports applied; wake: answer -> handler running; answer: response built; total: \
             handler entered -> response built (not hyper's read/parse/write, nor the hops)"
                .into(),
        ],
    }
}

struct Conn {
    s: TcpStream,
    buf: Vec<u8>,
    due: Option<Instant>,
}

/// Bytes of the first complete response in `buf`, and its status.
fn complete(buf: &[u8]) -> Option<(usize, u16)> {
    let head_end = buf.windows(4).position(|w| w == b"\r\n\r\n")? + 4;
    let head = std::str::from_utf8(&buf[..head_end]).ok()?;
    let status = head.split_whitespace().nth(1)?.parse().ok()?;
    let len = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse::<usize>().ok())?
        })
        .unwrap_or(0);
    (buf.len() >= head_end + len).then_some((head_end + len, status))
}

fn request(seq: u64) -> Vec<u8> {
    // An IOC buy at the bottom of the band: never trades, always a full round trip
    // (Accepted, then Cancelled) through the exchange.
    let q = format!(
        "symbol=PGN-USD&side=BUY&type=LIMIT&timeInForce=IOC&quantity=1&price=50.00\
         &newOrderRespType=RESULT&newClientOrderId=b{seq}&timestamp={}",
        now_ms()
    );
    let sig = sign_hex(KEY.1.as_bytes(), q.as_bytes());
    format!(
        "POST /api/v3/order?{q}&signature={sig} HTTP/1.1\r\nHost: bench\r\nX-MBX-APIKEY: {}\r\nContent-Length: 0\r\n\r\n",
        KEY.0
    )
    .into_bytes()
}

/// Open loop at `rate` orders/s for `secs` over `conns` connections.
pub fn run(addr: SocketAddr, rate: u64, secs: f64, conns: usize) -> Result<Table, BenchError> {
    let mut cs = Vec::new();
    for _ in 0..conns.max(1) {
        let s = TcpStream::connect(addr)?;
        s.set_nodelay(true)?;
        s.set_nonblocking(true)?;
        cs.push(Conn {
            s,
            buf: Vec::with_capacity(4096),
            due: None,
        });
    }
    pace::tight_timers();
    let mut h = hist();
    let gap = Duration::from_nanos(1_000_000_000 / rate.max(1));
    let start = Instant::now() + Duration::from_millis(100);
    let end = start + Duration::from_secs_f64(secs);
    let mut next = start;
    let mut backlog: VecDeque<Instant> = VecDeque::new();
    let (mut seq, mut errors, mut sent) = (0u64, 0u64, 0u64);
    let drain_until = end + Duration::from_secs(10);
    loop {
        let now = Instant::now();
        let mut busy = false;
        while next <= now && next < end {
            backlog.push_back(next);
            next += gap;
        }
        for c in cs.iter_mut() {
            if c.due.is_none() {
                if let Some(due) = backlog.pop_front() {
                    seq += 1;
                    let req = request(seq);
                    let mut off = 0;
                    while off < req.len() {
                        match c.s.write(&req[off..]) {
                            Ok(n) => off += n,
                            Err(e) if e.kind() == ErrorKind::WouldBlock => std::thread::yield_now(),
                            Err(e) => return Err(e.into()),
                        }
                    }
                    c.due = Some(due);
                    sent += 1;
                    busy = true;
                }
            }
            if let Some(due) = c.due {
                let mut tmp = [0u8; 8192];
                match c.s.read(&mut tmp) {
                    Ok(0) => {
                        return Err(BenchError::Other("the gateway closed a connection".into()))
                    }
                    Ok(n) => {
                        c.buf.extend_from_slice(&tmp[..n]);
                        busy = true;
                    }
                    Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                    Err(e) => return Err(e.into()),
                }
                if let Some((used, status)) = complete(&c.buf) {
                    let t = Instant::now();
                    if status == 200 {
                        h.record((t - due).as_nanos() as u64).ok();
                    } else {
                        errors += 1;
                    }
                    c.buf.drain(..used);
                    c.due = None;
                }
            }
        }
        let outstanding = backlog.len() + cs.iter().filter(|c| c.due.is_some()).count();
        if now >= end && outstanding == 0 {
            break;
        }
        if now > drain_until {
            errors += outstanding as u64;
            break;
        }
        if !busy {
            // Nothing to do now: block until an answer arrives or the next send is due.
            let waiting: Vec<BorrowedFd<'_>> = cs
                .iter()
                .filter(|c| c.due.is_some())
                .map(|c| c.s.as_fd())
                .collect();
            let until = if next < end { next } else { drain_until };
            pace::wait(&waiting, Some(until.min(drain_until)));
        }
    }
    let mut notes = vec![format!(
        "{sent} sent, {errors} errors (non-200 or unanswered), {conns} connections"
    )];
    if errors > 0 {
        notes.push("errors are not in the percentiles".into());
    }
    Ok(Table {
        title: format!(
            "REST POST /api/v3/order → answer, open loop {rate}/s, {secs} s (IOC via the exchange)"
        ),
        rows: vec![Row::from_hist("gateway: scheduled send → answer", &h, secs)],
        notes,
    })
}

/// The floor: a 300-byte request and a 300-byte answer over loopback TCP between
/// two threads (blocking sockets), closed loop.
pub fn floor(secs: f64) -> Result<Table, BenchError> {
    let l = TcpListener::bind("127.0.0.1:0")?;
    let addr = l.local_addr()?;
    let server = std::thread::spawn(move || -> std::io::Result<()> {
        let (mut s, _) = l.accept()?;
        s.set_nodelay(true)?;
        let mut buf = [0u8; 300];
        loop {
            if s.read_exact(&mut buf).is_err() {
                return Ok(());
            }
            s.write_all(&buf)?;
        }
    });
    let mut c = TcpStream::connect(addr)?;
    c.set_nodelay(true)?;
    let mut h = hist();
    let buf = [7u8; 300];
    let mut back = [0u8; 300];
    let end = Instant::now() + Duration::from_secs_f64(secs);
    while Instant::now() < end {
        let t = Instant::now();
        c.write_all(&buf)?;
        c.read_exact(&mut back)?;
        h.record(t.elapsed().as_nanos() as u64).ok();
    }
    drop(c);
    let _ = server.join();
    Ok(Table {
        title: format!("Floor: TCP loopback round trip, 300 B each way, blocking sockets, closed loop, {secs} s"),
        rows: vec![Row::from_hist("floor: write → read back", &h, secs)],
        notes: Vec::new(),
    })
}
