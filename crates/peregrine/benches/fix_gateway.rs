//! What `peregrine gateway fix` adds: order → first report round trip through the
//! FIX gateway beside the same through the native protocol, in the same run, open
//! loop (send times fixed in advance; latency counted from the scheduled send, so a
//! stall is not hidden).
//!
//!     cargo bench -p peregrine --bench fix_gateway [-- RATE... [--secs S]]
//!
//! Starts an exchange and a gateway (release builds of this binary), then for each
//! rate (default 10000 and 50000 orders/s): native orders (account 2) then FIX orders
//! through the gateway (account 1), IOC buys below the market (accepted, then
//! cancelled as unfilled: the book stays empty). Latency = first report
//! (`Accepted` / ExecutionReport 150=0) − scheduled send. Prints p50/p90/p99/p99.9/max,
//! achieved rate, the gateway's added p50/p99, the load average, and a JSON line.

mod support;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use peregrine_client::keys::KeyFile;
use peregrine_client::order_entry::Connection;
use peregrine_fix::app::{
    NewOrderSingle, OrdType, OrderTerms, SelfMatchPrevention, Side as FixSide,
    TimeInForce as FixTif,
};
use peregrine_fix::codec::value::write_u64;
use peregrine_fix::codec::Precision;
use peregrine_fix::session::{Event, Role, Session, SessionConfig};
use peregrine_fix::store::MemoryStore;
use peregrine_fix_interop::FixConn;
use peregrine_types::wall_ns;
use peregrine_types::{
    AccountId, ClientOrderId, InstrumentId, OrderType, Price, Qty, Side, StpMode, TimeInForce,
    Timestamp,
};
use peregrine_wire::orders::NewOrder;
use peregrine_wire::v2::client::LoginParams;
use peregrine_wire::v2::Outbound;
use peregrine_wire::WireMessage;

use support::{first_line, keygen, percentiles, start_exchange, Kid};

/// Native: open loop on one session; latency to `Accepted`.
fn native(addr: SocketAddr, keys: &std::path::Path, rate: u64, secs: u64) -> Vec<u64> {
    let key = KeyFile::key_of(keys, AccountId(2)).unwrap();
    let (mut conn, _) = Connection::connect(
        addr,
        LoginParams::trading(AccountId(2), 0),
        key,
        Duration::from_secs(10),
    )
    .unwrap();
    conn.recover(|_| {}).unwrap();
    let (mut s, mut rx, _) = conn.into_parts();
    s.set_nonblocking(true).unwrap();
    let mut buf = [0u8; 512];
    let total = rate * secs;
    let gap = 1_000_000_000 / rate;
    let mut sent_at = vec![0u64; total as usize];
    let mut lat = Vec::with_capacity(total as usize);
    let start = wall_ns() + 200_000_000;
    let mut next = 0u64;
    let deadline = Instant::now() + Duration::from_secs(secs + 10);
    while (lat.len() as u64) < total && Instant::now() < deadline {
        let now = wall_ns();
        while next < total && start + next * gap <= now {
            let o = NewOrder {
                client_order_id: ClientOrderId(next + 1),
                price: Price::from_raw(6000),
                qty: Qty::from_raw(1),
                expire_at: Timestamp(0),
                instrument: InstrumentId(1),
                side: Side::Buy,
                order_type: OrderType::Limit,
                tif: TimeInForce::Ioc,
                stp: StpMode::None,
            };
            let n = o.encode(&mut buf).unwrap();
            s.write_all(&buf[..n]).unwrap();
            sent_at[next as usize] = start + next * gap;
            next += 1;
        }
        let spare = rx.spare();
        if let Ok(n) = s.read(spare) {
            rx.commit(n);
        }
        while let Ok(Some(m)) = rx.next(Outbound::decode) {
            if let Outbound::Accepted(a) = m {
                let i = a.client_order_id.0 as usize - 1;
                lat.push(wall_ns().saturating_sub(sent_at[i]));
            }
        }
    }
    lat
}

