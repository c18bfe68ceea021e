//! A real network partition of `peregrine exchange --cluster`: three nodes, each
//! in its own network namespace, joined by veth pairs to a bridge in the test's
//! namespace (`ip netns`, `ip link`; the test builds it and tears it down, also
//! when it fails). Cutting the leader's link isolates it from its followers and
//! from outside clients; a load generator running *inside* the leader's namespace
//! still reaches it. While cut off:
//!
//! * the old leader acknowledges nothing (the generator gets no answer at all), both
//!   before and after the majority has elected a new leader;
//! * the majority elects a new leader that serves clients from outside;
//! * after the link comes back, the old leader rejoins and all three nodes converge
//!   on one state hash.
//!
//! Needs `CAP_NET_ADMIN` (root in CI); without it the test says so and passes
//! without running (the SIGSTOP variants in `exchange_cluster.rs` always run).

mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use peregrine_client::order_entry::Connection;
use peregrine_types::{AccountId, ClientOrderId, Side, TimeInForce};
use peregrine_wire::v2::client::LoginParams;
use peregrine_wire::v2::{Outbound, RequestRef};
use support::{accounts_toml, key, order, with_timeout};

const N: usize = 3;
const CLIENT: u16 = 7701;
const PEER: u16 = 7721;
const ADMIN: u16 = 7731;

