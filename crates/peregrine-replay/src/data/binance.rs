//! Raw Binance market-data streams as a collector records them (the files of
//! hftbacktest's `collector`, e.g. `ethusdt_20240808.gz`): one line per message,
//! `<local receive time, ns> <JSON>`, where the JSON is a combined-stream message
//! (`{"stream":"ethusdt@depth@100ms","data":{...}}`) or a REST depth snapshot
//! (`{"lastUpdateId":...,"bids":[...],"asks":[...]}`).
//!
//! Depth updates (`depthUpdate`: `U` first and `u` last update id, `b`/`a` levels with
//! absolute quantities) are applied on top of the latest snapshot as Binance
//! documents: updates with `u` at or below the snapshot's `lastUpdateId` are dropped,
//! the first applied one must span `lastUpdateId + 1`, and each next one must start
//! right after the previous (`U = u + 1`; futures streams chain with `pu`). A gap
//! drops updates until the next snapshot, counted in [`BinanceL2::gaps`]. Trades
//! (`trade`, `aggTrade`) give the aggressor from `m` (buyer is maker: the seller took);
//! `bookTicker` and unknown streams are skipped. Nothing is emitted before the first
//! snapshot: without it the book is unknown.

use std::collections::VecDeque;
use std::io::Read;

use peregrine_types::Side;
use serde::Deserialize;

use super::stream::Lines;
use super::text::{scaled, significant_decimals};
use super::{DataError, Recorded, Source, Units, L2};

const FORMAT: &str = "Binance raw";

#[derive(Deserialize)]
struct Wrapped<'a> {
    #[serde(borrow)]
    data: Option<Data<'a>>,
    #[serde(rename = "lastUpdateId")]
    last_update_id: Option<u64>,
    #[serde(borrow, default)]
    bids: Vec<[&'a str; 2]>,
    #[serde(borrow, default)]
    asks: Vec<[&'a str; 2]>,
}

/// Price levels `[[price, qty], ...]`; any other value (a `bookTicker`'s `"b"` is a
/// price string) reads as no levels.
#[derive(Default)]
struct Levels<'a>(Vec<[&'a str; 2]>);

impl<'de: 'a, 'a> Deserialize<'de> for Levels<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for V<'a> {
            type Value = Levels<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("price levels")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Self::Value, A::Error> {
                let mut v = Vec::new();
                while let Some(l) = seq.next_element::<[&'de str; 2]>()? {
                    v.push(l);
                }
                Ok(Levels(v))
            }
            fn visit_borrowed_str<E: serde::de::Error>(
                self,
                _: &'de str,
            ) -> Result<Self::Value, E> {
                Ok(Levels::default())
            }
            fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<Self::Value, E> {
                Ok(Levels::default())
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

#[derive(Deserialize)]
struct Data<'a> {
    e: Option<&'a str>,
    #[serde(rename = "E")]
    event_ms: Option<u64>,
    #[serde(rename = "T")]
    trade_ms: Option<u64>,
    #[serde(rename = "U")]
    first_id: Option<u64>,
    u: Option<u64>,
    pu: Option<u64>,
    #[serde(borrow, default)]
    b: Levels<'a>,
    #[serde(borrow, default)]
    a: Levels<'a>,
    p: Option<&'a str>,
    q: Option<&'a str>,
    m: Option<bool>,
}

/// A Binance raw stream file as [`L2`] messages.
#[derive(Debug)]
pub struct BinanceL2<R> {
    lines: Lines<R>,
    state: Sync,
}

/// The book synchronization state and the messages a line yielded.
#[derive(Debug)]
struct Sync {
    units: Units,
    pending: VecDeque<Recorded<L2>>,
    /// The last applied update id, once a snapshot was seen (`None`: waiting for one).
    last_id: Option<u64>,
    /// Depth updates applied since the last snapshot.
    applied: u64,
    /// Sequence gaps found (each drops updates until the next snapshot).
    gaps: u64,
}

impl<R: Read> BinanceL2<R> {
    /// The messages of `src`, numbers in `units`.
    pub fn new(src: R, units: Units) -> BinanceL2<R> {
        BinanceL2 {
            lines: Lines::new(src),
            state: Sync {
                units,
                pending: VecDeque::new(),
                last_id: None,
                applied: 0,
                gaps: 0,
            },
        }
    }

