//! Nasdaq TotalView-ITCH 5.0: the binary message format, decoded and encoded.
//!
//! A file (as Nasdaq distributes them, e.g. `01302019.NASDAQ_ITCH50`) is a sequence of
//! messages, each preceded by its length as a 2-byte big-endian integer. Every message
//! starts with a type byte, the stock locate (2 bytes), a tracking number (2) and a
//! timestamp (6 bytes, nanoseconds since midnight); integers are big-endian, prices
//! are 4-byte integers with four implied decimals, symbols are 8 ASCII bytes padded
//! with spaces (specification: "Nasdaq TotalView-ITCH 5.0", sections 1.3 and 4).
//!
//! [`decode`] checks that the length matches the type exactly and returns a typed
//! [`ItchError`] for anything else: it never panics, whatever the bytes (fuzz target
//! `itch_decode`). Message types that do not touch the book or the replay (NOII,
//! retail interest, MWCB, IPO, LULD, DLCR, market participant position) are decoded
//! as [`Msg::Other`] with their type and header only. [`encode`] writes the message
//! types the synthetic generator and the tests need.

use peregrine_types::Side;

/// The fields every message starts with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Header {
    /// Stock locate: the instrument's index for the day (0 for market-wide messages).
    pub locate: u16,
    /// Nasdaq internal tracking number.
    pub tracking: u16,
    /// Nanoseconds since midnight.
    pub ts: u64,
}

/// One decoded message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Msg {
    /// `S`: start/end of messages, system hours, market hours.
    SystemEvent {
        /// Header.
        h: Header,
        /// `O` start of messages, `S` start of system hours, `Q` start of market
        /// hours, `M` end of market hours, `E` end of system hours, `C` end of messages.
        code: u8,
    },
    /// `R`: a symbol and its locate for the day.
    StockDirectory {
        /// Header.
        h: Header,
        /// Symbol, space padded.
        stock: [u8; 8],
        /// Round lot size.
        round_lot: u32,
    },
    /// `H`: trading state of a stock.
    TradingAction {
        /// Header.
        h: Header,
        /// Symbol.
        stock: [u8; 8],
        /// `H` halted, `P` paused, `Q` quotation only, `T` trading.
        state: u8,
    },
    /// `A` (and `F`, with attribution): a displayed order added to the book.
    AddOrder {
        /// Header.
        h: Header,
        /// Order reference number, unique for the day.
        order_ref: u64,
        /// Side.
        side: Side,
        /// Shares.
        shares: u32,
        /// Symbol.
        stock: [u8; 8],
        /// Limit price, four decimals.
        price: u32,
        /// `F` only: the market participant.
        mpid: Option<[u8; 4]>,
    },
    /// `E`: part or all of a resting order executed at its own price.
    Executed {
        /// Header.
        h: Header,
        /// The resting order.
        order_ref: u64,
        /// Shares executed.
        shares: u32,
        /// Match number.
        match_number: u64,
    },
    /// `C`: a resting order executed at a price other than its own (crosses).
    ExecutedWithPrice {
        /// Header.
        h: Header,
        /// The resting order.
        order_ref: u64,
        /// Shares executed.
        shares: u32,
        /// Match number.
        match_number: u64,
        /// `Y` printable (counts as volume), `N` not.
        printable: u8,
        /// Execution price, four decimals.
        price: u32,
    },
    /// `X`: part of a resting order cancelled.
    Cancel {
        /// Header.
        h: Header,
        /// The order.
        order_ref: u64,
        /// Shares removed.
        shares: u32,
    },
    /// `D`: an order removed entirely.
    Delete {
        /// Header.
        h: Header,
        /// The order.
        order_ref: u64,
    },
    /// `U`: an order cancel-replaced: the old reference is gone, the new one rests
    /// with the new price and shares (at the back of its level).
    Replace {
        /// Header.
        h: Header,
        /// The order replaced.
        old_ref: u64,
        /// Its new reference.
        new_ref: u64,
        /// New shares.
        shares: u32,
        /// New price.
        price: u32,
    },
    /// `P`: an execution against a non-displayed order (no visible book change).
    Trade {
        /// Header.
        h: Header,
        /// The non-displayed order's reference (Nasdaq sends 0 now).
        order_ref: u64,
        /// Side of the non-displayed order.
        side: Side,
        /// Shares.
        shares: u32,
        /// Symbol.
        stock: [u8; 8],
        /// Price.
        price: u32,
        /// Match number.
        match_number: u64,
    },
    /// `Q`: a cross (opening, closing, halt) printed as one trade.
    CrossTrade {
        /// Header.
        h: Header,
        /// Shares.
        shares: u64,
        /// Symbol.
        stock: [u8; 8],
        /// Cross price.
        price: u32,
        /// Match number.
        match_number: u64,
        /// `O` open, `C` close, `H` halt/IPO, `I` intraday.
        cross_type: u8,
    },
    /// `B`: a trade broken by Nasdaq.
    BrokenTrade {
        /// Header.
        h: Header,
        /// Match number of the broken trade.
        match_number: u64,
    },
    /// Any other valid message type (decoded length-checked, fields not kept).
    Other {
        /// Header.
        h: Header,
        /// The type byte.
        kind: u8,
    },
}

