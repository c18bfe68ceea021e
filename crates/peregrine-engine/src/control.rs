//! The local control channel: a Unix domain socket in the engine's shm directory,
//! served by a thread off the hot path.
//!
//! Protocol: the client writes one line and reads the reply until EOF.
//!
//! * `stats`: the orchestrator's latest snapshot (it publishes one every
//!   `stats_interval_ms`; the reply says how old it is).
//! * `kill [<strategy>|*] [<timeout ms>]`: kill switch on, cancel every open order (of that
//!   strategy) at every venue; the reply comes when the venues confirmed every cancel
//!   (`ok ...`) or the timeout passed (`error: ...`).
//! * `limits [<strategy>|*] [key=value ...]`: with no strategy, print the global and
//!   every strategy's risk limits; `*` is the global scope. With `key=value` words,
//!   change those limits (all or nothing; `off` switches one off) and print the result.
//!   Keys and values are checked here, before anything reaches the orchestrator: a bad
//!   one is an `error: ...` reply and the engine is unchanged.
//! * `summary`: the same snapshot as one line of JSON (`crate::summary`).
//! * `shutdown`: stop the engine.
//!
//! The orchestrator never blocks on this thread: commands reach it through a bounded
//! lock-free queue it polls during housekeeping, replies come back the same way, and
//! the snapshot is stored with `try_lock` (a busy lock skips one publication).

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossbeam_queue::ArrayQueue;

use crate::risk::Limits;

/// Whose limits a `limits` command is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LimitScope {
    /// Show the global limits and every strategy's.
    All,
    /// The global limits.
    Global,
    /// One strategy's.
    Strategy(String),
}

/// A command for the orchestrator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ControlCmd {
    /// Kill switch on, cancel all, reply when confirmed.
    Kill {
        /// Request id, echoed in the reply.
        id: u64,
        /// `None`: every strategy.
        strategy: Option<String>,
        /// Give up after this long.
        timeout_ms: u64,
    },
    /// Kill switch off (the strategy's, or every strategy's and the global one):
    /// orders are accepted again.
    Release {
        /// Request id, echoed in the reply.
        id: u64,
        /// `None`: every strategy and the global switch.
        strategy: Option<String>,
    },
    /// Show or change risk limits; applied by the orchestrator between orders.
    Limits {
        /// Request id, echoed in the reply.
        id: u64,
        /// Whose.
        scope: LimitScope,
        /// `(key, value)` pairs, already checked by [`Limits::parse_changes`]; empty:
        /// only show.
        changes: Vec<(String, String)>,
    },
}

/// The orchestrator's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControlReply {
    /// The request's id.
    pub id: u64,
    /// Success?
    pub ok: bool,
    /// Human text.
    pub text: String,
}

/// What the control thread, the orchestrator and `main` share.
#[derive(Debug)]
pub struct Shared {
    /// Stop every engine thread.
    pub stop: Arc<AtomicBool>,
    /// Control → orchestrator.
    pub commands: ArrayQueue<ControlCmd>,
    /// Orchestrator → control.
    pub replies: ArrayQueue<ControlReply>,
    /// Latest stats text and when it was published (ns).
    pub snapshot: Mutex<(String, u64)>,
    /// The same snapshot as one line of JSON (`crate::summary::EngineSummary`).
    pub summary: Mutex<String>,
    next_id: AtomicU64,
}

impl Shared {
    /// Fresh state.
    pub fn new(stop: Arc<AtomicBool>) -> Shared {
        Shared {
            stop,
            commands: ArrayQueue::new(64),
            replies: ArrayQueue::new(64),
            snapshot: Mutex::new((String::from("no snapshot yet\n"), 0)),
            summary: Mutex::new(String::from("error: no snapshot yet")),
            next_id: AtomicU64::new(1),
        }
    }
}

/// Default kill timeout.
pub const KILL_TIMEOUT_MS: u64 = 5_000;

