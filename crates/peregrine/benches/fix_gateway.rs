//! What `peregrine gateway fix` adds: order → first report round trip through the
//! FIX gateway, beside the same through the native protocol directly and through a
//! bare TCP relay standing where the gateway stands, all in the same run, open loop
//! (send times fixed in advance; latency counted from the scheduled send, so a stall
//! is not hidden).
//!
//!     cargo bench -p peregrine --bench fix_gateway [-- RATE... [--secs S] [--json PATH]
//!         [--wait busy-spin|spin-yield|park]]
//!
//! Starts an exchange and a gateway (release builds of this binary), then for each
//! rate (default 10000 and 50000 orders/s) three runs, one after the other:
//!
//! * `native`: the native protocol straight to the exchange (account 2);
//! * `native via relay`: the same through [`support::relay`], a thread that only
//!   copies bytes, waiting as the gateway does (epoll, and the gateway's `wait`,
//!   `--wait`, default `park`: spin, yield, then block): the physical
//!   floor of one more process hop on this machine (account 3);
//! * `fix gateway`: FIX through the gateway (account 1).
//!
//! IOC buys below the market (accepted, then cancelled as unfilled: the book stays
//! empty). Latency = first report (`Accepted` / ExecutionReport 150=0) − scheduled
//! send. The three clients are one loop (`open_loop`) over one [`OrderPath`] each:
//! send what is due, write, read what is there, then block in ppoll until input or
//! the next send (ppoll, timer slack 1 ns), so the client takes no core while it waits and
//! the bench measures the gateway, not three processes polling on two cores.
//! Prints p50/p90/p99/p99.9/max and the rate answered, what the relay hop adds and
//! what the gateway adds (in µs and as a multiple of the relay hop), the load average,
//! and the same as JSON (`--json PATH`, and a `JSON` line on stdout).

mod support;

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::fd::{AsFd, BorrowedFd};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use peregrine_client::keys::KeyFile;
use peregrine_client::order_entry::Connection;
use peregrine_fix::app::{
    NewOrderSingle, OrdType, OrderTerms, SelfMatchPrevention, Side as FixSide,
    TimeInForce as FixTif,
};
use peregrine_fix::codec::value::{parse_u64, write_u64};
use peregrine_fix::codec::{Message, Precision};
use peregrine_fix::session::{Event, Received, Role, Session, SessionConfig};
use peregrine_fix::store::MemoryStore;
use peregrine_queue::WaitStrategy;
use peregrine_types::wall_ns;
use peregrine_types::{
    AccountId, ClientOrderId, InstrumentId, OrderType, Price, Qty, Side, StpMode, TimeInForce,
    Timestamp,
};
use peregrine_wire::orders::NewOrder;
use peregrine_wire::v2::client::LoginParams;
use peregrine_wire::v2::Outbound;
use peregrine_wire::WireMessage;
use rustix::event::{poll, PollFd, PollFlags, Timespec};

use support::{first_line, keygen, percentiles, start_exchange, Kid};

/// One way of sending orders and seeing their first report.
trait OrderPath {
    /// Queues order `id` (1-based), stamped `now`.
    fn send(&mut self, id: u64, now: u64);
    /// Writes what is queued, reads what has arrived, and pushes the id of every
    /// order whose first report came to `got`.
    fn pump(&mut self, got: &mut Vec<u64>);
    /// The socket to wait on.
    fn fd(&self) -> BorrowedFd<'_>;
}

/// The native protocol on a logged-in session.
struct Native {
    stream: TcpStream,
    rx: peregrine_client::order_entry::Rx,
    out: Vec<u8>,
}

impl Native {
    fn connect(addr: SocketAddr, keys: &std::path::Path, account: u32) -> Native {
        let key = KeyFile::key_of(keys, AccountId(account)).unwrap();
        let (mut conn, _) = Connection::connect(
            addr,
            LoginParams::trading(AccountId(account), 0),
            key,
            Duration::from_secs(10),
        )
        .unwrap();
        conn.recover(|_| {}).unwrap();
        let (stream, rx, _) = conn.into_parts();
        stream.set_nonblocking(true).unwrap();
        Native {
            stream,
            rx,
            out: Vec::with_capacity(64 * 1024),
        }
    }
}

impl OrderPath for Native {
    fn send(&mut self, id: u64, _now: u64) {
        let o = NewOrder {
            client_order_id: ClientOrderId(id),
            price: Price::from_raw(6000),
            qty: Qty::from_raw(1),
            expire_at: Timestamp(0),
            instrument: InstrumentId(1),
            side: Side::Buy,
            order_type: OrderType::Limit,
            tif: TimeInForce::Ioc,
            stp: StpMode::None,
        };
        let mut buf = [0u8; 256];
        let n = o.encode(&mut buf).unwrap();
        self.out.extend_from_slice(&buf[..n]);
    }

