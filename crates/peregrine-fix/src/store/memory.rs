//! [`MemoryStore`]: the same contract in memory (lost with the process).

use super::{MessageStore, StoreError};

/// A store that keeps everything in memory.
#[derive(Debug, Clone, Default)]
pub struct MemoryStore {
    next_sender: u64,
    next_target: u64,
    creation_time: u64,
    messages: Vec<(u64, Vec<u8>)>,
}

impl MemoryStore {
    /// An empty store: both sequence numbers at 1.
    pub fn new(now_ns: u64) -> Self {
        MemoryStore {
            next_sender: 1,
            next_target: 1,
            creation_time: now_ns,
            messages: Vec::new(),
        }
    }
}

impl MessageStore for MemoryStore {
    fn next_sender_seq(&self) -> u64 {
        self.next_sender.max(1)
    }

    fn next_target_seq(&self) -> u64 {
        self.next_target.max(1)
    }

    fn creation_time(&self) -> u64 {
        self.creation_time
    }

    fn store_outbound(&mut self, seq: u64, message: Option<&[u8]>) -> Result<(), StoreError> {
        let next = self.next_sender_seq();
        if seq != next {
            return Err(StoreError::OutOfSequence { seq, next });
        }
        if let Some(m) = message {
            self.messages.push((seq, m.to_vec()));
        }
        self.next_sender = seq + 1;
        Ok(())
    }

    fn advance_sender_seq(&mut self, next: u64) -> Result<(), StoreError> {
        self.next_sender = self.next_sender_seq().max(next);
        Ok(())
    }

    fn set_next_target_seq(&mut self, next: u64) -> Result<(), StoreError> {
        self.next_target = next;
        Ok(())
    }

    fn outbound_range(
        &mut self,
        begin: u64,
        end: u64,
        f: &mut dyn FnMut(u64, &[u8]),
    ) -> Result<(), StoreError> {
        let first = self.messages.partition_point(|(seq, _)| *seq < begin);
        for (seq, m) in &self.messages[first..] {
            if *seq > end {
                break;
            }
            f(*seq, m);
        }
        Ok(())
    }

    fn reset(&mut self, now_ns: u64) -> Result<(), StoreError> {
        *self = MemoryStore::new(now_ns);
        Ok(())
    }

    fn flush(&mut self) -> Result<(), StoreError> {
        Ok(())
    }
}
