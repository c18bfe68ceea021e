//! Order lists: NewOrderList (E) with ContingencyType (1385), decoded into up to
//! three orders; ListStatus (N) encoded within FIX 4.4's layout (so a FIX 4.4
//! counterparty's dictionary accepts it), ListCancelRequest (K) and
//! ListStatusRequest (M). The gateway maps
//! them to the native order lists (`docs/fix.md`, "Order lists").

use crate::codec::{tags as t, FieldError, Message, MessageWriter, Precision};

use super::fields::{id, req, AppError};
use super::requests::{terms_and_extras, OrderExtras, OrderTerms, EXTRA_TAGS, TERM_TAGS};

/// ContingencyType (1385): FIX 5.0 SP1's tag, Peregrine's extension of FIX 4.4 on E.
pub const CONTINGENCY_TYPE: u32 = 1385;
/// ListID (66).
const LIST_ID: u32 = 66;
/// TotNoOrders (68).
const TOT_NO_ORDERS: u32 = 68;
/// NoOrders (73).
const NO_ORDERS: u32 = 73;
/// ListSeqNo (67).
const LIST_SEQ_NO: u32 = 67;

/// The most orders a list has (an OTOCO).
pub const MAX_LIST_ORDERS: usize = 3;

/// ContingencyType (1385) values Peregrine takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Contingency {
    /// 1: one cancels the other (two orders).
    Oco,
    /// 2: one triggers the other (two orders) or, with three, one triggers a
    /// one-cancels-the-other pair (OTOCO).
    Oto,
}

/// One order of a list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListOrder<'a> {
    /// ClOrdID (11).
    pub cl_ord_id: &'a [u8],
    /// The order's terms (its Symbol, Side, OrderQty, OrdType, Price, …).
    pub terms: OrderTerms<'a>,
    /// StopPx, MaxFloor and a trailing offset.
    pub extras: OrderExtras<'a>,
}

/// NewOrderList (E).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NewOrderList<'a> {
    /// ListID (66).
    pub list_id: &'a [u8],
    /// ContingencyType (1385).
    pub contingency: Contingency,
    /// The orders, in the message's order (ListSeqNo, if given, must follow it).
    pub orders: [Option<ListOrder<'a>>; MAX_LIST_ORDERS],
}

/// The tags an order of the NoOrders group may hold: ClOrdID (first), ListSeqNo,
/// the order terms, StopPx, MaxFloor and the peg fields.
const ORDER_TAGS: [u32; 16] = [
    t::CL_ORD_ID,
    LIST_SEQ_NO,
    TERM_TAGS[0],
    TERM_TAGS[1],
    TERM_TAGS[2],
    TERM_TAGS[3],
    TERM_TAGS[4],
    TERM_TAGS[5],
    TERM_TAGS[6],
    TERM_TAGS[7],
    TERM_TAGS[8],
    EXTRA_TAGS[0],
    EXTRA_TAGS[1],
    EXTRA_TAGS[2],
    EXTRA_TAGS[3],
    EXTRA_TAGS[4],
];

fn order<'a>(v: [Option<&'a [u8]>; 16], seq: usize) -> Result<ListOrder<'a>, AppError> {
    let cl_ord_id = id(v[0], t::CL_ORD_ID)?;
    if let Some(n) = v[1] {
        if crate::codec::value::parse_u64(n) != Some(seq as u64 + 1) {
            return Err(AppError::Unsupported {
                tag: LIST_SEQ_NO,
                text: "ListSeqNo (67) must number the orders 1, 2, 3 in their order",
            });
        }
    }
    let (terms, extras) = terms_and_extras(
        [v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10]],
        [v[11], v[12], v[13], v[14], v[15]],
    )?;
    Ok(ListOrder {
        cl_ord_id,
        terms,
        extras,
    })
}