impl Msg {
    /// The header.
    pub fn header(&self) -> Header {
        match *self {
            Msg::SystemEvent { h, .. }
            | Msg::StockDirectory { h, .. }
            | Msg::TradingAction { h, .. }
            | Msg::AddOrder { h, .. }
            | Msg::Executed { h, .. }
            | Msg::ExecutedWithPrice { h, .. }
            | Msg::Cancel { h, .. }
            | Msg::Delete { h, .. }
            | Msg::Replace { h, .. }
            | Msg::Trade { h, .. }
            | Msg::CrossTrade { h, .. }
            | Msg::BrokenTrade { h, .. }
            | Msg::Other { h, .. } => h,
        }
    }
}

/// Why bytes are not an ITCH 5.0 message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ItchError {
    /// Fewer bytes than the length prefix or the message needs.
    #[error("truncated message: {needed} bytes needed, {have} available")]
    Truncated {
        /// Bytes the message needs.
        needed: usize,
        /// Bytes there are.
        have: usize,
    },
    /// An unknown type byte.
    #[error("unknown message type {0:#04x}")]
    UnknownType(u8),
    /// The length prefix does not match the type's fixed length.
    #[error("message type {kind:?} has length {len}, expected {expected}")]
    BadLength {
        /// Type byte.
        kind: char,
        /// Length given.
        len: usize,
        /// Length of that type.
        expected: usize,
    },
    /// A side byte other than `B` or `S`.
    #[error("bad side byte {0:#04x}")]
    BadSide(u8),
}

/// The fixed length of each message type (without the 2-byte prefix).
pub fn length_of(kind: u8) -> Option<usize> {
    Some(match kind {
        b'S' => 12,
        b'R' => 39,
        b'H' => 25,
        b'Y' => 20,
        b'L' => 26,
        b'V' => 35,
        b'W' => 12,
        b'K' => 28,
        b'J' => 35,
        b'h' => 21,
        b'A' => 36,
        b'F' => 40,
        b'E' => 31,
        b'C' => 36,
        b'X' => 23,
        b'D' => 19,
        b'U' => 35,
        b'P' => 44,
        b'Q' => 40,
        b'B' => 19,
        b'I' => 50,
        b'N' => 20,
        b'O' => 48,
        _ => return None,
    })
}

/// Big-endian field reads from a message whose length was checked.
struct Fields<'a>(&'a [u8]);

impl Fields<'_> {
    fn u16(&self, at: usize) -> u16 {
        u16::from_be_bytes([self.0[at], self.0[at + 1]])
    }
    fn u32(&self, at: usize) -> u32 {
        u32::from_be_bytes([self.0[at], self.0[at + 1], self.0[at + 2], self.0[at + 3]])
    }
    fn u48(&self, at: usize) -> u64 {
        let b = &self.0[at..at + 6];
        u64::from_be_bytes([0, 0, b[0], b[1], b[2], b[3], b[4], b[5]])
    }
    fn u64(&self, at: usize) -> u64 {
        let mut b = [0u8; 8];
        b.copy_from_slice(&self.0[at..at + 8]);
        u64::from_be_bytes(b)
    }
    fn stock(&self, at: usize) -> [u8; 8] {
        let mut b = [0u8; 8];
        b.copy_from_slice(&self.0[at..at + 8]);
        b
    }
    fn side(&self, at: usize) -> Result<Side, ItchError> {
        match self.0[at] {
            b'B' => Ok(Side::Buy),
            b'S' => Ok(Side::Sell),
            other => Err(ItchError::BadSide(other)),
        }
    }
    fn header(&self) -> Header {
        Header {
            locate: self.u16(1),
            tracking: self.u16(3),
            ts: self.u48(5),
        }
    }
}

