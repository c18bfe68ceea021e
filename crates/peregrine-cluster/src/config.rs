//! Cluster configuration: a validated serde struct with documented defaults
//! (`[cluster]` in the exchange config; docs/cluster.md, "Configuration").

use std::net::ToSocketAddrs;

use peregrine_journal::FsyncPolicy;
use serde::{Deserialize, Serialize};

/// One member known at start-up.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PeerConfig {
    /// Node id (≥ 1, unique).
    pub id: u64,
    /// Peer-protocol address `host:port` other nodes dial.
    pub addr: String,
    /// The node's order-entry address `host:port`, where clients are redirected
    /// while it leads. Default: none (clients are told who leads, not where).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// The node's market-data recovery address `host:port`, where recovery requests
    /// are redirected while it leads. Default: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery: Option<String>,
}

/// Settings of one cluster node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ClusterConfig {
    /// This node's id; must appear in `peers` unless `join`.
    pub node_id: u64,
    /// Address the peer protocol listens on (port 0: any free port).
    pub listen: String,
    /// The initial voters (this node included) for a new cluster; for a joining node,
    /// the members it may hear from. Addresses here override those learnt from the log.
    pub peers: Vec<PeerConfig>,
    /// Connections whose hello names another cluster are refused.
    pub cluster_id: u64,
    /// Start with no membership and wait to be added by the leader
    /// (`peregrine admin cluster add`) instead of bootstrapping from `peers`.
    pub join: bool,
    /// Length of one Raft tick, ms.
    pub tick_ms: u64,
    /// Election timeout in ticks; each election waits a random
    /// `election_ticks ..< 2 × election_ticks`.
    pub election_ticks: usize,
    /// Leader heartbeat interval in ticks (< `election_ticks`).
    pub heartbeat_ticks: usize,
    /// Largest proposal (one group-commit batch), bytes.
    pub max_entry_bytes: usize,
    /// Largest batch of entries in one append message, bytes.
    pub max_append_bytes: u64,
    /// Append messages in flight per follower.
    pub max_inflight: usize,
    /// Take a snapshot after every N applied entries (0: never). Every node takes it at
    /// the same indices, and the leader then replicates its state hash for checking.
    pub snapshot_every: u64,
    /// Entries kept in memory (and in the journal) behind the newest snapshot, so a
    /// follower that lags by fewer catches up from the log, not a snapshot.
    pub log_retain: u64,
    /// Largest peer frame accepted (a snapshot travels in one frame).
    pub max_frame_bytes: usize,
    /// Unsent bytes queued per peer before further messages to it are dropped.
    pub send_buffer_bytes: usize,
    /// When the Raft log reaches the disk. `batch`: one `fdatasync` per batch of
    /// entries; a follower acknowledges only after it.
    pub fsync: FsyncPolicy,
    /// Journal segment size.
    pub segment_bytes: u64,
    /// Snapshot files kept.
    pub snapshot_retain: usize,
    /// Delete journal segments the oldest retained snapshot covers.
    pub prune: bool,
    /// The node's admin endpoint `host:port` (HTTP: status as JSON, leadership
    /// transfer, membership changes; what `peregrine admin cluster` talks to).
    /// Default: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub admin_listen: Option<String>,
    /// Nice value of the node's Raft and sync threads (−20..=19; shipped −10, so
    /// heartbeats, votes and acknowledgements run ahead of client work on a busy
    /// machine; raising priority needs CAP_SYS_NICE or RLIMIT_NICE, else a warning
    /// and the process's own). 0: leave the process's priority.
    pub nice: i32,
    /// Seconds between the leader's hash points (0: only at snapshot points): every
    /// node hashes its state at the same log index and compares it with the
    /// leader's, so replicas that diverge are found within this time.
    pub hash_check_secs: u64,
}

impl Default for ClusterConfig {
    fn default() -> Self {
        Self {
            node_id: 0,
            listen: "127.0.0.1:7710".into(),
            peers: Vec::new(),
            cluster_id: 1,
            join: false,
            tick_ms: 10,
            election_ticks: 30,
            heartbeat_ticks: 5,
            max_entry_bytes: 1 << 20,
            max_append_bytes: 1 << 20,
            max_inflight: 256,
            snapshot_every: 100_000,
            log_retain: 10_000,
            max_frame_bytes: 256 << 20,
            send_buffer_bytes: 64 << 20,
            fsync: FsyncPolicy::Batch,
            segment_bytes: 64 << 20,
            snapshot_retain: 3,
            prune: true,
            admin_listen: None,
            nice: -10,
            hash_check_secs: 60,
        }
    }
}

