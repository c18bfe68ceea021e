//! WebSocket fan-out: the bench plays the exchange's feed and measures, at every
//! subscriber, feed packet sent → depth frame received.

use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use peregrine_types::{InstrumentId, Price, Qty, Side, Timestamp};
use peregrine_wire::md::packet::PacketBuilder;
use peregrine_wire::md::L2Update;

use super::report::{hist, Row, Table};
use super::{pace, BenchError};

/// Runs the fan-out measurement.
pub fn run(
    http: SocketAddr,
    feed: SocketAddr,
    subscribers: usize,
    rate: u64,
    secs: f64,
) -> Result<Table, BenchError> {
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
    let deadline = Instant::now() + Duration::from_secs(60);
    while connected.load(Ordering::Acquire) < subscribers && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let connected_n = connected.load(Ordering::Acquire);
    let udp = UdpSocket::bind("127.0.0.1:0")?;
    let session = 4242u64;
    let mut buf = [0u8; 256];
    // The send time is stored before the packet leaves: a subscriber can receive the
    // frame before the sending thread runs again (it may lose its core to the
    // gateway's feed thread it just woke), and a frame whose time was not stored yet
    // would go uncounted.
    let send = |seq: u64, tag: usize, timed: bool, buf: &mut [u8]| -> std::io::Result<()> {
        let mut b = PacketBuilder::new(buf, session, seq)
            .map_err(|e| std::io::Error::other(format!("{e:?}")))?;
        let _ = b.push(L2Update {
            price: Price::from_raw(10_000 + (tag % 50) as i64),
            qty: Qty::from_raw(tag as i64),
            engine_time: Timestamp(0),
            instrument: InstrumentId(1),
            order_count: 1,
            side: Side::Buy,
        });
        let bytes = b.finish().to_vec();
        if let Some(slot) = sent.get(tag).filter(|_| timed) {
            *slot.lock().unwrap_or_else(|p| p.into_inner()) = Some(Instant::now());
        }
        udp.send_to(&bytes, feed)?;
        Ok(())
    };
    // Warm-up events (tags 1..=20 are ignored below 21 only for timing clarity).
    let mut seq = 1u64;
    for tag in 1..=20usize {
        send(seq, tag, false, &mut buf)?;
        seq += 1;
        std::thread::sleep(Duration::from_millis(5));
    }
    let gap = Duration::from_nanos(1_000_000_000 / rate.max(1));
    pace::tight_timers();
    let start = Instant::now();
    let mut next = start;
    let mut tag = 21usize;
    while tag < events {
        pace::wait(&[], Some(next));
        send(seq, tag, true, &mut buf)?;
        seq += 1;
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
    Ok(Table {
        title: format!(
            "WebSocket depth fan-out: feed packet → @depth@0ms frame at each of {subscribers} subscribers, {rate} events/s, {secs} s"
        ),
        rows: vec![Row::from_hist("gateway: UDP packet sent → frame received", &all, elapsed)],
        notes: vec![
            format!(
                "{connected_n} connected ({failed} failed to connect), {published} events, {delivered} deliveries of {} expected",
                published * connected_n as u64
            ),
            format!(
                "{short} subscriber(s) missed frames (fewest received: {})",
                if fewest == u64::MAX { 0 } else { fewest }
            ),
        ],
    })
}

/// The subscribers' WebSocket settings: a small read buffer, for the reason in
/// [`crate::ws::conn::READ_BUFFER`] (the client shares the machine with the gateway).
fn client_config() -> tokio_tungstenite::tungstenite::protocol::WebSocketConfig {
    tokio_tungstenite::tungstenite::protocol::WebSocketConfig::default()
        .read_buffer_size(crate::ws::conn::READ_BUFFER)
}
