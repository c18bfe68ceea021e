//! The bridge's state in the session's FIX store: what it must remember across a
//! gateway restart to carry on the exchange's report stream where it left off.
//!
//! After every change the bridge appends one application state record
//! ([`FileStore::append_app_state`]) whose `seq` is the next exchange report sequence
//! number it expects and whose payload holds what changed:
//!
//! ```text
//! payload : next_native u64 · next_exec u64
//!           · n u32 · n × (index u32 · order)
//!           · m u32 · m × (native u64 · order index u32 (u32::MAX: none) · pending)
//! order   : cl_ord_id (u16 length · bytes) · instrument u32 · side u8 · ord_type u8
//!           · tif u8 · order_id u64 · qty i64 · price i64
//!           · state flag u8 [· order_qty i64 · cum i64 · leaves i64 · notional i128
//!             · price i64 · status u8]
//!           [· 1 u8 · k u32 (k > 0) · k × (index u32 · list)]
//! list    : list_id (u16 length · bytes) · native u64 · kind u8 · exchange id u64
//!           · phase u8 · legs u8 (2 or 3) · legs × order index u32
//! pending : kind u8 (0 none, 1 new, 2 cancel, 3 replace, 4 mass, 5 list,
//!           6 cancel list) and its fields
//! ```
//! The lists section (order lists, E) is optional: a record without it (every
//! record a build before order lists wrote) is read as changing no list. A build
//! before order lists refuses a record with it, or with pending kind 5 or 6, as
//! "not understood" (it reports the count on start) rather than misreading it.
//! (little-endian). The record follows the FIX messages the change produced in the
//! same store, so a message and the stream position after it reach the file in
//! order: a crash can lose both (the exchange replays the report, the message is
//! made again) or keep the message without the position (the report is made again
//! with the same ExecID, the exchange's report sequence number), never the
//! position without the message. On start the records are applied in order.

use peregrine_fix::app::{MassCancelScope, OrdStatus, OrdType, OrderState, Side, TimeInForce};
use peregrine_fix::store::{FileStore, StoreError};

use peregrine_types::ListKind;

use super::orders::{List, ListPhase, Order, OrderTable, Pending};

/// The marker of the optional lists section.
const LISTS_SECTION: u8 = 1;

const NONE: u32 = u32::MAX;

/// Why a stored state record was refused (nothing of it is applied).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum StateRecordError {
    /// The record ends inside a field.
    #[error("state record truncated")]
    Truncated,
    /// A one-byte field holds a value this build does not know.
    #[error("state record: {field} byte {byte:#04x} not understood")]
    BadByte {
        /// The field (`side`, `ord_type`, `tif`, `status`, `state flag`, ...).
        field: &'static str,
        /// The byte found.
        byte: u8,
    },
    /// Bytes follow the last native entry.
    #[error("state record: {0} byte(s) after the end")]
    Trailing(usize),
    /// An order names an instrument at or beyond the config's count.
    #[error("state record: instrument {0} is not configured")]
    UnknownInstrument(usize),
    /// An order index or a pending request's order is neither known nor in the record.
    #[error("state record: order index {0} does not exist")]
    UnknownOrder(usize),
    /// A list index, or a pending list request's list, is neither known nor in the
    /// record.
    #[error("state record: list index {0} does not exist")]
    UnknownList(usize),
}

/// One decoded state record (see the module docs for the layout).
#[derive(Debug)]
struct StateRecord {
    next_native: u64,
    next_exec: u64,
    orders: Vec<(usize, Order)>,
    natives: Vec<(u64, Option<usize>, Option<Pending>)>,
    lists: Vec<(usize, List)>,
}

/// Encodes what changed in `table` (each changed order and native id whole).
pub(super) fn encode_changes(table: &mut OrderTable, out: &mut Vec<u8>) {
    table.settle_dirty();
    let t: &OrderTable = table;
    let (orders, natives) = (t.dirty_orders(), t.dirty_natives());
    write_record(
        out,
        (t.next_native, t.next_exec),
        orders.iter().map(|&i| (i, t.order(i))),
        natives.iter().map(|&n| {
            let (order, pending) = t.native_entry(n);
            (n, order, pending)
        }),
        t.dirty_lists().iter().map(|&l| (l, t.list(l))),
    );
    table.clear_dirty();
}

