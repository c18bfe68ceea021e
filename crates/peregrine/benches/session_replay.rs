//! Protocol v2's per-account report stream, measured from outside (issue 12):
//!
//!     cargo bench -p peregrine --bench session_replay [-- --reports N] [--logins K]
//!
//! Starts the release exchange (journal on, `fsync = "none"`, retention N reports per
//! account). Account 1 rests one sell of N lots and disconnects, remembering its resume
//! point; account 2 then trades N IOC buys of 1 lot against it (pipelined, 256 in
//! flight), so N fills are made for account 1 while nobody of account 1 listens. Then:
//!
//! * **resume**: account 1 logs in at its resume point; time from `connect` to the end
//!   of the replay (login + N replayed reports), and the replay alone in reports/s.
//! * **resume after a restart**: the exchange is stopped (SIGTERM) and started again on
//!   the same journal; the same resume, now served from what the restart replayed.
//! * **floor**: the same number of bytes pushed through a bare loopback TCP socket in
//!   this process (writer thread, reader here), in the same run.
//! * **login**: K logins of account 2 (connect, challenge, HMAC proof, definitions,
//!   empty recovery, live), beside K bare TCP connects to the same port (the floor).
//!
//! Prints p50/p90/p99/p99.9/max where there is a distribution, rates, the multiples of
//! the floor, the load average, and one JSON line. The default N is 1,000,000 (the
//! issue's figure); `--reports 200000` is the reduced run.

mod support;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::time::{Duration, Instant};

use peregrine_types::{
    ClientOrderId, InstrumentId, OrderType, Price, Qty, Side, StpMode, TimeInForce, Timestamp,
};
use peregrine_wire::orders::NewOrder;
use peregrine_wire::v2::Outbound;
use peregrine_wire::WireMessage;

use support::{arg, keygen, load, login, percentiles, start_exchange};

const WINDOW: u64 = 256;
const PRICE: i64 = 10_000;

fn order(id: u64, side: Side, qty: i64, tif: TimeInForce) -> NewOrder {
    NewOrder {
        client_order_id: ClientOrderId(id),
        price: Price::from_raw(PRICE),
        qty: Qty::from_raw(qty),
        expire_at: Timestamp(0),
        instrument: InstrumentId(1),
        side,
        order_type: OrderType::Limit,
        tif,
        stp: StpMode::None,
    }
}

/// Account 1 rests a sell of `n` lots and leaves; returns its resume point.
fn rest_and_leave(addr: SocketAddr, keys: &Path, n: u64) -> u64 {
    let mut c = login(addr, keys, 1, 0);
    c.recover(|_| {}).expect("recovery");
    c.send(&order(1, Side::Sell, n as i64, TimeInForce::Gtc))
        .expect("send");
    loop {
        match c.read_next().expect("answer").1 {
            Outbound::Accepted(_) => break,
            Outbound::Rejected(r) => panic!("resting order rejected: {r:?}"),
            _ => {}
        }
    }
    c.resume_point()
}

/// Account 2 takes the resting order 1 lot at a time: `n` fills for each side.
fn trade(addr: SocketAddr, keys: &Path, n: u64) -> Duration {
    let mut c = login(addr, keys, 2, 0);
    c.recover(|_| {}).expect("recovery");
    let t = Instant::now();
    let mut buf = vec![0u8; WINDOW as usize * 128];
    let (mut sent, mut filled) = (0u64, 0u64);
    while filled < n {
        let mut len = 0;
        while sent < n && sent - filled < WINDOW {
            sent += 1;
            len += order(sent, Side::Buy, 1, TimeInForce::Ioc)
                .encode(&mut buf[len..])
                .expect("encode");
        }
        if len > 0 {
            c.socket().write_all(&buf[..len]).expect("send");
        }
        match c.read_next().expect("report").1 {
            Outbound::Fill(_) => filled += 1,
            Outbound::Cancelled(x) => panic!("buy not filled: {x:?}"),
            Outbound::Rejected(r) => panic!("buy rejected: {r:?}"),
            _ => {}
        }
    }
    t.elapsed()
}

/// Account 1 resumes: (connect → live, replay alone, reports replayed).
fn resume(addr: SocketAddr, keys: &Path, from: u64) -> (Duration, Duration, u64) {
    let t0 = Instant::now();
    let mut c = login(addr, keys, 1, from);
    let t1 = Instant::now();
    let r = c.recover(|_| {}).expect("recovery");
    let t2 = Instant::now();
    assert_eq!(r.reason, 0, "the resume point fell out of retention");
    (t2 - t0, t2 - t1, r.replayed)
}

/// `bytes` pushed through a bare loopback TCP connection (the floor of a replay).
fn tcp_floor(bytes: u64) -> Duration {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = l.local_addr().expect("addr");
    let writer = std::thread::spawn(move || {
        let (mut s, _) = l.accept().expect("accept");
        let chunk = vec![7u8; 64 * 1024];
        let mut left = bytes;
        while left > 0 {
            let k = left.min(chunk.len() as u64) as usize;
            s.write_all(&chunk[..k]).expect("write");
            left -= k as u64;
        }
    });
    let t = Instant::now();
    let mut s = TcpStream::connect(addr).expect("connect");
    let mut buf = vec![0u8; 64 * 1024];
    let mut got = 0u64;
    while got < bytes {
        let k = s.read(&mut buf).expect("read");
        assert!(k > 0, "floor writer closed early");
        got += k as u64;
    }
    let d = t.elapsed();
    writer.join().expect("writer");
    d
}

