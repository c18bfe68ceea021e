//! The metrics endpoint: a minimal HTTP/1.x server on its own thread, over plain
//! `std::net`.
//!
//! Why not an HTTP crate: the endpoint serves one read-only document to a scraper.
//! The whole protocol it needs is "read a request head, answer, close", which is
//! ~100 lines here with every limit explicit, against a new dependency tree (and,
//! for axum, an async runtime) in the venue binary. The limits:
//!
//! * one connection at a time; each gets [`READ_TIMEOUT`] per read, a
//!   [`CONNECTION_DEADLINE`] overall and a [`WRITE_TIMEOUT`], so a client that
//!   stalls holds the thread for at most a second;
//! * the request head is read into a fixed [`MAX_REQUEST`]-byte buffer; a head that
//!   does not fit is answered `431` and the connection closed; a request body is
//!   never read;
//! * `GET` or `HEAD` of `/metrics` (any query string) answers `200` with the text
//!   format; another path `404`; another method `405`; anything unparseable `400`;
//!   every answer carries `Connection: close`;
//! * parsing is over bytes with no indexing that can fail: garbage never panics
//!   (`tests::garbage_never_panics` feeds it random and mutated requests).
//!
//! The thread never touches the matching thread's data: it renders from the
//! [`MetricsHub`] copies.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::metrics::hub::MetricsHub;
use crate::metrics::text::CONTENT_TYPE;

/// Largest request head read (request line and headers).
pub const MAX_REQUEST: usize = 8192;
/// Timeout of one read from a client.
pub const READ_TIMEOUT: Duration = Duration::from_millis(500);
/// Timeout of one write to a client.
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(1);
/// Longest time spent reading one request head.
pub const CONNECTION_DEADLINE: Duration = Duration::from_secs(1);
/// How often the idle accept loop looks at the stop flag.
const ACCEPT_POLL: Duration = Duration::from_millis(20);

/// An answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// Status code.
    pub status: u16,
    /// Content type of `body`.
    pub content_type: &'static str,
    /// Body (omitted on the wire for `HEAD`).
    pub body: String,
    /// Whether the body is sent.
    pub send_body: bool,
}

impl Response {
    fn plain(status: u16, body: &str) -> Self {
        Response {
            status,
            content_type: "text/plain; charset=utf-8",
            body: format!("{body}\n"),
            send_body: true,
        }
    }

    /// The bytes on the wire.
    pub fn to_bytes(&self) -> Vec<u8> {
        let reason = match self.status {
            200 => "OK",
            400 => "Bad Request",
            404 => "Not Found",
            405 => "Method Not Allowed",
            408 => "Request Timeout",
            431 => "Request Header Fields Too Large",
            _ => "Error",
        };
        let allow = if self.status == 405 {
            "Allow: GET, HEAD\r\n"
        } else {
            ""
        };
        let mut out = format!(
            "HTTP/1.1 {} {reason}\r\nContent-Type: {}\r\nContent-Length: {}\r\n{allow}Connection: close\r\n\r\n",
            self.status,
            self.content_type,
            self.body.len()
        )
        .into_bytes();
        if self.send_body {
            out.extend_from_slice(self.body.as_bytes());
        }
        out
    }
}

/// Answers one complete request head (`head` ends with the blank line).
/// `render` is called only for a `200`.
pub fn respond(head: &[u8], render: impl FnOnce() -> String) -> Response {
    let line_end = head
        .windows(2)
        .position(|w| w == b"\r\n")
        .unwrap_or(head.len());
    let Ok(line) = std::str::from_utf8(head.get(..line_end).unwrap_or_default()) else {
        return Response::plain(400, "bad request");
    };
    let mut parts = line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Response::plain(400, "bad request");
    };
    if !matches!(version, "HTTP/1.0" | "HTTP/1.1") || !target.starts_with('/') {
        return Response::plain(400, "bad request");
    }
    let path = target.split('?').next().unwrap_or(target);
    if !matches!(method, "GET" | "HEAD") {
        return Response::plain(405, "method not allowed");
    }
    if path != "/metrics" {
        return Response::plain(404, "not found: try /metrics");
    }
    Response {
        status: 200,
        content_type: CONTENT_TYPE,
        body: render(),
        send_body: method == "GET",
    }
}