    /// Sequence gaps found so far (each dropped updates until the next snapshot).
    pub fn gaps(&self) -> u64 {
        self.state.gaps
    }
}

impl Sync {
    fn level(&self, side: Side, l: &[&str; 2]) -> Result<L2, String> {
        Ok(L2::Level {
            side,
            price: scaled(Some(l[0]), self.units.price_decimals, "price")?,
            qty: scaled(Some(l[1]), self.units.qty_decimals, "quantity")?,
        })
    }

    fn push_levels(
        &mut self,
        ts: (u64, u64),
        bids: &[[&str; 2]],
        asks: &[[&str; 2]],
    ) -> Result<(), String> {
        for (side, levels) in [(Side::Buy, bids), (Side::Sell, asks)] {
            for l in levels {
                let msg = self.level(side, l)?;
                self.pending.push_back(Recorded {
                    exch_ts: ts.0,
                    local_ts: ts.1,
                    msg,
                });
            }
        }
        Ok(())
    }

    /// Handles one line; queues what it yields.
    fn line(&mut self, local: u64, json: &str) -> Result<(), String> {
        let w: Wrapped<'_> = serde_json::from_str(json).map_err(|e| format!("JSON: {e}"))?;
        if let Some(id) = w.last_update_id {
            self.pending.push_back(Recorded {
                exch_ts: local,
                local_ts: local,
                msg: L2::Clear,
            });
            self.push_levels((local, local), &w.bids, &w.asks)?;
            self.last_id = Some(id);
            self.applied = 0;
            return Ok(());
        }
        let Some(d) = w.data else { return Ok(()) };
        let ms = |v: Option<u64>| v.map_or(local, |ms| ms.saturating_mul(1_000_000));
        match d.e {
            Some("depthUpdate") => {
                let (Some(first), Some(last), Some(prev)) = (d.first_id, d.u, self.last_id) else {
                    return Ok(()); // no snapshot yet, or not an update we can place
                };
                if last <= prev {
                    return Ok(()); // older than the book
                }
                let next = prev.saturating_add(1);
                let chained = match d.pu {
                    Some(pu) if self.applied > 0 => pu == prev,
                    _ if self.applied > 0 => first == next,
                    _ => first <= next,
                };
                if !chained {
                    self.gaps += 1;
                    self.last_id = None;
                    return Ok(());
                }
                self.push_levels((ms(d.event_ms), local), &d.b.0, &d.a.0)?;
                self.last_id = Some(last);
                self.applied += 1;
            }
            Some("trade") | Some("aggTrade") if self.last_id.is_some() => {
                let aggressor = match d.m {
                    Some(true) => Side::Sell,
                    Some(false) => Side::Buy,
                    None => return Err("trade without \"m\"".into()),
                };
                let price = scaled(d.p, self.units.price_decimals, "price")?;
                let qty = scaled(d.q, self.units.qty_decimals, "quantity")?;
                self.pending.push_back(Recorded {
                    exch_ts: ms(d.trade_ms.or(d.event_ms)),
                    local_ts: local,
                    msg: L2::Trade {
                        aggressor,
                        price,
                        qty,
                    },
                });
            }
            _ => {}
        }
        Ok(())
    }
}

/// Splits `"<local ns> <json>"`.
fn split_line(line: &str) -> Result<(u64, &str), String> {
    let (ts, json) = line
        .split_once(' ')
        .ok_or("no space between the timestamp and the JSON")?;
    let ts = ts
        .parse::<u64>()
        .map_err(|_| format!("timestamp {ts:?} is not an integer"))?;
    Ok((ts, json))
}

impl<R: Read> Source for BinanceL2<R> {
    type Msg = L2;

    fn next_msg(&mut self) -> Result<Option<Recorded<L2>>, DataError> {
        loop {
            if let Some(r) = self.state.pending.pop_front() {
                return Ok(Some(r));
            }
            let Some((n, line)) = self.lines.next_line(FORMAT)? else {
                return Ok(None);
            };
            split_line(line)
                .and_then(|(local, json)| self.state.line(local, json))
                .map_err(|why| DataError::line(FORMAT, n, why))?;
        }
    }
}

