//! The exchange snapshot: the engine state after command `last_seq`, as a
//! little-endian blob stored by `peregrine_journal::SnapshotStore`.
//!
//! ```text
//! header 40: 0 version u8 (=1), 1..8 zero, 8 next_order_id u64, 16 last_seq u64,
//!            24 last_ts u64, 32 books u32, 36..40 zero
//! per book 32: 0 instrument u32, 4 status u8 (0 active, 1 halted), 5..8 zero,
//!            8 now u64, 16 trade_seq u64, 24 orders u32, 28..32 zero
//! per order 48 (priority order: bids best→worst, then asks, FIFO in a level):
//!            0 id u64, 8 client_id u64, 16 account u32, 20 side u8, 21 tif u8,
//!            22 stp u8, 23 post_only u8, 24 price i64, 32 qty i64, 40 expire_at u64
//! ```
//!
//! Version 2 (written when balances are on) is version 1 followed by the ledger, every
//! list sorted by key:
//!
//! ```text
//! ledger 16:   0 balances u32, 4 holds u32, 8 supplies u32, 12..16 zero
//! per balance 40: 0 account u32, 4 asset u32, 8 available i128, 24 reserved i128
//! per hold 40: 0 order id u64, 8 account u32, 12 side u8, 13..16 zero, 16 price i64,
//!              24 leaves i64, 32 base asset u32, 36 quote asset u32
//! per supply 24: 0 asset u32, 4..8 zero, 8 net deposits i128
//! ```
//!
//! Versions 3 and 4 (protocol version 2's report streams) are versions 1 and 2
//! followed by each account's next report sequence number, sorted by account:
//!
//! ```text
//! reports 8:   0 accounts u32, 4..8 zero
//! per account 16: 0 account u32, 4..8 zero, 8 next_report_seq u64
//! ```
//!
//! Versions 5 and 6 are versions 3 and 4 followed by the report streams' retained
//! reports (what a client reconnecting may ask to be replayed: the retention survives
//! restarts, snapshot installs and failovers):
//!
//! ```text
//! store 32:    0 retain u64, 8 all_floor u64, 16 order_base u64, 24 streams u32,
//!              28 order u32
//! per stream 16 + items: 0 account u32, 4 items u32, 8 next_report_seq u64, then
//!              each retained report, oldest first: 0 len u16, then its len bytes (the
//!              protocol-v2 frame, report_seq next - items + i)
//! per order entry 16: 0 account u32, 4..8 zero, 8 report_seq u64 (the emission order
//!              across accounts, from global index order_base)
//! ```
//!
//! Versions 1 and 2 still decode (with no counters: every stream starts at 1); 3 and 4
//! with no retained reports.
//!
//! Versions 5 and 6 (the venue's order types) are versions 3 and 4 followed by the
//! venue section ([`super::venue`]): each book's phase, last price, parked orders,
//! lists and protections, the fee stage's volumes, and the ledger's fee fields.
//! Versions 1 to 4 still decode (a book without venue state keeps its defaults).
//!
//! [`decode`] checks every length and enum byte before allocating and returns a
//! [`SnapshotDecodeError`]; it never panics.

use peregrine_book::{LevelIndex, MatchingEngine, NoPreMatch, PreMatch, RestingOrder};
use peregrine_ledger::{AssetId, Balance, Fees, HoldState, InstrumentAssets, Ledger, LedgerState};

use super::venue::{self as venue_codec, VenueSection};

use crate::balances::Balances;
use crate::reports::{ReportStore, Retention};
use peregrine_types::{
    AccountId, ClientOrderId, InstrumentId, InstrumentStatus, OrderId, Price, Qty, Side, StpMode,
    TimeInForce, Timestamp,
};
use peregrine_wire::v2::Outbound;