/// The one writer of the record layout, for live tables and decoded records alike.
fn write_record<'a>(
    out: &mut Vec<u8>,
    (next_native, next_exec): (u64, u64),
    orders: impl ExactSizeIterator<Item = (usize, &'a Order)>,
    natives: impl ExactSizeIterator<Item = (u64, Option<usize>, Option<&'a Pending>)>,
    lists: impl ExactSizeIterator<Item = (usize, &'a List)>,
) {
    out.clear();
    out.extend_from_slice(&next_native.to_le_bytes());
    out.extend_from_slice(&next_exec.to_le_bytes());
    out.extend_from_slice(&(orders.len() as u32).to_le_bytes());
    for (i, order) in orders {
        out.extend_from_slice(&(i as u32).to_le_bytes());
        encode_order(order, out);
    }
    out.extend_from_slice(&(natives.len() as u32).to_le_bytes());
    for (n, order, pending) in natives {
        out.extend_from_slice(&n.to_le_bytes());
        out.extend_from_slice(&order.map_or(NONE, |i| i as u32).to_le_bytes());
        encode_pending(pending, out);
    }
    if lists.len() > 0 {
        out.push(LISTS_SECTION);
        out.extend_from_slice(&(lists.len() as u32).to_le_bytes());
        for (l, list) in lists {
            out.extend_from_slice(&(l as u32).to_le_bytes());
            encode_list(list, out);
        }
    }
}

fn encode_list(l: &List, out: &mut Vec<u8>) {
    bytes(out, &l.list_id);
    out.extend_from_slice(&l.native.to_le_bytes());
    out.push(l.kind as u8);
    out.extend_from_slice(&l.exchange_id.to_le_bytes());
    out.push(l.phase as u8);
    out.push(l.legs.len() as u8);
    for &i in &l.legs {
        out.extend_from_slice(&(i as u32).to_le_bytes());
    }
}

fn decode_list(r: &mut Reader<'_>) -> Result<List, StateRecordError> {
    let list_id = r.bytes()?.to_vec();
    let native = r.u64()?;
    let kind = r.byte_as("list kind", ListKind::from_u8)?;
    let exchange_id = r.u64()?;
    let phase = r.byte_as("list phase", ListPhase::from_u8)?;
    let n = r.u8()?;
    if !(2..=3).contains(&n) {
        return Err(StateRecordError::BadByte {
            field: "list legs",
            byte: n,
        });
    }
    let mut legs = Vec::with_capacity(usize::from(n));
    for _ in 0..n {
        legs.push(r.u32()? as usize);
    }
    Ok(List {
        list_id,
        native,
        kind,
        legs,
        exchange_id,
        phase,
    })
}

/// Applies every stored record to `table`; returns the last record's `seq` (the
/// next report sequence number expected), 0 if none.
/// Orders naming an instrument at or beyond `instruments` (the config's count) are
/// refused with their record.
pub(super) fn restore(
    store: &mut FileStore,
    table: &mut OrderTable,
    instruments: usize,
) -> Result<u64, StoreError> {
    let mut next_report = 0;
    let mut damaged = 0usize;
    let mut first_error = None;
    store.app_states(&mut |seq, payload| {
        if let Err(e) = apply(table, payload, instruments) {
            damaged += 1;
            first_error.get_or_insert(e);
        }
        next_report = seq;
    })?;
    if let Some(e) = first_error {
        // The CRC passed, so this is a format this build does not read.
        eprintln!(
            "fix-gateway: {damaged} stored state record(s) not understood (first: {e}); skipped"
        );
    }
    table.clear_dirty();
    Ok(next_report)
}

/// Decodes one stored state record, applies it to an empty order table as a restart
/// would, and re-encodes what it decoded. The contract the fuzz target
/// (`fuzz/fuzz_targets/fix_gateway_state.rs`) checks: any bytes give a typed error
/// or an encoding equal to the input, never a panic.
pub fn replay_state_record(p: &[u8], instruments: usize) -> Result<Vec<u8>, StateRecordError> {
    let rec = decode(p)?;
    let mut out = Vec::with_capacity(p.len());
    write_record(
        &mut out,
        (rec.next_native, rec.next_exec),
        rec.orders.iter().map(|(i, o)| (*i, o)),
        rec.natives.iter().map(|(n, o, p)| (*n, *o, p.as_ref())),
        rec.lists.iter().map(|(l, list)| (*l, list)),
    );
    apply(&mut OrderTable::new(0), p, instruments)?;
    Ok(out)
}

/// Applies one record; nothing of it is applied if it does not decode or names an
/// order or instrument that does not exist.
fn apply(table: &mut OrderTable, p: &[u8], instruments: usize) -> Result<(), StateRecordError> {
    let rec = decode(p)?;
    let mut n_orders = table.len();
    for (i, o) in &rec.orders {
        if o.instrument >= instruments {
            return Err(StateRecordError::UnknownInstrument(o.instrument));
        }
        if *i > n_orders {
            return Err(StateRecordError::UnknownOrder(*i));
        }
        n_orders = n_orders.max(i + 1);
    }
    let mut n_lists = table.list_count();
    for (l, list) in &rec.lists {
        if *l > n_lists {
            return Err(StateRecordError::UnknownList(*l));
        }
        if let Some(&i) = list.legs.iter().find(|&&i| i >= n_orders) {
            return Err(StateRecordError::UnknownOrder(i));
        }
        n_lists = n_lists.max(l + 1);
    }
    for (_, order, pending) in &rec.natives {
        let target = match pending {
            Some(
                Pending::New { order }
                | Pending::Cancel { order, .. }
                | Pending::Replace { order, .. },
            ) => Some(*order),
            _ => None,
        };
        if let Some(&i) = order.iter().chain(target.iter()).find(|&&i| i >= n_orders) {
            return Err(StateRecordError::UnknownOrder(i));
        }
        if let Some(Pending::List { list } | Pending::CancelList { list }) = pending {
            if *list >= n_lists {
                return Err(StateRecordError::UnknownList(*list));
            }
        }
    }
    table.next_native = table.next_native.max(rec.next_native);
    table.next_exec = table.next_exec.max(rec.next_exec);
    for (i, o) in rec.orders {
        table.restore_order(i, o);
    }
    for (l, list) in rec.lists {
        table.restore_list(l, list);
    }
    for (native, order, pending) in rec.natives {
        table.restore_native(native, order, pending);
    }
    Ok(())
}

fn decode(p: &[u8]) -> Result<StateRecord, StateRecordError> {
    let mut r = Reader(p);
    let next_native = r.u64()?;
    let next_exec = r.u64()?;
    // No preallocation from the counts: they are untrusted.
    let mut orders = Vec::new();
    for _ in 0..r.u32()? {
        let i = r.u32()? as usize;
        orders.push((i, decode_order(&mut r)?));
    }
    let mut natives = Vec::new();
    for _ in 0..r.u32()? {
        let native = r.u64()?;
        let order = match r.u32()? {
            NONE => None,
            i => Some(i as usize),
        };
        natives.push((native, order, decode_pending(&mut r)?));
    }
    let mut lists = Vec::new();
    if !r.0.is_empty() {
        let marker = r.u8()?;
        if marker != LISTS_SECTION {
            return Err(StateRecordError::BadByte {
                field: "section",
                byte: marker,
            });
        }
        let k = r.u32()?;
        if k == 0 {
            // Never written (the section is left out instead): refused so a record
            // re-encodes exactly.
            return Err(StateRecordError::BadByte {
                field: "lists count",
                byte: 0,
            });
        }
        for _ in 0..k {
            let l = r.u32()? as usize;
            lists.push((l, decode_list(&mut r)?));
        }
    }
    if !r.0.is_empty() {
        return Err(StateRecordError::Trailing(r.0.len()));
    }
    Ok(StateRecord {
        next_native,
        next_exec,
        orders,
        natives,
        lists,
    })
}

fn bytes(out: &mut Vec<u8>, b: &[u8]) {
    let n = b.len().min(u16::MAX as usize);
    out.extend_from_slice(&(n as u16).to_le_bytes());
    out.extend_from_slice(&b[..n]);
}

fn encode_order(o: &Order, out: &mut Vec<u8>) {
    bytes(out, &o.cl_ord_id);
    out.extend_from_slice(&(o.instrument as u32).to_le_bytes());
    out.push(o.side.byte());
    out.push(o.ord_type.byte());
    out.push(o.tif.byte());
    out.extend_from_slice(&o.order_id.to_le_bytes());
    out.extend_from_slice(&o.qty.to_le_bytes());
    out.extend_from_slice(&o.price.to_le_bytes());
    match o.state {
        None => out.push(0),
        Some(s) => {
            out.push(1);
            out.extend_from_slice(&s.order_qty.to_le_bytes());
            out.extend_from_slice(&s.cum_qty.to_le_bytes());
            out.extend_from_slice(&s.leaves_qty.to_le_bytes());
            out.extend_from_slice(&s.notional.to_le_bytes());
            out.extend_from_slice(&s.price.to_le_bytes());
            out.push(s.status.byte());
        }
    }
}

fn decode_order(r: &mut Reader<'_>) -> Result<Order, StateRecordError> {
    let cl_ord_id = r.bytes()?.to_vec();
    let instrument = r.u32()? as usize;
    let side = r.byte_as("side", |b| Side::from_value(&[b]))?;
    let ord_type = r.byte_as("ord_type", |b| OrdType::from_value(&[b]))?;
    let tif = r.byte_as("tif", |b| TimeInForce::from_value(&[b]))?;
    let order_id = r.u64()?;
    let qty = r.u64()? as i64;
    let price = r.u64()? as i64;
    let state = match r.flag("state flag")? {
        false => None,
        true => Some(OrderState {
            order_qty: r.u64()? as i64,
            cum_qty: r.u64()? as i64,
            leaves_qty: r.u64()? as i64,
            notional: r.i128()?,
            price: r.u64()? as i64,
            status: r.byte_as("status", |b| OrdStatus::from_value(&[b]))?,
        }),
    };
    Ok(Order {
        cl_ord_id,
        instrument,
        side,
        ord_type,
        tif,
        order_id,
        qty,
        price,
        state,
    })
}

fn encode_pending(p: Option<&Pending>, out: &mut Vec<u8>) {
    match p {
        None => out.push(0),
        Some(Pending::New { order }) => {
            out.push(1);
            out.extend_from_slice(&(*order as u32).to_le_bytes());
        }
        Some(Pending::Cancel {
            order,
            cl_ord_id,
            orig,
        }) => {
            out.push(2);
            out.extend_from_slice(&(*order as u32).to_le_bytes());
            bytes(out, cl_ord_id);
            bytes(out, orig);
        }
        Some(Pending::Replace {
            order,
            cl_ord_id,
            orig,
        }) => {
            out.push(3);
            out.extend_from_slice(&(*order as u32).to_le_bytes());
            bytes(out, cl_ord_id);
            bytes(out, orig);
        }
        Some(Pending::Mass {
            cl_ord_id,
            scope,
            symbol,
            side,
        }) => {
            out.push(4);
            bytes(out, cl_ord_id);
            out.push(scope.byte());
            match symbol {
                Some(s) => {
                    out.push(1);
                    bytes(out, s);
                }
                None => out.push(0),
            }
            out.push(side.map_or(0, |s| s.byte()));
        }
        Some(Pending::List { list }) => {
            out.push(5);
            out.extend_from_slice(&(*list as u32).to_le_bytes());
        }
        Some(Pending::CancelList { list }) => {
            out.push(6);
            out.extend_from_slice(&(*list as u32).to_le_bytes());
        }
    }
}

fn decode_pending(r: &mut Reader<'_>) -> Result<Option<Pending>, StateRecordError> {
    Ok(match r.u8()? {
        0 => None,
        1 => Some(Pending::New {
            order: r.u32()? as usize,
        }),
        k @ (2 | 3) => {
            let order = r.u32()? as usize;
            let cl_ord_id = r.bytes()?.to_vec();
            let orig = r.bytes()?.to_vec();
            Some(if k == 2 {
                Pending::Cancel {
                    order,
                    cl_ord_id,
                    orig,
                }
            } else {
                Pending::Replace {
                    order,
                    cl_ord_id,
                    orig,
                }
            })
        }
        4 => {
            let cl_ord_id = r.bytes()?.to_vec();
            let scope = r.byte_as("mass scope", |b| MassCancelScope::from_value(&[b]))?;
            let symbol = match r.flag("symbol flag")? {
                false => None,
                true => Some(r.bytes()?.to_vec()),
            };
            let side = match r.u8()? {
                0 => None,
                b => Some(Side::from_value(&[b]).ok_or(StateRecordError::BadByte {
                    field: "mass side",
                    byte: b,
                })?),
            };
            Some(Pending::Mass {
                cl_ord_id,
                scope,
                symbol,
                side,
            })
        }
        5 => Some(Pending::List {
            list: r.u32()? as usize,
        }),
        6 => Some(Pending::CancelList {
            list: r.u32()? as usize,
        }),
        byte => {
            return Err(StateRecordError::BadByte {
                field: "pending kind",
                byte,
            })
        }
    })
}

/// A bounds-checked little-endian reader: [`StateRecordError::Truncated`] past the
/// end.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take<const N: usize>(&mut self) -> Result<[u8; N], StateRecordError> {
        let (head, rest) = self
            .0
            .split_first_chunk::<N>()
            .ok_or(StateRecordError::Truncated)?;
        self.0 = rest;
        Ok(*head)
    }
    fn u8(&mut self) -> Result<u8, StateRecordError> {
        Ok(self.take::<1>()?[0])
    }
    fn u32(&mut self) -> Result<u32, StateRecordError> {
        Ok(u32::from_le_bytes(self.take()?))
    }
    fn u64(&mut self) -> Result<u64, StateRecordError> {
        Ok(u64::from_le_bytes(self.take()?))
    }
    fn i128(&mut self) -> Result<i128, StateRecordError> {
        Ok(i128::from_le_bytes(self.take()?))
    }
    fn bytes(&mut self) -> Result<&'a [u8], StateRecordError> {
        let n = usize::from(u16::from_le_bytes(self.take()?));
        if self.0.len() < n {
            return Err(StateRecordError::Truncated);
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Ok(a)
    }
    /// A 0/1 byte; anything else is refused (so a record re-encodes exactly).
    fn flag(&mut self, field: &'static str) -> Result<bool, StateRecordError> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            byte => Err(StateRecordError::BadByte { field, byte }),
        }
    }
    /// A one-byte FIX enum value.
    fn byte_as<T>(
        &mut self,
        field: &'static str,
        f: impl FnOnce(u8) -> Option<T>,
    ) -> Result<T, StateRecordError> {
        let byte = self.u8()?;
        f(byte).ok_or(StateRecordError::BadByte { field, byte })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn order(cl: &[u8], state: Option<OrderState>) -> Order {
        Order {
            cl_ord_id: cl.to_vec(),
            instrument: 0,
            side: Side::Sell,
            ord_type: OrdType::Limit,
            tif: TimeInForce::Gtd,
            order_id: 77,
            qty: 10,
            price: -5,
            state,
        }
    }

    /// Stop and stop-limit orders (OrdType 3 and 4, issue 31) come back from the
    /// store with their OrdType: the record stores the OrdType byte, so the format
    /// is unchanged and records written before read as they did.
    #[test]
    fn stop_orders_keep_their_ord_type_across_a_restart() {
        for ord_type in [OrdType::Stop, OrdType::StopLimit, OrdType::Market] {
            let mut t = OrderTable::new(100);
            let n = t.native_id();
            let i = t.insert(
                Order {
                    ord_type,
                    ..order(b"S", Some(OrderState::accepted(10, 100).0))
                },
                n,
            );
            let mut rec = Vec::new();
            encode_changes(&mut t, &mut rec);
            let mut u = OrderTable::new(100);
            apply(&mut u, &rec, 1).unwrap();
            assert_eq!(u.order(i).ord_type, ord_type);
            assert_eq!(u.by_native(n), Some(i));
        }
    }

    #[test]
    fn changes_round_trip_into_a_fresh_table() {
        let mut t = OrderTable::new(100);
        let n1 = t.native_id();
        let i = t.insert(order(b"A", None), n1);
        let n2 = t.native_id();
        t.set_pending(
            n2,
            Pending::Mass {
                cl_ord_id: b"M".to_vec(),
                scope: MassCancelScope::Security,
                symbol: Some(b"PGN-USD".to_vec()),
                side: Some(Side::Buy),
            },
        );
        let mut rec1 = Vec::new();
        encode_changes(&mut t, &mut rec1);
        assert!(!t.is_dirty());
        // The order is accepted and partly filled; a replace is in flight.
        t.take_pending(n1);
        let (mut s, _) = OrderState::accepted(10, 100);
        s.fill(100, 4, 6);
        t.order_mut(i).state = Some(s);
        let n3 = t.native_id();
        t.alias(n3, i);
        t.set_pending(
            n3,
            Pending::Replace {
                order: i,
                cl_ord_id: b"B".to_vec(),
                orig: b"A".to_vec(),
            },
        );
        let mut rec2 = Vec::new();
        encode_changes(&mut t, &mut rec2);

        let mut u = OrderTable::new(0);
        apply(&mut u, &rec1, 1).unwrap();
        apply(&mut u, &rec2, 1).unwrap();
        assert_eq!(u.order(i).state, Some(s));
        assert_eq!(u.order(i).cl_ord_id, b"A");
        assert_eq!(u.by_cl_ord_id(b"A"), Some(i));
        assert_eq!(u.by_native(n1), Some(i));
        assert_eq!(u.by_native(n3), Some(i));
        assert!(u.pending(n1).is_none());
        assert!(matches!(
            u.pending(n2),
            Some(Pending::Mass {
                side: Some(Side::Buy),
                ..
            })
        ));
        assert!(matches!(u.pending(n3), Some(Pending::Replace { .. })));
        assert!(u.native_id() > n3, "ids continue after the stored ones");
        // Truncated payloads are refused, never a panic.
        for cut in 0..rec2.len() {
            let mut w = OrderTable::new(0);
            assert_eq!(
                apply(&mut w, &rec2[..cut], 1),
                Err(StateRecordError::Truncated),
                "cut at {cut}"
            );
        }
    }

    #[test]
    fn replay_re_encodes_exactly_and_refuses_junk() {
        let mut t = OrderTable::new(5);
        let n = t.native_id();
        t.insert(order(b"A", Some(OrderState::accepted(3, 9).0)), n);
        let mut rec = Vec::new();
        encode_changes(&mut t, &mut rec);
        assert_eq!(replay_state_record(&rec, 1), Ok(rec.clone()));
        assert_eq!(
            replay_state_record(&rec, 0),
            Err(StateRecordError::UnknownInstrument(0))
        );
        // A byte after the natives must be the lists section's marker.
        let mut longer = rec.clone();
        longer.push(0);
        assert_eq!(
            replay_state_record(&longer, 1),
            Err(StateRecordError::BadByte {
                field: "section",
                byte: 0
            })
        );
    }

    #[test]
    fn garbled_records_never_panic() {
        // Every single-byte change of a real record, and random bytes.
        let mut t = OrderTable::new(5);
        let n = t.native_id();
        t.insert(order(b"A", Some(OrderState::accepted(3, 9).0)), n);
        let mut rec = Vec::new();
        encode_changes(&mut t, &mut rec);
        for i in 0..rec.len() {
            for b in [0u8, 1, 0x7f, 0xff] {
                let mut r = rec.clone();
                r[i] = b;
                let _ = apply(&mut OrderTable::new(0), &r, 1);
            }
        }
        let mut rng = peregrine_types::Rng::new(11);
        for _ in 0..2000 {
            let len = rng.below(300) as usize;
            let bytes: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
            let _ = apply(&mut OrderTable::new(0), &bytes, 1);
        }
    }
}
