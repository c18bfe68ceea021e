//! The node's admin endpoint (`[cluster] admin_listen`), HTTP on its own thread
//! (`tiny_http`, no runtime), what `peregrine admin cluster` talks to:
//!
//! | request | answer |
//! |---|---|
//! | `GET /metrics` | the node's cluster state for Prometheus (`peregrine_cluster_*`: leader, serving, term, commit, applied, engine seq, hash checks and mismatches, snapshots, the newest snapshot point's state hash as a label), on every node, followers included |
//! | `GET /cluster/status` | JSON: the Raft status (role, term, leader, commit, applied, members, progress, snapshot hashes, checks), plus `engine_seq`, `serving` and the replica's **current** state hash with the engine seq it covers |
//! | `POST /cluster/transfer?to=N` | asks the leader to hand over to node N (rolling upgrades) |
//! | `POST /cluster/add?id=N&addr=HOST:PORT` | adds node N as a learner (it receives the log, does not vote) |
//! | `POST /cluster/promote?id=N&addr=HOST:PORT` | makes learner N a voter |
//! | `POST /cluster/remove?id=N` | removes node N |
//!
//! Changes go to the leader only (a follower answers `421` with the leader's id).
//! Like the metrics endpoint it has no authentication: bind it to loopback or a
//! private network.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use peregrine_cluster::{ClusterError, MembershipChange, Role, RunnerHandle, Status};
use peregrine_metrics::{labels, Families, Kind};
use tiny_http::{Header, Method, Response, Server};

use super::sm::ExchangeSm;
use super::Shared;

/// The running node, shared with the admin thread (`None` between rounds).
pub(crate) type NodeSlot = Arc<Mutex<Option<(RunnerHandle<ExchangeSm>, Arc<Shared>)>>>;

/// The admin thread; stopped and joined when dropped.
pub(crate) struct Admin {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Admin {
    /// Binds `addr` and serves `slot` until dropped.
    pub(crate) fn start(addr: &str, slot: NodeSlot) -> std::io::Result<Self> {
        let server = Server::http(addr).map_err(|e| std::io::Error::other(e.to_string()))?;
        log::info!("cluster admin on http://{addr}/cluster/status");
        let stop = Arc::new(AtomicBool::new(false));
        let s = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("cluster-admin".into())
            .spawn(move || {
                // Relaxed: a stop request needs no ordering with other memory.
                while !s.load(Ordering::Relaxed) {
                    if let Ok(Some(req)) = server.recv_timeout(Duration::from_millis(50)) {
                        let (code, body) = route(req.method(), req.url(), &slot);
                        let kind = if req.url() == "/metrics" && code == 200 {
                            peregrine_metrics::CONTENT_TYPE
                        } else {
                            "application/json"
                        };
                        let mut resp = Response::from_string(body)
                            .with_status_code(code)
                            .with_chunked_threshold(usize::MAX);
                        if let Ok(h) = Header::from_bytes("Content-Type", kind) {
                            resp.add_header(h);
                        }
                        let _ = req.respond(resp);
                    }
                }
            })?;
        Ok(Admin {
            stop,
            thread: Some(thread),
        })
    }
}

impl Drop for Admin {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn error(code: u16, msg: &str) -> (u16, String) {
    (code, serde_json::json!({ "error": msg }).to_string())
}

fn query<'a>(url: &'a str, key: &str) -> Option<&'a str> {
    url.split_once('?')?
        .1
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .find(|(k, _)| *k == key)
        .map(|(_, v)| v)
}

fn id_of(url: &str, key: &str) -> Result<u64, (u16, String)> {
    query(url, key)
        .and_then(|v| v.parse().ok())
        .filter(|&v| v > 0)
        .ok_or_else(|| error(400, &format!("{key}=N (a node id ≥ 1) is required")))
}

fn route(method: &Method, url: &str, slot: &NodeSlot) -> (u16, String) {
    let path = url.split('?').next().unwrap_or(url);
    let guard = slot.lock().unwrap_or_else(PoisonError::into_inner);
    let Some((node, shared)) = guard.as_ref() else {
        return error(503, "the node is restarting");
    };
    match (method, path) {
        (Method::Get, "/cluster/status") => status(node, shared),
        (Method::Get, "/metrics") => match node.status() {
            Some((st, _)) => (200, metrics(&st, shared)),
            None => error(503, "the node thread is not answering"),
        },
        (Method::Post, "/cluster/transfer") => match id_of(url, "to") {
            Ok(to) => match node.status() {
                // Only the leader can hand over; raft-rs ignores the request elsewhere.
                Some((st, _)) if st.role == Role::Leader => {
                    node.transfer_leader(to);
                    (202, serde_json::json!({ "transfer_to": to }).to_string())
                }
                Some((st, _)) => changed(Err(ClusterError::NotLeader { leader: st.leader })),
                None => error(503, "the node thread is not answering"),
            },
            Err(e) => e,
        },
        (Method::Post, "/cluster/add" | "/cluster/promote") => {
            let id = match id_of(url, "id") {
                Ok(id) => id,
                Err(e) => return e,
            };
            let Some(addr) = query(url, "addr").filter(|a| !a.is_empty()) else {
                return error(400, "addr=HOST:PORT (the node's peer address) is required");
            };
            let addr = addr.to_string();
            let change = if path == "/cluster/add" {
                MembershipChange::AddLearner { id, addr }
            } else {
                MembershipChange::AddVoter { id, addr }
            };
            changed(node.change(change))
        }
        (Method::Post, "/cluster/remove") => match id_of(url, "id") {
            Ok(id) => changed(node.change(MembershipChange::Remove { id })),
            Err(e) => e,
        },
        (Method::Get | Method::Post, _) => error(404, "try GET /cluster/status"),
        _ => error(405, "GET or POST"),
    }
}

