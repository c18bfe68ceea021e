//! An ITCH 5.0 file as a stream of [`L3`] messages for one symbol.
//!
//! The symbol's stock locate is learnt from its stock directory (`R`) message; every
//! other message of that locate is normalized: `A`/`F` add, `E` execute, `C` execute
//! at a price (crosses), `X` cancel, `D` delete, `U` replace, `P` and `Q` trades
//! outside the visible book, `H` halt and resume. Market-wide and other messages are
//! skipped. Prices keep ITCH's four decimals; quantities are shares.

use std::io::Read;

use peregrine_types::Side;

use super::itch::{self, Msg};
use super::stream::Bytes;
use super::{DataError, Recorded, Source, L3};

/// Every message of an ITCH file, decoded (what the decode-only floor measures).
#[derive(Debug)]
pub struct ItchMessages<R> {
    bytes: Bytes<R>,
}

impl<R: Read> ItchMessages<R> {
    /// Messages of `src`.
    pub fn new(src: R) -> ItchMessages<R> {
        ItchMessages {
            bytes: Bytes::new(src),
        }
    }

    /// The next message, `None` at the end of the stream.
    #[inline]
    pub fn next_raw(&mut self) -> Result<Option<Msg>, DataError> {
        let offset = self.bytes.offset();
        let io = |source| DataError::Io {
            path: "ITCH stream".into(),
            source,
        };
        // The longest message is 50 bytes plus its 2-byte prefix.
        let w = self.bytes.window(52).map_err(io)?;
        if w.is_empty() {
            return Ok(None);
        }
        let (msg, used) = itch::decode(w).map_err(|source| DataError::Itch { offset, source })?;
        self.bytes.consume(used);
        Ok(Some(msg))
    }
}

/// The L3 messages of one symbol.
#[derive(Debug)]
pub struct ItchL3<R> {
    msgs: ItchMessages<R>,
    symbol: [u8; 8],
    locate: Option<u16>,
}

impl<R: Read> ItchL3<R> {
    /// The messages of `symbol` in `src`.
    pub fn new(src: R, symbol: &str) -> ItchL3<R> {
        ItchL3 {
            msgs: ItchMessages::new(src),
            symbol: itch::stock(symbol),
            locate: None,
        }
    }

    #[inline]
    fn normalize(&self, m: &Msg) -> Option<L3> {
        Some(match *m {
            Msg::AddOrder {
                order_ref,
                side,
                shares,
                price,
                ..
            } => L3::Add {
                order_ref,
                side,
                price: i64::from(price),
                qty: i64::from(shares),
            },
            Msg::Executed {
                order_ref, shares, ..
            } => L3::Execute {
                order_ref,
                qty: i64::from(shares),
            },
            Msg::ExecutedWithPrice {
                order_ref,
                shares,
                price,
                ..
            } => L3::ExecuteAt {
                order_ref,
                qty: i64::from(shares),
                price: i64::from(price),
            },
            Msg::Cancel {
                order_ref, shares, ..
            } => L3::Cancel {
                order_ref,
                qty: i64::from(shares),
            },
            Msg::Delete { order_ref, .. } => L3::Delete { order_ref },
            Msg::Replace {
                old_ref,
                new_ref,
                shares,
                price,
                ..
            } => L3::Replace {
                old_ref,
                new_ref,
                price: i64::from(price),
                qty: i64::from(shares),
            },
            Msg::Trade {
                side,
                shares,
                price,
                ..
            } => L3::Trade {
                aggressor: side.opposite(),
                price: i64::from(price),
                qty: i64::from(shares),
            },
            Msg::CrossTrade { shares, price, .. } => L3::Trade {
                aggressor: Side::Buy,
                price: i64::from(price),
                qty: i64::try_from(shares).unwrap_or(i64::MAX),
            },
            Msg::TradingAction { state, .. } => L3::Halt(state != b'T'),
            _ => return None,
        })
    }
}

impl<R: Read> Source for ItchL3<R> {
    type Msg = L3;

    #[inline]
    fn next_msg(&mut self) -> Result<Option<Recorded<L3>>, DataError> {
        while let Some(m) = self.msgs.next_raw()? {
            let h = m.header();
            match (m, self.locate) {
                (Msg::StockDirectory { stock, .. }, None) if stock == self.symbol => {
                    self.locate = Some(h.locate);
                }
                (_, Some(locate)) if h.locate == locate => {
                    if let Some(msg) = self.normalize(&m) {
                        return Ok(Some(Recorded {
                            exch_ts: h.ts,
                            local_ts: h.ts,
                            msg,
                        }));
                    }
                }
                _ => {}
            }
        }
        match self.locate {
            Some(_) => Ok(None),
            None => Err(DataError::Inconsistent(format!(
                "no stock directory message for {:?} in the ITCH file",
                itch::symbol(&self.symbol)
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::itch::{encode, stock, Header};

    #[test]
    fn one_symbol_is_normalized_and_the_rest_skipped() {
        let h = |locate, ts| Header {
            locate,
            tracking: 0,
            ts,
        };
        let mut buf = Vec::new();
        for m in [
            Msg::SystemEvent {
                h: h(0, 1),
                code: b'O',
            },
            Msg::StockDirectory {
                h: h(3, 2),
                stock: stock("MSFT"),
                round_lot: 100,
            },
            Msg::StockDirectory {
                h: h(5, 2),
                stock: stock("AAPL"),
                round_lot: 100,
            },
            Msg::AddOrder {
                h: h(3, 3),
                order_ref: 1,
                side: Side::Buy,
                shares: 5,
                stock: stock("MSFT"),
                price: 100,
                mpid: None,
            },
            Msg::AddOrder {
                h: h(5, 4),
                order_ref: 2,
                side: Side::Sell,
                shares: 7,
                stock: stock("AAPL"),
                price: 2_000_000,
                mpid: None,
            },
            Msg::Executed {
                h: h(5, 5),
                order_ref: 2,
                shares: 3,
                match_number: 1,
            },
        ] {
            encode(&m, &mut buf);
        }
        let mut s = ItchL3::new(&buf[..], "AAPL");
        let a = s.next_msg().unwrap().unwrap();
        assert_eq!(a.exch_ts, 4);
        assert_eq!(
            a.msg,
            L3::Add {
                order_ref: 2,
                side: Side::Sell,
                price: 2_000_000,
                qty: 7
            }
        );
        assert_eq!(
            s.next_msg().unwrap().unwrap().msg,
            L3::Execute {
                order_ref: 2,
                qty: 3
            }
        );
        assert!(s.next_msg().unwrap().is_none());
        let mut missing = ItchL3::new(&buf[..], "GOOG");
        assert!(matches!(
            missing.next_msg(),
            Err(DataError::Inconsistent(_))
        ));
        let mut cut = ItchL3::new(&buf[..buf.len() - 3], "AAPL");
        cut.next_msg().unwrap();
        assert!(matches!(cut.next_msg(), Err(DataError::Itch { .. })));
    }
}
