//! The invariants checked while the run goes (the books never crossed), and once
//! the faults stopped: liveness within the settle window, then the oracle's checks
//! of the complete history against the reference book.

use std::collections::BTreeMap;

use peregrine_book::Book;
use peregrine_journal::FsyncPolicy;
use peregrine_types::Side;

use crate::client::Role;
use crate::run::Sim;
use crate::venue;
use crate::world::Ev;

const MS: u64 = 1_000_000;

/// The books of node `n`: never crossed.
pub(crate) fn books(sim: &mut Sim, n: usize) {
    let Some(v) = sim.nodes[n].venue_ref() else {
        return;
    };
    let mut crossed = None;
    for b in v.engine().books() {
        if let (Some(bid), Some(ask)) = (b.best(Side::Buy), b.best(Side::Sell)) {
            if bid.0 >= ask.0 {
                crossed = Some((b.spec().id, bid.0, ask.0));
            }
        }
    }
    if let Some((id, bid, ask)) = crossed {
        sim.fail(
            "the book never crossed",
            format!("node {n}, instrument {id}: best bid {bid} >= best ask {ask}"),
        );
    }
}

/// The conservation invariant (balances on): per asset, what every account holds,
/// available plus reserved, the fee account included, equals what was deposited (the
/// run's initial funding; nothing is deposited or withdrawn later), and the ledger's
/// own bookkeeping (reservations equal what open orders hold, nothing negative)
/// holds. Checked against the simulator's own sum, not the ledger's, after every step
/// of the serving venue.
pub(crate) fn conservation(sim: &mut Sim, n: usize) {
    if !sim.cfg.ledger {
        return;
    }
    let Some(v) = sim.nodes[n].venue_ref() else {
        return;
    };
    if v.engine_seq() == 0 {
        return; // not funded yet
    }
    let Some(ledger) = v.ledger() else {
        sim.fail(
            CONSERVATION,
            format!("node {n}: balances are on but no ledger"),
        );
        return;
    };
    let mut held: BTreeMap<u32, i128> = BTreeMap::new();
    for (_, asset, b) in ledger.export().balances {
        *held.entry(asset.0).or_default() += b.total();
    }
    let want = &sim.supply;
    let broken = want
        .iter()
        .find(|(asset, total)| held.get(asset).copied().unwrap_or(0) != **total)
        .map(|(asset, total)| {
            format!(
                "node {n} after engine seq {}: asset {asset} held in all {} != deposited {total}",
                v.engine_seq(),
                held.get(asset).copied().unwrap_or(0)
            )
        })
        .or_else(|| {
            ledger
                .check()
                .err()
                .map(|e| format!("node {n} after engine seq {}: {e}", v.engine_seq()))
        });
    if let Some(detail) = broken {
        sim.fail(CONSERVATION, detail);
    }
}

/// See [`conservation`].
pub(crate) const CONSERVATION: &str =
    "balance conservation: every asset's total over all accounts and the fee account equals the deposits";

/// After node `n` crashed: the journal's high-water mark, as it survived, covers
/// every command a client saw acknowledged (else damage to those records would be
/// taken for a torn, unacknowledged tail and truncated silently). A journal without
/// fsync promises nothing across a power loss.
pub(crate) fn tail_guard(sim: &mut Sim, n: usize) {
    if sim.nodes.len() > 1 || sim.cfg.fsync == FsyncPolicy::None {
        return;
    }
    let path = peregrine_journal::hwm::path(&venue::journal_dir(n));
    let mark = sim.nodes[n]
        .disk
        .peek(&path)
        .and_then(|b| peregrine_journal::hwm::decode(&b).ok())
        .map_or(0, |m| m.committed_seq);
    let acked = sim.oracle.acked;
    if mark < acked {
        sim.fail(
            "the journal's tail guard covers every acknowledged command",
            format!(
                "node {n} crashed with its high-water mark at seq {mark}, but clients had                  seen reports of commands up to seq {acked}: damage to records {}..={acked}                  would pass for a torn tail",
                mark + 1
            ),
        );
    }
}

impl Sim {
    pub(crate) fn check(&mut self) {
        if self.settling {
            if self.nodes.len() > 1 {
                self.step_rejoin();
            }
            self.settle();
        }
        if !self.done {
            self.queue.push(self.now + 20 * MS, Ev::Check);
        }
    }

