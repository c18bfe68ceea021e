//! WebSocket fan-out: the bench plays the exchange's feed and measures, at every
//! subscriber, feed packet sent → depth frame received.
//!
//! The floor, in the same run and with the same subscribers: a bare fan-out, one
//! thread that answers the WebSocket handshakes itself and then writes each event's
//! frame (the same size as the gateway's) to every socket in turn, blocking. No
//! feed, no tasks, no channels: what 1,000 loopback writes and the subscribers'
//! reads cost on this machine.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use peregrine_types::{InstrumentId, Price, Qty, Side, Timestamp};
use peregrine_wire::md::packet::PacketBuilder;
use peregrine_wire::md::L2Update;

use super::report::{hist, Row, Table};
use super::{pace, BenchError};
use peregrine_http::market::feed::now_ms;

/// How long the subscribers have to connect.
const CONNECT_WAIT: Duration = Duration::from_secs(60);

/// Runs the fan-out measurement through the gateway (`http`, fed on `feed`).
pub fn run(
    http: SocketAddr,
    feed: SocketAddr,
    subscribers: usize,
    rate: u64,
    secs: f64,
) -> Result<Table, BenchError> {
    let udp = UdpSocket::bind("127.0.0.1:0")?;
    let session = 4242u64;
    let mut buf = [0u8; 256];
    let mut seq = 0u64;
    let publish = move |tag: usize| -> std::io::Result<()> {
        seq += 1;
        let mut b = PacketBuilder::new(&mut buf, session, seq)
            .map_err(|e| std::io::Error::other(format!("{e:?}")))?;
        let _ = b.push(L2Update {
            price: Price::from_raw(10_000 + (tag % 50) as i64),
            qty: Qty::from_raw(tag as i64),
            engine_time: Timestamp(0),
            instrument: InstrumentId(1),
            order_count: 1,
            side: Side::Buy,
        });
        udp.send_to(b.finish(), feed)?;
        Ok(())
    };
    let (row, notes) = measure(http, None, publish, subscribers, rate, secs)?;
    Ok(Table {
        title: format!(
            "WebSocket depth fan-out: feed packet → @depth@0ms frame at each of {subscribers} subscribers, {rate} events/s, {secs} s"
        ),
        rows: vec![row.named("gateway: UDP packet sent → frame received")],
        notes,
    })
}

/// The floor of [`run`]: the same subscribers, schedule and frame size, fed by one
/// thread that writes every frame to every socket itself.
pub fn floor(subscribers: usize, rate: u64, secs: f64) -> Result<Table, BenchError> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let addr = listener.local_addr()?;
    let accepting = std::thread::spawn(move || accept_bare(&listener, subscribers));
    let socks: Arc<Mutex<Vec<TcpStream>>> = Arc::new(Mutex::new(Vec::new()));
    let held = Arc::clone(&socks);
    let publish = move |tag: usize| -> std::io::Result<()> {
        // The gateway's depth frame for this event, near enough in size.
        let text = format!(
            "{{\"e\":\"depthUpdate\",\"E\":{},\"s\":\"PGN-USD\",\"U\":{tag},\"u\":{tag},\"b\":[[\"100.{:02}\",\"{tag}\"]],\"a\":[]}}",
            now_ms(),
            tag % 50
        );
        let mut frame = Vec::with_capacity(text.len() + 4);
        frame.push(0x81); // FIN, text
        if text.len() < 126 {
            frame.push(text.len() as u8);
        } else {
            frame.push(126);
            frame.extend_from_slice(&(text.len() as u16).to_be_bytes());
        }
        frame.extend_from_slice(text.as_bytes());
        for s in held.lock().unwrap_or_else(|p| p.into_inner()).iter_mut() {
            s.write_all(&frame)?;
        }
        Ok(())
    };
    let on_connected = {
        let socks = Arc::clone(&socks);
        move || -> std::io::Result<()> {
            let got = accepting
                .join()
                .map_err(|_| std::io::Error::other("accept thread panicked"))??;
            *socks.lock().unwrap_or_else(|p| p.into_inner()) = got;
            Ok(())
        }
    };
    let (row, notes) = measure(
        addr,
        Some(Box::new(on_connected)),
        publish,
        subscribers,
        rate,
        secs,
    )?;
    Ok(Table {
        title: format!(
            "Floor: bare fan-out (one thread writes each frame to every socket) to {subscribers} WebSocket subscribers, {rate} events/s, {secs} s"
        ),
        rows: vec![row.named("floor: frame written → frame received")],
        notes,
    })
}