    fn pump(&mut self, got: &mut Vec<u64>) {
        write_queued(&mut self.stream, &mut self.out);
        if let Ok(n) = self.stream.read(self.rx.spare()) {
            self.rx.commit(n);
        }
        while let Ok(Some(m)) = self.rx.next(Outbound::decode) {
            if let Outbound::Accepted(a) = m {
                got.push(a.client_order_id.0);
            }
        }
    }

    fn fd(&self) -> BorrowedFd<'_> {
        self.stream.as_fd()
    }
}

/// Writes `out` (blocking briefly if the socket is full: the bench's own backlog).
fn write_queued(stream: &mut TcpStream, out: &mut Vec<u8>) {
    let mut at = 0;
    while at < out.len() {
        match stream.write(&out[at..]) {
            Ok(n) => at += n,
            Err(e) if e.kind() == ErrorKind::WouldBlock => std::thread::yield_now(),
            Err(e) => panic!("write: {e}"),
        }
    }
    out.clear();
}

/// FIX 4.4 through the gateway, logged on.
struct Fix {
    stream: TcpStream,
    session: Session<MemoryStore>,
    rx: Vec<u8>,
    len: usize,
    cl: Vec<u8>,
}

impl Fix {
    fn connect(addr: SocketAddr) -> Fix {
        let stream = TcpStream::connect(addr).unwrap();
        stream.set_nodelay(true).unwrap();
        stream.set_nonblocking(true).unwrap();
        let mut cfg = SessionConfig::new(Role::Initiator, "CLIENT1", "PEREGRINE");
        cfg.password = Some("fix-pw".into());
        cfg.reset_on_logon = true;
        cfg.max_outbound_bytes = 64 << 20;
        let cap = cfg.limits.max_message() * 4;
        let mut session = Session::new(cfg, MemoryStore::new(wall_ns()));
        session.connect(wall_ns()).unwrap();
        let mut fix = Fix {
            stream,
            session,
            rx: vec![0; cap],
            len: 0,
            cl: Vec::with_capacity(24),
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut logged_on = false;
        while !logged_on && Instant::now() < deadline {
            fix.flush();
            logged_on = fix.read(&mut |_| {});
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(logged_on, "FIX logon through the gateway");
        fix
    }

    /// Writes the session's output straight from its buffer.
    fn flush(&mut self) {
        loop {
            let out = self.session.outbound().unwrap();
            if out.is_empty() {
                return;
            }
            match self.stream.write(out) {
                Ok(n) => self.session.consume_outbound(n),
                Err(e) if e.kind() == ErrorKind::WouldBlock => std::thread::yield_now(),
                Err(e) => panic!("write: {e}"),
            }
        }
    }

    /// Reads once and hands application messages to `app`. Returns whether the
    /// session logged on.
    fn read(&mut self, app: &mut dyn FnMut(&Message<'_>)) -> bool {
        match self.stream.read(&mut self.rx[self.len..]) {
            Ok(0) => panic!("the gateway closed the FIX connection"),
            Ok(n) => self.len += n,
            Err(e) if e.kind() == ErrorKind::WouldBlock => {}
            Err(e) => panic!("read: {e}"),
        }
        let now = wall_ns();
        let mut used = 0;
        let mut logged_on = false;
        while let Ok(Received::Consumed { len, event }) =
            self.session.receive(&self.rx[used..self.len], now)
        {
            used += len;
            match event {
                Some(Event::App(m)) => app(&m),
                Some(Event::LoggedOn { .. }) => logged_on = true,
                _ => {}
            }
        }
        self.rx.copy_within(used..self.len, 0);
        self.len -= used;
        logged_on
    }
}

impl OrderPath for Fix {
    fn send(&mut self, id: u64, now: u64) {
        self.cl.clear();
        write_u64(&mut self.cl, id);
        let d = NewOrderSingle {
            cl_ord_id: &self.cl,
            account: None,
            transact_time: now,
            terms: OrderTerms {
                symbol: b"PGN-USD",
                side: FixSide::Buy,
                order_qty: b"1",
                ord_type: OrdType::Limit,
                price: Some(b"60.00"),
                time_in_force: FixTif::Ioc,
                expire_time: None,
                post_only: false,
                self_match: SelfMatchPrevention::None,
            },
        };
        self.session
            .send_app(b"D", now, |w| d.encode(w, Precision::Millis))
            .unwrap();
    }

    fn pump(&mut self, got: &mut Vec<u64>) {
        self.flush();
        self.read(&mut |m| {
            let mut cl = None;
            let mut new = false;
            for f in m.fields().flatten() {
                match f.tag {
                    11 => cl = parse_u64(f.value),
                    150 => new = f.value == b"0",
                    _ => {}
                }
            }
            if let (Some(cl), true) = (cl, new) {
                got.push(cl);
            }
        });
    }

    fn fd(&self) -> BorrowedFd<'_> {
        self.stream.as_fd()
    }
}

/// Open loop at `rate` for `secs`: the latency of every order answered.
fn open_loop(path: &mut dyn OrderPath, rate: u64, secs: u64) -> Vec<u64> {
    let total = rate * secs;
    let gap = 1_000_000_000 / rate;
    let mut sent_at = vec![0u64; total as usize];
    let mut lat = Vec::with_capacity(total as usize);
    let mut got = Vec::with_capacity(1024);
    let start = wall_ns() + 200_000_000;
    let mut next = 0u64;
    let deadline = Instant::now() + Duration::from_secs(secs + 10);
    while (lat.len() as u64) < total && Instant::now() < deadline {
        let now = wall_ns();
        while next < total && start + next * gap <= now {
            path.send(next + 1, now);
            sent_at[next as usize] = start + next * gap;
            next += 1;
        }
        path.pump(&mut got);
        let t = wall_ns();
        for id in got.drain(..) {
            lat.push(t.saturating_sub(sent_at[id as usize - 1]));
        }
        // Block until a report arrives or the next order is due. ppoll(2): its
        // timeout has nanosecond resolution (epoll_wait's, as rustix calls it without
        // its `linux_5_11` feature, has milliseconds: sends would be up to 1 ms late).
        let wait = if next < total {
            (start + next * gap).saturating_sub(wall_ns())
        } else {
            10_000_000
        };
        if wait > 0 {
            let timeout = Timespec {
                tv_sec: (wait / 1_000_000_000) as _,
                tv_nsec: (wait % 1_000_000_000) as _,
            };
            let fd = path.fd();
            let mut fds = [PollFd::new(&fd, PollFlags::IN)];
            let _ = poll(&mut fds, Some(&timeout));
        }
    }
    lat
}

/// One run's numbers.
struct Row {
    path: &'static str,
    rate: u64,
    orders: usize,
    /// p50, p90, p99, p99.9, max (ns).
    p: [u64; 5],
    per_sec: f64,
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let mut secs = 3;
    let mut json_path = None;
    let mut wait = WaitStrategy::SpinThenPark;
    let mut rates = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--secs" => secs = it.next().and_then(|s| s.parse().ok()).unwrap_or(3),
            "--json" => json_path = it.next().cloned(),
            "--wait" => {
                wait = it
                    .next()
                    .and_then(|w| w.parse().ok())
                    .expect("--wait busy-spin|spin-yield|park")
            }
            r => rates.extend(r.parse::<u64>().ok()),
        }
    }
    if rates.is_empty() {
        rates = vec![10_000, 50_000];
    }
    // The client's waits end when asked, not up to 50 µs later (the default slack).
    let _ = rustix::thread::set_current_timer_slack(std::num::NonZeroU64::new(1));
    let dir = tempfile::tempdir().unwrap();
    let (keys, accounts) = keygen(dir.path(), "1-3");
    let xcfg = dir.path().join("exchange.toml");
    std::fs::write(
        &xcfg,
        format!(
            "listen = \"127.0.0.1:0\"\nrecovery_listen = \"127.0.0.1:0\"\naccounts_file = \"{}\"\n\
             [market_data]\nenabled = false\n",
            accounts.display()
        ),
    )
    .unwrap();
    let (_x, xaddr) = start_exchange(&xcfg);
    let gcfg = dir.path().join("gateway-fix.toml");
    std::fs::write(
        &gcfg,
        format!(
            "listen = \"127.0.0.1:0\"\nexchange = \"{xaddr}\"\nstore_dir = \"{}\"\nkeys_file = \"{}\"\nwait = \"{wait}\"\n\
             [[instruments]]\nsymbol = \"PGN-USD\"\nid = 1\nprice_decimals = 2\nqty_decimals = 0\n\
             [[sessions]]\ncomp_id = \"CLIENT1\"\npassword = \"fix-pw\"\naccount = 1\n",
            dir.path().join("store").display(),
            keys.display()
        ),
    )
    .unwrap();
    let mut g = Command::new(support::bin())
        .args(["gateway", "fix", "--config"])
        .arg(&gcfg)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let line = first_line(&mut g);
    let _g = Kid(g);
    let gaddr: SocketAddr = line.split_whitespace().nth(4).unwrap().parse().unwrap();
    std::thread::sleep(Duration::from_millis(500)); // the gateway's exchange session logs in

