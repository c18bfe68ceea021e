//! The serving leader's [`CommandLog`]: each group-commit batch becomes one Raft
//! entry. `commit` hands the batch to the node thread (a channel and an eventfd
//! wake-up) and returns at once; [`CommandLog::durable_through`] is the release
//! watermark the state machine advances when the batch is committed (a majority has
//! it durable) and applied. So the loop's existing rule, "a batch's reports leave
//! only once durable", becomes "only once replicated" with no change to the loop.

use std::sync::atomic::Ordering;
use std::sync::mpsc::Sender;
use std::sync::Arc;

use peregrine_book::Command;
use peregrine_cluster::transport::Waker;
use peregrine_exchange_core::balances::AdminCommand;
use peregrine_exchange_core::codec::command::{MassCancelRequest, Record};
use peregrine_exchange_core::CommandLog;

use super::batch::{BatchWriter, Stamp};
use super::Shared;

/// See the module documentation.
#[derive(Debug)]
pub(crate) struct ReplicatedLog {
    writer: BatchWriter,
    stamp: Stamp,
    to_node: Sender<Vec<u8>>,
    waker: Waker,
    shared: Arc<Shared>,
    /// The negative control of the cluster tests (`PEREGRINE_SABOTAGE`, in a build
    /// with the `sabotage` feature only): results leave before their batch is
    /// replicated.
    #[cfg(feature = "sabotage")]
    sabotage: bool,
}

impl ReplicatedLog {
    pub(crate) fn new(
        stamp: Stamp,
        to_node: Sender<Vec<u8>>,
        waker: Waker,
        shared: Arc<Shared>,
    ) -> Self {
        #[cfg(feature = "sabotage")]
        let sabotage = crate::durability::sabotage::requested();
        #[cfg(feature = "sabotage")]
        if sabotage {
            log::warn!(
                "SABOTAGE: results leave before their batch is replicated; for the cluster \
                 tests' negative control only"
            );
        }
        ReplicatedLog {
            writer: BatchWriter::default(),
            stamp,
            to_node,
            waker,
            shared,
            #[cfg(feature = "sabotage")]
            sabotage,
        }
    }

    fn push(&mut self, seq: u64, rec: &Record) {
        if self.writer.len() == 0 {
            self.writer.start(self.stamp);
        }
        self.writer.push(seq, rec);
    }
}

impl CommandLog for ReplicatedLog {
    #[inline]
    fn append(&mut self, seq: u64, cmd: &Command) -> std::io::Result<()> {
        self.push(seq, &Record::Command(*cmd));
        Ok(())
    }

    fn append_admin(&mut self, seq: u64, cmd: &AdminCommand) -> std::io::Result<()> {
        self.push(seq, &Record::Admin(*cmd));
        Ok(())
    }

    fn append_mass_cancel(&mut self, seq: u64, m: &MassCancelRequest) -> std::io::Result<()> {
        self.push(seq, &Record::MassCancel(*m));
        Ok(())
    }

    fn append_record(&mut self, seq: u64, rec: &Record) -> std::io::Result<()> {
        self.push(seq, rec);
        Ok(())
    }

    fn commit(&mut self) -> std::io::Result<()> {
        if let Some(why) = self.shared.failure() {
            return Err(std::io::Error::other(format!("cluster: {why}")));
        }
        if self.writer.len() == 0 {
            return Ok(());
        }
        let entry = self.writer.finish();
        if self.to_node.send(entry).is_err() {
            return Err(std::io::Error::other("cluster: the node thread stopped"));
        }
        self.waker.wake();
        Ok(())
    }

    #[inline]
    fn durable_through(&self) -> u64 {
        #[cfg(feature = "sabotage")]
        if self.sabotage {
            return u64::MAX;
        }
        // Acquire: pairs with the state machine's Release store after applying.
        self.shared.released.load(Ordering::Acquire)
    }
}
