//! The snapshot's venue section (snapshot versions 5 and 6): every book's venue state
//! (phase, last price, parked orders, lists, market-maker protection), the fee
//! stage's volumes, and the ledger's fee fields. It follows the report counters, so
//! the sections of versions 1 to 4 keep their layouts.
//!
//! ```text
//! section 8:     0 books u32, 4 flags u8 (bit 0: fee volumes follow, bit 1: ledger
//!                fee fields follow), 5..8 zero
//! per book 80:   0 phase u8, 1..8 zero, 8 ends_at u64, 16 last_price i64,
//!                24 indicative price i64, 32 volume i64, 40 surplus i64,
//!                48 surplus side u8 (2: none), 49..56 zero, 56 park_seq u64,
//!                64 parked u32, 68 lists u32, 72 protections u32, 76 icebergs u32
//!   per parked 128: 0 order (the 72-byte list leg of journal tag 13), 72 account u32,
//!                76..80 zero, 80 seq u64, 88 pending u8, 89..96 zero, 96 list u64,
//!                104 watermark i64, 112 trigger price i64, 120 instrument u32,
//!                124..128 zero
//!   per list 80: 0 id u64, 8 client_id u64, 16 account u32, 20 kind u8, 21 stage u8,
//!                22..24 zero, 24 legs 3 × u64, 48 entered 3 × u64
//!   per protection 56 + 16 × fills: 0 account u32, 4 max_fills u32, 8 window_ns u64,
//!                16 max_qty i64, 24 freeze_ns u64, 32 frozen u8, 33..40 zero,
//!                40 frozen_until u64, 48 fills u32, 52..56 zero, then each fill:
//!                0 time u64, 8 qty i64
//!   per iceberg 24 (a resting order's, whose 48-byte record holds its whole
//!                quantity): 0 order u64, 8 display i64, 16 shown i64
//! fee volumes:   8: 0 count u32, 4..8 zero; per volume 512: 0 account u32,
//!                4 instrument u32, 8 day u64, 16 today i128, 32 30 × i128 days
//! ledger fees:   8: 0 holds u32, 4 assets u32; per hold 32: 0 order u64,
//!                8 fee_ppm i64, 16 fee_left i128; per asset 24: 0 asset u32,
//!                4..8 zero, 8 collected i128
//! ```

use peregrine_book::{
    ExtOrder, ListStage, ListState, MmpParams, MmpView, NewOrder, ParkedOrder, Trigger, VenueState,
};
use peregrine_ledger::fees::{Volume, WINDOW_DAYS};
use peregrine_ledger::{AssetId, FeeState, LedgerState};
use peregrine_types::{
    AccountId, ClientOrderId, InstrumentId, ListKind, OrderId, OrderType, Price, Qty, Side,
    StpMode, TimeInForce, Timestamp, TradingPhase, TrailUnit, TriggerKind,
};

/// The venue section, decoded.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct VenueSection {
    /// Each book's venue state, in the books' order.
    pub books: Vec<VenueState>,
    /// Each book's icebergs: (order, display, shown), in the books' order.
    pub icebergs: Vec<Vec<(OrderId, Qty, Qty)>>,
    /// The fee stage's volumes, when fees are on.
    pub fees: Option<FeeState>,
}

/// One book's part of the section.
#[derive(Debug, Clone, Copy)]
pub struct BookPart<'a> {
    /// The venue state.
    pub state: &'a VenueState,
    /// Its resting icebergs: (order, display, shown).
    pub icebergs: &'a [(OrderId, Qty, Qty)],
}

const BOOK: usize = 80;
const PARKED: usize = 128;
const LIST: usize = 80;
const MMP: usize = 56;
const FILL: usize = 16;
const VOLUME: usize = 32 + 16 * WINDOW_DAYS;