    let load_before = support::load();
    println!(
        "order -> first report, open loop, {secs} s per run, clients blocking in ppoll, \
         gateway and relay wait = {wait}; gateway pid {}; load average before: {load_before}",
        _g.0.id()
    );
    println!(
        "{:<28} {:>8} {:>9} {:>9} {:>9} {:>9} {:>10} {:>9}",
        "path @ rate", "orders", "p50 µs", "p90", "p99", "p99.9", "max", "got/s"
    );
    let mut rows = Vec::new();
    let mut summaries = Vec::new();
    for &rate in &rates {
        let native = open_loop(&mut Native::connect(xaddr, &keys, 2), rate, secs);
        let relay = support::relay::start(xaddr, wait);
        let relayed = open_loop(&mut Native::connect(relay.addr, &keys, 3), rate, secs);
        drop(relay);
        let fix = open_loop(&mut Fix::connect(gaddr), rate, secs);
        let mut ps = Vec::new();
        for (path, lat) in [
            ("native", native),
            ("native via relay", relayed),
            ("fix gateway", fix),
        ] {
            let row = Row {
                path,
                rate,
                orders: lat.len(),
                per_sec: lat.len() as f64 / secs as f64,
                p: percentiles(lat),
            };
            print_row(&row);
            ps.push(row.p);
            rows.push(row);
        }
        let s = summary(rate, &ps[0], &ps[1], &ps[2]);
        println!("{}", s.0);
        summaries.push(s.1);
    }
    let load_after = support::load();
    println!("load average after: {load_after}");
    let json = format!(
        "{{\"secs\":{secs},\"wait\":\"{wait}\",\"load_before\":\"{load_before}\",\"load_after\":\"{load_after}\",\"runs\":[{}],\"added\":[{}]}}",
        rows.iter().map(row_json).collect::<Vec<_>>().join(","),
        summaries.join(",")
    );
    println!("JSON {json}");
    if let Some(p) = json_path {
        match std::fs::write(&p, json + "\n") {
            Ok(()) => println!("wrote {p}"),
            Err(e) => eprintln!("cannot write {p}: {e} (a relative path is from crates/peregrine)"),
        }
    }
}