fn ip(args: &[&str]) -> Result<(), String> {
    let out = Command::new("ip")
        .args(args)
        .output()
        .map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "ip {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// The namespaces, veths and bridge of one test; removed on drop.
struct Net {
    tag: String,
    subnet: u8,
}

impl Net {
    fn ns(&self, i: usize) -> String {
        format!("{}n{i}", self.tag)
    }
    fn veth(&self, i: usize) -> String {
        format!("{}v{i}", self.tag)
    }
    fn bridge(&self) -> String {
        format!("{}b", self.tag)
    }
    fn addr(&self, i: usize) -> String {
        format!("10.77.{}.{i}", self.subnet)
    }

    /// Builds it, or says why it cannot (no CAP_NET_ADMIN, no `ip`).
    fn build() -> Result<Net, String> {
        let pid = std::process::id();
        let net = Net {
            tag: format!("pg{}", pid % 100_000),
            subnet: (pid % 200 + 20) as u8,
        };
        ip(&["netns", "add", &net.ns(1)])?;
        let b = net.bridge();
        ip(&["link", "add", &b, "type", "bridge"])?;
        ip(&[
            "addr",
            "add",
            &format!("10.77.{}.254/24", net.subnet),
            "dev",
            &b,
        ])?;
        ip(&["link", "set", &b, "up"])?;
        for i in 1..=N {
            let ns = net.ns(i);
            if i > 1 {
                ip(&["netns", "add", &ns])?;
            }
            let (v, p) = (net.veth(i), format!("{}p{i}", net.tag));
            ip(&["link", "add", &v, "type", "veth", "peer", "name", &p])?;
            ip(&["link", "set", &p, "netns", &ns])?;
            ip(&["link", "set", &v, "master", &b])?;
            ip(&["link", "set", &v, "up"])?;
            let inside = |args: &[&str]| {
                let mut a = vec!["netns", "exec", &ns, "ip"];
                a.extend_from_slice(args);
                ip(&a)
            };
            inside(&["addr", "add", &format!("{}/24", net.addr(i)), "dev", &p])?;
            inside(&["link", "set", &p, "up"])?;
            inside(&["link", "set", "lo", "up"])?;
        }
        Ok(net)
    }

    /// Cuts (or restores) node `i`'s link to the bridge.
    fn link(&self, i: usize, up: bool) {
        ip(&["link", "set", &self.veth(i), if up { "up" } else { "down" }]).unwrap();
    }
}

impl Drop for Net {
    fn drop(&mut self) {
        for i in 1..=N {
            let _ = ip(&["netns", "del", &self.ns(i)]); // its veth end goes with it
            let _ = ip(&["link", "del", &self.veth(i)]);
        }
        let _ = ip(&["link", "del", &self.bridge()]);
    }
}

struct Node {
    id: usize,
    log: PathBuf,
    child: Option<Child>,
}

impl Node {
    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn start(net: &Net, dir: &Path) -> Vec<Node> {
    let peers: String = (1..=N)
        .map(|i| {
            format!(
                "[[cluster.peers]]\nid = {i}\naddr = \"{a}:{PEER}\"\nclient = \"{a}:{CLIENT}\"\n",
                a = net.addr(i)
            )
        })
        .collect();
    (1..=N)
        .map(|i| {
            let home = dir.join(format!("node{i}"));
            std::fs::create_dir_all(&home).unwrap();
            let a = net.addr(i);
            let config = home.join("exchange.toml");
            std::fs::write(
                &config,
                format!(
                    "listen = \"{a}:{CLIENT}\"\nrecovery_listen = \"{a}:7711\"\nwait = \"park\"\n\
                     [market_data]\nenabled = false\n[journal]\ndir = {:?}\n\
                     [cluster]\nnode_id = {i}\nlisten = \"{a}:{PEER}\"\nadmin_listen = \"{a}:{ADMIN}\"\n\
                     election_ticks = 20\n{peers}{}",
                    home.join("raft").display().to_string(),
                    accounts_toml()
                ),
            )
            .unwrap();
            let log = home.join("exchange.log");
            let mut child = Command::new("ip")
                .args(["netns", "exec", &net.ns(i), env!("CARGO_BIN_EXE_peregrine")])
                .args(["exchange", "--cluster", "--config"])
                .arg(&config)
                .env("RUST_LOG", "info")
                .stdout(Stdio::piped())
                .stderr(std::fs::File::create(&log).unwrap())
                .spawn()
                .unwrap();
            let mut line = String::new();
            let mut out = BufReader::new(child.stdout.take().unwrap());
            out.read_line(&mut line).unwrap();
            assert!(line.starts_with("listening on "), "node {i}: {line:?}");
            std::thread::spawn(move || {
                let mut sink = String::new();
                let _ = out.read_to_string(&mut sink);
            });
            Node {
                id: i,
                log,
                child: Some(child),
            }
        })
        .collect()
}

fn status(net: &Net, i: usize) -> Option<serde_json::Value> {
    let addr: SocketAddr = format!("{}:{ADMIN}", net.addr(i)).parse().unwrap();
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_millis(500)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(3))).ok()?;
    s.write_all(b"GET /cluster/status HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        .ok()?;
    let mut raw = String::new();
    s.read_to_string(&mut raw).ok()?;
    serde_json::from_str(raw.split_once("\r\n\r\n")?.1).ok()
}

fn serving(net: &Net, among: &[usize]) -> Option<usize> {
    among
        .iter()
        .copied()
        .find(|&i| status(net, i).is_some_and(|s| s["serving"] == true))
}

fn logs(nodes: &[Node]) -> String {
    nodes
        .iter()
        .map(|n| format!("--- node {} ---\n{}", n.id, n.log_text()))
        .collect()
}

#[test]
fn a_partitioned_leader_acknowledges_nothing_and_the_majority_goes_on() {
    let net = match Net::build() {
        Ok(n) => n,
        Err(e) => {
            eprintln!("SKIPPED: cannot build network namespaces here ({e})");
            return;
        }
    };
    with_timeout(180, move || {
        let dir = tempfile::tempdir().unwrap();
        let nodes = start(&net, dir.path());
        let all: Vec<usize> = (1..=N).collect();
        let addrs: Vec<SocketAddr> = all
            .iter()
            .map(|&i| format!("{}:{CLIENT}", net.addr(i)).parse().unwrap())
            .collect();
        let login = || {
            Connection::connect_any(
                &addrs,
                LoginParams::trading(AccountId(1), 0),
                key(1),
                Duration::from_secs(3),
                Duration::from_secs(30),
            )
            .unwrap_or_else(|e| panic!("no leader: {e}\n{}", logs(&nodes)))
        };
        let (mut c, _, at) = login();
        let old = addrs.iter().position(|a| *a == at).unwrap() + 1;
        let o = order(1, Side::Buy, 9_000, 1, TimeInForce::Gtc);
        assert!(matches!(
            c.request(&o, RequestRef::NewOrder(ClientOrderId(1)), |_| {}),
            Ok(Outbound::Accepted(_))
        ));
        drop(c);

        // A client inside the leader's namespace (this test binary again, running
        // `in_namespace_client`) logs in while the link is up, then the link is cut
        // and it sends an order: the old leader executes it but must never
        // acknowledge it, before or after the majority elects a new leader.
        let exe = std::env::current_exe().unwrap();
        let mut inside = Command::new("ip")
            .args(["netns", "exec", &net.ns(old)])
            .arg(&exe)
            .args(["--exact", "in_namespace_client", "--ignored", "--nocapture"])
            .env("PG_NETNS_CLIENT", format!("{}:{CLIENT}", net.addr(old)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut said = BufReader::new(inside.stdout.take().unwrap());
        let mut line = String::new();
        while !line.starts_with("READY") {
            line.clear();
            assert!(
                said.read_line(&mut line).unwrap() > 0,
                "the inside client ended"
            );
        }
        net.link(old, false);
        inside.stdin.take().unwrap().write_all(b"GO\n").unwrap();
        // The majority elects a new leader and serves clients from outside.
        let others: Vec<usize> = all.iter().copied().filter(|&i| i != old).collect();
        let deadline = Instant::now() + Duration::from_secs(20);
        let new = loop {
            if let Some(i) = serving(&net, &others) {
                break i;
            }
            assert!(Instant::now() < deadline, "no new leader\n{}", logs(&nodes));
            std::thread::sleep(Duration::from_millis(50));
        };
        let (mut c, _, at) = login();
        assert_eq!(at, addrs[new - 1]);
        let o = order(2, Side::Buy, 9_001, 1, TimeInForce::Gtc);
        assert!(matches!(
            c.request(&o, RequestRef::NewOrder(ClientOrderId(2)), |_| {}),
            Ok(Outbound::Accepted(_))
        ));
        drop(c);
        let mut verdict = String::new();
        while !verdict.starts_with("RESULT") {
            verdict.clear();
            assert!(
                said.read_line(&mut verdict).unwrap() > 0,
                "the inside client ended"
            );
        }
        let _ = inside.wait();
        assert_eq!(
            verdict.trim(),
            "RESULT no-ack",
            "the partitioned leader acknowledged\n{}",
            logs(&nodes)
        );
        // Heal: the old leader rejoins as a follower and everyone converges.
        net.link(old, true);
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let states: Vec<Option<(u64, String)>> = all
                .iter()
                .map(|&i| {
                    status(&net, i).and_then(|s| {
                        let c = s.get("current_state")?;
                        Some((c["engine_seq"].as_u64()?, c["hash"].as_str()?.to_string()))
                    })
                })
                .collect();
            if states.iter().all(|s| s.is_some() && *s == states[0]) {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "no convergence: {states:?}\n{}",
                logs(&nodes)
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        drop(nodes);
        drop(net);
    });
}

/// The client inside the old leader's namespace (run by the test above through
/// `ip netns exec`; ignored otherwise): logs in at `PG_NETNS_CLIENT`, says READY,
/// waits for GO on stdin, sends one order and says whether it was acknowledged
/// within 5 s.
#[test]
#[ignore = "run by a_partitioned_leader_acknowledges_nothing_and_the_majority_goes_on"]
fn in_namespace_client() {
    let Ok(addr) = std::env::var("PG_NETNS_CLIENT") else {
        return;
    };
    let addr: SocketAddr = addr.parse().unwrap();
    let (mut c, _) = Connection::connect(
        addr,
        LoginParams::trading(AccountId(1), 0),
        key(1),
        Duration::from_secs(5),
    )
    .unwrap();
    c.recover(|_| {}).unwrap();
    println!("READY");
    let mut go = String::new();
    std::io::stdin().read_line(&mut go).unwrap();
    let o = order(3, Side::Buy, 9_002, 1, TimeInForce::Gtc);
    let r = c.request(&o, RequestRef::NewOrder(ClientOrderId(3)), |_| {});
    let acked = matches!(r, Ok(Outbound::Accepted(_)));
    println!("RESULT {}", if acked { "acked" } else { "no-ack" });
}