/// Decodes one length-prefixed message at the start of `buf`; returns it and the
/// bytes consumed (prefix included).
#[inline]
pub fn decode(buf: &[u8]) -> Result<(Msg, usize), ItchError> {
    if buf.len() < 2 {
        return Err(ItchError::Truncated {
            needed: 2,
            have: buf.len(),
        });
    }
    let len = u16::from_be_bytes([buf[0], buf[1]]) as usize;
    let body = &buf[2..];
    if body.len() < len.max(1) {
        return Err(ItchError::Truncated {
            needed: 2 + len.max(1),
            have: buf.len(),
        });
    }
    let msg = decode_body(&body[..len])?;
    Ok((msg, 2 + len))
}

/// Decodes one message without its length prefix (`body` is exactly the message).
#[inline]
pub fn decode_body(body: &[u8]) -> Result<Msg, ItchError> {
    let Some(&kind) = body.first() else {
        return Err(ItchError::Truncated { needed: 1, have: 0 });
    };
    let expected = length_of(kind).ok_or(ItchError::UnknownType(kind))?;
    if body.len() != expected {
        return Err(ItchError::BadLength {
            kind: kind as char,
            len: body.len(),
            expected,
        });
    }
    let f = Fields(body);
    let h = f.header();
    Ok(match kind {
        b'S' => Msg::SystemEvent { h, code: body[11] },
        b'R' => Msg::StockDirectory {
            h,
            stock: f.stock(11),
            round_lot: f.u32(21),
        },
        b'H' => Msg::TradingAction {
            h,
            stock: f.stock(11),
            state: body[19],
        },
        b'A' | b'F' => Msg::AddOrder {
            h,
            order_ref: f.u64(11),
            side: f.side(19)?,
            shares: f.u32(20),
            stock: f.stock(24),
            price: f.u32(32),
            mpid: (kind == b'F').then(|| [body[36], body[37], body[38], body[39]]),
        },
        b'E' => Msg::Executed {
            h,
            order_ref: f.u64(11),
            shares: f.u32(19),
            match_number: f.u64(23),
        },
        b'C' => Msg::ExecutedWithPrice {
            h,
            order_ref: f.u64(11),
            shares: f.u32(19),
            match_number: f.u64(23),
            printable: body[31],
            price: f.u32(32),
        },
        b'X' => Msg::Cancel {
            h,
            order_ref: f.u64(11),
            shares: f.u32(19),
        },
        b'D' => Msg::Delete {
            h,
            order_ref: f.u64(11),
        },
        b'U' => Msg::Replace {
            h,
            old_ref: f.u64(11),
            new_ref: f.u64(19),
            shares: f.u32(27),
            price: f.u32(31),
        },
        b'P' => Msg::Trade {
            h,
            order_ref: f.u64(11),
            side: f.side(19)?,
            shares: f.u32(20),
            stock: f.stock(24),
            price: f.u32(32),
            match_number: f.u64(36),
        },
        b'Q' => Msg::CrossTrade {
            h,
            shares: f.u64(11),
            stock: f.stock(19),
            price: f.u32(27),
            match_number: f.u64(31),
            cross_type: body[39],
        },
        b'B' => Msg::BrokenTrade {
            h,
            match_number: f.u64(11),
        },
        other => Msg::Other { h, kind: other },
    })
}

/// A symbol as ITCH writes it: ASCII, space padded to 8 bytes (longer is cut).
pub fn stock(symbol: &str) -> [u8; 8] {
    let mut s = [b' '; 8];
    for (d, b) in s.iter_mut().zip(symbol.bytes()) {
        *d = b;
    }
    s
}

/// The symbol of a space-padded stock field.
pub fn symbol(stock: &[u8; 8]) -> String {
    String::from_utf8_lossy(stock).trim_end().to_owned()
}

fn side_byte(s: Side) -> u8 {
    match s {
        Side::Buy => b'B',
        Side::Sell => b'S',
    }
}