const VERSION: u8 = 1;
const VERSION_LEDGER: u8 = 2;
const VERSION_REPORTS: u8 = 3;
const VERSION_LEDGER_REPORTS: u8 = 4;
const VERSION_STORE: u8 = 5;
const VERSION_LEDGER_STORE: u8 = 6;
const VERSION_VENUE: u8 = 7;
const VERSION_VENUE_LEDGER: u8 = 8;
const VERSION_VENUE_STORE: u8 = 9;
const VERSION_VENUE_LEDGER_STORE: u8 = 10;
const STORE: usize = 32;
const STREAM: usize = 16;
const ORDER_ENTRY: usize = 16;
const REPORTS: usize = 8;
const REPORT_ENTRY: usize = 16;
const HEADER: usize = 40;
const LEDGER: usize = 16;
const BALANCE: usize = 40;
const HOLD: usize = 40;
const SUPPLY: usize = 24;

/// A pre-match stage whose state a snapshot carries (the ledger, when there is one;
/// the fee stage, when fees are on).
pub trait SnapshotLedger {
    /// The ledger to store, if any.
    fn snapshot_ledger(&self) -> Option<&Ledger>;
    /// The fee stage to store, if any.
    fn snapshot_fees(&self) -> Option<&Fees> {
        None
    }
}

impl SnapshotLedger for NoPreMatch {
    fn snapshot_ledger(&self) -> Option<&Ledger> {
        None
    }
}

impl SnapshotLedger for Balances {
    fn snapshot_ledger(&self) -> Option<&Ledger> {
        self.ledger()
    }
    fn snapshot_fees(&self) -> Option<&Fees> {
        self.fees()
    }
}
const BOOK: usize = 32;
const ORDER: usize = 48;

/// One book of a snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BookSnapshot {
    /// Instrument.
    pub instrument: InstrumentId,
    /// Trading status.
    pub status: InstrumentStatus,
    /// The book's clock.
    pub now: Timestamp,
    /// Trades printed so far.
    pub trade_seq: u64,
    /// Resting orders in priority order.
    pub orders: Vec<RestingOrder>,
}

/// A decoded snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineSnapshot {
    /// The engine's next order id.
    pub next_order_id: OrderId,
    /// The last command the state includes.
    pub last_seq: u64,
    /// That command's time.
    pub last_ts: Timestamp,
    /// Every book, by instrument id.
    pub books: Vec<BookSnapshot>,
    /// Balances and holds (version 2), `None` for an exchange without balances.
    pub ledger: Option<LedgerState>,
    /// Each account's next report sequence number (versions 3 and 4), by account.
    pub report_next: Vec<(AccountId, u64)>,
    /// The report streams' retained reports (versions 5 and 6), with the retention
    /// they were saved under.
    pub reports: Option<ReportStore>,
    /// The venue section (versions 7 to 10).
    pub venue: Option<VenueSection>,
}

/// Why a snapshot blob does not decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SnapshotDecodeError {
    /// Unknown layout version.
    #[error("unknown snapshot version {0}")]
    BadVersion(u8),
    /// The blob ends early or has trailing bytes.
    #[error("snapshot length {0} does not match its counts")]
    BadLength(usize),
    /// A retained report is not the report its place in the stream says.
    #[error("snapshot report store: {0}")]
    BadReport(&'static str),
    /// An enum byte has no meaning (or a padding byte is not zero).
    #[error("snapshot field {field}: unknown value {value}")]
    BadEnum {
        /// The field.
        field: &'static str,
        /// The byte.
        value: u8,
    },
}

/// Encodes the engine state after command `last_seq` (time `last_ts`), with each
/// account's next report sequence number (sorted by account).
pub fn encode<L: LevelIndex, P: PreMatch + SnapshotLedger>(
    engine: &MatchingEngine<L, P>,
    last_seq: u64,
    last_ts: Timestamp,
    report_next: &[(AccountId, u64)],
) -> Vec<u8> {
    encode_with(engine, last_seq, last_ts, report_next, None)
}

/// [`encode`], with the report streams' retained reports when `reports` is given
/// (versions 5 and 6).
pub fn encode_with<L: LevelIndex, P: PreMatch + SnapshotLedger>(
    engine: &MatchingEngine<L, P>,
    last_seq: u64,
    last_ts: Timestamp,
    report_next: &[(AccountId, u64)],
    reports: Option<&ReportStore>,
) -> Vec<u8> {
    capture(engine, last_seq, last_ts, report_next, reports).encode()
}

