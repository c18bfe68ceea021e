//! LOBSTER days that start with orders already in the book.
//!
//! A LOBSTER file starts at a time of the trading day (9:30 usually): orders placed
//! before it are in the book its first order book row shows, but no message added
//! them, and later messages cancel or execute them by ids the file never introduced.
//! [`SeededLobster`] rebuilds them: the book before the first message is the first row
//! with the first message undone, and each of its levels becomes one order (a reference
//! above any LOBSTER id, added before the first message, at the front of its level).
//! A message about an id the file never added, at a price where such an order rests,
//! acts on it instead (the level's aggregate and its place at the front are exact;
//! which pre-existing order it was is not known, and does not matter to the book).
//!
//! Only the levels the file has (its `N`) are seen: orders placed before the file
//! deeper than `N` levels stay unknown, and messages about them are counted in
//! [`SeededLobster::unknown`] (if the price comes to them, the book check shows the
//! level). LOBSTER's 50-level files see all but the deepest of them.

use std::collections::VecDeque;
use std::io::Read;

use peregrine_types::Side;
use rustc_hash::FxHashMap;

use crate::data::lobster::{parse_line, BookLevel};
use crate::data::stream::Lines;
use crate::data::{DataError, Recorded, Source, L3};

const FORMAT: &str = "LOBSTER message";

/// References of the orders made for the opening book: `SEED_BASE + level`.
pub const SEED_BASE: u64 = 1 << 62;

/// A LOBSTER message file whose opening book comes from its first order book row.
#[derive(Debug)]
pub struct SeededLobster<R> {
    lines: Lines<R>,
    /// The first order book row (asks, bids); taken at the first message.
    first_row: Option<(Vec<BookLevel>, Vec<BookLevel>)>,
    /// Orders the file added, with what is open.
    known: FxHashMap<u64, i64>,
    /// Opening orders by (side, price): reference and what is open.
    seeds: FxHashMap<(u8, i64), (u64, i64)>,
    pending: VecDeque<Recorded<L3>>,
    /// Messages about ids the file never added and no opening order covers.
    pub unknown: u64,
}

impl<R: Read> SeededLobster<R> {
    /// The messages of `src`, with the opening book of its first order book row
    /// (`asks`, `bids`, as [`crate::data::lobster::LobsterBook`] reads them).
    pub fn new(src: R, asks: Vec<BookLevel>, bids: Vec<BookLevel>) -> SeededLobster<R> {
        SeededLobster {
            lines: Lines::new(src),
            first_row: Some((asks, bids)),
            known: FxHashMap::default(),
            seeds: FxHashMap::default(),
            pending: VecDeque::new(),
            unknown: 0,
        }
    }

    /// Builds the opening orders from the first row with `first` undone.
    fn open(&mut self, ts: u64, first: &L3, side: Side, price: i64, size: i64) {
        let Some((asks, bids)) = self.first_row.take() else {
            return;
        };
        let mut levels: Vec<(Side, i64, i64)> = Vec::new();
        for (s, row) in [(Side::Sell, &asks), (Side::Buy, &bids)] {
            levels.extend(row.iter().flatten().map(|&(p, q)| (s, p, q)));
        }
        let mut undo =
            |s: Side, p: i64, dq: i64| match levels.iter_mut().find(|l| l.0 == s && l.1 == p) {
                Some(l) => l.2 += dq,
                None => levels.push((s, p, dq)),
            };
        match *first {
            L3::Add {
                side, price, qty, ..
            } => undo(side, price, -qty),
            L3::Cancel { qty, .. } | L3::Execute { qty, .. } => undo(side, price, qty),
            L3::Delete { .. } => undo(side, price, size),
            _ => {}
        }
        for (i, (s, p, q)) in levels.into_iter().filter(|l| l.2 > 0).enumerate() {
            let r = SEED_BASE + i as u64;
            self.seeds.insert((s as u8, p), (r, q));
            self.pending.push_back(Recorded {
                exch_ts: ts,
                local_ts: ts,
                msg: L3::Add {
                    order_ref: r,
                    side: s,
                    price: p,
                    qty: q,
                },
            });
        }
    }

    /// The opening order standing in for unknown id at (side, price), less `qty`.
    fn seed(&mut self, side: Side, price: i64, qty: i64) -> Option<u64> {
        let key = (side as u8, price);
        let (r, open) = self.seeds.get_mut(&key)?;
        let r = *r;
        *open -= qty;
        if *open <= 0 {
            self.seeds.remove(&key);
        }
        Some(r)
    }

    /// `msg` with an id the file never added replaced by its opening order's.
    fn rewrite(&mut self, msg: L3, side: Side, price: i64, size: i64) -> L3 {
        let known = |k: &mut FxHashMap<u64, i64>, r: u64, qty: i64| match k.get_mut(&r) {
            Some(open) => {
                *open -= qty;
                if *open <= 0 {
                    k.remove(&r);
                }
                true
            }
            None => false,
        };
        match msg {
            L3::Add { order_ref, qty, .. } => {
                self.known.insert(order_ref, qty);
                msg
            }
            L3::Cancel { order_ref, qty } | L3::Execute { order_ref, qty } => {
                if known(&mut self.known, order_ref, qty) {
                    return msg;
                }
                match (self.seed(side, price, qty), msg) {
                    (Some(r), L3::Cancel { .. }) => L3::Cancel { order_ref: r, qty },
                    (Some(r), _) => L3::Execute { order_ref: r, qty },
                    (None, _) => {
                        self.unknown += 1;
                        msg
                    }
                }
            }
            L3::Delete { order_ref } => {
                if self.known.remove(&order_ref).is_some() {
                    return msg;
                }
                match self.seed(side, price, size) {
                    // A delete of part of an opening order is a cancel of that part.
                    Some(r) if self.seeds.contains_key(&(side as u8, price)) => L3::Cancel {
                        order_ref: r,
                        qty: size,
                    },
                    Some(r) => L3::Delete { order_ref: r },
                    None => {
                        self.unknown += 1;
                        msg
                    }
                }
            }
            other => other,
        }
    }
}

