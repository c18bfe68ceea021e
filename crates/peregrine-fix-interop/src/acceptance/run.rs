//! Running a definition against an acceptor over TCP.

use std::collections::HashMap;
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::time::{Duration, Instant};

use peregrine_fix::codec::{frame, Frame, FrameLimits};
use peregrine_types::wall_ns;

use super::compare::{compare, Expectation};
use super::definition::{parse, Step};
use super::message::{build, fields};

/// Where the acceptor is and how long to wait.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// The acceptor.
    pub addr: SocketAddr,
    /// How long an `E` line waits for its message (the heartbeat definitions wait
    /// several intervals).
    pub expect_timeout: Duration,
    /// How long `eDISCONNECT` waits for the close.
    pub disconnect_timeout: Duration,
    /// Pause after each definition, so the acceptor has seen its connections close
    /// before the next one logs on to the same session.
    pub pause: Duration,
}

impl RunConfig {
    /// 30 s per message, 20 s for a close, 300 ms between definitions.
    pub fn new(addr: SocketAddr) -> RunConfig {
        RunConfig {
            addr,
            expect_timeout: Duration::from_secs(30),
            disconnect_timeout: Duration::from_secs(20),
            pause: Duration::from_millis(300),
        }
    }
}

/// How one definition went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// The definition's name (its file name).
    pub name: String,
    /// `None`: passed; `Some(why)`: the first line that failed and why.
    pub failure: Option<String>,
    /// What passed only by a documented adaptation (a Logout before a close).
    pub notes: Vec<String>,
}

/// One connection of a definition.
struct Conn {
    stream: TcpStream,
    rx: Vec<u8>,
    closed: bool,
}

impl Conn {
    /// Reads more bytes, waiting until `deadline`; `false` once the peer closed.
    fn read_more(&mut self, deadline: Instant) -> Result<bool, String> {
        let wait = deadline.saturating_duration_since(Instant::now());
        if wait.is_zero() {
            return Err("timed out".into());
        }
        self.stream
            .set_read_timeout(Some(wait.min(Duration::from_millis(200))))
            .map_err(|e| e.to_string())?;
        let mut buf = [0u8; 4096];
        match self.stream.read(&mut buf) {
            Ok(0) => {
                self.closed = true;
                Ok(false)
            }
            Ok(n) => {
                self.rx.extend_from_slice(&buf[..n]);
                Ok(true)
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => Ok(true),
            Err(e) if e.kind() == ErrorKind::ConnectionReset => {
                self.closed = true;
                Ok(false)
            }
            Err(e) => Err(e.to_string()),
        }
    }

    /// The next whole message the acceptor sent, by `deadline`; `Ok(None)`: it
    /// closed the connection first.
    fn next_message(&mut self, deadline: Instant) -> Result<Option<Vec<u8>>, String> {
        loop {
            match frame(&self.rx, FrameLimits::default()) {
                Some(Frame::Message { len }) => return Ok(Some(self.rx.drain(..len).collect())),
                Some(Frame::Garbled { len, garble }) => {
                    let bytes = String::from_utf8_lossy(&self.rx[..len]).replace('\x01', "|");
                    return Err(format!(
                        "the acceptor sent garbled bytes ({garble}): {bytes}"
                    ));
                }
                None if self.closed => return Ok(None),
                None => {
                    self.read_more(deadline)?;
                }
            }
        }
    }
}

fn show(raw: &[u8]) -> String {
    String::from_utf8_lossy(raw).replace('\x01', "|")
}

/// Runs definition `text` (named `name`) against the acceptor.
pub fn run(name: &str, text: &str, cfg: &RunConfig) -> Outcome {
    let mut outcome = Outcome {
        name: name.to_string(),
        failure: None,
        notes: Vec::new(),
    };
    let steps = match parse(text) {
        Ok(s) => s,
        Err(e) => {
            outcome.failure = Some(e);
            return outcome;
        }
    };
    let mut conns: HashMap<u8, Conn> = HashMap::new();
    for (line, step) in steps {
        if let Err(why) = one_step(&step, &mut conns, cfg, &mut outcome.notes) {
            outcome.failure = Some(format!("line {line}: {why}"));
            break;
        }
    }
    drop(conns);
    std::thread::sleep(cfg.pause);
    outcome
}

fn one_step(
    step: &Step,
    conns: &mut HashMap<u8, Conn>,
    cfg: &RunConfig,
    notes: &mut Vec<String>,
) -> Result<(), String> {
    match step {
        Step::Connect(cid) => {
            let stream = TcpStream::connect_timeout(&cfg.addr, Duration::from_secs(10))
                .map_err(|e| format!("connect: {e}"))?;
            stream.set_nodelay(true).map_err(|e| e.to_string())?;
            conns.insert(
                *cid,
                Conn {
                    stream,
                    rx: Vec::new(),
                    closed: false,
                },
            );
        }
        Step::Disconnect(cid) => {
            conns.remove(cid);
        }
        Step::Send(cid, template) => {
            let c = conns
                .get_mut(cid)
                .ok_or_else(|| format!("connection {cid} is not open"))?;
            // A write to a connection the acceptor already closed is not a failure
            // (the definitions send a Logout after the acceptor's): the next line
            // judges.
            let _ = c.stream.write_all(&build(template, wall_ns()));
        }
        Step::Expect(cid, template) => {
            let c = conns
                .get_mut(cid)
                .ok_or_else(|| format!("connection {cid} is not open"))?;
            let expected = build(template, wall_ns());
            let deadline = Instant::now() + cfg.expect_timeout;
            let Some(actual) = c.next_message(deadline)? else {
                return Err(format!("disconnected; expected {}", show(&expected)));
            };
            compare(&Expectation::of(&expected), &actual).map_err(|why| {
                format!(
                    "{why}\n      expected {}\n      received {}",
                    show(&expected),
                    show(&actual)
                )
            })?;
        }
        Step::ExpectDisconnect(cid) => {
            let c = conns
                .get_mut(cid)
                .ok_or_else(|| format!("connection {cid} is not open"))?;
            let deadline = Instant::now() + cfg.disconnect_timeout;
            while let Some(m) = c.next_message(deadline)? {
                let f = fields(&m);
                let is_logout = f.iter().any(|(t, v)| t == "35" && v == "5");
                if !is_logout {
                    return Err(format!("expected the connection closed, got {}", show(&m)));
                }
                // Peregrine says why before it closes (FIX allows it).
                notes.push(format!("a Logout before the close: {}", show(&m)));
            }
        }
        Step::ExpectConnect(_) => return Err("eCONNECT: server definitions only".into()),
    }
    Ok(())
}

/// Runs every `*.def` file of `dir` whose name contains `filter`, in name order.
pub fn run_dir(dir: &Path, filter: &str, cfg: &RunConfig) -> std::io::Result<Vec<Outcome>> {
    let mut files: Vec<_> = std::fs::read_dir(dir)?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "def"))
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().contains(filter))
        })
        .collect();
    files.sort();
    let mut out = Vec::new();
    for path in files {
        let text = std::fs::read_to_string(&path)?;
        let name = path
            .file_stem()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        out.push(run(&name, &text, cfg));
    }
    Ok(out)
}
