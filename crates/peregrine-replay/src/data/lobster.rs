//! LOBSTER (lobsterdata.com) message and order book files.
//!
//! A day of one ticker is two CSV files without a header, aligned line by line:
//!
//! * `TICKER_DATE_START_END_message_N.csv`: `Time,Type,OrderID,Size,Price,Direction`,
//!   time in seconds after midnight with up to nine decimals; type 1 new limit order,
//!   2 partial cancel, 3 delete, 4 execution of a visible order, 5 execution of a
//!   hidden order, 6 cross trade, 7 trading halt (price -1 halt, 0 quoting, 1
//!   resume); price in dollars × 10,000; direction 1 buy, -1 sell (for executions,
//!   the side of the resting order).
//! * `TICKER_DATE_START_END_orderbook_N.csv`: after each message, the top `N` levels
//!   as `AskPrice1,AskSize1,BidPrice1,BidSize1,...`; an empty level is written as
//!   price 9999999999 (ask) or -9999999999 (bid) with size 0.
//!
//! Prices keep the four decimals; quantities are shares.

use std::io::Read;

use peregrine_types::Side;

use super::stream::Lines;
use super::text::{fields, int, seconds_ns};
use super::{DataError, Recorded, Source, L3};

const FORMAT: &str = "LOBSTER message";
const BOOK_FORMAT: &str = "LOBSTER orderbook";

/// The price LOBSTER writes for an empty ask level.
pub const EMPTY_ASK: i64 = 9_999_999_999;
/// The price LOBSTER writes for an empty bid level.
pub const EMPTY_BID: i64 = -9_999_999_999;

/// A LOBSTER message file as [`L3`] messages.
#[derive(Debug)]
pub struct LobsterMessages<R> {
    lines: Lines<R>,
}

impl<R: Read> LobsterMessages<R> {
    /// The messages of `src`.
    pub fn new(src: R) -> LobsterMessages<R> {
        LobsterMessages {
            lines: Lines::new(src),
        }
    }
}

/// Parses one message line into its time, the normalized message, and the side,
/// price and size LOBSTER writes on every line (what [`crate::lobster_seed`] needs for
/// orders placed before the file starts).
pub fn parse_line(line: &str) -> Result<(u64, L3, Side, i64, i64), String> {
    let (ts, msg) = parse_message(line)?;
    let mut f = fields(line).skip(3);
    let size = int(f.next(), "size")?;
    let price = int(f.next(), "price")?;
    let side = if int(f.next(), "direction")? == 1 {
        Side::Buy
    } else {
        Side::Sell
    };
    Ok((ts, msg, side, price, size))
}

/// Parses one message line.
pub fn parse_message(line: &str) -> Result<(u64, L3), String> {
    let mut f = fields(line);
    let ts = seconds_ns(f.next(), "time")?;
    let kind = int(f.next(), "type")?;
    let id = int(f.next(), "order id")?;
    let size = int(f.next(), "size")?;
    let price = int(f.next(), "price")?;
    let dir = int(f.next(), "direction")?;
    if f.next().is_some() {
        return Err("more than six fields".into());
    }
    let side = match dir {
        1 => Side::Buy,
        -1 => Side::Sell,
        other => return Err(format!("direction {other} is neither 1 nor -1")),
    };
    if kind == 7 {
        return Ok((ts, L3::Halt(price != 1)));
    }
    let order_ref = u64::try_from(id).map_err(|_| format!("negative order id {id}"))?;
    if size < 0 {
        return Err(format!("negative size {size}"));
    }
    let msg = match kind {
        1 => L3::Add {
            order_ref,
            side,
            price,
            qty: size,
        },
        2 => L3::Cancel {
            order_ref,
            qty: size,
        },
        3 => L3::Delete { order_ref },
        4 => L3::Execute {
            order_ref,
            qty: size,
        },
        5 | 6 => L3::Trade {
            aggressor: side.opposite(),
            price,
            qty: size,
        },
        other => return Err(format!("unknown message type {other}")),
    };
    Ok((ts, msg))
}

impl<R: Read> Source for LobsterMessages<R> {
    type Msg = L3;

    fn next_msg(&mut self) -> Result<Option<Recorded<L3>>, DataError> {
        let Some((n, line)) = self.lines.next_line(FORMAT)? else {
            return Ok(None);
        };
        let (ts, msg) = parse_message(line).map_err(|why| DataError::line(FORMAT, n, why))?;
        Ok(Some(Recorded {
            exch_ts: ts,
            local_ts: ts,
            msg,
        }))
    }
}

/// One level of an order book row: price and size, `None` for an empty level.
pub type BookLevel = Option<(i64, i64)>;

/// A LOBSTER order book file, row by row.
#[derive(Debug)]
pub struct LobsterBook<R> {
    lines: Lines<R>,
    /// Asks of the current row, best first (`None`: empty level).
    pub asks: Vec<BookLevel>,
    /// Bids of the current row, best first.
    pub bids: Vec<BookLevel>,
}

impl<R: Read> LobsterBook<R> {
    /// The rows of `src`.
    pub fn new(src: R) -> LobsterBook<R> {
        LobsterBook {
            lines: Lines::new(src),
            asks: Vec::new(),
            bids: Vec::new(),
        }
    }

