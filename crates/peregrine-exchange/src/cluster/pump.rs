//! The node thread's part of serving ([`peregrine_cluster::Pump`], called once per
//! loop iteration before the node's `Ready` is handled):
//!
//! * **Hand-over.** A node that became leader serves only once it has applied every
//!   entry up to one of its own term (raft-rs's empty entry at the start of each
//!   term): then its state holds everything any earlier leader acknowledged. The
//!   pump takes the replica out of the state machine and sends it to the main
//!   thread, which starts the exchange's loop on it.
//! * **Proposals.** Batches from the serving loop are proposed here, in order, in
//!   the same iteration that writes and sends them; consecutive batches waiting
//!   together are merged into one entry (up to 64 KiB).
//! * **Deposition.** Once the node is no longer leader of the term it serves (or a
//!   proposal is refused), the serving loop is told to stop; its unreplicated
//!   batches are never released, and the process rejoins as a follower from its log.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, SyncSender};
use std::sync::Arc;
use std::time::Instant;

use peregrine_cluster::{Node, Pump};
use peregrine_exchange_core::{Core, NoLog};

use super::batch::{self, Stamp};

/// Largest entry the pump makes by merging the serving loop's batches (a batch larger
/// than this is proposed alone). At ~40 bytes a command, ~1,600 commands: a replica
/// applies one in a few milliseconds, so an entry never holds a node's thread long.
const ENTRY_BYTES: usize = 64 << 10;
use super::sm::ExchangeSm;
use super::Shared;

/// The replica handed to the main thread to serve as leader `stamp`.
pub(crate) struct Handover {
    pub(crate) core: Core<NoLog>,
    pub(crate) stamp: Stamp,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Following,
    Serving(Stamp),
    Deposed,
}

/// See the module documentation.
pub(crate) struct LeaderPump {
    proposals: Receiver<Vec<u8>>,
    handover: SyncSender<Handover>,
    shared: Arc<Shared>,
    /// The process's stop request, passed on to the serving loop.
    stop: Arc<AtomicBool>,
    state: State,
}

impl LeaderPump {
    pub(crate) fn new(
        proposals: Receiver<Vec<u8>>,
        handover: SyncSender<Handover>,
        shared: Arc<Shared>,
        stop: Arc<AtomicBool>,
    ) -> Self {
        LeaderPump {
            proposals,
            handover,
            shared,
            stop,
            state: State::Following,
        }
    }

    /// Proposes one entry; a refusal deposes this leadership.
    fn propose(&mut self, node: &mut Node<ExchangeSm>, entry: &[u8]) -> bool {
        match node.propose(entry) {
            Ok(_) => true,
            Err(e) => {
                self.depose(&format!("proposal refused: {e}"));
                false
            }
        }
    }

    fn depose(&mut self, why: &str) {
        log::warn!("cluster: stop serving: {why}");
        self.shared.depose();
        self.state = State::Deposed;
    }
}

/// Whether `node` leads with every entry up to one of its own term applied.
fn caught_up(node: &Node<ExchangeSm>) -> bool {
    node.is_leader()
        && node.applied() == node.commit()
        && node.log_term(node.commit()) == Some(node.term())
}

impl Pump<ExchangeSm> for LeaderPump {
    fn pump(&mut self, node: &mut Node<ExchangeSm>, _now: Instant) -> Option<Instant> {
        self.shared.observe(node);
        self.shared.answer_hash(node);
        // Relaxed: a stop request needs no ordering with other memory.
        if self.stop.load(Ordering::Relaxed) {
            self.shared.depose();
        }
        match self.state {
            State::Following => {
                if self.shared.failed() || !caught_up(node) {
                    return None;
                }
                let stamp = Stamp {
                    node: node.id(),
                    term: node.term(),
                };
                match node.sm_mut().take_for_serving(stamp) {
                    Ok(core) => {
                        log::info!(
                            "cluster: leader of term {} with the log applied to index {} (engine seq {}): serving",
                            stamp.term,
                            node.applied(),
                            core.engine_seq()
                        );
                        if self.handover.send(Handover { core, stamp }).is_err() {
                            self.depose("the main thread is gone");
                        } else {
                            self.state = State::Serving(stamp);
                            // Relaxed: a display value.
                            self.shared
                                .serving
                                .store(true, std::sync::atomic::Ordering::Relaxed);
                        }
                    }
                    Err(e) => self.shared.fail(format!("handing the state over: {e}")),
                }
            }
            State::Serving(stamp) => {
                if !node.is_leader() || node.term() != stamp.term {
                    self.depose(&format!(
                        "no longer leader of term {} (now term {}, leader {:?})",
                        stamp.term,
                        node.term(),
                        node.leader()
                    ));
                    return None;
                }
                // Every batch the serving loop finished since the last look, merged
                // into entries of at most ENTRY_BYTES: under load one entry carries
                // many of its batches (one append, one sync for all of them).
                let mut open: Option<Vec<u8>> = None;
                while let Ok(next) = self.proposals.try_recv() {
                    if open
                        .as_mut()
                        .is_some_and(|acc| batch::append(acc, &next, ENTRY_BYTES))
                    {
                        continue;
                    }
                    if let Some(full) = open.replace(next) {
                        if !self.propose(node, &full) {
                            return None;
                        }
                    }
                }
                if let Some(last) = open {
                    self.propose(node, &last);
                }
            }
            State::Deposed => while self.proposals.try_recv().is_ok() {},
        }
        None
    }
}
