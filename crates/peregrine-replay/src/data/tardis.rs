//! Tardis.dev CSV datasets: `incremental_book_L2` and `trades`.
//!
//! * `incremental_book_L2`: header `exchange,symbol,timestamp,local_timestamp,
//!   is_snapshot,side,price,amount`; times in microseconds since the Unix epoch;
//!   `side` `bid` or `ask`; `amount` the new total at the price (0: removed). Rows with
//!   `is_snapshot = true` that follow non-snapshot rows start a new snapshot: the book
//!   so far is forgotten ([`L2::Clear`]).
//! * `trades`: header `exchange,symbol,timestamp,local_timestamp,id,side,price,amount`;
//!   `side` is the aggressor (`buy`, `sell`, or `unknown`, read as buy).
//!
//! [`TardisL2`] merges the two files by local timestamp (book rows first on a tie), as
//! the replay needs one stream. Columns are found by their header names.

use std::io::Read;

use peregrine_types::Side;

use super::stream::Lines;
use super::text::{fields, int, scaled, significant_decimals};
use super::{DataError, Recorded, Source, Units, L2};

const BOOK: &str = "Tardis incremental_book_L2";
const TRADES: &str = "Tardis trades";

/// Column positions of the fields a file needs.
#[derive(Debug, Clone, Copy)]
struct Columns {
    timestamp: usize,
    local: usize,
    side: usize,
    price: usize,
    amount: usize,
    /// Book files only.
    snapshot: Option<usize>,
}

impl Columns {
    fn from_header(header: &str, book: bool) -> Result<Columns, String> {
        let names: Vec<&str> = fields(header).map(str::trim).collect();
        let at = |n: &str| {
            names
                .iter()
                .position(|h| *h == n)
                .ok_or_else(|| format!("header has no {n:?} column"))
        };
        Ok(Columns {
            timestamp: at("timestamp")?,
            local: at("local_timestamp")?,
            side: at("side")?,
            price: at("price")?,
            amount: at("amount")?,
            snapshot: if book { Some(at("is_snapshot")?) } else { None },
        })
    }
}

/// One parsed row.
#[derive(Debug, Clone, Copy)]
struct Row {
    exch_us: u64,
    local_us: u64,
    msg: L2,
    snapshot: bool,
}

fn micros(f: Option<&str>, what: &str) -> Result<u64, String> {
    u64::try_from(int(f, what)?).map_err(|_| format!("negative {what}"))
}

fn parse_row(line: &str, c: &Columns, units: Units, cells: &mut Vec<usize>) -> Result<Row, String> {
    // Byte ranges of the cells, so a row is split once.
    cells.clear();
    cells.push(0);
    for (i, b) in line.bytes().enumerate() {
        if b == b',' {
            cells.push(i + 1);
        }
    }
    let cell = |i: usize| -> Option<&str> {
        let start = *cells.get(i)?;
        let end = cells.get(i + 1).map_or(line.len(), |e| e - 1);
        line.get(start..end)
    };
    let exch_us = micros(cell(c.timestamp), "timestamp")?;
    let local_us = micros(cell(c.local), "local_timestamp")?;
    let price = scaled(cell(c.price), units.price_decimals, "price")?;
    let qty = scaled(cell(c.amount), units.qty_decimals, "amount")?;
    if qty < 0 {
        return Err("negative amount".into());
    }
    let side = cell(c.side).ok_or("missing side")?.trim();
    let (msg, snapshot) = match c.snapshot {
        Some(s) => {
            let side = match side {
                "bid" => Side::Buy,
                "ask" => Side::Sell,
                other => return Err(format!("side {other:?} is neither bid nor ask")),
            };
            let snap = match cell(s).map(str::trim) {
                Some("true") => true,
                Some("false") => false,
                other => return Err(format!("is_snapshot {other:?} is neither true nor false")),
            };
            (L2::Level { side, price, qty }, snap)
        }
        None => {
            let aggressor = match side {
                "sell" => Side::Sell,
                "buy" | "unknown" => Side::Buy,
                other => return Err(format!("side {other:?} is not buy, sell or unknown")),
            };
            (
                L2::Trade {
                    aggressor,
                    price,
                    qty,
                },
                false,
            )
        }
    };
    Ok(Row {
        exch_us,
        local_us,
        msg,
        snapshot,
    })
}