/// Everything [`encode_with`] reads of an engine, copied out: each book's resting
/// orders and venue state, the ledger, the fee stage, the report counters and the
/// retained reports. Taking it is a walk and a copy (no encoding); its
/// [`Capture::encode`] makes the very bytes [`encode_with`] would have made at the
/// moment of the capture, later and on any thread, whatever the engine did since.
#[derive(Debug, Clone)]
pub struct Capture {
    next_order_id: OrderId,
    last_seq: u64,
    last_ts: Timestamp,
    books: Vec<CapturedBook>,
    ledger: Option<LedgerState>,
    report_next: Vec<(AccountId, u64)>,
    fees: Option<peregrine_ledger::FeeState>,
    reports: Option<ReportStore>,
}

#[derive(Debug, Clone)]
struct CapturedBook {
    instrument: InstrumentId,
    status: InstrumentStatus,
    now: Timestamp,
    trade_seq: u64,
    /// In priority order (what `visit_orders` gives).
    orders: Vec<RestingOrder>,
    venue: peregrine_book::VenueState,
}

/// Copies out what [`encode_with`] would encode (see [`Capture`]).
pub fn capture<L: LevelIndex, P: PreMatch + SnapshotLedger>(
    engine: &MatchingEngine<L, P>,
    last_seq: u64,
    last_ts: Timestamp,
    report_next: &[(AccountId, u64)],
    reports: Option<&ReportStore>,
) -> Capture {
    let books = engine
        .books()
        .map(|b| {
            let mut orders = Vec::with_capacity(b.len());
            b.visit_orders(&mut |o| orders.push(*o));
            CapturedBook {
                instrument: b.spec().id,
                status: b.spec().status,
                now: b.now(),
                trade_seq: b.trade_seq(),
                orders,
                venue: b.venue_state(),
            }
        })
        .collect();
    Capture {
        next_order_id: engine.next_order_id(),
        last_seq,
        last_ts,
        books,
        ledger: engine.pre_match_ref().snapshot_ledger().map(Ledger::export),
        report_next: report_next.to_vec(),
        fees: engine.pre_match_ref().snapshot_fees().map(Fees::export),
        reports: reports.cloned(),
    }
}

impl Capture {
    /// The snapshot blob of the captured state.
    pub fn encode(&self) -> Vec<u8> {
        let orders: usize = self.books.iter().map(|b| b.orders.len()).sum();
        let ledger = self.ledger.as_ref();
        let report_next = &self.report_next;
        let mut out = Vec::with_capacity(HEADER + self.books.len() * BOOK + orders * ORDER);
        let version = match (ledger.is_some(), self.reports.is_some()) {
            (false, false) => VERSION_VENUE,
            (true, false) => VERSION_VENUE_LEDGER,
            (false, true) => VERSION_VENUE_STORE,
            (true, true) => VERSION_VENUE_LEDGER_STORE,
        };
        out.extend_from_slice(&[version, 0, 0, 0, 0, 0, 0, 0]);
        out.extend_from_slice(&self.next_order_id.0.to_le_bytes());
        out.extend_from_slice(&self.last_seq.to_le_bytes());
        out.extend_from_slice(&self.last_ts.0.to_le_bytes());
        out.extend_from_slice(&(self.books.len() as u32).to_le_bytes());
        out.extend_from_slice(&[0; 4]);
        for b in &self.books {
            out.extend_from_slice(&b.instrument.0.to_le_bytes());
            out.extend_from_slice(&[status_byte(b.status), 0, 0, 0]);
            out.extend_from_slice(&b.now.0.to_le_bytes());
            out.extend_from_slice(&b.trade_seq.to_le_bytes());
            out.extend_from_slice(&(b.orders.len() as u32).to_le_bytes());
            out.extend_from_slice(&[0; 4]);
            for o in &b.orders {
                put_order(&mut out, o);
            }
        }
        if let Some(l) = ledger {
            put_ledger(&mut out, l);
        }
        out.reserve(REPORTS + report_next.len() * REPORT_ENTRY);
        out.extend_from_slice(&(report_next.len() as u32).to_le_bytes());
        out.extend_from_slice(&[0; 4]);
        for (account, next) in report_next {
            out.extend_from_slice(&account.0.to_le_bytes());
            out.extend_from_slice(&[0; 4]);
            out.extend_from_slice(&next.to_le_bytes());
        }
        let icebergs: Vec<Vec<_>> = self
            .books
            .iter()
            .map(|b| {
                b.orders
                    .iter()
                    .filter(|o| !o.display.is_zero())
                    .map(|o| (o.id, o.display, o.shown))
                    .collect()
            })
            .collect();
        let parts: Vec<_> = self
            .books
            .iter()
            .zip(&icebergs)
            .map(|(b, icebergs)| venue_codec::BookPart {
                state: &b.venue,
                icebergs,
            })
            .collect();
        venue_codec::put(&mut out, &parts, self.fees.as_ref(), ledger);
        if let Some(store) = &self.reports {
            put_store(&mut out, store);
        }
        out
    }
}