/// Appends the section: `books`, `fees`, and the ledger's fee fields (`ledger`).
pub fn put(
    out: &mut Vec<u8>,
    books: &[BookPart<'_>],
    fees: Option<&FeeState>,
    ledger: Option<&LedgerState>,
) {
    let flags = u8::from(fees.is_some()) | (u8::from(ledger.is_some()) << 1);
    out.extend_from_slice(&(books.len() as u32).to_le_bytes());
    out.extend_from_slice(&[flags, 0, 0, 0]);
    for b in books {
        put_book(out, b.state, b.icebergs);
    }
    if let Some(f) = fees {
        out.extend_from_slice(&(f.volumes.len() as u32).to_le_bytes());
        out.extend_from_slice(&[0; 4]);
        for (a, i, v) in &f.volumes {
            out.extend_from_slice(&a.0.to_le_bytes());
            out.extend_from_slice(&i.0.to_le_bytes());
            out.extend_from_slice(&v.day.to_le_bytes());
            out.extend_from_slice(&v.today.to_le_bytes());
            for d in v.days {
                out.extend_from_slice(&d.to_le_bytes());
            }
        }
    }
    if let Some(l) = ledger {
        out.extend_from_slice(&(l.holds.len() as u32).to_le_bytes());
        out.extend_from_slice(&(l.fees.len() as u32).to_le_bytes());
        for h in &l.holds {
            out.extend_from_slice(&h.order.0.to_le_bytes());
            out.extend_from_slice(&h.fee_ppm.to_le_bytes());
            out.extend_from_slice(&h.fee_left.to_le_bytes());
        }
        for (a, v) in &l.fees {
            out.extend_from_slice(&a.0.to_le_bytes());
            out.extend_from_slice(&[0; 4]);
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
}

fn put_book(out: &mut Vec<u8>, v: &VenueState, icebergs: &[(OrderId, Qty, Qty)]) {
    out.extend_from_slice(&[v.phase.to_u8(), 0, 0, 0, 0, 0, 0, 0]);
    out.extend_from_slice(&v.ends_at.0.to_le_bytes());
    out.extend_from_slice(&v.last_price.units().to_le_bytes());
    let (p, q, s, side) = v.indicative;
    for x in [p.units(), q.lots(), s.lots()] {
        out.extend_from_slice(&x.to_le_bytes());
    }
    out.extend_from_slice(&[side.map_or(2, |s| s as u8), 0, 0, 0, 0, 0, 0, 0]);
    out.extend_from_slice(&v.park_seq.to_le_bytes());
    out.extend_from_slice(&(v.parked.len() as u32).to_le_bytes());
    out.extend_from_slice(&(v.lists.len() as u32).to_le_bytes());
    out.extend_from_slice(&(v.mmp.len() as u32).to_le_bytes());
    out.extend_from_slice(&(icebergs.len() as u32).to_le_bytes());
    for p in &v.parked {
        put_leg(out, &p.order);
        out.extend_from_slice(&p.order.order.account.0.to_le_bytes());
        out.extend_from_slice(&[0; 4]);
        out.extend_from_slice(&p.seq.to_le_bytes());
        out.extend_from_slice(&[u8::from(p.pending), 0, 0, 0, 0, 0, 0, 0]);
        out.extend_from_slice(&p.list.0.to_le_bytes());
        out.extend_from_slice(&p.watermark.units().to_le_bytes());
        out.extend_from_slice(&p.trigger_price.units().to_le_bytes());
        out.extend_from_slice(&p.order.order.instrument.0.to_le_bytes());
        out.extend_from_slice(&[0; 4]);
    }
    for l in &v.lists {
        out.extend_from_slice(&l.id.0.to_le_bytes());
        out.extend_from_slice(&l.client_id.0.to_le_bytes());
        out.extend_from_slice(&l.account.0.to_le_bytes());
        out.extend_from_slice(&[l.kind as u8, l.stage as u8, 0, 0]);
        for id in l.legs.iter().chain(&l.entered) {
            out.extend_from_slice(&id.0.to_le_bytes());
        }
    }
    for m in &v.mmp {
        out.extend_from_slice(&m.account.0.to_le_bytes());
        out.extend_from_slice(&m.params.max_fills.to_le_bytes());
        out.extend_from_slice(&m.params.window_ns.to_le_bytes());
        out.extend_from_slice(&m.params.max_qty.to_le_bytes());
        out.extend_from_slice(&m.params.freeze_ns.to_le_bytes());
        out.extend_from_slice(&[u8::from(m.frozen), 0, 0, 0, 0, 0, 0, 0]);
        out.extend_from_slice(&m.frozen_until.0.to_le_bytes());
        out.extend_from_slice(&(m.fills.len() as u32).to_le_bytes());
        out.extend_from_slice(&[0; 4]);
        for (t, q) in &m.fills {
            out.extend_from_slice(&t.0.to_le_bytes());
            out.extend_from_slice(&q.lots().to_le_bytes());
        }
    }
    for (id, display, shown) in icebergs {
        out.extend_from_slice(&id.0.to_le_bytes());
        out.extend_from_slice(&display.lots().to_le_bytes());
        out.extend_from_slice(&shown.lots().to_le_bytes());
    }
}

fn put_leg(out: &mut Vec<u8>, e: &ExtOrder) {
    let o = &e.order;
    out.extend_from_slice(&o.id.0.to_le_bytes());
    out.extend_from_slice(&o.client_id.0.to_le_bytes());
    out.extend_from_slice(&[
        o.side as u8,
        o.order_type as u8,
        o.tif as u8,
        o.stp as u8,
        e.trigger.kind as u8,
        e.trigger.unit as u8,
        0,
        0,
    ]);
    out.extend_from_slice(&(e.trigger.trail as u32).to_le_bytes());
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(&o.price.units().to_le_bytes());
    out.extend_from_slice(&o.qty.lots().to_le_bytes());
    out.extend_from_slice(&o.expire_at.0.to_le_bytes());
    out.extend_from_slice(&e.trigger.price.units().to_le_bytes());
    out.extend_from_slice(&e.display.lots().to_le_bytes());
}

/// Why the section does not decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bad {
    /// Too short, or a count beyond what is left.
    Length,
    /// A byte outside its field's domain.
    Enum(&'static str, u8),
}

/// A bounds-checked reader over the section.
#[derive(Debug)]
pub struct Reader<'a> {
    b: &'a [u8],
    /// The read position.
    pub at: usize,
}

impl<'a> Reader<'a> {
    /// A reader from `at` in `b`.
    pub fn new(b: &'a [u8], at: usize) -> Self {
        Reader { b, at }
    }
    fn take<const N: usize>(&mut self) -> Result<[u8; N], Bad> {
        let end = self.at.checked_add(N).ok_or(Bad::Length)?;
        let s = self.b.get(self.at..end).ok_or(Bad::Length)?;
        self.at = end;
        s.try_into().map_err(|_| Bad::Length)
    }
    fn zeros(&mut self, n: usize) -> Result<(), Bad> {
        for _ in 0..n {
            if self.u8()? != 0 {
                return Err(Bad::Enum("padding", 1));
            }
        }
        Ok(())
    }
    fn u8(&mut self) -> Result<u8, Bad> {
        Ok(self.take::<1>()?[0])
    }
    fn u32(&mut self) -> Result<u32, Bad> {
        self.take().map(u32::from_le_bytes)
    }
    fn u64(&mut self) -> Result<u64, Bad> {
        self.take().map(u64::from_le_bytes)
    }
    fn i64(&mut self) -> Result<i64, Bad> {
        self.take().map(i64::from_le_bytes)
    }
    fn i128(&mut self) -> Result<i128, Bad> {
        self.take().map(i128::from_le_bytes)
    }
    fn left(&self) -> usize {
        self.b.len().saturating_sub(self.at)
    }
    /// A count of items of `size` bytes that must fit in what is left.
    fn count(&mut self, size: usize) -> Result<usize, Bad> {
        let n = self.u32()? as usize;
        if n > self.left() / size.max(1) {
            return Err(Bad::Length);
        }
        Ok(n)
    }
    fn enum_u8<T>(&mut self, field: &'static str, f: fn(u8) -> Option<T>) -> Result<T, Bad> {
        let v = self.u8()?;
        f(v).ok_or(Bad::Enum(field, v))
    }
}

/// Decodes the section; patches `ledger`'s holds and collected fees with the
/// ledger's fee fields.
pub fn get(r: &mut Reader<'_>, ledger: Option<&mut LedgerState>) -> Result<VenueSection, Bad> {
    let n = r.count(BOOK)?;
    let flags = r.u8()?;
    r.zeros(3)?;
    if flags > 3 {
        return Err(Bad::Enum("venue flags", flags));
    }
    let mut books = Vec::with_capacity(n);
    let mut icebergs = Vec::with_capacity(n);
    for _ in 0..n {
        let (b, i) = get_book(r)?;
        books.push(b);
        icebergs.push(i);
    }
    let fees = if flags & 1 != 0 {
        let n = r.count(VOLUME)?;
        r.zeros(4)?;
        let mut volumes = Vec::with_capacity(n);
        for _ in 0..n {
            let (a, i) = (AccountId(r.u32()?), InstrumentId(r.u32()?));
            let (day, today) = (r.u64()?, r.i128()?);
            let mut days = [0i128; WINDOW_DAYS];
            for d in &mut days {
                *d = r.i128()?;
            }
            volumes.push((a, i, Volume { day, today, days }));
        }
        Some(FeeState { volumes })
    } else {
        None
    };
    if flags & 2 != 0 {
        let (holds, assets) = (r.u32()? as usize, r.u32()? as usize);
        if holds > r.left() / 32 || assets > r.left() / 24 {
            return Err(Bad::Length);
        }
        let mut hold_fees = Vec::with_capacity(holds);
        for _ in 0..holds {
            hold_fees.push((OrderId(r.u64()?), r.i64()?, r.i128()?));
        }
        let mut collected = Vec::with_capacity(assets);
        for _ in 0..assets {
            let a = AssetId(r.u32()?);
            r.zeros(4)?;
            collected.push((a, r.i128()?));
        }
        if let Some(l) = ledger {
            for (id, ppm, left) in hold_fees {
                let h = l.holds.iter_mut().find(|h| h.order == id);
                let h = h.ok_or(Bad::Length)?;
                h.fee_ppm = ppm;
                h.fee_left = left;
            }
            l.fees = collected;
        }
    }
    Ok(VenueSection {
        books,
        icebergs,
        fees,
    })
}

type Icebergs = Vec<(OrderId, Qty, Qty)>;

fn get_book(r: &mut Reader<'_>) -> Result<(VenueState, Icebergs), Bad> {
    let phase = r.enum_u8("phase", TradingPhase::from_u8)?;
    r.zeros(7)?;
    let ends_at = Timestamp(r.u64()?);
    let last_price = Price::from_raw(r.i64()?);
    let (p, q, s) = (r.i64()?, r.i64()?, r.i64()?);
    let side = match r.u8()? {
        2 => None,
        v => Some(Side::from_u8(v).ok_or(Bad::Enum("surplus side", v))?),
    };
    r.zeros(7)?;
    let park_seq = r.u64()?;
    let (np, nl, nm) = (r.u32()? as usize, r.u32()? as usize, r.u32()? as usize);
    let ni = r.u32()? as usize;
    let left = r.left();
    if np > left / PARKED || nl > left / LIST || nm > left / MMP || ni > left / 24 {
        return Err(Bad::Length);
    }
    let mut parked = Vec::with_capacity(np);
    for _ in 0..np {
        let leg = get_leg(r)?;
        let account = AccountId(r.u32()?);
        r.zeros(4)?;
        let seq = r.u64()?;
        let pending = match r.u8()? {
            0 => false,
            1 => true,
            v => return Err(Bad::Enum("pending", v)),
        };
        r.zeros(7)?;
        let list = OrderId(r.u64()?);
        let watermark = Price::from_raw(r.i64()?);
        let trigger_price = Price::from_raw(r.i64()?);
        let instrument = InstrumentId(r.u32()?);
        r.zeros(4)?;
        let mut order = leg;
        order.order.account = account;
        order.order.instrument = instrument;
        parked.push(ParkedOrder {
            order,
            seq,
            pending,
            list,
            watermark,
            trigger_price,
        });
    }
    let mut lists = Vec::with_capacity(nl);
    for _ in 0..nl {
        let (id, client_id) = (OrderId(r.u64()?), ClientOrderId(r.u64()?));
        let account = AccountId(r.u32()?);
        let kind = r.enum_u8("list kind", ListKind::from_u8)?;
        let stage = match r.u8()? {
            0 => ListStage::Oco,
            1 => ListStage::Working,
            v => return Err(Bad::Enum("list stage", v)),
        };
        r.zeros(2)?;
        let mut ids = [OrderId(0); 6];
        for x in &mut ids {
            *x = OrderId(r.u64()?);
        }
        lists.push(ListState {
            id,
            client_id,
            account,
            kind,
            stage,
            legs: [ids[0], ids[1], ids[2]],
            entered: [ids[3], ids[4], ids[5]],
        });
    }
    let mut mmp = Vec::with_capacity(nm);
    for _ in 0..nm {
        let account = AccountId(r.u32()?);
        let max_fills = r.u32()?;
        let (window_ns, max_qty, freeze_ns) = (r.u64()?, r.i64()?, r.u64()?);
        let frozen = match r.u8()? {
            0 => false,
            1 => true,
            v => return Err(Bad::Enum("frozen", v)),
        };
        r.zeros(7)?;
        let frozen_until = Timestamp(r.u64()?);
        let n = r.count(FILL)?;
        r.zeros(4)?;
        let mut fills = Vec::with_capacity(n);
        for _ in 0..n {
            fills.push((Timestamp(r.u64()?), Qty::from_raw(r.i64()?)));
        }
        mmp.push(MmpView {
            account,
            params: MmpParams {
                window_ns,
                max_qty,
                max_fills,
                freeze_ns,
            },
            frozen,
            frozen_until,
            fills,
        });
    }
    let mut icebergs = Vec::with_capacity(ni);
    for _ in 0..ni {
        let id = OrderId(r.u64()?);
        icebergs.push((id, Qty::from_raw(r.i64()?), Qty::from_raw(r.i64()?)));
    }
    let state = VenueState {
        phase,
        ends_at,
        last_price,
        indicative: (Price::from_raw(p), Qty::from_raw(q), Qty::from_raw(s), side),
        park_seq,
        parked,
        lists,
        mmp,
    };
    Ok((state, icebergs))
}

fn get_leg(r: &mut Reader<'_>) -> Result<ExtOrder, Bad> {
    let id = OrderId(r.u64()?);
    let client_id = ClientOrderId(r.u64()?);
    let side = r.enum_u8("side", Side::from_u8)?;
    let order_type = r.enum_u8("order_type", OrderType::from_u8)?;
    let tif = r.enum_u8("tif", TimeInForce::from_u8)?;
    let stp = r.enum_u8("stp", StpMode::from_u8)?;
    let kind = r.enum_u8("trigger", TriggerKind::from_u8)?;
    let unit = r.enum_u8("trail_unit", TrailUnit::from_u8)?;
    r.zeros(2)?;
    let trail = r.u32()? as i32;
    r.zeros(4)?;
    let order = NewOrder {
        instrument: InstrumentId(0),
        id,
        client_id,
        account: AccountId(0),
        side,
        order_type,
        tif,
        stp,
        price: Price::from_raw(r.i64()?),
        qty: Qty::from_raw(r.i64()?),
        expire_at: Timestamp(r.u64()?),
    };
    let trigger = Trigger {
        kind,
        unit,
        trail,
        price: Price::from_raw(r.i64()?),
    };
    Ok(ExtOrder {
        order,
        trigger,
        display: Qty::from_raw(r.i64()?),
    })
}