/// Accepts up to `n` WebSocket clients, answering each handshake (blocking
/// sockets), for at most [`CONNECT_WAIT`]: the subscribers that failed to connect
/// are missing from the result, as they are from the measurement, instead of
/// holding the bench up for ever.
fn accept_bare(listener: &TcpListener, n: usize) -> std::io::Result<Vec<TcpStream>> {
    let mut out = Vec::with_capacity(n);
    let deadline = Instant::now() + CONNECT_WAIT;
    listener.set_nonblocking(true)?;
    while out.len() < n && Instant::now() < deadline {
        let mut s = match listener.accept() {
            Ok((s, _)) => s,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(1));
                continue;
            }
            Err(e) => return Err(e),
        };
        s.set_nonblocking(false)?;
        s.set_read_timeout(Some(Duration::from_secs(10)))?;
        let mut head = Vec::new();
        let mut b = [0u8; 1024];
        while !head.windows(4).any(|w| w == b"\r\n\r\n") {
            let k = s.read(&mut b)?;
            if k == 0 || head.len() > 16 * 1024 {
                return Err(std::io::Error::other("bad handshake"));
            }
            head.extend_from_slice(&b[..k]);
        }
        let text = String::from_utf8_lossy(&head);
        let key = text
            .lines()
            .find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.eq_ignore_ascii_case("sec-websocket-key")
                    .then(|| v.trim().to_owned())
            })
            .ok_or_else(|| std::io::Error::other("no Sec-WebSocket-Key"))?;
        let accept = tokio_tungstenite::tungstenite::handshake::derive_accept_key(key.as_bytes());
        write!(
            s,
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {accept}\r\n\r\n"
        )?;
        s.set_nodelay(true)?;
        out.push(s);
    }
    Ok(out)
}

/// Something to run once every subscriber is connected.
type OnConnected = Box<dyn FnOnce() -> std::io::Result<()>>;

