//! `peregrine admin cluster status|transfer|add|promote|remove`: the admin endpoint
//! of `peregrine exchange --cluster` nodes (`[cluster] admin_listen`,
//! crates/peregrine-exchange/src/cluster/admin.rs), over a small blocking HTTP/1.1
//! client (one request per connection, timeouts on every step).
//!
//! A change goes to the first `--node` that takes it: a follower answers 421 with the
//! leader's id (the leader's *admin* address is not known to it), a restarting node
//! 503, and both make the command try the next `--node`; any other error answer stops
//! it with the server's text.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use anyhow::{bail, Context};
use serde_json::Value;

/// `peregrine admin cluster` arguments.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct ClusterArgs {
    /// What to do.
    #[command(subcommand)]
    pub(crate) action: ClusterCommand,
}

/// A cluster admin action.
#[derive(Debug, Clone, clap::Subcommand)]
pub(crate) enum ClusterCommand {
    /// Print each node's Raft and engine status: role, term, leader, commit/applied,
    /// engine seq, serving, members, per-peer progress (leader), current state hash,
    /// hash checks, snapshots. E.g. `peregrine admin cluster status --node
    /// 127.0.0.1:9101,127.0.0.1:9102,127.0.0.1:9103`.
    Status(StatusArgs),
    /// Ask the leader to hand leadership to node `--to` (before restarting the leader).
    Transfer(TransferArgs),
    /// Add node `--id` (peer address `--addr`) as a learner: it receives the log but
    /// does not vote. Start the new node first.
    Add(MemberArgs),
    /// Make learner `--id` a voter (once it has caught up: see `status` progress).
    Promote(MemberArgs),
    /// Remove node `--id` from the cluster.
    Remove(RemoveArgs),
}

/// The nodes to ask.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct Nodes {
    /// A node's admin address HOST:PORT (`[cluster] admin_listen`); repeat it or give a
    /// comma-separated list. `status` asks each; a change is sent to each in turn
    /// until one is not "not the leader" (421) or "restarting" (503).
    #[arg(long = "node", required = true, value_delimiter = ',')]
    pub(crate) nodes: Vec<String>,
    /// Timeout of each connect, write and read, in milliseconds.
    #[arg(long, default_value_t = 3000)]
    pub(crate) timeout_ms: u64,
}

/// `status` arguments.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct StatusArgs {
    /// The nodes.
    #[command(flatten)]
    pub(crate) nodes: Nodes,
    /// Print each node's raw JSON answer (one line per node) instead of a summary.
    #[arg(long)]
    pub(crate) json: bool,
}

/// `transfer` arguments.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct TransferArgs {
    /// The nodes.
    #[command(flatten)]
    pub(crate) nodes: Nodes,
    /// The node id that should become leader.
    #[arg(long)]
    pub(crate) to: u64,
}

/// `add` / `promote` arguments.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct MemberArgs {
    /// The nodes.
    #[command(flatten)]
    pub(crate) nodes: Nodes,
    /// The member's node id (≥ 1).
    #[arg(long)]
    pub(crate) id: u64,
    /// The member's peer (Raft) address HOST:PORT.
    #[arg(long)]
    pub(crate) addr: String,
}

/// `remove` arguments.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct RemoveArgs {
    /// The nodes.
    #[command(flatten)]
    pub(crate) nodes: Nodes,
    /// The member's node id.
    #[arg(long)]
    pub(crate) id: u64,
}

/// Runs the subcommand.
pub(crate) fn run(args: &ClusterArgs) -> anyhow::Result<()> {
    match &args.action {
        ClusterCommand::Status(s) => status(s),
        ClusterCommand::Transfer(t) => change(&t.nodes, &format!("/cluster/transfer?to={}", t.to)),
        ClusterCommand::Add(m) => change(
            &m.nodes,
            &format!("/cluster/add?id={}&addr={}", m.id, query_value(&m.addr)?),
        ),
        ClusterCommand::Promote(m) => change(
            &m.nodes,
            &format!(
                "/cluster/promote?id={}&addr={}",
                m.id,
                query_value(&m.addr)?
            ),
        ),
        ClusterCommand::Remove(r) => change(&r.nodes, &format!("/cluster/remove?id={}", r.id)),
    }
}

/// The server splits the query on `&` and `=` without decoding: refuse what it
/// would misread.
fn query_value(v: &str) -> anyhow::Result<&str> {
    if v.is_empty() || v.contains(['&', '=', '?', '#', ' ', '%']) {
        bail!("--addr {v:?}: expected HOST:PORT");
    }
    Ok(v)
}