/// FIX through the gateway: open loop on one session; latency to ExecutionReport New.
fn fix(addr: SocketAddr, rate: u64, secs: u64) -> Vec<u64> {
    let stream = TcpStream::connect(addr).unwrap();
    let mut cfg = SessionConfig::new(Role::Initiator, "CLIENT1", "PEREGRINE");
    cfg.password = Some("fix-pw".into());
    cfg.reset_on_logon = true;
    cfg.max_outbound_bytes = 64 << 20;
    let mut conn = FixConn::new(stream, Session::new(cfg, MemoryStore::new(wall_ns()))).unwrap();
    let mut logged_on = false;
    let deadline = Instant::now() + Duration::from_secs(10);
    while !logged_on && Instant::now() < deadline {
        conn.pump(&mut |_, e| logged_on |= matches!(e, Event::LoggedOn { .. }))
            .unwrap();
    }
    assert!(logged_on, "FIX logon through the gateway");
    let total = rate * secs;
    let gap = 1_000_000_000 / rate;
    let mut sent_at = vec![0u64; total as usize];
    let mut lat = Vec::with_capacity(total as usize);
    let start = wall_ns() + 200_000_000;
    let mut next = 0u64;
    let mut cl = Vec::with_capacity(24);
    let deadline = Instant::now() + Duration::from_secs(secs + 10);
    while (lat.len() as u64) < total && Instant::now() < deadline {
        let now = wall_ns();
        while next < total && start + next * gap <= now {
            cl.clear();
            write_u64(&mut cl, next + 1);
            let d = NewOrderSingle {
                cl_ord_id: &cl,
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
            conn.session
                .send_app(b"D", now, |w| d.encode(w, Precision::Millis))
                .unwrap();
            sent_at[next as usize] = start + next * gap;
            next += 1;
        }
        let mut got = Vec::new();
        conn.pump(&mut |_, e| {
            if let Event::App(m) = e {
                let mut cl = None;
                let mut new = false;
                for f in m.fields().flatten() {
                    match f.tag {
                        11 => cl = peregrine_fix::codec::value::parse_u64(f.value),
                        150 => new = f.value == b"0",
                        _ => {}
                    }
                }
                if let (Some(cl), true) = (cl, new) {
                    got.push(cl);
                }
            }
        })
        .unwrap();
        let t = wall_ns();
        for cl in got {
            lat.push(t.saturating_sub(sent_at[cl as usize - 1]));
        }
    }
    lat
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let mut secs = 3;
    let mut rates = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--secs" => secs = it.next().and_then(|s| s.parse().ok()).unwrap_or(3),
            r => rates.extend(r.parse::<u64>().ok()),
        }
    }
    if rates.is_empty() {
        rates = vec![10_000, 50_000];
    }
    let dir = tempfile::tempdir().unwrap();
    let (keys, accounts) = keygen(dir.path(), "1-2");
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
            "listen = \"127.0.0.1:0\"\nexchange = \"{xaddr}\"\nstore_dir = \"{}\"\nkeys_file = \"{}\"\n\
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

    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "order -> first report, open loop, {secs} s per run; load average before: {}",
        load.trim()
    );
    println!(
        "{:<22} {:>8} {:>9} {:>9} {:>9} {:>9} {:>10} {:>9}",
        "path @ rate", "orders", "p50 µs", "p90", "p99", "p99.9", "max", "got/s"
    );
    let mut json = Vec::new();
    for &rate in &rates {
        let mut p50s = [0u64; 2];
        let mut p99s = [0u64; 2];
        for (k, (name, lat)) in [
            ("native", native(xaddr, &keys, rate, secs)),
            ("fix gateway", fix(gaddr, rate, secs)),
        ]
        .into_iter()
        .enumerate()
        {
            let n = lat.len();
            let [p50, p90, p99, p999, max] = percentiles(lat);
            let us = |v: u64| v as f64 / 1000.0;
            println!(
                "{:<22} {:>8} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>10.1} {:>9.0}",
                format!("{name} @ {rate}/s"),
                n,
                us(p50),
                us(p90),
                us(p99),
                us(p999),
                us(max),
                n as f64 / secs as f64
            );
            json.push(format!(
                "{{\"path\":\"{name}\",\"rate\":{rate},\"orders\":{n},\"p50_ns\":{p50},\"p90_ns\":{p90},\"p99_ns\":{p99},\"p999_ns\":{p999},\"max_ns\":{max}}}"
            ));
            p50s[k] = p50;
            p99s[k] = p99;
        }
        println!(
            "  gateway adds @ {rate}/s: p50 {:+.1} µs, p99 {:+.1} µs",
            (p50s[1] as f64 - p50s[0] as f64) / 1000.0,
            (p99s[1] as f64 - p99s[0] as f64) / 1000.0
        );
    }
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("load average after: {}", load.trim());
    println!("JSON [{}]", json.join(","));
}