fn put_store(out: &mut Vec<u8>, store: &ReportStore) {
    let p = store.parts();
    out.extend_from_slice(&(store.retention().per_account as u64).to_le_bytes());
    out.extend_from_slice(&p.all_floor.to_le_bytes());
    out.extend_from_slice(&p.order_base.to_le_bytes());
    out.extend_from_slice(&(p.streams.len() as u32).to_le_bytes());
    out.extend_from_slice(&(p.order.len() as u32).to_le_bytes());
    let mut frame = [0u8; peregrine_wire::MAX_MESSAGE_SIZE];
    for (account, next, items) in &p.streams {
        out.extend_from_slice(&account.0.to_le_bytes());
        out.extend_from_slice(&(items.len() as u32).to_le_bytes());
        out.extend_from_slice(&next.to_le_bytes());
        for msg in *items {
            let n = msg.encode(&mut frame).unwrap_or(0);
            out.extend_from_slice(&(n as u16).to_le_bytes());
            out.extend_from_slice(&frame[..n]);
        }
    }
    for (account, seq) in p.order {
        out.extend_from_slice(&account.0.to_le_bytes());
        out.extend_from_slice(&[0; 4]);
        out.extend_from_slice(&seq.to_le_bytes());
    }
}

/// The report store section; `None` when too short.
fn store(r: &mut Reader<'_>) -> Option<Result<ReportStore, SnapshotDecodeError>> {
    let retain = r.u64()?;
    let all_floor = r.u64()?;
    let order_base = r.u64()?;
    let n_streams = r.u32()? as usize;
    let n_order = r.u32()? as usize;
    let left = r.b.len() - r.at;
    if n_streams > left / STREAM || n_order > left / ORDER_ENTRY {
        return None;
    }
    let mut streams = Vec::with_capacity(n_streams);
    for _ in 0..n_streams {
        let account = AccountId(r.u32()?);
        let n = r.u32()? as usize;
        let next = r.u64()?;
        if n > (r.b.len() - r.at) / 2 {
            return None;
        }
        let first = match next.checked_sub(n as u64) {
            Some(f) if f >= 1 || n == 0 => f,
            _ => {
                return Some(Err(SnapshotDecodeError::BadReport(
                    "more reports than numbers",
                )))
            }
        };
        let mut items = std::collections::VecDeque::with_capacity(n);
        for i in 0..n as u64 {
            let len = usize::from(u16::from_le_bytes(r.take::<2>()?));
            let bytes = r.b.get(r.at..r.at.checked_add(len)?)?;
            r.at += len;
            let msg = match Outbound::decode(bytes) {
                Ok((m, used)) if used == len => m,
                _ => return Some(Err(SnapshotDecodeError::BadReport("undecodable report"))),
            };
            if msg.report() != Some((account, first + i)) {
                return Some(Err(SnapshotDecodeError::BadReport(
                    "a report out of its stream's place",
                )));
            }
            items.push_back(msg);
        }
        streams.push((account, next, items));
    }
    let mut order = std::collections::VecDeque::with_capacity(n_order);
    for _ in 0..n_order {
        let account = AccountId(r.u32()?);
        r.skip(4)?;
        order.push_back((account, r.u64()?));
    }
    let retention = Retention {
        per_account: usize::try_from(retain).unwrap_or(usize::MAX),
    };
    Some(Ok(ReportStore::from_parts(
        retention, streams, order, order_base, all_floor,
    )))
}