fn timeout(n: &Nodes) -> Duration {
    Duration::from_millis(n.timeout_ms.max(1))
}

fn status(args: &StatusArgs) -> anyhow::Result<()> {
    let mut failed = 0;
    for node in &args.nodes.nodes {
        let answer = request(node, "GET", "/cluster/status", timeout(&args.nodes))
            .and_then(|a| a.ok_or_error());
        match answer {
            Ok(a) if args.json => println!("{}", a.body.trim_end()),
            Ok(a) => match serde_json::from_str::<Value>(&a.body) {
                Ok(v) => print!("{}", summary(node, &v)),
                Err(e) => {
                    failed += 1;
                    eprintln!("{node}: the status is not JSON ({e}): {}", a.body);
                }
            },
            Err(e) => {
                failed += 1;
                eprintln!("{node}: {e:#}");
            }
        }
    }
    if failed > 0 {
        bail!(
            "{failed} of {} nodes did not answer",
            args.nodes.nodes.len()
        );
    }
    Ok(())
}

/// POSTs `path` to each node until one takes it.
fn change(nodes: &Nodes, path: &str) -> anyhow::Result<()> {
    let mut tried = Vec::new();
    for node in &nodes.nodes {
        let a = match request(node, "POST", path, timeout(nodes)) {
            Ok(a) => a,
            Err(e) => {
                tried.push(format!("{node}: {e:#}"));
                continue;
            }
        };
        match a.status {
            200..=299 => {
                println!("{node}: {} {}", a.status, a.body.trim_end());
                return Ok(());
            }
            421 => tried.push(format!("{node}: not the leader ({})", leader_of(&a.body))),
            503 => tried.push(format!("{node}: 503 {}", error_text(&a.body))),
            code => bail!("{node}: {code} {}", error_text(&a.body)),
        }
    }
    bail!("no node took POST {path}: {}", tried.join("; "))
}

fn leader_of(body: &str) -> String {
    match serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| v.get("leader").and_then(Value::as_u64))
    {
        Some(l) => format!("leader: node {l}"),
        None => "leader unknown".to_string(),
    }
}

/// The `error` field of a JSON error answer, or the body as it is.
fn error_text(body: &str) -> String {
    serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| v.get("error").and_then(Value::as_str).map(str::to_string))
        .unwrap_or_else(|| body.trim().to_string())
}

/// One HTTP answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Answer {
    /// Status code.
    pub(crate) status: u16,
    /// Body, as text.
    pub(crate) body: String,
}

impl Answer {
    fn ok_or_error(self) -> anyhow::Result<Self> {
        if (200..300).contains(&self.status) {
            Ok(self)
        } else {
            bail!("{} {}", self.status, error_text(&self.body))
        }
    }
}

/// Largest answer read (a status is a few KB).
const MAX_ANSWER: u64 = 4 << 20;

/// One request on a fresh connection (`Connection: close`), the answer read to the end.
fn request(node: &str, method: &str, path: &str, timeout: Duration) -> anyhow::Result<Answer> {
    let addrs: Vec<_> = node
        .to_socket_addrs()
        .with_context(|| format!("--node {node:?}: expected HOST:PORT"))?
        .collect();
    let mut last = None;
    let mut stream = None;
    for a in &addrs {
        match TcpStream::connect_timeout(a, timeout) {
            Ok(s) => {
                stream = Some(s);
                break;
            }
            Err(e) => last = Some(e),
        }
    }
    let Some(mut s) = stream else {
        return Err(match last {
            Some(e) => anyhow::Error::new(e).context(format!("connect {node}")),
            None => anyhow::anyhow!("{node} resolves to no address"),
        });
    };
    s.set_read_timeout(Some(timeout))?;
    s.set_write_timeout(Some(timeout))?;
    let req = format!(
        "{method} {path} HTTP/1.1\r\nHost: {node}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    );
    s.write_all(req.as_bytes())
        .with_context(|| format!("send to {node}"))?;
    let mut raw = Vec::new();
    s.take(MAX_ANSWER)
        .read_to_end(&mut raw)
        .with_context(|| format!("read the answer of {node}"))?;
    parse_answer(&raw).with_context(|| format!("the answer of {node}"))
}

/// Parses a whole HTTP/1.x answer: status line, headers, body (cut at
/// `Content-Length` when there is one).
pub(crate) fn parse_answer(raw: &[u8]) -> anyhow::Result<Answer> {
    let Some(end) = raw.windows(4).position(|w| w == b"\r\n\r\n") else {
        bail!("no end of headers in {} bytes", raw.len());
    };
    let head = std::str::from_utf8(&raw[..end]).context("headers are not UTF-8")?;
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let mut parts = status_line.splitn(3, ' ');
    let (Some(version), Some(code)) = (parts.next(), parts.next()) else {
        bail!("bad status line {status_line:?}");
    };
    if !version.starts_with("HTTP/1.") {
        bail!("bad status line {status_line:?}");
    }
    let status: u16 = match code.parse() {
        Ok(c) if (100..600).contains(&c) => c,
        _ => bail!("bad status code in {status_line:?}"),
    };
    let mut body = &raw[end + 4..];
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            bail!("bad header line {line:?}");
        };
        let value = value.trim();
        if name.eq_ignore_ascii_case("content-length") {
            let n: usize = value
                .parse()
                .with_context(|| format!("bad Content-Length {value:?}"))?;
            let Some(b) = body.get(..n) else {
                bail!("body cut short: {} of {n} bytes", body.len());
            };
            body = b;
        } else if name.eq_ignore_ascii_case("transfer-encoding")
            && !value.eq_ignore_ascii_case("identity")
        {
            bail!("unsupported Transfer-Encoding {value:?}");
        }
    }
    Ok(Answer {
        status,
        body: String::from_utf8_lossy(body).into_owned(),
    })
}