impl<R: Read> Source for SeededLobster<R> {
    type Msg = L3;

    fn next_msg(&mut self) -> Result<Option<Recorded<L3>>, DataError> {
        if let Some(r) = self.pending.pop_front() {
            return Ok(Some(r));
        }
        let Some((n, line)) = self.lines.next_line(FORMAT)? else {
            return Ok(None);
        };
        let (ts, msg, side, price, size) =
            parse_line(line).map_err(|why| DataError::line(FORMAT, n, why))?;
        if self.first_row.is_some() {
            self.open(ts, &msg, side, price, size);
        }
        let msg = self.rewrite(msg, side, price, size);
        self.pending.push_back(Recorded {
            exch_ts: ts,
            local_ts: ts,
            msg,
        });
        Ok(self.pending.pop_front())
    }
}

/// A LOBSTER message file, seeded with its opening book when its order book file is
/// known.
#[derive(Debug)]
pub enum Lobster<R> {
    /// Without an order book file: the book starts empty.
    Plain(crate::data::lobster::LobsterMessages<R>),
    /// With one: the orders of its first row that no message added are seeded.
    Seeded(SeededLobster<R>),
}

/// Opens the message file `messages` (and reads the first row of `book`, if given).
pub fn open(
    messages: &std::path::Path,
    book: Option<&std::path::Path>,
) -> Result<Lobster<Box<dyn Read + Send>>, DataError> {
    let src = crate::data::stream::open(messages)?;
    Ok(match book {
        None => Lobster::Plain(crate::data::lobster::LobsterMessages::new(src)),
        Some(b) => {
            let mut rows = crate::data::lobster::LobsterBook::new(crate::data::stream::open(b)?);
            if !rows.next_row()? {
                return Err(DataError::Inconsistent(format!("{}: no rows", b.display())));
            }
            let (asks, bids) = (
                std::mem::take(&mut rows.asks),
                std::mem::take(&mut rows.bids),
            );
            Lobster::Seeded(SeededLobster::new(src, asks, bids))
        }
    })
}

impl<R: Read> Source for Lobster<R> {
    type Msg = L3;

    fn next_msg(&mut self) -> Result<Option<Recorded<L3>>, DataError> {
        match self {
            Lobster::Plain(p) => p.next_msg(),
            Lobster::Seeded(s) => s.next_msg(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::lobster::LobsterBook;
    use crate::recorded::RecordedBook;
    use crate::synth::{generate, LobsterWriter, SynthConfig};
    use peregrine_book::{Ladder, OrderBook};
    use peregrine_types::InstrumentId;

    /// A day cut after 2,000 messages starts with a full book: seeded from its first
    /// row (200 levels: the whole book), the rest of the messages rebuild every
    /// following row.
    #[test]
    fn a_day_cut_in_the_middle_rebuilds_every_row() {
        let cfg = SynthConfig {
            seed: 9,
            events: 6_000,
            ..SynthConfig::default()
        };
        let (mut m, mut b) = (Vec::new(), Vec::new());
        generate(&cfg, &mut LobsterWriter::new(&mut m, &mut b, 200)).unwrap();
        let cut = |bytes: &[u8]| -> Vec<u8> {
            let text = std::str::from_utf8(bytes).unwrap();
            text.lines()
                .skip(2_000)
                .map(|l| format!("{l}\n"))
                .collect::<String>()
                .into_bytes()
        };
        let (m, b) = (cut(&m), cut(&b));
        let mut rows = LobsterBook::new(&b[..]);
        rows.next_row().unwrap();
        let (asks, bids) = (rows.asks.clone(), rows.bids.clone());
        let mut src = SeededLobster::new(&m[..], asks, bids);
        let mut book = RecordedBook::new(
            OrderBook::<Ladder>::new(cfg.spec(), 1 << 14),
            InstrumentId(1),
        );
        let mut rows = LobsterBook::new(&b[..]);
        let mut seeded = 0;
        while let Some(r) = src.next_msg().unwrap() {
            book.apply(r.exch_ts, &r.msg).unwrap();
            if matches!(r.msg, L3::Add { order_ref, .. } if order_ref >= SEED_BASE) {
                seeded += 1;
                continue;
            }
            assert!(rows.next_row().unwrap());
            let mut asks = Vec::new();
            book.book().visit_depth(Side::Sell, 200, &mut |p, q, _| {
                asks.push(Some((p.units(), q.lots())))
            });
            asks.resize(200, None);
            assert_eq!(asks, rows.asks);
        }
        assert!(seeded > 5, "{seeded} opening levels");
        assert_eq!(src.unknown, 0);
    }
}