fn put_ledger(out: &mut Vec<u8>, l: &LedgerState) {
    out.extend_from_slice(&(l.balances.len() as u32).to_le_bytes());
    out.extend_from_slice(&(l.holds.len() as u32).to_le_bytes());
    out.extend_from_slice(&(l.supply.len() as u32).to_le_bytes());
    out.extend_from_slice(&[0; 4]);
    for (account, asset, b) in &l.balances {
        out.extend_from_slice(&account.0.to_le_bytes());
        out.extend_from_slice(&asset.0.to_le_bytes());
        out.extend_from_slice(&b.available.to_le_bytes());
        out.extend_from_slice(&b.reserved.to_le_bytes());
    }
    for h in &l.holds {
        out.extend_from_slice(&h.order.0.to_le_bytes());
        out.extend_from_slice(&h.account.0.to_le_bytes());
        out.extend_from_slice(&[h.side as u8, 0, 0, 0]);
        out.extend_from_slice(&h.price.to_le_bytes());
        out.extend_from_slice(&h.leaves.to_le_bytes());
        out.extend_from_slice(&h.assets.base.0.to_le_bytes());
        out.extend_from_slice(&h.assets.quote.0.to_le_bytes());
    }
    for (asset, v) in &l.supply {
        out.extend_from_slice(&asset.0.to_le_bytes());
        out.extend_from_slice(&[0; 4]);
        out.extend_from_slice(&v.to_le_bytes());
    }
}

/// `None`: too short; `Some(Err)`: a bad enum byte.
fn ledger(r: &mut Reader<'_>) -> Option<Result<LedgerState, SnapshotDecodeError>> {
    let (nb, nh, ns) = (r.u32()? as usize, r.u32()? as usize, r.u32()? as usize);
    r.skip(4)?;
    let left = r.b.len() - r.at;
    if nb > left / BALANCE || nh > left / HOLD || ns > left / SUPPLY {
        return None;
    }
    let mut state = LedgerState::default();
    for _ in 0..nb {
        let (account, asset) = (AccountId(r.u32()?), AssetId(r.u32()?));
        let (available, reserved) = (r.i128()?, r.i128()?);
        let b = Balance {
            available,
            reserved,
        };
        state.balances.push((account, asset, b));
    }
    for _ in 0..nh {
        let order = OrderId(r.u64()?);
        let account = AccountId(r.u32()?);
        let s = r.u8()?;
        r.skip(3)?;
        let (price, leaves) = (r.u64()? as i64, r.u64()? as i64);
        let (base, quote) = (AssetId(r.u32()?), AssetId(r.u32()?));
        let Some(side) = Side::from_u8(s) else {
            return Some(Err(bad_enum("hold side", s)));
        };
        state.holds.push(HoldState {
            order,
            account,
            side,
            price,
            leaves,
            assets: InstrumentAssets { base, quote },
            fee_ppm: 0,
            fee_left: 0,
        });
    }
    for _ in 0..ns {
        let asset = AssetId(r.u32()?);
        r.skip(4)?;
        state.supply.push((asset, r.i128()?));
    }
    Some(Ok(state))
}

fn status_byte(s: InstrumentStatus) -> u8 {
    match s {
        InstrumentStatus::Active => 0,
        InstrumentStatus::Halted => 1,
    }
}

fn put_order(out: &mut Vec<u8>, o: &RestingOrder) {
    out.extend_from_slice(&o.id.0.to_le_bytes());
    out.extend_from_slice(&o.client_id.0.to_le_bytes());
    out.extend_from_slice(&o.account.0.to_le_bytes());
    out.extend_from_slice(&[
        o.side as u8,
        o.tif as u8,
        o.stp as u8,
        u8::from(o.post_only),
    ]);
    out.extend_from_slice(&o.price.units().to_le_bytes());
    out.extend_from_slice(&o.qty.lots().to_le_bytes());
    out.extend_from_slice(&o.expire_at.0.to_le_bytes());
}