/// The cluster families of one node (OpenMetrics text, `peregrine_metrics`).
fn metrics(st: &Status, shared: &Shared) -> String {
    peregrine_metrics::document("cluster", |reg| {
        let mut f = Families::new();
        let leader = i64::from(st.role == Role::Leader);
        f.single_gauge("leader", "1 while this node is the Raft leader.", leader);
        f.single_gauge(
            "serving",
            "1 while this node serves order entry (leader with its log applied).",
            i64::from(shared.serving()),
        );
        let g = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
        f.single_gauge("term", "Current Raft term.", g(st.term));
        f.single_gauge(
            "leader_id",
            "The leader this node knows (0: none).",
            g(st.leader.unwrap_or(0)),
        );
        f.single_gauge(
            "commit_index",
            "Highest log index known committed.",
            g(st.commit),
        );
        f.single_gauge(
            "applied_index",
            "Highest log index applied to the replica.",
            g(st.applied),
        );
        f.single_gauge(
            "last_index",
            "Last index in this node's log.",
            g(st.last_index),
        );
        f.single_gauge(
            "snapshot_index",
            "Index of the newest snapshot.",
            g(st.snapshot_index),
        );
        f.single_gauge(
            "engine_seq",
            "Engine sequence number of the last command applied.",
            g(shared.engine_seq()),
        );
        f.single_gauge("voters", "Voting members.", g(st.voters.len() as u64));
        f.single_counter(
            "hash_checks_ok",
            "Replicated state-hash checks that matched this node's state.",
            st.hash_checks_ok,
        );
        f.single_counter(
            "hash_mismatches",
            "Replicated state-hash checks that did not: the replicas diverged.",
            st.hash_mismatches,
        );
        f.single_counter(
            "snapshots_taken",
            "Snapshots taken locally.",
            st.snapshots_taken,
        );
        f.single_counter(
            "snapshots_installed",
            "Snapshots installed from a leader.",
            st.snapshots_installed,
        );
        if let Some((index, hash)) = &st.state_hash {
            f.family(
                "state_hash",
                Kind::Gauge,
                "1, labelled with the newest snapshot point's index and state hash.",
            );
            f.gauge(labels(&[("index", &index.to_string()), ("hash", hash)]), 1);
        }
        reg.register_collector(Box::new(f));
    })
}

fn changed(r: Result<(), ClusterError>) -> (u16, String) {
    match r {
        Ok(()) => (202, serde_json::json!({ "proposed": true }).to_string()),
        Err(ClusterError::NotLeader { leader }) => (
            421,
            serde_json::json!({ "error": "not the leader", "leader": leader }).to_string(),
        ),
        Err(e) => error(409, &e.to_string()),
    }
}

fn status(node: &RunnerHandle<ExchangeSm>, shared: &Shared) -> (u16, String) {
    let Some((status, transport)) = node.status() else {
        return error(503, "the node thread is not answering");
    };
    let hash = current_hash(node, shared);
    let mut v = match serde_json::to_value(&status) {
        Ok(v) => v,
        Err(e) => return error(500, &e.to_string()),
    };
    if let Some(o) = v.as_object_mut() {
        o.insert("engine_seq".into(), shared.engine_seq().into());
        o.insert("serving".into(), shared.serving().into());
        o.insert(
            "current_state".into(),
            match hash {
                Some((seq, h)) => serde_json::json!({ "engine_seq": seq, "hash": h }),
                None => serde_json::Value::Null,
            },
        );
        o.insert(
            "transport".into(),
            serde_json::json!({
                "frames_queued": transport.frames_queued,
                "frames_received": transport.frames_received,
                "dropped": transport.dropped,
                "connects": transport.connects,
                "disconnects": transport.disconnects,
                "bad_input": transport.bad_input,
            }),
        );
        if let Some(f) = shared.failure() {
            o.insert("failure".into(), f.into());
        }
    }
    (200, v.to_string())
}

/// The replica's state hash now, computed on the node thread (the pump answers a
/// request within one loop iteration: a tick at most).
fn current_hash(node: &RunnerHandle<ExchangeSm>, shared: &Shared) -> Option<(u64, String)> {
    shared.request_hash();
    node.waker().wake();
    let until = Instant::now() + Duration::from_secs(2);
    while Instant::now() < until {
        if let Some(h) = shared.take_hash() {
            return Some(h);
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    None
}