/// Connects `subscribers` to `addr`, then calls `publish(tag)` on the schedule and
/// measures, at every subscriber, the stored send time → frame received.
fn measure(
    addr: SocketAddr,
    on_connected: Option<OnConnected>,
    mut publish: impl FnMut(usize) -> std::io::Result<()>,
    subscribers: usize,
    rate: u64,
    secs: f64,
) -> Result<(Row, Vec<String>), BenchError> {
    let http = addr;
    let events = ((rate as f64) * secs) as usize + 64;
    let sent: Arc<Vec<Mutex<Option<Instant>>>> =
        Arc::new((0..events).map(|_| Mutex::new(None)).collect());
    let connected = Arc::new(AtomicUsize::new(0));
    let delivered_live = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    for _ in 0..subscribers {
        let (sent, connected, done_tx, stop) = (
            Arc::clone(&sent),
            Arc::clone(&connected),
            done_tx.clone(),
            Arc::clone(&stop),
        );
        let live = Arc::clone(&delivered_live);
        rt.spawn(async move {
            let url = format!("ws://{http}/ws/pgn-usd@depth@0ms");
            let Ok((mut ws, _)) =
                tokio_tungstenite::connect_async_with_config(url, Some(client_config()), false)
                    .await
            else {
                let _ = done_tx.send((hist(), 0u64, true));
                return;
            };
            connected.fetch_add(1, Ordering::AcqRel);
            let mut h = hist();
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let msg = match tokio::time::timeout(Duration::from_millis(200), ws.next()).await {
                    Ok(Some(Ok(m))) => m,
                    Ok(_) => break,
                    Err(_) => continue,
                };
                let now = Instant::now();
                let Ok(text) = msg.to_text() else { continue };
                // The tag is the quantity of the one changed level: ..."b":[["p","TAG"]]
                let tag = text
                    .split("\"b\":[[\"")
                    .nth(1)
                    .and_then(|r| r.split('"').nth(2))
                    .and_then(|q| q.parse::<usize>().ok());
                if let Some(at) = tag
                    .and_then(|k| sent.get(k))
                    .and_then(|m| *m.lock().unwrap_or_else(|p| p.into_inner()))
                {
                    h.record((now - at).as_nanos() as u64).ok();
                    n += 1;
                    live.fetch_add(1, Ordering::Relaxed);
                }
            }
            let _ = done_tx.send((h, n, false));
        });
    }
    drop(done_tx);
    let deadline = Instant::now() + CONNECT_WAIT;
    while connected.load(Ordering::Acquire) < subscribers && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let connected_n = connected.load(Ordering::Acquire);
    if let Some(f) = on_connected {
        f()?;
    }
    // The send time is stored before the event leaves: a subscriber can receive the
    // frame before the sending thread runs again (it may lose its core to the
    // thread it just woke), and a frame whose time was not stored yet would go
    // uncounted.
    let mut send = |tag: usize, timed: bool| -> std::io::Result<()> {
        if let Some(slot) = sent.get(tag).filter(|_| timed) {
            *slot.lock().unwrap_or_else(|p| p.into_inner()) = Some(Instant::now());
        }
        publish(tag)
    };
    // Warm-up events (tags 1..=20, not timed).
    for tag in 1..=20usize {
        send(tag, false)?;
        std::thread::sleep(Duration::from_millis(5));
    }
    let gap = Duration::from_nanos(1_000_000_000 / rate.max(1));
    pace::tight_timers();
    let start = Instant::now();
    let mut next = start;
    let mut tag = 21usize;
    while tag < events {
        pace::wait(&[], Some(next));
        send(tag, true)?;
        tag += 1;
        next += gap;
    }
    let elapsed = start.elapsed().as_secs_f64();
    // Let the last frames arrive: until all are in, or nothing moved for a second.
    let expected = (events - 21) as u64 * connected.load(Ordering::Acquire) as u64;
    let (mut last, mut still) = (0u64, Instant::now());
    while delivered_live.load(Ordering::Relaxed) < expected
        && still.elapsed() < Duration::from_secs(1)
    {
        std::thread::sleep(Duration::from_millis(20));
        let now = delivered_live.load(Ordering::Relaxed);
        if now != last {
            (last, still) = (now, Instant::now());
        }
    }
    stop.store(true, Ordering::Relaxed);
    let mut all = hist();
    let mut delivered = 0u64;
    let mut failed = 0usize;
    let published = (events - 21) as u64;
    let (mut short, mut fewest) = (0usize, u64::MAX);
    for (h, n, err) in done_rx.iter() {
        all.add(&h).ok();
        delivered += n;
        failed += usize::from(err);
        if !err {
            short += usize::from(n < published);
            fewest = fewest.min(n);
        }
    }
    rt.shutdown_timeout(Duration::from_secs(1));
    let notes = vec![
        format!(
            "{connected_n} connected ({failed} failed to connect), {published} events, {delivered} deliveries of {} expected",
            published * connected_n as u64
        ),
        format!(
            "{short} subscriber(s) missed frames (fewest received: {})",
            if fewest == u64::MAX { 0 } else { fewest }
        ),
    ];
    Ok((Row::from_hist("", &all, elapsed), notes))
}

/// The subscribers' WebSocket settings: a small read buffer, for the reason in
/// [`peregrine_http::ws::conn::READ_BUFFER`] (the client shares the machine with the gateway).
fn client_config() -> tokio_tungstenite::tungstenite::protocol::WebSocketConfig {
    tokio_tungstenite::tungstenite::protocol::WebSocketConfig::default()
        .read_buffer_size(peregrine_http::ws::conn::READ_BUFFER)
}