fn print_row(r: &Row) {
    let us = |v: u64| v as f64 / 1000.0;
    let [p50, p90, p99, p999, max] = r.p;
    println!(
        "{:<28} {:>8} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>10.1} {:>9.0}",
        format!("{} @ {}/s", r.path, r.rate),
        r.orders,
        us(p50),
        us(p90),
        us(p99),
        us(p999),
        us(max),
        r.per_sec
    );
}

fn row_json(r: &Row) -> String {
    let [p50, p90, p99, p999, max] = r.p;
    format!(
        "{{\"path\":\"{}\",\"rate\":{},\"orders\":{},\"per_sec\":{:.0},\"p50_ns\":{p50},\"p90_ns\":{p90},\"p99_ns\":{p99},\"p999_ns\":{p999},\"max_ns\":{max}}}",
        r.path, r.rate, r.orders, r.per_sec
    )
}

/// What the relay hop and the gateway add over the native path at p50 and p99, and
/// the gateway's as a multiple of the relay hop's: (text, JSON).
fn summary(rate: u64, native: &[u64; 5], relay: &[u64; 5], fix: &[u64; 5]) -> (String, String) {
    let add = |a: &[u64; 5], i: usize| a[i] as f64 - native[i] as f64;
    let (r50, r99, g50, g99) = (add(relay, 0), add(relay, 2), add(fix, 0), add(fix, 2));
    let times = |g: f64, r: f64| {
        if r > 0.0 {
            format!("{:.1}×", g / r)
        } else {
            "n/a (relay hop ≤ 0)".into()
        }
    };
    let text = format!(
        "  @ {rate}/s: relay hop adds p50 {:+.1} µs, p99 {:+.1} µs; gateway adds p50 {:+.1} µs ({} the relay hop), p99 {:+.1} µs ({})",
        r50 / 1000.0,
        r99 / 1000.0,
        g50 / 1000.0,
        times(g50, r50),
        g99 / 1000.0,
        times(g99, r99)
    );
    let json = format!(
        "{{\"rate\":{rate},\"relay_adds_p50_ns\":{r50:.0},\"relay_adds_p99_ns\":{r99:.0},\"gateway_adds_p50_ns\":{g50:.0},\"gateway_adds_p99_ns\":{g99:.0}}}"
    );
    (text, json)
}
