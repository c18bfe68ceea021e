//! The seam the replicated service implements (the exchange's core in phase 2).

/// The encode of a state machine's copied state ([`StateMachine::snapshot_copy`]).
pub type SnapshotEncode = Box<dyn FnOnce() -> Vec<u8> + Send>;

/// A deterministic state machine replicated by the cluster. The same committed
/// entries applied in the same order must give byte-identical state and the same
/// [`StateMachine::state_hash`] on every node.
///
/// The node calls these on its own thread, only for **committed** entries (a
/// majority has them durable), in index order, on every node, the leader included:
/// the leader does not execute a proposal before it is committed, so nothing has to
/// be rolled back when a leader loses an uncommitted suffix, and any result the
/// service sends from `apply` is safe to send (acknowledged = committed).
pub trait StateMachine {
    /// Applies the data of the committed entry `index` (exactly what was proposed).
    fn apply(&mut self, index: u64, data: &[u8]);

    /// The entry `index` is committed (a majority holds it durably) and will be
    /// applied: called in index order as soon as the node learns it, possibly well
    /// before [`StateMachine::apply`], which the node paces. For what must not wait
    /// for the apply (the exchange's leader releases its acknowledgements here).
    /// Default: nothing.
    fn committed(&mut self, _index: u64, _data: &[u8]) {}

    /// Encodes the state as of the last applied entry.
    fn snapshot(&mut self) -> Vec<u8>;

    /// The state as of the last applied entry, to be encoded later on another thread
    /// (the node's snapshot thread): a copy taken now, and the encode of that copy,
    /// which must give exactly the bytes [`StateMachine::snapshot`] gives now. The
    /// node calls this on its own thread, where a snapshot keeps it from the network
    /// for as long as this takes, so a state machine whose encode is slow copies its
    /// state cheaply here and encodes in the returned closure. Default: encodes now.
    fn snapshot_copy(&mut self) -> SnapshotEncode {
        let state = self.snapshot();
        Box::new(move || state)
    }

    /// Replaces the state by a snapshot's; an empty `state` means the initial state.
    fn restore(&mut self, state: &[u8]) -> Result<(), String>;

    /// A hash of the state as of the last applied entry.
    fn state_hash(&mut self) -> [u8; 32];
}