/// Where the end of the request head (the blank line) is, if it arrived.
fn head_end(buf: &[u8]) -> Option<usize> {
    buf.windows(4).position(|w| w == b"\r\n\r\n").map(|i| i + 4)
}

/// Reads one request head and answers it; errors are the client's problem and only
/// end this connection.
fn serve_one(mut stream: TcpStream, hub: &MetricsHub) {
    if stream.set_nonblocking(false).is_err()
        || stream.set_read_timeout(Some(READ_TIMEOUT)).is_err()
        || stream.set_write_timeout(Some(WRITE_TIMEOUT)).is_err()
    {
        return;
    }
    let deadline = Instant::now() + CONNECTION_DEADLINE;
    let mut buf = [0u8; MAX_REQUEST];
    let mut filled = 0;
    let response = loop {
        if let Some(end) = head_end(&buf[..filled]) {
            break respond(&buf[..end], || crate::metrics::render::render(hub));
        }
        if filled == buf.len() {
            break Response::plain(431, "request head too large");
        }
        if Instant::now() >= deadline {
            break Response::plain(408, "request timeout");
        }
        match stream.read(&mut buf[filled..]) {
            Ok(0) => return,
            Ok(n) => filled += n,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                break Response::plain(408, "request timeout");
            }
            Err(_) => return,
        }
    };
    let _ = stream.write_all(&response.to_bytes());
    let _ = stream.flush();
    let _ = stream.shutdown(std::net::Shutdown::Both);
}

/// The bound endpoint, before its thread starts.
#[derive(Debug)]
pub struct MetricsServer {
    listener: TcpListener,
}

impl MetricsServer {
    /// Binds `addr` (port 0: any free port).
    pub fn bind(addr: SocketAddr) -> std::io::Result<Self> {
        let listener = TcpListener::bind(addr)?;
        listener.set_nonblocking(true)?;
        Ok(MetricsServer { listener })
    }

    /// The bound address.
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Serves `hub` on a thread named `metrics` until `stop` is set.
    pub fn spawn(
        self,
        hub: Arc<MetricsHub>,
        stop: Arc<AtomicBool>,
    ) -> std::io::Result<JoinHandle<()>> {
        std::thread::Builder::new()
            .name("metrics".into())
            .spawn(move || self.run(&hub, &stop))
    }