/// One Tardis CSV file, row by row.
#[derive(Debug)]
struct TardisFile<R> {
    lines: Lines<R>,
    format: &'static str,
    cols: Option<Columns>,
    units: Units,
    cells: Vec<usize>,
    next: Option<Row>,
    done: bool,
}

impl<R: Read> TardisFile<R> {
    fn new(src: R, format: &'static str, units: Units) -> TardisFile<R> {
        TardisFile {
            lines: Lines::new(src),
            format,
            cols: None,
            units,
            cells: Vec::with_capacity(16),
            next: None,
            done: false,
        }
    }

    /// The next row, without taking it.
    fn peek(&mut self) -> Result<Option<Row>, DataError> {
        if self.next.is_none() && !self.done {
            let book = self.format == BOOK;
            loop {
                let Some((n, line)) = self.lines.next_line(self.format)? else {
                    self.done = true;
                    break;
                };
                let err = |why| DataError::line(self.format, n, why);
                match self.cols {
                    None => self.cols = Some(Columns::from_header(line, book).map_err(err)?),
                    Some(c) => {
                        let row = parse_row(line, &c, self.units, &mut self.cells).map_err(err)?;
                        self.next = Some(row);
                        break;
                    }
                }
            }
        }
        Ok(self.next)
    }
}

/// The book and trades files of one instrument as one [`L2`] stream.
#[derive(Debug)]
pub struct TardisL2<B, T> {
    book: TardisFile<B>,
    trades: Option<TardisFile<T>>,
    in_snapshot: bool,
    queued: Option<Recorded<L2>>,
}

impl<B: Read, T: Read> TardisL2<B, T> {
    /// The `incremental_book_L2` file `book` and, optionally, the `trades` file.
    pub fn new(book: B, trades: Option<T>, units: Units) -> TardisL2<B, T> {
        TardisL2 {
            book: TardisFile::new(book, BOOK, units),
            trades: trades.map(|t| TardisFile::new(t, TRADES, units)),
            in_snapshot: false,
            queued: None,
        }
    }
}

impl<B: Read, T: Read> Source for TardisL2<B, T> {
    type Msg = L2;

    fn next_msg(&mut self) -> Result<Option<Recorded<L2>>, DataError> {
        if let Some(q) = self.queued.take() {
            return Ok(Some(q));
        }
        let b = self.book.peek()?;
        let t = match self.trades.as_mut() {
            Some(t) => t.peek()?,
            None => None,
        };
        let take_book = match (b, t) {
            (None, None) => return Ok(None),
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some(b), Some(t)) => b.local_us <= t.local_us,
        };
        let row = if take_book {
            self.book.next.take()
        } else {
            self.trades.as_mut().and_then(|t| t.next.take())
        };
        let Some(row) = row else { return Ok(None) };
        let rec = |msg| Recorded {
            exch_ts: row.exch_us.saturating_mul(1_000),
            local_ts: row.local_us.saturating_mul(1_000),
            msg,
        };
        if take_book {
            let starts = row.snapshot && !self.in_snapshot;
            self.in_snapshot = row.snapshot;
            if starts {
                self.queued = Some(rec(row.msg));
                return Ok(Some(rec(L2::Clear)));
            }
        }
        Ok(Some(rec(row.msg)))
    }
}

