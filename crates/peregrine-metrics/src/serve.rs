//! The HTTP endpoint: `tiny_http` (synchronous, no async runtime) on its own thread.
//!
//! * `GET`/`HEAD /metrics` (any query string): `200` with the document the
//!   component renders, or `503` while it has none yet (the engine before its first
//!   summary);
//! * `GET`/`HEAD /health`: `200` `ok` whenever this thread is answering. It says the
//!   process is up and its metrics thread is serving, nothing about trading (a venue
//!   connection, the matching thread): alert on the metrics for that;
//! * another path `404`; another method `405` with `Allow: GET, HEAD`; a request
//!   `tiny_http` cannot parse `400` (answered by `tiny_http`, which then closes).
//!
//! Requests are answered one at a time on the `metrics` thread. `tiny_http` reads
//! each connection's request head on its own pool threads, so a client that stalls
//! never blocks a scrape; it sets no limit on the size of a request head and no
//! read timeout, which is why `listen` defaults to loopback.
//!
//! The thread never touches the order path: `render` reads published copies.

use std::io;
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use tiny_http::{Header, Method, Request, Response, Server};

use crate::document::CONTENT_TYPE;

/// How often the idle loop looks at the stop flag.
const POLL: Duration = Duration::from_millis(20);

/// Renders the current document (`None`: nothing to serve yet).
pub type Render = Box<dyn Fn() -> Option<String> + Send + 'static>;

/// An answer, before it goes on the wire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Answer {
    pub(crate) status: u16,
    pub(crate) content_type: &'static str,
    pub(crate) body: String,
}

impl Answer {
    fn plain(status: u16, body: &str) -> Self {
        Answer {
            status,
            content_type: "text/plain; charset=utf-8",
            body: format!("{body}\n"),
        }
    }
}

/// Routes one request; `render` is called only for `/metrics`.
pub(crate) fn route(method: &Method, url: &str, render: impl FnOnce() -> Option<String>) -> Answer {
    if !matches!(method, Method::Get | Method::Head) {
        return Answer::plain(405, "method not allowed");
    }
    let path = url.split('?').next().unwrap_or(url);
    match path {
        "/metrics" => match render() {
            Some(body) => Answer {
                status: 200,
                content_type: CONTENT_TYPE,
                body,
            },
            None => Answer::plain(503, "no snapshot yet"),
        },
        "/health" => Answer::plain(200, "ok"),
        _ => Answer::plain(404, "not found: try /metrics or /health"),
    }
}

fn header(name: &str, value: &str) -> Option<Header> {
    Header::from_bytes(name.as_bytes(), value.as_bytes()).ok()
}

fn answer(request: Request, render: &Render) {
    let a = route(request.method(), request.url(), render);
    // The whole body is in hand: always send `Content-Length`. (By default tiny_http
    // switches to chunked transfer above 32 KiB, which a full exchange document
    // passes; every client copes, but a plain length is simpler to read and log.)
    let mut response = Response::from_string(a.body)
        .with_status_code(a.status)
        .with_chunked_threshold(usize::MAX);
    if let Some(h) = header("Content-Type", a.content_type) {
        response.add_header(h);
    }
    if a.status == 405 {
        if let Some(h) = header("Allow", "GET, HEAD") {
            response.add_header(h);
        }
    }
    // tiny_http leaves the body out for HEAD; a failed write is the client's problem.
    if let Err(e) = request.respond(response) {
        log::debug!("metrics: answering failed: {e}");
    }
}

/// The bound endpoint, before its thread starts.
#[derive(Debug)]
pub struct MetricsServer {
    listener: TcpListener,
}

impl MetricsServer {
    /// Binds `addr` (port 0: any free port).
    pub fn bind(addr: SocketAddr) -> io::Result<Self> {
        Ok(MetricsServer {
            listener: TcpListener::bind(addr)?,
        })
    }

    /// The bound address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Serves on a thread named `metrics` until `stop` is set.
    pub fn spawn(self, render: Render, stop: Arc<AtomicBool>) -> io::Result<JoinHandle<()>> {
        let server = Server::from_listener(self.listener, None)
            .map_err(|e| io::Error::other(e.to_string()))?;
        std::thread::Builder::new()
            .name("metrics".into())
            .spawn(move || run(&server, &render, &stop))
    }
}