fn row(name: &str, v: Vec<u64>) -> [u64; 5] {
    let n = v.len();
    let p = percentiles(v);
    let us = |x: u64| x as f64 / 1000.0;
    println!(
        "{name:<26} {n:>6} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>9.1}",
        us(p[0]),
        us(p[1]),
        us(p[2]),
        us(p[3]),
        us(p[4])
    );
    p
}

fn main() {
    let n = arg("--reports", 1_000_000);
    let k = arg("--logins", 500);
    let dir = tempfile::tempdir().expect("tempdir");
    let (keys, accounts) = keygen(dir.path(), "1-2");
    let cfg = dir.path().join("exchange.toml");
    std::fs::write(
        &cfg,
        format!(
            "listen = \"127.0.0.1:0\"\nrecovery_listen = \"127.0.0.1:0\"\naccounts_file = \"{}\"\n\
             [market_data]\nenabled = false\n[reports]\nretain_per_account = {n}\n\
             [journal]\ndir = \"{}\"\nfsync = \"none\"\n",
            accounts.display(),
            dir.path().join("journal").display()
        ),
    )
    .expect("config");
    println!(
        "session replay, {n} missed reports; load average before: {}",
        load()
    );
    let (x, addr) = start_exchange(&cfg);
    let from = rest_and_leave(addr, &keys, n);
    let traded = trade(addr, &keys, n);
    println!(
        "made {n} fills for the absent account in {:.2} s ({:.0} orders/s)",
        traded.as_secs_f64(),
        n as f64 / traded.as_secs_f64()
    );
    let (live, replay, got) = resume(addr, &keys, from);
    assert_eq!(got, n, "every missed report replayed");

    // Restart on the same journal, then the same resume again.
    x.terminate();
    let t = Instant::now();
    let (x2, addr2) = start_exchange(&cfg);
    let restart = t.elapsed();
    let (live2, replay2, got2) = resume(addr2, &keys, from);
    assert_eq!(got2, n, "every missed report replayed after the restart");

    let fill_bytes = peregrine_wire::v2::reports::Fill::SIZE as u64;
    let floor = tcp_floor(n * fill_bytes);
    let rate = |d: Duration| n as f64 / d.as_secs_f64();
    println!(
        "{:<34} {:>10} {:>12} {:>14} {:>10}",
        "resume of the absent account", "to live", "replay", "reports/s", "x floor"
    );
    for (name, l, r) in [
        ("  live exchange", live, replay),
        ("  after a restart", live2, replay2),
        ("  floor: bare TCP, same bytes", floor, floor),
    ] {
        println!(
            "{name:<34} {:>8.1} ms {:>9.1} ms {:>14.0} {:>9.1}x",
            l.as_secs_f64() * 1e3,
            r.as_secs_f64() * 1e3,
            rate(r),
            r.as_secs_f64() / floor.as_secs_f64()
        );
    }
    println!(
        "exchange restart to listening: {:.0} ms ({fill_bytes} bytes per replayed Fill)",
        restart.as_secs_f64() * 1e3
    );

    // Login latency beside a bare connect to the same port.
    let mut logins = Vec::with_capacity(k as usize);
    let mut connects = Vec::with_capacity(k as usize);
    for _ in 0..k {
        let t = Instant::now();
        drop(TcpStream::connect(addr2).expect("connect"));
        connects.push(t.elapsed().as_nanos() as u64);
        let t = Instant::now();
        let mut c = login(addr2, &keys, 2, 0);
        c.recover(|_| {}).expect("recovery");
        logins.push(t.elapsed().as_nanos() as u64);
    }
    println!(
        "{:<26} {:>6} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "login (µs)", "n", "p50", "p90", "p99", "p99.9", "max"
    );
    let lp = row("  v2 login to live", logins);
    let cp = row("  floor: TCP connect", connects);
    println!(
        "  login p50 = {:.1}x the connect floor; load average after: {}",
        lp[0] as f64 / cp[0].max(1) as f64,
        load()
    );
    println!(
        "{{\"bench\":\"session_replay\",\"reports\":{n},\"resume_live_ns\":{},\"replay_ns\":{},\
         \"resume_after_restart_ns\":{},\"replay_after_restart_ns\":{},\"floor_ns\":{},\
         \"restart_ns\":{},\"login_p50_ns\":{},\"login_p99_ns\":{},\"connect_p50_ns\":{},\
         \"connect_p99_ns\":{}}}",
        live.as_nanos(),
        replay.as_nanos(),
        live2.as_nanos(),
        replay2.as_nanos(),
        floor.as_nanos(),
        restart.as_nanos(),
        lp[0],
        lp[2],
        cp[0],
        cp[2]
    );
    drop(x2);
}
