//! Market data: the multicast feed messages and their packet framing
//! ([`packet`]), gap detection ([`sequencer`]), and the TCP recovery channel
//! ([`recovery`]).
//!
//! The feed is modelled on MoldUDP64: each UDP datagram is a packet header (session,
//! sequence number of the first message, message count) followed by whole messages.
//! Market-data messages use the same 8-byte header as order entry, whose first field is
//! the message length, so that field is the per-message length prefix. Sequence numbers
//! belong to the feed session and start at 1; a subscriber that sees a gap asks the
//! recovery server for a replay, or for a per-instrument snapshot.

pub mod packet;
pub mod recovery;
pub mod sequencer;

use peregrine_types::{InstrumentId, Price, Qty, Side, Timestamp, TradingPhase};

use crate::field::Pad;

use crate::message::{wire_family, wire_message};

wire_message! {
    /// Feed. A trade printed on the book.
    Trade = 0x40;
    /// Trade (match) id, the same as in the two private `Fill`s.
    trade_id: u64,
    /// Trade price in price units.
    price: Price,
    /// Traded quantity in quantity units.
    qty: Qty,
    /// Engine time of the trade, nanoseconds since the Unix epoch.
    engine_time: Timestamp,
    /// Instrument.
    instrument: InstrumentId,
    /// Side of the incoming (aggressing) order: 0 Buy, 1 Sell.
    aggressor_side: Side,
}

wire_message! {
    /// Feed. A price level changed: its new aggregate quantity and order count.
    /// Quantity 0 (with order count 0) means the level is gone.
    L2Update = 0x41;
    /// Level price in price units.
    price: Price,
    /// New total quantity resting at the level; 0 removes the level.
    qty: Qty,
    /// Engine time of the change, nanoseconds since the Unix epoch.
    engine_time: Timestamp,
    /// Instrument.
    instrument: InstrumentId,
    /// Number of orders resting at the level.
    order_count: u32,
    /// Book side: 0 Buy (bid), 1 Sell (ask).
    side: Side,
}

wire_message! {
    /// Feed. A commitment to one window of matching (a batch-mode tick, or a
    /// continuous-mode interval): the Blake3 state hash and the Merkle root of the
    /// window's trades, computed off the matching thread and published after the
    /// window's own `Trade`s. Exact bytes hashed: `peregrine-commit` crate docs and
    /// docs/commitments.md.
    Commitment = 0x42;
    /// Window index: the batch tick number, or `timestamp / interval` in continuous mode.
    tick_seq: u64,
    /// The window's timestamp (tick time, or window start), nanoseconds since the Unix
    /// epoch.
    timestamp: Timestamp,
    /// Commands (journal records) in the window.
    tx_count: u64,
    /// Trades in the window (the Merkle tree's leaves).
    trade_count: u64,
    /// Blake3 state hash of the window.
    state_hash: [u8; 32],
    /// Merkle root of the window's trade leaves (zeros for no trades).
    merkle_root: [u8; 32],
}

wire_message! {
    /// Feed. An instrument's trading phase changed: continuous, halted, or a call
    /// auction (orders collect without matching; `AuctionIndicative` follows while
    /// the call lasts, and the uncross's `Trade`s end it). Protocol version 3.
    MarketStatus = 0x43, version 3;
    /// When the call auction uncrosses by itself (0: on command or by the schedule).
    ends_at: Timestamp,
    /// Engine time of the change, nanoseconds since the Unix epoch.
    engine_time: Timestamp,
    /// Instrument.
    instrument: InstrumentId,
    /// 0 continuous, 1 halted, 2 opening call, 3 closing call, 4 volatility call,
    /// 5 manual call.
    phase: TradingPhase,
    /// Must be zero.
    reserved: Pad<3>,
}

wire_message! {
    /// Feed. During a call auction, the uncross the book would make now, whenever it
    /// changes: the price maximising the traded quantity (then the smallest surplus,
    /// then the closest to the last price), that quantity, and what would stay
    /// unmatched. Protocol version 3.
    AuctionIndicative = 0x44, version 3;
    /// Indicative price (0: the book does not cross).
    price: Price,
    /// Quantity that would trade.
    volume: Qty,
    /// Quantity left unmatched at that price on the larger side.
    surplus: Qty,
    /// Engine time, nanoseconds since the Unix epoch.
    engine_time: Timestamp,
    /// Instrument.
    instrument: InstrumentId,
    /// The side with the surplus: 0 Buy, 1 Sell, 2 none.
    surplus_side: Option<Side>,
    /// Must be zero.
    reserved: Pad<3>,
}

wire_family! {
    /// A message carried in a market-data packet.
    MdMessage { Trade, L2Update, Commitment, MarketStatus, AuctionIndicative }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::WireMessage;

    #[test]
    fn md_messages_round_trip() {
        for i in 0..MdMessage::MESSAGES.len() {
            let m = MdMessage::sample(i, &[1, 2, 3, 4, 5, 6]);
            let mut buf = [0u8; 128];
            let n = m.encode(&mut buf).unwrap();
            assert_eq!(MdMessage::decode(&buf), Ok((m, n)));
        }
        assert_eq!(Trade::SIZE, 45);
        assert_eq!(L2Update::SIZE, 41);
        assert_eq!(Commitment::SIZE, 104);
        assert_eq!(MarketStatus::SIZE, 32);
        assert_eq!(AuctionIndicative::SIZE, 48);
    }
}