/// Decodes a blob made by [`encode`].
pub fn decode(b: &[u8]) -> Result<EngineSnapshot, SnapshotDecodeError> {
    let bad_len = SnapshotDecodeError::BadLength(b.len());
    let mut r = Reader { b, at: 0 };
    let version = r.u8().ok_or(bad_len)?;
    if !(VERSION..=VERSION_VENUE_LEDGER_STORE).contains(&version) {
        return Err(SnapshotDecodeError::BadVersion(version));
    }
    let has_ledger = matches!(
        version,
        VERSION_LEDGER
            | VERSION_LEDGER_REPORTS
            | VERSION_LEDGER_STORE
            | VERSION_VENUE_LEDGER
            | VERSION_VENUE_LEDGER_STORE
    );
    let has_reports = version >= VERSION_REPORTS;
    let has_venue = version >= VERSION_VENUE;
    let has_store = matches!(
        version,
        VERSION_STORE | VERSION_LEDGER_STORE | VERSION_VENUE_STORE | VERSION_VENUE_LEDGER_STORE
    );
    r.skip(7).ok_or(bad_len)?;
    let next_order_id = OrderId(r.u64().ok_or(bad_len)?);
    let last_seq = r.u64().ok_or(bad_len)?;
    let last_ts = Timestamp(r.u64().ok_or(bad_len)?);
    let n_books = r.u32().ok_or(bad_len)? as usize;
    r.skip(4).ok_or(bad_len)?;
    if n_books > (b.len() - HEADER) / BOOK {
        return Err(bad_len);
    }
    let mut books = Vec::with_capacity(n_books);
    for _ in 0..n_books {
        books.push(book(&mut r).ok_or(bad_len)??);
    }
    let mut ledger = if has_ledger {
        if b.len() - r.at < LEDGER {
            return Err(bad_len);
        }
        Some(ledger(&mut r).ok_or(bad_len)??)
    } else {
        None
    };
    let report_next = if has_reports {
        reports(&mut r).ok_or(bad_len)?
    } else {
        Vec::new()
    };
    let venue = if has_venue {
        let mut vr = venue_codec::Reader::new(b, r.at);
        let v = venue_codec::get(&mut vr, ledger.as_mut()).map_err(|e| match e {
            venue_codec::Bad::Length => bad_len,
            venue_codec::Bad::Enum(field, value) => bad_enum(field, value),
        })?;
        if v.books.len() != books.len() {
            return Err(bad_len);
        }
        for (book, icebergs) in books.iter_mut().zip(&v.icebergs) {
            for (id, display, shown) in icebergs {
                let o = book.orders.iter_mut().find(|o| o.id == *id);
                let o = o.ok_or(bad_len)?;
                o.display = *display;
                o.shown = *shown;
            }
        }
        r.at = vr.at;
        Some(v)
    } else {
        None
    };
    let reports = if has_store {
        if b.len() - r.at < STORE {
            return Err(bad_len);
        }
        Some(store(&mut r).ok_or(bad_len)??)
    } else {
        None
    };
    if r.at != b.len() {
        return Err(bad_len);
    }
    Ok(EngineSnapshot {
        next_order_id,
        last_seq,
        last_ts,
        books,
        ledger,
        report_next,
        reports,
        venue,
    })
}

/// The report counters section; `None` when too short or not zero-padded.
fn reports(r: &mut Reader<'_>) -> Option<Vec<(AccountId, u64)>> {
    let n = r.u32()? as usize;
    r.skip(4)?;
    if n > (r.b.len() - r.at) / REPORT_ENTRY {
        return None;
    }
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let account = AccountId(r.u32()?);
        r.skip(4)?;
        out.push((account, r.u64()?));
    }
    Some(out)
}

/// `None`: too short; `Some(Err)`: a bad enum byte.
fn book(r: &mut Reader<'_>) -> Option<Result<BookSnapshot, SnapshotDecodeError>> {
    let instrument = InstrumentId(r.u32()?);
    let status = match r.u8()? {
        0 => InstrumentStatus::Active,
        1 => InstrumentStatus::Halted,
        value => return Some(Err(bad_enum("status", value))),
    };
    r.skip(3)?;
    let now = Timestamp(r.u64()?);
    let trade_seq = r.u64()?;
    let n = r.u32()? as usize;
    r.skip(4)?;
    if n > (r.b.len() - r.at) / ORDER {
        return None;
    }
    let mut orders = Vec::with_capacity(n);
    for _ in 0..n {
        match order(r)? {
            Ok(o) => orders.push(o),
            Err(e) => return Some(Err(e)),
        }
    }
    Some(Ok(BookSnapshot {
        instrument,
        status,
        now,
        trade_seq,
        orders,
    }))
}