fn num(v: &Value, key: &str) -> String {
    match v.get(key) {
        Some(Value::Number(n)) => n.to_string(),
        Some(Value::Bool(b)) => if *b { "yes" } else { "no" }.to_string(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) => "none".to_string(),
        Some(other) => other.to_string(),
        None => "?".to_string(),
    }
}

fn ids(v: &Value, key: &str) -> String {
    match v.get(key).and_then(Value::as_array) {
        Some(a) => {
            let ids: Vec<String> = a.iter().map(|x| x.to_string()).collect();
            format!("[{}]", ids.join(", "))
        }
        None => "?".to_string(),
    }
}

/// The readable status of one node (several lines, each ending in a newline).
pub(crate) fn summary(node: &str, v: &Value) -> String {
    let mut s = format!(
        "node {} at {node}: {}, term {}, leader {}\n",
        num(v, "id"),
        num(v, "role"),
        num(v, "term"),
        num(v, "leader")
    );
    s += &format!(
        "  log: commit {} applied {} (first {}, last {}, snapshot {}); {} entries applied since start\n",
        num(v, "commit"),
        num(v, "applied"),
        num(v, "first_index"),
        num(v, "last_index"),
        num(v, "snapshot_index"),
        num(v, "entries_applied")
    );
    s += &format!(
        "  engine: seq {}, serving {}\n",
        num(v, "engine_seq"),
        num(v, "serving")
    );
    s += &format!(
        "  members: voters {}, learners {}\n",
        ids(v, "voters"),
        ids(v, "learners")
    );
    for p in v
        .get("progress")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let kind = match p.get("voter").and_then(Value::as_bool) {
            Some(true) => "voter",
            Some(false) => "learner",
            None => "?",
        };
        s += &format!(
            "  peer {} ({kind}): matched {} next {} {}\n",
            num(p, "id"),
            num(p, "matched"),
            num(p, "next"),
            num(p, "state")
        );
    }
    s += &match v.get("current_state") {
        Some(c) if c.is_object() => format!(
            "  state hash {} at engine seq {}\n",
            num(c, "hash"),
            num(c, "engine_seq")
        ),
        _ => "  state hash: not available (the node thread did not answer)\n".to_string(),
    };
    s += &format!(
        "  hash checks: {} ok, {} mismatches\n",
        num(v, "hash_checks_ok"),
        num(v, "hash_mismatches")
    );
    let snap_hash = match v.get("state_hash").and_then(Value::as_array) {
        Some(a) if a.len() == 2 => format!(
            ", newest at index {} hash {}",
            a[0],
            a[1].as_str().unwrap_or("?")
        ),
        _ => String::new(),
    };
    s += &format!(
        "  snapshots: {} taken, {} installed{snap_hash}\n",
        num(v, "snapshots_taken"),
        num(v, "snapshots_installed")
    );
    if v.get("removed").and_then(Value::as_bool) == Some(true) {
        s += "  REMOVED from the cluster\n";
    }
    if let Some(f) = v.get("failure").and_then(Value::as_str) {
        s += &format!("  FAILED: {f}\n");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    const STATUS: &str = r#"{"id":1,"role":"leader","term":3,"leader":1,"commit":120,
        "applied":120,"first_index":101,"last_index":120,"snapshot_index":100,
        "voters":[1,2,3],"learners":[4],"peers":[[2,"127.0.0.1:7002"]],
        "progress":[{"id":2,"matched":120,"next":121,"state":"replicate","voter":true},
                    {"id":4,"matched":90,"next":91,"state":"probe","voter":false}],
        "state_hash":[100,"ab12"],"hash_checks_ok":7,"hash_mismatches":0,
        "snapshots_taken":1,"snapshots_installed":0,"entries_applied":120,"removed":false,
        "engine_seq":4711,"serving":true,
        "current_state":{"engine_seq":4711,"hash":"deadbeef"},"transport":{}}"#;

    #[test]
    fn an_answer_with_content_length_is_cut_there() {
        let raw = b"HTTP/1.1 421 Misdirected Request\r\nContent-Type: application/json\r\ncontent-length: 13\r\n\r\n{\"leader\":2}\nextra";
        let a = parse_answer(raw).unwrap();
        assert_eq!(a.status, 421);
        assert_eq!(a.body, "{\"leader\":2}\n");
        assert_eq!(leader_of(&a.body), "leader: node 2");
    }

    #[test]
    fn an_answer_without_content_length_runs_to_the_end() {
        let a = parse_answer(b"HTTP/1.0 200 OK\r\n\r\n{}").unwrap();
        assert_eq!(
            a,
            Answer {
                status: 200,
                body: "{}".into()
            }
        );
    }

    #[test]
    fn bad_answers_are_errors_not_panics() {
        for raw in [
            &b""[..],
            b"HTTP/1.1 200 OK\r\n",
            b"garbage\r\n\r\n",
            b"HTTP/1.1 abc OK\r\n\r\n",
            b"HTTP/1.1 99999 OK\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",
            b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nno colon\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
            b"\xff\xfe\r\n\r\n",
        ] {
            assert!(
                parse_answer(raw).is_err(),
                "{:?}",
                String::from_utf8_lossy(raw)
            );
        }
    }

    #[test]
    fn error_text_is_the_error_field_or_the_body() {
        assert_eq!(
            error_text(r#"{"error":"not the leader","leader":2}"#),
            "not the leader"
        );
        assert_eq!(error_text("plain text\n"), "plain text");
    }

    #[test]
    fn the_summary_shows_what_an_operator_looks_for() {
        let v: Value = serde_json::from_str(STATUS).unwrap();
        let s = summary("127.0.0.1:9101", &v);
        assert_eq!(
            s,
            "node 1 at 127.0.0.1:9101: leader, term 3, leader 1\n\
             \x20 log: commit 120 applied 120 (first 101, last 120, snapshot 100); 120 entries applied since start\n\
             \x20 engine: seq 4711, serving yes\n\
             \x20 members: voters [1, 2, 3], learners [4]\n\
             \x20 peer 2 (voter): matched 120 next 121 replicate\n\
             \x20 peer 4 (learner): matched 90 next 91 probe\n\
             \x20 state hash deadbeef at engine seq 4711\n\
             \x20 hash checks: 7 ok, 0 mismatches\n\
             \x20 snapshots: 1 taken, 0 installed, newest at index 100 hash ab12\n"
        );
    }

    #[test]
    fn the_summary_of_a_sparse_or_failed_node_does_not_panic() {
        let v: Value =
            serde_json::from_str(r#"{"role":"follower","leader":null,"current_state":null,"removed":true,"failure":"disk full"}"#)
                .unwrap();
        let s = summary("n", &v);
        assert!(
            s.starts_with("node ? at n: follower, term ?, leader none\n"),
            "{s}"
        );
        assert!(s.contains("state hash: not available"), "{s}");
        assert!(s.contains("REMOVED"), "{s}");
        assert!(s.contains("FAILED: disk full"), "{s}");
        // Not an object at all: every field unknown.
        assert!(summary("n", &Value::Null).starts_with("node ? at n: ?, term ?"));
        let _ = summary("n", &serde_json::json!([1, 2]));
    }

    #[test]
    fn addr_values_the_server_would_misread_are_refused() {
        assert!(query_value("127.0.0.1:7004").is_ok());
        for bad in ["", "a&b", "a=b", "a b", "a%20"] {
            assert!(query_value(bad).is_err(), "{bad}");
        }
    }
}
