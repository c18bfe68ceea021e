//! Three raft-rs 0.7 nodes in one process, one thread each, `MemStorage`, std mpsc
//! channels as the network (messages passed by value, like the openraft harness).
//! A client thread keeps W proposals in flight against the leader and times each
//! proposal until the leader has applied it (committed on a majority).
use std::collections::HashMap;
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::thread;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use raft::eraftpb::{ConfState, Entry, EntryType, Message};
use raft::storage::MemStorage;
use raft::{Config, RawNode, StateRole};

enum In {
    Raft(Message),
    Propose(Vec<u8>, Sender<Instant>, Instant),
}

fn node_loop(id: u64, rx: Receiver<In>, peers: HashMap<u64, Sender<In>>, leader_tx: Option<Sender<()>>) {
    let cfg = Config { id, election_tick: 10, heartbeat_tick: 3, max_size_per_msg: 1 << 20, max_inflight_msgs: 256, check_quorum: true, pre_vote: true, ..Default::default() };
    let store = MemStorage::new_with_conf_state(ConfState::from((vec![1, 2, 3], vec![])));
    let logger = slog::Logger::root(slog::Discard, slog::o!());
    let mut node = RawNode::new(&cfg, store, &logger).unwrap();
    if id == 1 {
        node.campaign().unwrap();
    }
    let mut leader_tx = leader_tx;
    let tick = Duration::from_millis(10);
    let mut last_tick = Instant::now();
    let mut pending: HashMap<u64, (Sender<Instant>, Instant)> = HashMap::new();
    let send = |msgs: Vec<Message>| {
        for m in msgs {
            if let Some(p) = peers.get(&m.to) {
                let _ = p.send(In::Raft(m));
            }
        }
    };
    loop {
        let wait = tick.saturating_sub(last_tick.elapsed());
        match rx.recv_timeout(wait) {
            Ok(m) => {
                let mut m = Some(m);
                while let Some(x) = m.take() {
                    match x {
                        In::Raft(msg) => { let _ = node.step(msg); }
                        In::Propose(data, reply, t0) => {
                            if node.propose(vec![], data).is_ok() {
                                let idx = node.raft.raft_log.last_index();
                                pending.insert(idx, (reply, t0));
                            }
                        }
                    }
                    m = rx.try_recv().ok();
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return,
        }
        if last_tick.elapsed() >= tick {
            node.tick();
            last_tick = Instant::now();
        }
        if !node.has_ready() {
            continue;
        }
        let mut rd = node.ready();
        send(rd.take_messages());
        let apply = |ents: Vec<Entry>, pending: &mut HashMap<u64, (Sender<Instant>, Instant)>| {
            for e in ents {
                if e.get_entry_type() == EntryType::EntryNormal {
                    if let Some((r, t0)) = pending.remove(&e.index) {
                        let _ = r.send(t0);
                    }
                }
            }
        };
        apply(rd.take_committed_entries(), &mut pending);
        if !rd.entries().is_empty() {
            node.mut_store().wl().append(rd.entries()).unwrap();
        }
        if let Some(hs) = rd.hs() {
            node.mut_store().wl().set_hardstate(hs.clone());
        }
        send(rd.take_persisted_messages());
        let mut light = node.advance(rd);
        if let Some(c) = light.commit_index() {
            node.mut_store().wl().mut_hard_state().set_commit(c);
        }
        send(light.take_messages());
        apply(light.take_committed_entries(), &mut pending);
        node.advance_apply();
        if node.raft.state == StateRole::Leader {
            if let Some(t) = leader_tx.take() { let _ = t.send(()); }
        }
    }
}

fn run(name: &str, leader: &Sender<In>, inflight: usize, total: u64, bytes: usize, per_entry: u64) {
    let (rtx, rrx) = channel::<Instant>();
    let mut h = Histogram::<u64>::new(3).unwrap();
    let t0 = Instant::now();
    let mut sent = 0u64;
    while sent < inflight as u64 && sent < total {
        leader.send(In::Propose(vec![7u8; bytes], rtx.clone(), Instant::now())).unwrap();
        sent += 1;
    }
    let mut done = 0u64;
    while done < total {
        let ts = rrx.recv_timeout(Duration::from_secs(30)).expect("no commit within 30 s");
        h.record(ts.elapsed().as_nanos() as u64).unwrap();
        done += 1;
        if sent < total {
            leader.send(In::Propose(vec![7u8; bytes], rtx.clone(), Instant::now())).unwrap();
            sent += 1;
        }
    }
    let secs = t0.elapsed().as_secs_f64();
    println!(
        "{name:<34} n={total:<7} p50={:>7.1}us p90={:>7.1}us p99={:>7.1}us p99.9={:>7.1}us max={:>8.1}us  {:>9.0} entries/s {:>10.0} cmds/s",
        h.value_at_quantile(0.5) as f64 / 1e3, h.value_at_quantile(0.9) as f64 / 1e3, h.value_at_quantile(0.99) as f64 / 1e3,
        h.value_at_quantile(0.999) as f64 / 1e3, h.max() as f64 / 1e3, total as f64 / secs, (total * per_entry) as f64 / secs
    );
    println!(
        "{{\"engine\":\"raft-rs-0.7.0\",\"case\":\"{name}\",\"n\":{total},\"p50_ns\":{},\"p99_ns\":{},\"p999_ns\":{},\"max_ns\":{},\"entries_per_s\":{:.0},\"cmds_per_s\":{:.0}}}",
        h.value_at_quantile(0.5), h.value_at_quantile(0.99), h.value_at_quantile(0.999), h.max(), total as f64 / secs, (total * per_entry) as f64 / secs
    );
}

fn main() {
    let scale: u64 = std::env::var("SCALE").ok().and_then(|v| v.parse().ok()).unwrap_or(1);
    let mut txs = HashMap::new();
    let mut rxs = HashMap::new();
    for id in 1..=3u64 {
        let (tx, rx) = channel();
        txs.insert(id, tx);
        rxs.insert(id, rx);
    }
    let (ltx, lrx) = channel();
    for id in 1..=3u64 {
        let rx = rxs.remove(&id).unwrap();
        let peers = txs.clone();
        let l = if id == 1 { Some(ltx.clone()) } else { None };
        thread::spawn(move || node_loop(id, rx, peers, l));
    }
    lrx.recv_timeout(Duration::from_secs(10)).expect("no leader");
    let leader = txs[&1].clone();
    run("warmup", &leader, 1, 2_000, 16, 1);
    run("1 writer, 100 B entries", &leader, 1, 20_000 * scale, 100, 1);
    run("64 writers, 100 B entries", &leader, 64, 64_000 * scale, 100, 1);
    run("1 writer, 6.4 KB entries (64 cmds)", &leader, 1, 5_000 * scale, 6_400, 64);
    run("8 writers, 6.4 KB entries (64 cmds)", &leader, 8, 8_000 * scale, 6_400, 64);
}