impl<'a> NewOrderList<'a> {
    /// Decodes an E: ListID, ContingencyType, TotNoOrders and the NoOrders group
    /// (each entry starts with ClOrdID). OCO and OTO take two orders, OTOCO (2
    /// with three) three, all of one Symbol.
    pub fn decode(msg: &Message<'a>) -> Result<Self, AppError> {
        let (mut list_id, mut contingency, mut total, mut declared) = (None, None, None, None);
        let mut entries = [[None::<&[u8]>; 16]; MAX_LIST_ORDERS];
        let mut n = 0usize;
        for field in msg.fields() {
            let f = field?;
            let top = match f.tag {
                LIST_ID => Some(&mut list_id),
                CONTINGENCY_TYPE => Some(&mut contingency),
                TOT_NO_ORDERS => Some(&mut total),
                NO_ORDERS => Some(&mut declared),
                _ => None,
            };
            if let Some(slot) = top {
                if slot.replace(f.value).is_some() {
                    return Err(FieldError::Repeated(f.tag).into());
                }
                continue;
            }
            let Some(i) = ORDER_TAGS.iter().position(|&tag| tag == f.tag) else {
                continue;
            };
            if declared.is_none() {
                // An order field before the group: not where FIX puts it.
                return Err(FieldError::Value(f.tag).into());
            }
            if i == 0 {
                if n == MAX_LIST_ORDERS {
                    return Err(AppError::Unsupported {
                        tag: NO_ORDERS,
                        text: "a list has at most 3 orders",
                    });
                }
                n += 1;
            } else if n == 0 {
                return Err(FieldError::Value(NO_ORDERS).into());
            }
            let slot = &mut entries[n - 1][i];
            if slot.replace(f.value).is_some() {
                return Err(FieldError::Repeated(f.tag).into());
            }
        }
        let list_id = id(list_id, LIST_ID)?;
        let declared = crate::codec::value::parse_u64(req(declared, NO_ORDERS)?)
            .ok_or(FieldError::Format(NO_ORDERS))?;
        if declared != n as u64 {
            return Err(FieldError::Value(NO_ORDERS).into());
        }
        if let Some(total) = total {
            if crate::codec::value::parse_u64(total) != Some(n as u64) {
                return Err(AppError::Unsupported {
                    tag: TOT_NO_ORDERS,
                    text: "TotNoOrders (68) must be the number of orders: one message per list",
                });
            }
        }
        let contingency =
            match contingency {
                Some(b"1") if n == 2 => Contingency::Oco,
                Some(b"2") if n == 2 || n == 3 => Contingency::Oto,
                Some(b"1" | b"2") => {
                    return Err(AppError::Unsupported {
                        tag: NO_ORDERS,
                        text: "an OCO has 2 orders, an OTO 2 and an OTOCO 3",
                    })
                }
                _ => return Err(AppError::Unsupported {
                    tag: CONTINGENCY_TYPE,
                    text:
                        "ContingencyType (1385) required: 1 (OCO) or 2 (OTO; OTOCO with 3 orders)",
                }),
            };
        let mut orders = [None; MAX_LIST_ORDERS];
        for (seq, e) in entries.iter().take(n).enumerate() {
            let o = order(*e, seq)?;
            if seq > 0 && orders[0].is_some_and(|f: ListOrder<'_>| f.terms.symbol != o.terms.symbol)
            {
                return Err(AppError::Unsupported {
                    tag: t::SYMBOL,
                    text: "every order of a list has the same Symbol (55)",
                });
            }
            orders[seq] = Some(o);
        }
        Ok(NewOrderList {
            list_id,
            contingency,
            orders,
        })
    }
}

/// ListCancelRequest (K): the list to cancel, by its ListID.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListCancelRequest<'a> {
    /// ListID (66).
    pub list_id: &'a [u8],
}

impl<'a> ListCancelRequest<'a> {
    /// Decodes a K (ListID required; TransactTime, which FIX 4.4 requires, is
    /// checked by the dictionary and not used).
    pub fn decode(msg: &Message<'a>) -> Result<Self, AppError> {
        let mut list_id = None;
        for field in msg.fields() {
            let f = field?;
            if f.tag == LIST_ID && list_id.replace(f.value).is_some() {
                return Err(FieldError::Repeated(LIST_ID).into());
            }
        }
        Ok(ListCancelRequest {
            list_id: id(list_id, LIST_ID)?,
        })
    }
}

/// ListStatusRequest (M): the list whose state is asked for, by its ListID (the
/// same single field as a K).
pub type ListStatusRequest<'a> = ListCancelRequest<'a>;

/// ListOrderStatus (431) values Peregrine reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListOrderStatus {
    /// 2: received for execution (sent to the venue, not yet accepted by it).
    ReceivedForExecution,
    /// 3: executing (the list was accepted).
    Executing,
    /// 6: all done (no order depends on another any more).
    AllDone,
    /// 7: reject (nothing was entered).
    Reject,
}

/// One order's line in a ListStatus: its ClOrdID, OrdStatus and quantities (units
/// of the instrument's quantity precision), AvgPx in price units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListStatusOrder<'a> {
    /// ClOrdID (11).
    pub cl_ord_id: &'a [u8],
    /// OrdStatus (39).
    pub ord_status: super::OrdStatus,
    /// CumQty (14).
    pub cum_qty: i64,
    /// LeavesQty (151).
    pub leaves_qty: i64,
    /// CxlQty (84).
    pub cxl_qty: i64,
    /// AvgPx (6), price units (0 before a fill).
    pub avg_px: i64,
}