/// The decimals the numbers of a Tardis file need (largest significant decimals of its
/// prices and amounts).
pub fn infer_units<R: Read>(src: R, units: &mut Units) -> Result<(), DataError> {
    let mut lines = Lines::new(src);
    let mut cols: Option<(usize, usize)> = None;
    while let Some((n, line)) = lines.next_line("Tardis")? {
        match cols {
            None => {
                let c = Columns::from_header(line, false)
                    .map_err(|why| DataError::line("Tardis", n, why))?;
                cols = Some((c.price, c.amount));
            }
            Some((p, a)) => {
                let f: Vec<&str> = fields(line).collect();
                if let (Some(p), Some(a)) = (f.get(p), f.get(a)) {
                    units.price_decimals = units.price_decimals.max(significant_decimals(p));
                    units.qty_decimals = units.qty_decimals.max(significant_decimals(a));
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const BOOK_CSV: &str = "exchange,symbol,timestamp,local_timestamp,is_snapshot,side,price,amount
deribit,BTC-PERPETUAL,100,110,true,ask,6421.5,18640
deribit,BTC-PERPETUAL,100,110,true,bid,6421,100
deribit,BTC-PERPETUAL,200,210,false,bid,6421,0
deribit,BTC-PERPETUAL,300,310,true,ask,6422,5
";
    const TRADES_CSV: &str = "exchange,symbol,timestamp,local_timestamp,id,side,price,amount
deribit,BTC-PERPETUAL,205,210,t1,sell,6421,40
deribit,BTC-PERPETUAL,305,320,t2,unknown,6422,1
";

    #[test]
    fn book_and_trades_merge_by_local_time_and_snapshots_clear() {
        let mut units = Units {
            price_decimals: 0,
            qty_decimals: 0,
        };
        infer_units(BOOK_CSV.as_bytes(), &mut units).unwrap();
        infer_units(TRADES_CSV.as_bytes(), &mut units).unwrap();
        assert_eq!(
            units,
            Units {
                price_decimals: 1,
                qty_decimals: 0
            }
        );
        let mut s = TardisL2::new(BOOK_CSV.as_bytes(), Some(TRADES_CSV.as_bytes()), units);
        let mut got = Vec::new();
        while let Some(r) = s.next_msg().unwrap() {
            got.push((r.local_ts / 1_000, r.msg));
        }
        let lvl = |side, price, qty| L2::Level { side, price, qty };
        assert_eq!(
            got,
            vec![
                (110, L2::Clear),
                (110, lvl(Side::Sell, 64215, 18640)),
                (110, lvl(Side::Buy, 64210, 100)),
                (210, lvl(Side::Buy, 64210, 0)),
                (
                    210,
                    L2::Trade {
                        aggressor: Side::Sell,
                        price: 64210,
                        qty: 40
                    }
                ),
                (310, L2::Clear),
                (310, lvl(Side::Sell, 64220, 5)),
                (
                    320,
                    L2::Trade {
                        aggressor: Side::Buy,
                        price: 64220,
                        qty: 1
                    }
                ),
            ]
        );
    }

    #[test]
    fn bad_rows_are_typed_errors() {
        let units = Units {
            price_decimals: 1,
            qty_decimals: 0,
        };
        for bad in [
            "exchange,symbol\nx,y\n",
            "exchange,symbol,timestamp,local_timestamp,is_snapshot,side,price,amount\nd,s,1,2,maybe,bid,1,1\n",
            "exchange,symbol,timestamp,local_timestamp,is_snapshot,side,price,amount\nd,s,1,2,true,up,1,1\n",
            "exchange,symbol,timestamp,local_timestamp,is_snapshot,side,price,amount\nd,s,1,2,true,bid,1.25,1\n",
            "exchange,symbol,timestamp,local_timestamp,is_snapshot,side,price,amount\nd,s,1,2,true,bid,1,-1\n",
            "exchange,symbol,timestamp,local_timestamp,is_snapshot,side,price,amount\nd,s,1\n",
        ] {
            let mut s = TardisL2::new(bad.as_bytes(), None::<&[u8]>, units);
            assert!(matches!(s.next_msg(), Err(DataError::Line { .. })), "{bad}");
        }
    }
}
