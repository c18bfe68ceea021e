//! Recorded order latencies: one row per order sent to a venue, with when it was
//! sent (`req_ts`, local clock), when the venue processed it (`exch_ts`, venue clock)
//! and when the answer arrived (`resp_ts`, local clock), in nanoseconds, comma
//! separated (the layout hftbacktest's latency data uses; a fourth column is
//! ignored, a first line that is not numbers is a header). The replay's interpolated
//! latency model ([`crate::latency::Interpolated`]) reads these rows.

use std::io::Read;

use super::stream::Lines;
use super::text::{fields, int};
use super::DataError;

const FORMAT: &str = "latency";

/// One recorded order round trip.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LatencyRow {
    /// Sent (local clock), ns.
    pub req_ts: i64,
    /// Processed by the venue (venue clock), ns.
    pub exch_ts: i64,
    /// Answer received (local clock), ns.
    pub resp_ts: i64,
}

/// Parses one row.
pub fn parse_row(line: &str) -> Result<LatencyRow, String> {
    let mut f = fields(line);
    let row = LatencyRow {
        req_ts: int(f.next(), "req_ts")?,
        exch_ts: int(f.next(), "exch_ts")?,
        resp_ts: int(f.next(), "resp_ts")?,
    };
    let _padding = f.next();
    if f.next().is_some() {
        return Err("more than four fields".into());
    }
    if row.resp_ts < row.req_ts {
        return Err(format!(
            "answer at {} before the request at {}",
            row.resp_ts, row.req_ts
        ));
    }
    Ok(row)
}

/// Every row of a latency file, sorted by request time.
pub fn read_rows<R: Read>(src: R) -> Result<Vec<LatencyRow>, DataError> {
    let mut lines = Lines::new(src);
    let mut rows = Vec::new();
    while let Some((n, line)) = lines.next_line(FORMAT)? {
        match parse_row(line) {
            Ok(r) => rows.push(r),
            Err(_) if n == 1 && !line.starts_with(|c: char| c.is_ascii_digit()) => {}
            Err(why) => return Err(DataError::line(FORMAT, n, why)),
        }
    }
    rows.sort_by_key(|r| r.req_ts);
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_with_a_header_and_padding() {
        let text = "req_ts,exch_ts,resp_ts,_padding\n\
                    1670026845754020000,1670026845762000000,1670026845770003000,0\n\
                    1670026844751525000,1670026844759000000,1670026844762122000,0\n";
        let rows = read_rows(text.as_bytes()).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(
            rows[0].req_ts, 1670026844751525000,
            "sorted by request time"
        );
        assert!(read_rows("1,2\n".as_bytes()).is_err());
        assert!(read_rows("5,6,4\n".as_bytes()).is_err());
        assert!(read_rows("1,2,3,4,5\n".as_bytes()).is_err());
    }
}