/// ListStatus (N), FIX 4.4's layout: ListID, ListStatusType (429) 2 (response) or 5
/// (all done; 2 when answering a ListStatusRequest), NoRpts 1, RptSeq 1, ListOrderStatus, ListStatusText, TransactTime,
/// TotNoOrders and the NoOrders group (ClOrdID, CumQty, OrdStatus, LeavesQty,
/// CxlQty, AvgPx).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListStatus<'a> {
    /// ListID (66).
    pub list_id: &'a [u8],
    /// ListOrderStatus (431).
    pub status: ListOrderStatus,
    /// The answer to a ListStatusRequest (M): ListStatusType 2 (response) whatever
    /// the status; otherwise a state change (5 when all done).
    pub answer: bool,
    /// ListStatusText (444): a reject's reason.
    pub text: Option<&'a str>,
    /// TransactTime (60), ns since the epoch.
    pub transact_time: u64,
    /// The orders.
    pub orders: &'a [ListStatusOrder<'a>],
    /// The instrument's price and quantity decimals.
    pub price_decimals: u32,
    /// The instrument's quantity decimals.
    pub qty_decimals: u32,
}

impl ListStatus<'_> {
    /// Writes an N's body.
    pub fn encode(&self, w: &mut MessageWriter<'_>, precision: Precision) {
        let (kind, status) = match self.status {
            ListOrderStatus::ReceivedForExecution => (b'2', b'2'),
            ListOrderStatus::Executing => (b'2', b'3'),
            ListOrderStatus::AllDone if self.answer => (b'2', b'6'),
            ListOrderStatus::AllDone => (b'5', b'6'),
            ListOrderStatus::Reject => (b'2', b'7'),
        };
        w.bytes(LIST_ID, self.list_id)
            .char(429, kind)
            .uint(82, 1)
            .char(431, status)
            .uint(83, 1);
        if let Some(text) = self.text {
            w.text(444, text);
        }
        w.timestamp(t::TRANSACT_TIME, self.transact_time, precision)
            .uint(TOT_NO_ORDERS, self.orders.len() as u64)
            .uint(NO_ORDERS, self.orders.len() as u64);
        for o in self.orders {
            w.bytes(t::CL_ORD_ID, o.cl_ord_id)
                .decimal(14, o.cum_qty, self.qty_decimals)
                .char(39, o.ord_status.byte())
                .decimal(151, o.leaves_qty, self.qty_decimals)
                .decimal(84, o.cxl_qty, self.qty_decimals)
                .decimal(6, o.avg_px, self.price_decimals);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::{OrdStatus, OrdType, Side, TrailOffsetUnit};
    use crate::codec::Encoder;

    const T: u64 = 1_700_000_000_000_000_000;

    fn e(body: &[(u32, &str)]) -> Vec<u8> {
        let mut enc = Encoder::default();
        let mut w = enc.start(b"E");
        w.bytes(49, b"C")
            .bytes(56, b"P")
            .uint(34, 2)
            .timestamp(52, T, Precision::Millis);
        for &(tag, v) in body {
            w.bytes(tag, v.as_bytes());
        }
        w.seal().to_vec()
    }

    fn leg(cl: &'static str, extra: &[(u32, &'static str)]) -> Vec<(u32, &'static str)> {
        let mut v = vec![(11, cl), (55, "PGN-USD"), (54, "2"), (38, "1")];
        v.extend_from_slice(extra);
        v
    }

    fn decode(body: &[(u32, &str)]) -> Result<(), AppError> {
        let raw = e(body);
        let msg = Message::parse(&raw).unwrap();
        NewOrderList::decode(&msg).map(|_| ())
    }

    #[test]
    fn an_oco_and_an_otoco_decode_into_their_orders() {
        let mut body = vec![(66, "L1"), (1385, "1"), (68, "2"), (73, "2")];
        body.extend(leg("a", &[(67, "1"), (40, "2"), (44, "110")]));
        body.extend(leg("b", &[(67, "2"), (40, "3"), (99, "95"), (44, "90")]));
        let raw = e(&body);
        let msg = Message::parse(&raw).unwrap();
        let l = NewOrderList::decode(&msg).unwrap();
        assert_eq!((l.list_id, l.contingency), (&b"L1"[..], Contingency::Oco));
        let [Some(a), Some(b), None] = l.orders else {
            panic!("{l:?}")
        };
        assert_eq!(
            (a.cl_ord_id, a.terms.ord_type, a.terms.side),
            (&b"a"[..], OrdType::Limit, Side::Sell)
        );
        assert_eq!(
            (b.terms.ord_type, b.extras.stop_px),
            (OrdType::Stop, Some(&b"95"[..]))
        );

        let mut body = vec![(66, "L2"), (1385, "2"), (73, "3")];
        body.extend(leg("w", &[(40, "2"), (44, "100")]));
        body.extend(leg("tp", &[(40, "2"), (44, "120")]));
        body.extend(leg(
            "sl",
            &[(40, "3"), (44, "80"), (18, "a"), (211, "10"), (836, "2")],
        ));
        let raw = e(&body);
        let msg = Message::parse(&raw).unwrap();
        let l = NewOrderList::decode(&msg).unwrap();
        assert_eq!(l.contingency, Contingency::Oto);
        let trail = l.orders[2].unwrap().extras.trail.unwrap();
        assert_eq!((trail.value, trail.unit), (10, TrailOffsetUnit::Ticks));
    }

    #[test]
    fn malformed_and_unsupported_lists_are_refused() {
        let two = |c: &'static str| {
            let mut body = vec![(66, "L"), (1385, c), (73, "2")];
            body.extend(leg("a", &[(40, "2"), (44, "110")]));
            body.extend(leg("b", &[(40, "2"), (44, "90")]));
            body
        };
        assert!(decode(&two("1")).is_ok());
        assert!(matches!(
            decode(&two("3")),
            Err(AppError::Unsupported { tag: 1385, .. })
        ));
        let mut no_type = two("1");
        no_type.retain(|&(tag, _)| tag != 1385);
        assert!(matches!(
            decode(&no_type),
            Err(AppError::Unsupported { tag: 1385, .. })
        ));
        let mut miscounted = two("1");
        miscounted[2] = (73, "3");
        assert_eq!(
            decode(&miscounted),
            Err(AppError::Field(FieldError::Value(73)))
        );
        let mut one = vec![(66, "L"), (1385, "1"), (73, "1")];
        one.extend(leg("a", &[(40, "2"), (44, "110")]));
        assert!(matches!(
            decode(&one),
            Err(AppError::Unsupported { tag: 73, .. })
        ));
        let mut symbols = vec![(66, "L"), (1385, "1"), (73, "2")];
        symbols.extend(leg("a", &[(40, "2"), (44, "110")]));
        symbols.extend([
            (11, "b"),
            (55, "OTHER"),
            (54, "2"),
            (38, "1"),
            (40, "2"),
            (44, "9"),
        ]);
        assert!(matches!(
            decode(&symbols),
            Err(AppError::Unsupported { tag: 55, .. })
        ));
        let mut seq = two("1");
        seq.insert(4, (67, "2"));
        assert!(matches!(
            decode(&seq),
            Err(AppError::Unsupported { tag: 67, .. })
        ));
    }

    #[test]
    fn list_status_encodes_fix44_fields() {
        let orders = [
            ListStatusOrder {
                cl_ord_id: b"a",
                ord_status: OrdStatus::New,
                cum_qty: 0,
                leaves_qty: 10,
                cxl_qty: 0,
                avg_px: 0,
            },
            ListStatusOrder {
                cl_ord_id: b"b",
                ord_status: OrdStatus::Canceled,
                cum_qty: 0,
                leaves_qty: 0,
                cxl_qty: 10,
                avg_px: 0,
            },
        ];
        let n = ListStatus {
            list_id: b"L1",
            status: ListOrderStatus::AllDone,
            answer: false,
            text: None,
            transact_time: T,
            orders: &orders,
            price_decimals: 2,
            qty_decimals: 1,
        };
        let mut enc = Encoder::default();
        let mut w = enc.start(b"N");
        w.bytes(49, b"P")
            .bytes(56, b"C")
            .uint(34, 3)
            .timestamp(52, T, Precision::Millis);
        n.encode(&mut w, Precision::Millis);
        let raw = w.seal().to_vec();
        let msg = Message::parse(&raw).unwrap();
        assert_eq!(
            crate::dict::validate(&msg, &crate::dict::Validation::default()),
            Ok(())
        );
        let text = String::from_utf8_lossy(&raw).replace('\x01', "|");
        // The same state as the answer to an M: ListStatusType 2 (response).
        let mut w = enc.start(b"N");
        ListStatus { answer: true, ..n }.encode(&mut w, Precision::Millis);
        let answer = String::from_utf8_lossy(w.seal()).replace('\x01', "|");
        assert!(
            answer.contains("|66=L1|429=2|82=1|431=6|83=1|60="),
            "{answer}"
        );
        assert!(
            text.contains("|66=L1|429=5|82=1|431=6|83=1|60=")
                && text.contains("|68=2|73=2|11=a|14=0.0|39=0|151=1.0|84=0.0|6=0.00|11=b|"),
            "{text}"
        );
    }
}
