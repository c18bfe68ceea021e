//! Writers of a generated day: ITCH 5.0 binary, or LOBSTER's message and order book
//! files.

use std::io::Write;

use peregrine_book::{Ladder, OrderBook};
use peregrine_types::{InstrumentId, Side};

use super::SynthConfig;
use crate::data::itch::{self, Header, Msg};
use crate::data::lobster;
use crate::data::L3;
use crate::recorded::RecordedBook;

/// Where generated messages go.
pub trait Sink {
    /// Before the first message.
    fn begin(&mut self, cfg: &SynthConfig) -> std::io::Result<()>;
    /// One message at `ts` (ns since midnight).
    fn message(&mut self, ts: u64, msg: &L3) -> std::io::Result<()>;
    /// After the last message (at `ts`).
    fn end(&mut self, ts: u64) -> std::io::Result<()>;
}

/// Writes an ITCH 5.0 file: system events (start of messages, system and market
/// hours), one stock directory message (locate 1), the day, then the closing events.
#[derive(Debug)]
pub struct ItchWriter<W: Write> {
    out: W,
    buf: Vec<u8>,
    stock: [u8; 8],
    tracking: u16,
    next_match: u64,
    /// Sides of live orders (`C` and `P` messages need them): reference → side.
    sides: rustc_hash::FxHashMap<u64, Side>,
}

impl<W: Write> ItchWriter<W> {
    /// A writer into `out`.
    pub fn new(out: W) -> ItchWriter<W> {
        ItchWriter {
            out,
            buf: Vec::with_capacity(1 << 16),
            stock: [b' '; 8],
            tracking: 0,
            next_match: 1,
            sides: Default::default(),
        }
    }

    fn h(&mut self, locate: u16, ts: u64) -> Header {
        self.tracking = self.tracking.wrapping_add(1);
        Header {
            locate,
            tracking: self.tracking,
            ts,
        }
    }

    fn put(&mut self, m: &Msg) -> std::io::Result<()> {
        itch::encode(m, &mut self.buf);
        if self.buf.len() > 60_000 {
            self.out.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }

    fn system(&mut self, ts: u64, code: u8) -> std::io::Result<()> {
        let h = self.h(0, ts);
        self.put(&Msg::SystemEvent { h, code })
    }

    /// The inner writer (after [`Sink::end`]).
    pub fn into_inner(self) -> W {
        self.out
    }
}

/// ITCH prices are four-decimal `u32`s; the generator's prices always fit.
fn px(p: i64) -> u32 {
    u32::try_from(p.max(0)).unwrap_or(u32::MAX)
}

fn shares(q: i64) -> u32 {
    u32::try_from(q.max(0)).unwrap_or(u32::MAX)
}

impl<W: Write> Sink for ItchWriter<W> {
    fn begin(&mut self, cfg: &SynthConfig) -> std::io::Result<()> {
        self.stock = itch::stock(&cfg.symbol);
        let t = cfg.start_ns.saturating_sub(1_000_000_000);
        self.system(t, b'O')?;
        self.system(t, b'S')?;
        let h = self.h(1, t);
        self.put(&Msg::StockDirectory {
            h,
            stock: self.stock,
            round_lot: 100,
        })?;
        let h = self.h(1, t);
        self.put(&Msg::TradingAction {
            h,
            stock: self.stock,
            state: b'T',
        })?;
        self.system(cfg.start_ns, b'Q')
    }

    fn message(&mut self, ts: u64, msg: &L3) -> std::io::Result<()> {
        let h = self.h(1, ts);
        let m = match *msg {
            L3::Add {
                order_ref,
                side,
                price,
                qty,
            } => {
                self.sides.insert(order_ref, side);
                Msg::AddOrder {
                    h,
                    order_ref,
                    side,
                    shares: shares(qty),
                    stock: self.stock,
                    price: px(price),
                    mpid: None,
                }
            }
            L3::Cancel { order_ref, qty } => Msg::Cancel {
                h,
                order_ref,
                shares: shares(qty),
            },
            L3::Delete { order_ref } => {
                self.sides.remove(&order_ref);
                Msg::Delete { h, order_ref }
            }
            L3::Execute { order_ref, qty } => {
                self.next_match += 1;
                Msg::Executed {
                    h,
                    order_ref,
                    shares: shares(qty),
                    match_number: self.next_match,
                }
            }
            L3::ExecuteAt {
                order_ref,
                qty,
                price,
            } => {
                self.next_match += 1;
                Msg::ExecutedWithPrice {
                    h,
                    order_ref,
                    shares: shares(qty),
                    match_number: self.next_match,
                    printable: b'Y',
                    price: px(price),
                }
            }
            L3::Replace {
                old_ref,
                new_ref,
                price,
                qty,
            } => {
                if let Some(s) = self.sides.remove(&old_ref) {
                    self.sides.insert(new_ref, s);
                }
                Msg::Replace {
                    h,
                    old_ref,
                    new_ref,
                    shares: shares(qty),
                    price: px(price),
                }
            }
            L3::Trade {
                aggressor,
                price,
                qty,
            } => {
                self.next_match += 1;
                Msg::Trade {
                    h,
                    order_ref: 0,
                    side: aggressor.opposite(),
                    shares: shares(qty),
                    stock: self.stock,
                    price: px(price),
                    match_number: self.next_match,
                }
            }
            L3::Halt(halted) => Msg::TradingAction {
                h,
                stock: self.stock,
                state: if halted { b'H' } else { b'T' },
            },
        };
        self.put(&m)
    }

