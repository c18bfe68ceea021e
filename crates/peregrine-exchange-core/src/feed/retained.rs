//! The feed's replay ring: the most recent messages by sequence number, from which
//! the recovery service replays a missed range.

use peregrine_wire::md::MdMessage;

/// The most recent feed messages, by sequence number: a ring of fixed capacity
/// (a power of two, allocated once), so slot `seq & mask` holds message `seq` while it
/// is among the last `capacity` sent.
#[derive(Debug)]
pub struct Retained {
    ring: Box<[Option<MdMessage>]>,
    /// One past the newest retained sequence number (the publisher's `next_seq`).
    end: u64,
    /// Messages stored so far in this session (saturates at the capacity).
    len: u64,
}

impl Retained {
    /// A ring of `capacity` messages (0: keep none). `capacity` must be 0 or a power
    /// of two (the config validates it); anything else keeps none.
    pub fn new(capacity: usize) -> Self {
        let capacity = if capacity.is_power_of_two() {
            capacity
        } else {
            0
        };
        Retained {
            ring: vec![None; capacity].into_boxed_slice(),
            end: 1,
            len: 0,
        }
    }

    #[inline]
    pub(crate) fn store(&mut self, seq: u64, msg: MdMessage) {
        if self.ring.is_empty() {
            return;
        }
        let mask = self.ring.len() as u64 - 1;
        self.ring[(seq & mask) as usize] = Some(msg);
        self.end = seq + 1;
        self.len = (self.len + 1).min(self.ring.len() as u64);
    }

    /// The retained part of `[first, first + count)`: `(start, n)` where `start` is
    /// `first` and `n <= count` messages are available from it, or `n == 0` when
    /// `first` itself is too old, not yet sent, or nothing is kept. A range that runs
    /// past the newest message is cut there.
    pub fn range(&self, first: u64, count: u64) -> (u64, u64) {
        let oldest = self.end - self.len;
        if first < oldest || first >= self.end || first == 0 {
            return (first, 0);
        }
        (first, count.min(self.end - first))
    }

    /// Message `seq`, if retained.
    pub fn get(&self, seq: u64) -> Option<MdMessage> {
        if self.range(seq, 1).1 == 1 {
            let mask = self.ring.len() as u64 - 1;
            self.ring[(seq & mask) as usize]
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use peregrine_types::{InstrumentId, Price, Qty, Side, Timestamp};
    use peregrine_wire::md::L2Update;

    fn update(n: i64) -> MdMessage {
        MdMessage::L2Update(L2Update {
            price: Price::from_raw(n),
            qty: Qty::from_raw(n),
            engine_time: Timestamp(n as u64),
            instrument: InstrumentId(1),
            order_count: 1,
            side: Side::Buy,
        })
    }

    #[test]
    fn retained_keeps_the_last_capacity_messages() {
        let mut r = Retained::new(4);
        assert_eq!(r.range(1, 1), (1, 0), "nothing sent yet");
        for seq in 1..=6 {
            r.store(seq, update(seq as i64));
        }
        assert_eq!(r.range(2, 1).1, 0, "evicted");
        assert_eq!(r.range(3, 10), (3, 4), "cut at the newest");
        assert_eq!(r.range(7, 1).1, 0, "not sent yet");
        assert_eq!(r.get(6), Some(update(6)));
        assert_eq!(r.get(3), Some(update(3)));
        assert_eq!(r.get(2), None);
    }

    #[test]
    fn zero_capacity_keeps_nothing() {
        let mut r = Retained::new(0);
        r.store(1, update(1));
        assert_eq!(r.range(1, 1).1, 0);
        assert_eq!(r.get(1), None);
    }
}