/// Appends `msg` with its length prefix to `out`. [`Msg::Other`] writes a zeroed
/// body of its type's length (a placeholder the decoder accepts).
pub fn encode(msg: &Msg, out: &mut Vec<u8>) {
    let (kind, h) = match *msg {
        Msg::SystemEvent { h, .. } => (b'S', h),
        Msg::StockDirectory { h, .. } => (b'R', h),
        Msg::TradingAction { h, .. } => (b'H', h),
        Msg::AddOrder { h, mpid, .. } => (if mpid.is_some() { b'F' } else { b'A' }, h),
        Msg::Executed { h, .. } => (b'E', h),
        Msg::ExecutedWithPrice { h, .. } => (b'C', h),
        Msg::Cancel { h, .. } => (b'X', h),
        Msg::Delete { h, .. } => (b'D', h),
        Msg::Replace { h, .. } => (b'U', h),
        Msg::Trade { h, .. } => (b'P', h),
        Msg::CrossTrade { h, .. } => (b'Q', h),
        Msg::BrokenTrade { h, .. } => (b'B', h),
        Msg::Other { h, kind } => (kind, h),
    };
    let len = length_of(kind).unwrap_or(0);
    out.extend_from_slice(&(len as u16).to_be_bytes());
    let start = out.len();
    out.resize(start + len, 0);
    let b = &mut out[start..];
    if len < 11 {
        return;
    }
    b[0] = kind;
    b[1..3].copy_from_slice(&h.locate.to_be_bytes());
    b[3..5].copy_from_slice(&h.tracking.to_be_bytes());
    b[5..11].copy_from_slice(&h.ts.to_be_bytes()[2..]);
    match *msg {
        Msg::SystemEvent { code, .. } => b[11] = code,
        Msg::StockDirectory {
            stock, round_lot, ..
        } => {
            b[11..19].copy_from_slice(&stock);
            b[19] = b'Q';
            b[20] = b'N';
            b[21..25].copy_from_slice(&round_lot.to_be_bytes());
            b[25] = b'N';
        }
        Msg::TradingAction { stock, state, .. } => {
            b[11..19].copy_from_slice(&stock);
            b[19] = state;
        }
        Msg::AddOrder {
            order_ref,
            side,
            shares,
            stock,
            price,
            mpid,
            ..
        } => {
            b[11..19].copy_from_slice(&order_ref.to_be_bytes());
            b[19] = side_byte(side);
            b[20..24].copy_from_slice(&shares.to_be_bytes());
            b[24..32].copy_from_slice(&stock);
            b[32..36].copy_from_slice(&price.to_be_bytes());
            if let Some(m) = mpid {
                b[36..40].copy_from_slice(&m);
            }
        }
        Msg::Executed {
            order_ref,
            shares,
            match_number,
            ..
        } => {
            b[11..19].copy_from_slice(&order_ref.to_be_bytes());
            b[19..23].copy_from_slice(&shares.to_be_bytes());
            b[23..31].copy_from_slice(&match_number.to_be_bytes());
        }
        Msg::ExecutedWithPrice {
            order_ref,
            shares,
            match_number,
            printable,
            price,
            ..
        } => {
            b[11..19].copy_from_slice(&order_ref.to_be_bytes());
            b[19..23].copy_from_slice(&shares.to_be_bytes());
            b[23..31].copy_from_slice(&match_number.to_be_bytes());
            b[31] = printable;
            b[32..36].copy_from_slice(&price.to_be_bytes());
        }
        Msg::Cancel {
            order_ref, shares, ..
        } => {
            b[11..19].copy_from_slice(&order_ref.to_be_bytes());
            b[19..23].copy_from_slice(&shares.to_be_bytes());
        }
        Msg::Delete { order_ref, .. } => b[11..19].copy_from_slice(&order_ref.to_be_bytes()),
        Msg::Replace {
            old_ref,
            new_ref,
            shares,
            price,
            ..
        } => {
            b[11..19].copy_from_slice(&old_ref.to_be_bytes());
            b[19..27].copy_from_slice(&new_ref.to_be_bytes());
            b[27..31].copy_from_slice(&shares.to_be_bytes());
            b[31..35].copy_from_slice(&price.to_be_bytes());
        }
        Msg::Trade {
            order_ref,
            side,
            shares,
            stock,
            price,
            match_number,
            ..
        } => {
            b[11..19].copy_from_slice(&order_ref.to_be_bytes());
            b[19] = side_byte(side);
            b[20..24].copy_from_slice(&shares.to_be_bytes());
            b[24..32].copy_from_slice(&stock);
            b[32..36].copy_from_slice(&price.to_be_bytes());
            b[36..44].copy_from_slice(&match_number.to_be_bytes());
        }
        Msg::CrossTrade {
            shares,
            stock,
            price,
            match_number,
            cross_type,
            ..
        } => {
            b[11..19].copy_from_slice(&shares.to_be_bytes());
            b[19..27].copy_from_slice(&stock);
            b[27..31].copy_from_slice(&price.to_be_bytes());
            b[31..39].copy_from_slice(&match_number.to_be_bytes());
            b[39] = cross_type;
        }
        Msg::BrokenTrade { match_number, .. } => {
            b[11..19].copy_from_slice(&match_number.to_be_bytes())
        }
        Msg::Other { .. } => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(ts: u64) -> Header {
        Header {
            locate: 7,
            tracking: 1,
            ts,
        }
    }

    fn samples() -> Vec<Msg> {
        let s = stock("AAPL");
        vec![
            Msg::SystemEvent {
                h: h(1),
                code: b'Q',
            },
            Msg::StockDirectory {
                h: h(2),
                stock: s,
                round_lot: 100,
            },
            Msg::TradingAction {
                h: h(3),
                stock: s,
                state: b'T',
            },
            Msg::AddOrder {
                h: h(4),
                order_ref: 11,
                side: Side::Buy,
                shares: 100,
                stock: s,
                price: 1_500_100,
                mpid: None,
            },
            Msg::AddOrder {
                h: h(5),
                order_ref: 12,
                side: Side::Sell,
                shares: 300,
                stock: s,
                price: 1_500_200,
                mpid: Some(*b"GSCO"),
            },
            Msg::Executed {
                h: h(6),
                order_ref: 11,
                shares: 40,
                match_number: 99,
            },
            Msg::ExecutedWithPrice {
                h: h(7),
                order_ref: 12,
                shares: 1,
                match_number: 100,
                printable: b'N',
                price: 1_500_150,
            },
            Msg::Cancel {
                h: h(8),
                order_ref: 12,
                shares: 50,
            },
            Msg::Delete {
                h: h(9),
                order_ref: 11,
            },
            Msg::Replace {
                h: h(10),
                old_ref: 12,
                new_ref: 13,
                shares: 10,
                price: 1_500_300,
            },
            Msg::Trade {
                h: h(11),
                order_ref: 0,
                side: Side::Sell,
                shares: 5,
                stock: s,
                price: 1_500_000,
                match_number: 101,
            },
            Msg::CrossTrade {
                h: h(12),
                shares: 1_000_000,
                stock: s,
                price: 1_499_900,
                match_number: 102,
                cross_type: b'C',
            },
            Msg::BrokenTrade {
                h: h(13),
                match_number: 101,
            },
            Msg::Other {
                h: h(14),
                kind: b'I',
            },
        ]
    }

    #[test]
    fn every_message_round_trips() {
        let mut buf = Vec::new();
        for m in samples() {
            encode(&m, &mut buf);
        }
        let mut at = 0;
        for m in samples() {
            let (got, n) = decode(&buf[at..]).unwrap();
            assert_eq!(got, m);
            assert_eq!(n, 2 + length_of(buf[at + 2]).unwrap());
            at += n;
        }
        assert_eq!(at, buf.len());
    }

    #[test]
    fn layout_matches_the_specification() {
        // An Add Order as the specification's field table places it.
        let mut buf = Vec::new();
        encode(&samples()[3], &mut buf);
        assert_eq!(&buf[..2], &36u16.to_be_bytes());
        let b = &buf[2..];
        assert_eq!(b[0], b'A');
        assert_eq!(&b[1..3], &[0, 7]);
        assert_eq!(&b[5..11], &[0, 0, 0, 0, 0, 4]);
        assert_eq!(&b[11..19], &11u64.to_be_bytes());
        assert_eq!(b[19], b'B');
        assert_eq!(&b[24..32], b"AAPL    ");
        assert_eq!(&b[32..36], &1_500_100u32.to_be_bytes());
        assert_eq!(symbol(&stock("AAPL")), "AAPL");
        assert_eq!(symbol(&stock("LONGSYMBOL")), "LONGSYMB");
    }

    #[test]
    fn bad_bytes_are_typed_errors() {
        assert!(matches!(decode(&[]), Err(ItchError::Truncated { .. })));
        assert!(matches!(
            decode(&[0, 5, b'A']),
            Err(ItchError::Truncated { .. })
        ));
        assert_eq!(decode(&[0, 1, b'Z']), Err(ItchError::UnknownType(b'Z')));
        assert!(matches!(
            decode(&[0, 3, b'D', 0, 0]),
            Err(ItchError::BadLength { kind: 'D', .. })
        ));
        assert!(matches!(decode(&[0, 0]), Err(ItchError::Truncated { .. })));
        let mut buf = Vec::new();
        encode(&samples()[3], &mut buf);
        buf[2 + 19] = b'Z';
        assert_eq!(decode(&buf), Err(ItchError::BadSide(b'Z')));
    }
}