    fn end(&mut self, ts: u64) -> std::io::Result<()> {
        self.system(ts, b'M')?;
        self.system(ts, b'E')?;
        self.system(ts, b'C')?;
        self.out.write_all(&self.buf)?;
        self.buf.clear();
        self.out.flush()
    }
}

/// Writes LOBSTER's two files: messages, and the top `levels` of the book after each
/// (the book rebuilt from the messages themselves, [`RecordedBook`]).
#[derive(Debug)]
pub struct LobsterWriter<M: Write, B: Write> {
    messages: M,
    book: B,
    levels: usize,
    line: String,
    row: String,
    asks: Vec<(i64, i64)>,
    bids: Vec<(i64, i64)>,
    rebuilt: Option<RecordedBook<OrderBook<Ladder>>>,
}

impl<M: Write, B: Write> LobsterWriter<M, B> {
    /// A writer of `levels` levels per side.
    pub fn new(messages: M, book: B, levels: usize) -> LobsterWriter<M, B> {
        LobsterWriter {
            messages,
            book,
            levels,
            line: String::with_capacity(128),
            row: String::with_capacity(64 * levels),
            asks: Vec::with_capacity(levels),
            bids: Vec::with_capacity(levels),
            rebuilt: None,
        }
    }

    /// Writes one message line and the book row after it.
    fn one(&mut self, ts: u64, msg: &L3) -> std::io::Result<()> {
        let Some(rebuilt) = self.rebuilt.as_mut() else {
            return Ok(());
        };
        let before = |r: u64| {
            rebuilt
                .order(r)
                .map_or((Side::Buy, 0), |o| (o.side, o.price))
        };
        self.line.clear();
        let l = &mut self.line;
        match *msg {
            L3::Add {
                order_ref,
                side,
                price,
                qty,
            } => lobster::write_message(l, ts, 1, order_ref, qty, price, side),
            L3::Cancel { order_ref, qty } => {
                let (side, price) = before(order_ref);
                lobster::write_message(l, ts, 2, order_ref, qty, price, side);
            }
            L3::Delete { order_ref } => {
                let (side, price) = before(order_ref);
                let left = rebuilt.order(order_ref).map_or(0, |o| o.leaves);
                lobster::write_message(l, ts, 3, order_ref, left, price, side);
            }
            L3::Execute { order_ref, qty } | L3::ExecuteAt { order_ref, qty, .. } => {
                let (side, price) = before(order_ref);
                lobster::write_message(l, ts, 4, order_ref, qty, price, side);
            }
            L3::Trade {
                aggressor,
                price,
                qty,
            } => lobster::write_message(l, ts, 5, 0, qty, price, aggressor.opposite()),
            L3::Halt(halted) => {
                let p = if halted { -1 } else { 1 };
                lobster::write_message(l, ts, 7, 0, 0, p, Side::Sell);
            }
            L3::Replace { .. } => return Ok(()), // split by the caller
        }
        rebuilt
            .apply(ts, msg)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
        self.messages.write_all(self.line.as_bytes())?;
        self.asks.clear();
        self.bids.clear();
        let (asks, bids) = (&mut self.asks, &mut self.bids);
        let book = rebuilt.book();
        book.visit_depth(Side::Sell, self.levels, &mut |p, q, _| {
            asks.push((p.units(), q.lots()))
        });
        book.visit_depth(Side::Buy, self.levels, &mut |p, q, _| {
            bids.push((p.units(), q.lots()))
        });
        self.row.clear();
        lobster::write_book_row(&mut self.row, &self.asks, &self.bids, self.levels);
        self.book.write_all(self.row.as_bytes())
    }
}

impl<M: Write, B: Write> Sink for LobsterWriter<M, B> {
    fn begin(&mut self, cfg: &SynthConfig) -> std::io::Result<()> {
        let capacity = cfg.depth * 8 + 1_024;
        self.rebuilt = Some(RecordedBook::new(
            OrderBook::new(cfg.spec(), capacity),
            InstrumentId(1),
        ));
        Ok(())
    }

    fn message(&mut self, ts: u64, msg: &L3) -> std::io::Result<()> {
        match *msg {
            // LOBSTER has no replace message: it writes a delete and a new order.
            L3::Replace {
                old_ref,
                new_ref,
                price,
                qty,
            } => {
                let side = self
                    .rebuilt
                    .as_ref()
                    .and_then(|r| r.order(old_ref))
                    .map_or(Side::Buy, |o| o.side);
                self.one(ts, &L3::Delete { order_ref: old_ref })?;
                self.one(
                    ts,
                    &L3::Add {
                        order_ref: new_ref,
                        side,
                        price,
                        qty,
                    },
                )
            }
            _ => self.one(ts, msg),
        }
    }

    fn end(&mut self, _: u64) -> std::io::Result<()> {
        self.messages.flush()?;
        self.book.flush()
    }
}