fn run(server: &Server, render: &Render, stop: &AtomicBool) {
    // Relaxed: a stop request needs no ordering with other memory.
    while !stop.load(Ordering::Relaxed) {
        match server.recv_timeout(POLL) {
            Ok(Some(request)) => answer(request, render),
            Ok(None) => {}
            Err(e) => {
                log::warn!("metrics: receiving a request failed: {e}");
                std::thread::sleep(POLL);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::io::{Read, Write};
    use std::net::TcpStream;

    fn get(url: &str) -> Answer {
        route(&Method::Get, url, || Some("body\n".into()))
    }

    #[test]
    fn paths_and_methods_route() {
        let ok = get("/metrics");
        assert_eq!((ok.status, ok.content_type), (200, CONTENT_TYPE));
        assert_eq!(ok.body, "body\n");
        assert_eq!(get("/metrics?x=1").status, 200);
        assert_eq!(
            route(&Method::Head, "/metrics", || Some(String::new())).status,
            200
        );
        assert_eq!(get("/health").body, "ok\n");
        assert_eq!(get("/").status, 404);
        assert_eq!(get("/metricsx").status, 404);
        assert_eq!(route(&Method::Post, "/metrics", || None).status, 405);
        assert_eq!(route(&Method::Get, "/metrics", || None).status, 503);
        assert_eq!(route(&Method::Get, "/health", || None).status, 200);
    }

    proptest! {
        #[test]
        fn any_url_routes_without_panicking(url in ".{0,200}") {
            let a = route(&Method::Get, &url, || Some("x".into()));
            prop_assert!(matches!(a.status, 200 | 404));
        }
    }

    fn serve_in_background() -> (SocketAddr, Arc<AtomicBool>, JoinHandle<()>) {
        let server = MetricsServer::bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let addr = server.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let render: Render = Box::new(|| Some("# EOF\n".into()));
        let handle = server.spawn(render, Arc::clone(&stop)).unwrap();
        (addr, stop, handle)
    }

    /// Writes `request`, half-closes, reads the answer (bounded by timeouts).
    fn exchange(addr: SocketAddr, request: &[u8]) -> String {
        let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let _ = s.write_all(request);
        let _ = s.shutdown(std::net::Shutdown::Write);
        let mut out = Vec::new();
        let _ = s.read_to_end(&mut out);
        String::from_utf8_lossy(&out).into_owned()
    }

    /// Over a real socket: garbage, a TLS hello, a wrong method and a client that
    /// stays silent each get an error or a close, and scrapes are still answered,
    /// also while the silent client holds its connection open.
    #[test]
    fn the_server_survives_bad_clients() {
        let (addr, stop, handle) = serve_in_background();
        let garbage: Vec<u8> = (0..3000u32).map(|i| (i * 7919 % 251) as u8).collect();
        let _ = exchange(addr, &garbage);
        let tls = exchange(
            addr,
            b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n",
        );
        assert!(tls.is_empty() || tls.starts_with("HTTP/1.1 400"), "{tls}");
        let post = exchange(
            addr,
            b"POST /metrics HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\n\r\n",
        );
        assert!(post.starts_with("HTTP/1.1 405"), "{post}");
        assert!(post.contains("Allow: GET, HEAD\r\n"), "{post}");
        let mut silent = TcpStream::connect(addr).unwrap();
        silent.write_all(b"GET /metrics HTTP/1.1\r\n").unwrap();
        let ok = exchange(
            addr,
            b"GET /metrics HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
        );
        assert!(ok.starts_with("HTTP/1.1 200 OK\r\n"), "{ok}");
        assert!(ok.contains(CONTENT_TYPE), "{ok}");
        assert!(ok.ends_with("\r\n\r\n# EOF\n"), "{ok}");
        let head = exchange(
            addr,
            b"HEAD /metrics HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
        );
        assert!(
            head.starts_with("HTTP/1.1 200 OK\r\n") && head.ends_with("\r\n\r\n"),
            "{head}"
        );
        let health = exchange(addr, b"GET /health HTTP/1.0\r\n\r\n");
        assert!(
            health.starts_with("HTTP/1.0 200 OK\r\n") && health.ends_with("ok\n"),
            "{health}"
        );
        let nope = exchange(addr, b"GET /nope HTTP/1.1\r\nConnection: close\r\n\r\n");
        assert!(nope.starts_with("HTTP/1.1 404"), "{nope}");
        drop(silent);
        stop.store(true, Ordering::Relaxed);
        handle.join().unwrap();
    }
}