fn order(r: &mut Reader<'_>) -> Option<Result<RestingOrder, SnapshotDecodeError>> {
    let id = OrderId(r.u64()?);
    let client_id = ClientOrderId(r.u64()?);
    let account = AccountId(r.u32()?);
    let (s, t, p, post) = (r.u8()?, r.u8()?, r.u8()?, r.u8()?);
    let (price, qty, expire_at) = (r.u64()? as i64, r.u64()? as i64, r.u64()?);
    let Some(side) = Side::from_u8(s) else {
        return Some(Err(bad_enum("side", s)));
    };
    let Some(tif) = TimeInForce::from_u8(t) else {
        return Some(Err(bad_enum("tif", t)));
    };
    let Some(stp) = StpMode::from_u8(p) else {
        return Some(Err(bad_enum("stp", p)));
    };
    if post > 1 {
        return Some(Err(bad_enum("post_only", post)));
    }
    Some(Ok(RestingOrder {
        id,
        client_id,
        account,
        side,
        price: Price::from_raw(price),
        qty: Qty::from_raw(qty),
        tif,
        expire_at: Timestamp(expire_at),
        stp,
        post_only: post == 1,
        display: Qty::ZERO,
        shown: Qty::from_raw(qty),
        list: OrderId(0),
    }))
}

fn bad_enum(field: &'static str, value: u8) -> SnapshotDecodeError {
    SnapshotDecodeError::BadEnum { field, value }
}

struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take<const N: usize>(&mut self) -> Option<[u8; N]> {
        let s = self.b.get(self.at..self.at.checked_add(N)?)?;
        self.at += N;
        s.try_into().ok()
    }
    fn skip(&mut self, n: usize) -> Option<()> {
        self.b.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(())
    }
    fn u8(&mut self) -> Option<u8> {
        self.take::<1>().map(|b| b[0])
    }
    fn u32(&mut self) -> Option<u32> {
        self.take().map(u32::from_le_bytes)
    }
    fn u64(&mut self) -> Option<u64> {
        self.take().map(u64::from_le_bytes)
    }
    fn i128(&mut self) -> Option<i128> {
        self.take().map(i128::from_le_bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn prop_decode_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
            let _ = decode(&bytes);
        }
    }

    #[test]
    fn an_empty_engine_round_trips_and_truncation_is_an_error() {
        let spec = peregrine_types::InstrumentSpec::example(3);
        let e: MatchingEngine = MatchingEngine::new(&[spec], 16).unwrap();
        let counters = [(AccountId(2), 5), (AccountId(9), 1_000_000)];
        let blob = encode(&e, 7, Timestamp(9), &counters);
        assert_eq!(blob[0], VERSION_VENUE);
        let s = decode(&blob).unwrap();
        assert_eq!(
            (s.last_seq, s.last_ts, s.next_order_id),
            (7, Timestamp(9), OrderId(1))
        );
        assert_eq!(s.report_next, counters);
        assert_eq!(s.books.len(), 1);
        assert_eq!(s.books[0].instrument, InstrumentId(3));
        for n in 0..blob.len() {
            assert!(decode(&blob[..n]).is_err());
        }
        assert_eq!(s.ledger, None);
    }

    #[test]
    fn balances_round_trip_in_version_2() {
        use peregrine_book::{Action, Command};
        use peregrine_types::{OrderType, StpMode, TimeInForce};
        let spec = peregrine_types::InstrumentSpec::example(1);
        let assets = InstrumentAssets {
            base: AssetId(1),
            quote: AssetId(2),
        };
        let mut ledger = Ledger::new(&[(spec.id, assets)]);
        ledger.deposit(AccountId(4), AssetId(2), 1_000_000).unwrap();
        let mut e: MatchingEngine<peregrine_book::Ladder, Balances> =
            MatchingEngine::with_pre_match(&[spec], 16, Balances::on(ledger)).unwrap();
        let order = peregrine_book::NewOrder {
            instrument: InstrumentId(1),
            id: OrderId(0),
            client_id: ClientOrderId(1),
            account: AccountId(4),
            side: Side::Buy,
            order_type: OrderType::Limit,
            tif: TimeInForce::Gtc,
            stp: StpMode::None,
            price: Price::from_raw(9_000),
            qty: Qty::from_raw(3),
            expire_at: Timestamp(0),
        };
        let mut events = Vec::new();
        let cmd = Command {
            ts: Timestamp(5),
            action: Action::New(order),
        };
        e.execute(&cmd, &mut events);
        let blob = encode(&e, 1, Timestamp(5), &[(AccountId(4), 2)]);
        assert_eq!(blob[0], VERSION_VENUE_LEDGER);
        let s = decode(&blob).unwrap();
        let want = e.pre_match_ref().ledger().map(Ledger::export);
        assert_eq!(s.ledger, want);
        let l = s.ledger.unwrap();
        assert_eq!(l.holds.len(), 1);
        assert_eq!(l.balances[0].2.reserved, 27_000);
        for n in 0..blob.len() {
            assert!(decode(&blob[..n]).is_err());
        }
        assert_eq!(decode(&blob).unwrap().report_next, [(AccountId(4), 2)]);
    }

    #[test]
    fn the_retained_reports_round_trip_in_versions_9_and_10() {
        use peregrine_wire::v2::reports::Rejected;
        let spec = peregrine_types::InstrumentSpec::example(3);
        let e: MatchingEngine = MatchingEngine::new(&[spec], 16).unwrap();
        let mut store = ReportStore::new(Retention { per_account: 3 });
        for (engine, account) in [(1u64, 1u32), (2, 2), (3, 1), (4, 1), (5, 1), (6, 2)] {
            let mut msg: Outbound = Rejected {
                session_seq: 0,
                engine_seq: engine,
                engine_time: Timestamp(engine),
                client_order_id: ClientOrderId(engine),
                instrument: InstrumentId(3),
                reason: peregrine_wire::ReasonCode(1),
                reserved: peregrine_wire::field::Pad,
                report_seq: 0,
                account: AccountId(account),
            }
            .into();
            msg.set_report_seq(store.next_seq(AccountId(account)));
            store.append(AccountId(account), msg);
        }
        let counters = store.counters();
        let blob = encode_with(&e, 6, Timestamp(6), &counters, Some(&store));
        assert_eq!(blob[0], VERSION_VENUE_STORE);
        let s = decode(&blob).unwrap();
        assert_eq!(s.reports.as_ref(), Some(&store));
        assert_eq!(s.report_next, counters);
        for n in 0..blob.len() {
            assert!(decode(&blob[..n]).is_err(), "truncated at {n}");
        }
        // A stream whose number does not match its reports is refused, not trusted:
        // the first stream's `next` (account 1: reports 2..=4 retained, next 5).
        let at = blob
            .windows(16)
            .position(|w| {
                w[..4] == 1u32.to_le_bytes()
                    && w[4..8] == 3u32.to_le_bytes()
                    && w[8..] == 5u64.to_le_bytes()
            })
            .expect("account 1's stream header");
        let mut bad = blob.clone();
        bad[at + 8] = 6;
        assert_eq!(
            decode(&bad).unwrap_err(),
            SnapshotDecodeError::BadReport("a report out of its stream's place")
        );
    }

    #[test]
    fn versions_without_report_counters_still_decode() {
        let spec = peregrine_types::InstrumentSpec::example(3);
        let e: MatchingEngine = MatchingEngine::new(&[spec], 16).unwrap();
        let mut blob = encode(&e, 7, Timestamp(9), &[]);
        // Without the venue section (8 + 80 for its one book) and the counters.
        blob.truncate(blob.len() - REPORTS - 8 - 80);
        blob[0] = VERSION;
        let s = decode(&blob).unwrap();
        assert!(s.report_next.is_empty());
        assert_eq!(s.last_seq, 7);
    }
}