impl ClusterConfig {
    /// Checks every field and reports every problem at once.
    pub fn validate(&self) -> Result<(), Vec<String>> {
        let mut p = Vec::new();
        if self.node_id == 0 {
            p.push("node_id must be ≥ 1".to_string());
        }
        if self.listen.to_socket_addrs().is_err() {
            p.push(format!("listen {:?} is not host:port", self.listen));
        }
        let mut ids = std::collections::BTreeSet::new();
        for peer in &self.peers {
            if peer.id == 0 {
                p.push("peer id 0".into());
            }
            if !ids.insert(peer.id) {
                p.push(format!("peer {} listed twice", peer.id));
            }
            if peer.addr.len() > crate::log::snapshot::MAX_ADDR_LEN || peer.addr.is_empty() {
                p.push(format!("peer {} address must be 1..=255 bytes", peer.id));
            }
        }
        if !self.join && !ids.contains(&self.node_id) {
            p.push(format!(
                "node_id {} is not in peers (list every initial voter, this node included, or set join = true)",
                self.node_id
            ));
        }
        if !(1..=60_000).contains(&self.tick_ms) {
            p.push("tick_ms must be 1..=60000".into());
        }
        if self.heartbeat_ticks == 0 || self.heartbeat_ticks >= self.election_ticks {
            p.push("heartbeat_ticks must be ≥ 1 and < election_ticks".into());
        }
        if self.max_entry_bytes == 0 || self.max_entry_bytes > 64 << 20 {
            p.push("max_entry_bytes must be 1..=64 MiB".into());
        }
        if self.max_frame_bytes < self.max_entry_bytes + 4096
            || self.max_frame_bytes as u64 <= self.max_append_bytes
        {
            p.push("max_frame_bytes must exceed max_entry_bytes and max_append_bytes".into());
        }
        if self.max_frame_bytes > u32::MAX as usize {
            p.push("max_frame_bytes must be < 4 GiB".into());
        }
        if self.send_buffer_bytes < self.max_frame_bytes.min(1 << 20) {
            p.push("send_buffer_bytes must hold at least one 1 MiB frame".into());
        }
        if self.max_inflight == 0 {
            p.push("max_inflight must be ≥ 1".into());
        }
        if self.snapshot_retain == 0 {
            p.push("snapshot_retain must be ≥ 1".into());
        }
        if !(-20..=19).contains(&self.nice) {
            p.push("nice must be -20..=19".into());
        }
        if p.is_empty() {
            Ok(())
        } else {
            Err(p)
        }
    }

    /// The tick as a `Duration`.
    pub fn tick(&self) -> std::time::Duration {
        std::time::Duration::from_millis(self.tick_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn three(node_id: u64) -> ClusterConfig {
        ClusterConfig {
            node_id,
            peers: (1..=3)
                .map(|id| PeerConfig {
                    id,
                    addr: format!("127.0.0.1:{}", 7710 + id),
                    client: None,
                    recovery: None,
                })
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn defaults_are_pinned() {
        let c = ClusterConfig::default();
        assert_eq!(c.listen, "127.0.0.1:7710");
        assert_eq!(c.cluster_id, 1);
        assert!(!c.join);
        assert_eq!(
            (c.tick_ms, c.election_ticks, c.heartbeat_ticks),
            (10, 30, 5)
        );
        assert_eq!(
            (c.max_entry_bytes, c.max_append_bytes, c.max_inflight),
            (1 << 20, 1 << 20, 256)
        );
        assert_eq!((c.snapshot_every, c.log_retain), (100_000, 10_000));
        assert_eq!(
            (c.max_frame_bytes, c.send_buffer_bytes),
            (256 << 20, 64 << 20)
        );
        assert_eq!(c.fsync, FsyncPolicy::Batch);
        assert_eq!(
            (c.segment_bytes, c.snapshot_retain, c.prune),
            (64 << 20, 3, true)
        );
        assert_eq!((c.nice, c.hash_check_secs), (-10, 60));
    }

    #[test]
    fn a_three_node_config_validates_and_parses_from_toml() {
        three(2).validate().unwrap();
        let text = r#"
            node_id = 2
            listen = "127.0.0.1:7712"
            peers = [{ id = 1, addr = "127.0.0.1:7711" }, { id = 2, addr = "127.0.0.1:7712" }, { id = 3, addr = "127.0.0.1:7713" }]
            election_ticks = 20
            fsync = "none"
        "#;
        let c: ClusterConfig = toml::from_str(text).unwrap();
        c.validate().unwrap();
        assert_eq!(c.fsync, FsyncPolicy::None);
        assert!(toml::from_str::<ClusterConfig>("nodeid = 1").is_err());
    }

    #[test]
    fn every_problem_is_reported_at_once() {
        let mut c = three(9);
        c.node_id = 9;
        c.heartbeat_ticks = 40;
        c.tick_ms = 0;
        c.peers.push(PeerConfig {
            id: 1,
            addr: String::new(),
            client: None,
            recovery: None,
        });
        c.snapshot_retain = 0;
        let errs = c.validate().unwrap_err();
        assert_eq!(errs.len(), 6, "{errs:?}");
        let mut j = three(9);
        j.join = true;
        j.validate().unwrap();
    }
}