    /// Reads the next row into [`LobsterBook::asks`] and [`LobsterBook::bids`];
    /// `false` at the end of the file.
    pub fn next_row(&mut self) -> Result<bool, DataError> {
        let Some((n, line)) = self.lines.next_line(BOOK_FORMAT)? else {
            return Ok(false);
        };
        parse_book_row(line, &mut self.asks, &mut self.bids)
            .map_err(|why| DataError::line(BOOK_FORMAT, n, why))?;
        Ok(true)
    }
}

/// Parses one order book row into `asks` and `bids` (cleared first).
pub fn parse_book_row(
    line: &str,
    asks: &mut Vec<BookLevel>,
    bids: &mut Vec<BookLevel>,
) -> Result<(), String> {
    asks.clear();
    bids.clear();
    let mut f = fields(line);
    while let Some(first) = f.next() {
        let ap = int(Some(first), "ask price")?;
        let aq = int(f.next(), "ask size")?;
        let bp = int(f.next(), "bid price")?;
        let bq = int(f.next(), "bid size")?;
        if aq < 0 || bq < 0 {
            return Err("negative size".into());
        }
        asks.push((ap != EMPTY_ASK && aq > 0).then_some((ap, aq)));
        bids.push((bp != EMPTY_BID && bq > 0).then_some((bp, bq)));
        if asks.len() > 1_000 {
            return Err("more than 1,000 levels".into());
        }
    }
    if asks.is_empty() {
        return Err("no levels".into());
    }
    Ok(())
}

/// Writes one message line as LOBSTER does (the synthetic generator's writer).
pub fn write_message(
    out: &mut String,
    ts: u64,
    kind: u8,
    id: u64,
    size: i64,
    price: i64,
    side: Side,
) {
    use std::fmt::Write;
    let dir = match side {
        Side::Buy => 1,
        Side::Sell => -1,
    };
    let _ = writeln!(
        out,
        "{}.{:09},{kind},{id},{size},{price},{dir}",
        ts / 1_000_000_000,
        ts % 1_000_000_000
    );
}

/// Writes one order book row (`levels` per side; missing levels as LOBSTER's dummies).
pub fn write_book_row(out: &mut String, asks: &[(i64, i64)], bids: &[(i64, i64)], levels: usize) {
    use std::fmt::Write;
    for i in 0..levels {
        let (ap, aq) = asks.get(i).copied().unwrap_or((EMPTY_ASK, 0));
        let (bp, bq) = bids.get(i).copied().unwrap_or((EMPTY_BID, 0));
        if i > 0 {
            out.push(',');
        }
        let _ = write!(out, "{ap},{aq},{bp},{bq}");
    }
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_parse_and_bad_lines_are_typed_errors() {
        let text = "34200.004241176,1,16113575,18,5853300,1\n\
                    34200.025552363,4,16113575,18,5853300,1\n\
                    34200.201,3,16120456,100,5859100,-1\n\
                    34200.3,5,0,50,5853400,-1\n\
                    34200.4,7,-1,0,-1,-1\n\
                    34200.5,1,-5,1,1,1\n";
        let mut s = LobsterMessages::new(text.as_bytes());
        let first = s.next_msg().unwrap().unwrap();
        assert_eq!(first.exch_ts, 34_200_004_241_176);
        assert_eq!(
            first.msg,
            L3::Add {
                order_ref: 16113575,
                side: Side::Buy,
                price: 5853300,
                qty: 18
            }
        );
        assert!(matches!(
            s.next_msg().unwrap().unwrap().msg,
            L3::Execute { qty: 18, .. }
        ));
        assert!(matches!(
            s.next_msg().unwrap().unwrap().msg,
            L3::Delete { .. }
        ));
        assert_eq!(
            s.next_msg().unwrap().unwrap().msg,
            L3::Trade {
                aggressor: Side::Buy,
                price: 5853400,
                qty: 50
            }
        );
        assert_eq!(s.next_msg().unwrap().unwrap().msg, L3::Halt(true));
        assert!(s.next_msg().is_err(), "order id -5 is refused");
        for bad in [
            "x,1,1,1,1,1",
            "1,9,1,1,1,1",
            "1,1,1,1,1,0",
            "1,1,1,-1,1,1",
            "1,1,1,1,1",
            "1,1,1,1,1,1,1",
        ] {
            assert!(parse_message(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn book_rows_round_trip_with_empty_levels() {
        let mut line = String::new();
        write_book_row(&mut line, &[(101, 5)], &[(99, 3), (98, 1)], 3);
        assert_eq!(
            line,
            "101,5,99,3,9999999999,0,98,1,9999999999,0,-9999999999,0\n"
        );
        let mut b = LobsterBook::new(line.as_bytes());
        assert!(b.next_row().unwrap());
        assert_eq!(b.asks, [Some((101, 5)), None, None]);
        assert_eq!(b.bids, [Some((99, 3)), Some((98, 1)), None]);
        assert!(!b.next_row().unwrap());
        let (mut a, mut bi) = (Vec::new(), Vec::new());
        assert!(parse_book_row("1,2,3", &mut a, &mut bi).is_err());
        let mut m = String::new();
        write_message(&mut m, 34_200_000_000_001, 1, 7, 100, 5_000_000, Side::Sell);
        assert_eq!(m, "34200.000000001,1,7,100,5000000,-1\n");
        assert_eq!(parse_message(m.trim()).unwrap().0, 34_200_000_000_001);
    }
}