/// The decimals the numbers of a Binance file need (the largest number of significant
/// decimals among its prices and quantities; Binance pads them to eight).
pub fn infer_units<R: Read>(src: R) -> Result<Units, DataError> {
    let mut lines = Lines::new(src);
    let mut u = Units {
        price_decimals: 0,
        qty_decimals: 0,
    };
    while let Some((n, line)) = lines.next_line(FORMAT)? {
        let (_, json) = split_line(line).map_err(|why| DataError::line(FORMAT, n, why))?;
        let w: Wrapped<'_> = serde_json::from_str(json)
            .map_err(|e| DataError::line(FORMAT, n, format!("JSON: {e}")))?;
        let mut see = |p: &str, q: &str| {
            u.price_decimals = u.price_decimals.max(significant_decimals(p));
            u.qty_decimals = u.qty_decimals.max(significant_decimals(q));
        };
        for l in w.bids.iter().chain(&w.asks) {
            see(l[0], l[1]);
        }
        if let Some(d) = &w.data {
            for l in d.b.0.iter().chain(&d.a.0) {
                see(l[0], l[1]);
            }
            if let (Some(p), Some(q)) = (d.p, d.q) {
                see(p, q);
            }
        }
    }
    Ok(u)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = r#"1000 {"stream":"x@depth@100ms","data":{"e":"depthUpdate","E":1,"U":5,"u":9,"b":[["10.00","1"]],"a":[]}}
1001 {"lastUpdateId":10,"bids":[["10.00","2.5"],["9.99","1"]],"asks":[["10.01","3"]]}
1002 {"stream":"x@depth@100ms","data":{"e":"depthUpdate","E":2,"U":8,"u":10,"b":[["10.00","9"]],"a":[]}}
1003 {"stream":"x@depth@100ms","data":{"e":"depthUpdate","E":3,"U":9,"u":12,"b":[["10.00","2"]],"a":[["10.01","0.00000000"]]}}
1004 {"stream":"x@trade","data":{"e":"trade","E":4,"T":4,"t":1,"p":"10.00","q":"0.5","m":true}}
1005 {"stream":"x@bookTicker","data":{"u":12,"b":"10.00","B":"1","a":"10.02","A":"1"}}
1006 {"stream":"x@depth@100ms","data":{"e":"depthUpdate","E":5,"U":20,"u":21,"b":[["9.98","1"]],"a":[]}}
1007 {"stream":"x@depth@100ms","data":{"e":"depthUpdate","E":6,"U":22,"u":23,"b":[["9.97","1"]],"a":[]}}
"#;

    #[test]
    fn snapshot_then_chained_updates_then_a_gap() {
        let units = infer_units(SAMPLE.as_bytes()).unwrap();
        assert_eq!(
            units,
            Units {
                price_decimals: 2,
                qty_decimals: 1
            }
        );
        let mut s = BinanceL2::new(SAMPLE.as_bytes(), units);
        let mut got = Vec::new();
        while let Some(r) = s.next_msg().unwrap() {
            got.push((r.exch_ts, r.local_ts, r.msg));
        }
        let lvl = |side, price, qty| L2::Level { side, price, qty };
        assert_eq!(
            got,
            vec![
                (1001, 1001, L2::Clear),
                (1001, 1001, lvl(Side::Buy, 1000, 25)),
                (1001, 1001, lvl(Side::Buy, 999, 10)),
                (1001, 1001, lvl(Side::Sell, 1001, 30)),
                // u = 10 is not above lastUpdateId 10: dropped. U = 9 spans 11.
                (3_000_000, 1003, lvl(Side::Buy, 1000, 20)),
                (3_000_000, 1003, lvl(Side::Sell, 1001, 0)),
                (
                    4_000_000,
                    1004,
                    L2::Trade {
                        aggressor: Side::Sell,
                        price: 1000,
                        qty: 5
                    }
                ),
                // U = 20 does not follow u = 12: a gap; nothing more until a snapshot.
            ]
        );
        assert_eq!(s.gaps(), 1);
    }

    #[test]
    fn bad_lines_are_typed_errors() {
        let units = Units {
            price_decimals: 2,
            qty_decimals: 0,
        };
        for bad in [
            "nospace",
            "x {}",
            "1 {not json",
            "1 {\"lastUpdateId\":1,\"bids\":[[\"1.001\",\"1\"]],\"asks\":[]}",
        ] {
            let mut s = BinanceL2::new(bad.as_bytes(), units);
            assert!(
                matches!(s.next_msg(), Err(DataError::Line { line: 1, .. })),
                "{bad}"
            );
        }
    }
}