/// Serves `socket` until `shared.stop`. Binds before returning the thread handle, so a
/// client that starts after this returns finds the socket.
pub fn serve(socket: &Path, shared: Arc<Shared>) -> std::io::Result<std::thread::JoinHandle<()>> {
    let _ = std::fs::remove_file(socket);
    let listener = UnixListener::bind(socket)?;
    listener.set_nonblocking(true)?;
    std::thread::Builder::new()
        .name("control".into())
        .spawn(move || {
            // Relaxed: a stop flag.
            while !shared.stop.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((stream, _)) => {
                        let _ = handle(stream, &shared);
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        })
}

fn handle(stream: UnixStream, shared: &Shared) -> std::io::Result<()> {
    stream.set_nonblocking(false)?;
    stream.set_read_timeout(Some(Duration::from_secs(2)))?;
    let mut line = String::new();
    BufReader::new(&stream).take(1024).read_line(&mut line)?;
    let mut words = line.split_whitespace();
    let reply = match (words.next(), words.next()) {
        (Some("stats"), None) => stats(shared),
        (Some("summary"), None) => summary(shared),
        (Some("kill"), who) => {
            let who = who.filter(|w| *w != "*").map(str::to_owned);
            kill(shared, who, words.next())
        }
        (Some("release"), who) => {
            let strategy = who.filter(|w| *w != "*").map(str::to_owned);
            ask(shared, |id| ControlCmd::Release { id, strategy }, 1_000)
        }
        (Some("limits"), who) => limits(shared, who, words),
        (Some("shutdown"), None) => {
            // Relaxed: a stop flag.
            shared.stop.store(true, Ordering::Relaxed);
            "ok shutting down\n".to_owned()
        }
        _ => format!("error: unknown command {:?}\n", line.trim()),
    };
    (&stream).write_all(reply.as_bytes())
}

fn stats(shared: &Shared) -> String {
    let (text, at) = shared
        .snapshot
        .lock()
        .map(|g| g.clone())
        .unwrap_or_else(|p| p.into_inner().clone());
    let age = peregrine_queue::clock::now_ns().saturating_sub(at) / 1_000_000;
    format!("snapshot age {age} ms\n{text}")
}

fn summary(shared: &Shared) -> String {
    let json = shared
        .summary
        .lock()
        .map(|g| g.clone())
        .unwrap_or_else(|p| p.into_inner().clone());
    format!("{json}\n")
}

fn kill(shared: &Shared, strategy: Option<String>, timeout: Option<&str>) -> String {
    let timeout_ms = timeout
        .and_then(|t| t.parse().ok())
        .unwrap_or(KILL_TIMEOUT_MS);
    ask(
        shared,
        |id| ControlCmd::Kill {
            id,
            strategy,
            timeout_ms,
        },
        timeout_ms,
    )
}

fn limits<'a>(shared: &Shared, who: Option<&str>, words: impl Iterator<Item = &'a str>) -> String {
    let scope = match who {
        None => LimitScope::All,
        Some("*") => LimitScope::Global,
        Some(name) => LimitScope::Strategy(name.to_owned()),
    };
    let changes = match Limits::parse_changes(words) {
        Ok(c) => c,
        Err(e) => return format!("error: {e}; nothing changed\n"),
    };
    ask(
        shared,
        |id| ControlCmd::Limits { id, scope, changes },
        1_000,
    )
}

/// Queues a command for the orchestrator and waits for its reply (up to `timeout_ms`
/// plus 2 s for the orchestrator to get round to it).
fn ask(shared: &Shared, cmd: impl FnOnce(u64) -> ControlCmd, timeout_ms: u64) -> String {
    // Relaxed: a unique id, no ordering needed.
    let id = shared.next_id.fetch_add(1, Ordering::Relaxed);
    if shared.commands.push(cmd(id)).is_err() {
        return "error: engine command queue full\n".into();
    }
    let deadline = Instant::now() + Duration::from_millis(timeout_ms + 2_000);
    while Instant::now() < deadline {
        if let Some(r) = shared.replies.pop() {
            if r.id == id {
                let tag = if r.ok { "ok" } else { "error:" };
                return format!("{tag} {}\n", r.text);
            }
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    "error: the orchestrator did not answer (is it stuck?)\n".into()
}

/// Client side: sends `command` to the engine at `socket` and returns its reply.
pub fn request(socket: &Path, command: &str, timeout: Duration) -> std::io::Result<String> {
    let mut stream = UnixStream::connect(socket)?;
    stream.set_read_timeout(Some(timeout))?;
    stream.write_all(format!("{command}\n").as_bytes())?;
    let mut reply = String::new();
    stream.read_to_string(&mut reply)?;
    Ok(reply)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bad limit changes are answered by the control thread itself: nothing is queued
    /// for the orchestrator, so the engine cannot change.
    #[test]
    fn bad_limit_changes_never_reach_the_orchestrator() {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("control.sock");
        let shared = Arc::new(Shared::new(Arc::new(AtomicBool::new(false))));
        let h = serve(&socket, Arc::clone(&shared)).unwrap();
        let t = Duration::from_secs(10);
        for (line, want) in [
            ("limits maker max_qty=1", "unknown limit \"max_qty\""),
            ("limits maker max_order_qty=0", "must be > 0"),
            ("limits * max_order_qty", "expected key=value"),
            ("limits maker burst=1.5", "bad value"),
        ] {
            let reply = request(&socket, line, t).unwrap();
            assert!(
                reply.starts_with("error:") && reply.contains(want),
                "{line}: {reply}"
            );
            assert!(reply.contains("nothing changed"), "{reply}");
        }
        assert!(shared.commands.is_empty());
        // A good one is queued (and, with no orchestrator here, times out cleanly).
        let orchestrator = {
            let shared = Arc::clone(&shared);
            let deadline = Instant::now() + Duration::from_secs(10);
            std::thread::spawn(move || loop {
                assert!(Instant::now() < deadline, "no limits command arrived");
                if let Some(ControlCmd::Limits { id, scope, changes }) = shared.commands.pop() {
                    assert_eq!(scope, LimitScope::Strategy("maker".into()));
                    assert_eq!(changes, vec![("max_order_qty".into(), "5".into())]);
                    let text = "maker: max_order_qty=5".into();
                    let _ = shared.replies.push(ControlReply { id, ok: true, text });
                    break;
                }
                std::thread::sleep(Duration::from_millis(1));
            })
        };
        let reply = request(&socket, "limits maker max_order_qty=5", t).unwrap();
        assert_eq!(reply, "ok maker: max_order_qty=5\n");
        orchestrator.join().unwrap();
        shared.stop.store(true, Ordering::Relaxed);
        h.join().unwrap();
    }
}