    fn run(self, hub: &MetricsHub, stop: &AtomicBool) {
        // Relaxed: a stop request needs no ordering with other memory.
        while !stop.load(Ordering::Relaxed) {
            match self.listener.accept() {
                Ok((stream, _)) => serve_one(stream, hub),
                Err(e) if e.kind() == ErrorKind::WouldBlock => std::thread::sleep(ACCEPT_POLL),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => {
                    log::warn!("metrics: accept failed: {e}");
                    std::thread::sleep(ACCEPT_POLL);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn answer(req: &str) -> Response {
        respond(req.as_bytes(), || "body\n".to_string())
    }

    #[test]
    fn metrics_path_answers_200_with_the_text_format() {
        let r = answer("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
        assert_eq!((r.status, r.content_type), (200, CONTENT_TYPE));
        let wire = String::from_utf8(r.to_bytes()).unwrap();
        assert_eq!(
            wire,
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n\
             Content-Length: 5\r\nConnection: close\r\n\r\nbody\n"
        );
        assert_eq!(answer("GET /metrics?x=1 HTTP/1.0\r\n\r\n").status, 200);
        let head = answer("HEAD /metrics HTTP/1.1\r\n\r\n");
        assert!(head
            .to_bytes()
            .ends_with(b"Content-Length: 5\r\nConnection: close\r\n\r\n"));
    }

    #[test]
    fn other_requests_get_4xx() {
        assert_eq!(answer("GET / HTTP/1.1\r\n\r\n").status, 404);
        assert_eq!(answer("GET /metricsx HTTP/1.1\r\n\r\n").status, 404);
        let post = answer("POST /metrics HTTP/1.1\r\n\r\n");
        assert_eq!(post.status, 405);
        assert!(String::from_utf8(post.to_bytes())
            .unwrap()
            .contains("Allow: GET, HEAD\r\n"));
        for bad in [
            "",
            "\r\n\r\n",
            "GET\r\n\r\n",
            "GET /metrics\r\n\r\n",
            "GET /metrics HTTP/2.0\r\n\r\n",
            "GET metrics HTTP/1.1\r\n\r\n",
            "GET  /metrics HTTP/1.1\r\n\r\n",
            "GET /metrics HTTP/1.1 extra\r\n\r\n",
        ] {
            assert_eq!(answer(bad).status, 400, "{bad:?}");
        }
        assert_eq!(
            respond(b"GET /\xff\xfe HTTP/1.1\r\n\r\n", String::new).status,
            400
        );
    }

    proptest! {
        #[test]
        fn garbage_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
            let r = respond(&bytes, || "x".into());
            prop_assert!(matches!(r.status, 200 | 400 | 404 | 405));
            let _ = head_end(&bytes);
        }

        #[test]
        fn mutated_requests_never_panic(pos in 0usize..40, byte in any::<u8>()) {
            let mut req = b"GET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n".to_vec();
            let i = pos % req.len();
            req[i] = byte;
            let r = respond(&req, || "x".into());
            prop_assert!(matches!(r.status, 200 | 400 | 404 | 405));
        }
    }

    fn serve_in_background(hub: Arc<MetricsHub>) -> (SocketAddr, Arc<AtomicBool>, JoinHandle<()>) {
        let server = MetricsServer::bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let addr = server.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let handle = server.spawn(hub, Arc::clone(&stop)).unwrap();
        (addr, stop, handle)
    }

    fn exchange(addr: SocketAddr, request: &[u8]) -> String {
        let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let _ = s.write_all(request);
        let mut out = Vec::new();
        let _ = s.read_to_end(&mut out);
        String::from_utf8_lossy(&out).into_owned()
    }

    /// Over a real socket: garbage, an oversized head and a silent client each get an
    /// error or a close, and the server still answers the next scrape.
    #[test]
    fn the_server_survives_bad_clients() {
        let spec = peregrine_types::InstrumentSpec::example(1);
        let hub = Arc::new(MetricsHub::new(&[spec], None));
        let (addr, stop, handle) = serve_in_background(hub);
        // No CR/LF inside: the server must read all of it before answering, or the
        // unread rest would reset the connection under the answer.
        let garbage: Vec<u8> = (0..3000u32)
            .map(|i| (i * 7919 % 251) as u8)
            .filter(|b| !matches!(b, b'\r' | b'\n'))
            .collect();
        let mut with_end = garbage;
        with_end.extend_from_slice(b"\r\n\r\n");
        assert!(exchange(addr, &with_end).starts_with("HTTP/1.1 400 "));
        let huge = vec![b'a'; MAX_REQUEST];
        assert!(exchange(addr, &huge).starts_with("HTTP/1.1 431 "));
        let silent = exchange(addr, b"GET /metrics HTTP/1.1\r\n");
        assert!(silent.starts_with("HTTP/1.1 408 "), "{silent}");
        let ok = exchange(addr, b"GET /metrics HTTP/1.1\r\nHost: t\r\n\r\n");
        assert!(ok.starts_with("HTTP/1.1 200 OK\r\n"), "{ok}");
        assert!(ok.contains("\r\n\r\n# HELP peregrine_exchange_"));
        assert!(exchange(addr, b"GET /nope HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 404 "));
        stop.store(true, Ordering::Relaxed);
        handle.join().unwrap();
    }
}