    /// What still keeps the run from having settled (empty: settled).
    fn unsettled(&self) -> Vec<String> {
        let mut why = Vec::new();
        let Some(n) = self.serving() else {
            why.push("no node serves".to_string());
            return why;
        };
        let v = self.nodes[n].venue_ref().expect("serving");
        if v.sync_wanted() || self.nodes[n].sync_at.is_some() {
            why.push("a sync is pending".into());
        }
        if let Some(r) = self.cluster.rejoin {
            why.push(format!("the disk-loss procedure is under way ({r:?})"));
        }
        if self.nodes.len() > 1 {
            if let Some(crate::run::Proc::Cluster(c)) = self.nodes[n].proc.as_ref() {
                let commit = c.status().commit;
                for (m, node) in self.nodes.iter().enumerate() {
                    match node.proc.as_ref() {
                        Some(crate::run::Proc::Cluster(o)) if o.applied() >= commit => {}
                        Some(_) => why.push(format!("node {m} has not applied index {commit}")),
                        None => why.push(format!("node {m} is down")),
                    }
                }
            }
        }
        self.md_unsettled(&mut why);
        let engine = v.engine_seq();
        for c in &self.clients {
            if c.role == Role::Probe {
                continue;
            }
            let live = c.link.as_ref().is_some_and(|l| l.live);
            if !live {
                why.push(format!(
                    "client {} is not logged in ({:?})",
                    c.id,
                    c.phase()
                ));
                continue;
            }
            match c.role {
                Role::Trader => {
                    if !c.outstanding.is_empty() {
                        let sent: Vec<String> = c
                            .outstanding
                            .iter()
                            .map(|(cid, o)| format!("{cid} at {} ms on {}", o.at / MS, o.conn))
                            .collect();
                        why.push(format!(
                            "client {}: {} request(s) unanswered ({})",
                            c.id,
                            c.outstanding.len(),
                            sent.join(", ")
                        ));
                    }
                    let next = v.next_report_seq(c.account);
                    if c.resume != next {
                        why.push(format!(
                            "client {} is at report {} of {}",
                            c.id, c.resume, next
                        ));
                    }
                }
                Role::DropCopy => {
                    if engine > 0 && c.resume < engine {
                        why.push(format!(
                            "the drop copy is at engine seq {} of {engine} ({:?})",
                            c.resume,
                            c.phase()
                        ));
                    }
                }
                Role::Probe => {}
            }
        }
        why
    }

    /// Each node's state, for a liveness report: up or down, its Raft role, term,
    /// commit, applied and last index, and the serving venue's sequence numbers.
    fn node_states(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (n, node) in self.nodes.iter().enumerate() {
            let mut s = format!("node {n}: ");
            match node.proc.as_ref() {
                None => s.push_str("down"),
                Some(crate::run::Proc::Single(_)) => s.push_str("up"),
                Some(crate::run::Proc::Cluster(c)) => {
                    let st = c.status();
                    s.push_str(&format!(
                        "{:?} of term {}, commit {}, applied {}, last {}",
                        st.role, st.term, st.commit, st.applied, st.last_index
                    ));
                }
            }
            if let Some(v) = node.venue_ref() {
                s.push_str(&format!(
                    ", serving: engine seq {}, durable {}, sync wanted {}",
                    v.engine_seq(),
                    v.durable_seq(),
                    v.sync_wanted()
                ));
            }
            out.push(s);
        }
        out
    }

    /// The node that serves order entry now.
    pub(crate) fn serving(&self) -> Option<usize> {
        (0..self.nodes.len()).find(|&n| self.nodes[n].venue_ref().is_some())
    }

    fn settle(&mut self) {
        let why = self.unsettled();
        if why.is_empty() {
            self.final_checks();
            self.done = true;
            return;
        }
        let deadline = (self.cfg.duration_ms + self.cfg.settle_ms) * MS;
        if self.now >= deadline {
            let nodes = self.node_states();
            self.fail(
                "liveness: everything answered once faults stop",
                format!(
                    "{} ms after the faults stopped: {}\n  nodes: {}",
                    self.cfg.settle_ms,
                    why.join("; "),
                    nodes.join("; ")
                ),
            );
        }
    }

    fn final_checks(&mut self) {
        if let Err(e) = self.oracle.check_complete() {
            self.fail("every report stream complete", e);
            return;
        }
        let Some(n) = self.serving() else {
            return;
        };
        let v = self.nodes[n].venue_ref().expect("serving");
        let live: BTreeMap<_, _> = v
            .engine()
            .books()
            .map(|b| (b.spec().id, b.state_hash().0))
            .collect();
        let engine = v.engine_seq();
        match self
            .oracle
            .check_reference(&venue::instruments(), venue::CAPACITY, engine, &live)
        {
            Ok(n) => self.note(format!("settled: {n} command(s) match the reference book")),
            Err(e) => self.fail("the live book equals the reference book", e),
        }
        self.md_final();
    }
}
