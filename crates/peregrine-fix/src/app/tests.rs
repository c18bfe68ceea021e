//! Round trips and decode errors of the application messages.

use super::*;
use crate::codec::{Encoder, FieldError, Message, Precision};

const T: u64 = 1_700_000_000_000_000_000;

fn message(t: &[u8], body: impl FnOnce(&mut crate::codec::MessageWriter<'_>)) -> Vec<u8> {
    let mut enc = Encoder::default();
    let mut w = enc.start(t);
    w.bytes(49, b"C")
        .bytes(56, b"P")
        .uint(34, 2)
        .timestamp(52, T, Precision::Millis);
    body(&mut w);
    w.seal().to_vec()
}

fn terms() -> OrderTerms<'static> {
    OrderTerms {
        symbol: b"PGN-USD",
        side: Side::Sell,
        order_qty: b"3",
        ord_type: OrdType::Limit,
        price: Some(b"100.50"),
        time_in_force: TimeInForce::Gtd,
        expire_time: Some(T + 60_000_000_000),
        post_only: true,
        self_match: SelfMatchPrevention::CancelBoth,
    }
}

#[test]
fn requests_round_trip() {
    let d = NewOrderSingle {
        cl_ord_id: b"o-1",
        account: Some(b"7"),
        transact_time: T,
        terms: terms(),
    };
    let raw = message(b"D", |w| d.encode(w, Precision::Millis));
    assert_eq!(
        NewOrderSingle::decode(&Message::parse(&raw).unwrap()),
        Ok(d)
    );

    let g = OrderCancelReplaceRequest {
        orig_cl_ord_id: b"o-1",
        cl_ord_id: b"o-2",
        order_id: Some(b"42"),
        transact_time: T,
        terms: OrderTerms {
            post_only: false,
            self_match: SelfMatchPrevention::None,
            ..terms()
        },
    };
    let raw = message(b"G", |w| g.encode(w, Precision::Millis));
    assert_eq!(
        OrderCancelReplaceRequest::decode(&Message::parse(&raw).unwrap()),
        Ok(g)
    );

    let f = OrderCancelRequest {
        orig_cl_ord_id: b"o-2",
        cl_ord_id: b"c-1",
        order_id: None,
        symbol: b"PGN-USD",
        side: Side::Sell,
        transact_time: T,
    };
    let raw = message(b"F", |w| f.encode(w, Precision::Millis));
    assert_eq!(
        OrderCancelRequest::decode(&Message::parse(&raw).unwrap()),
        Ok(f)
    );

    let q = OrderMassCancelRequest {
        cl_ord_id: b"m-1",
        scope: MassCancelScope::Security,
        symbol: Some(b"PGN-USD"),
        side: Some(Side::Buy),
        transact_time: T,
    };
    let raw = message(b"q", |w| q.encode(w, Precision::Millis));
    assert_eq!(
        OrderMassCancelRequest::decode(&Message::parse(&raw).unwrap()),
        Ok(q)
    );

    let h = OrderStatusRequest {
        cl_ord_id: b"o-2",
        order_id: None,
        symbol: b"PGN-USD",
        side: Side::Sell,
        req_id: Some(b"s1"),
    };
    let raw = message(b"H", |w| h.encode(w));
    assert_eq!(
        OrderStatusRequest::decode(&Message::parse(&raw).unwrap()),
        Ok(h)
    );
}

fn decode_d(fields: &[(u32, &str)]) -> Result<NewOrderSingle<'static>, AppError> {
    let raw = message(b"D", |w| {
        for (t, v) in fields {
            w.bytes(*t, v.as_bytes());
        }
    });
    let raw: &'static [u8] = Box::leak(raw.into_boxed_slice());
    NewOrderSingle::decode(&Message::parse(raw).unwrap())
}

const BASE: &[(u32, &str)] = &[
    (11, "a"),
    (55, "X"),
    (54, "1"),
    (38, "1"),
    (40, "2"),
    (44, "1"),
    (60, "20231114-22:13:20"),
];

fn with(changes: &[(u32, Option<&'static str>)]) -> Vec<(u32, &'static str)> {
    let mut v: Vec<(u32, &str)> = BASE.to_vec();
    for &(tag, value) in changes {
        v.retain(|(t, _)| *t != tag);
        if let Some(value) = value {
            v.push((tag, value));
        }
    }
    v
}

#[test]
fn new_order_defaults_and_errors() {
    let d = decode_d(BASE).unwrap();
    assert_eq!(d.terms.time_in_force, TimeInForce::Gtc);
    assert!(!d.terms.post_only);
    let m = decode_d(&with(&[(40, Some("1")), (44, None)])).unwrap();
    assert_eq!(
        (m.terms.time_in_force, m.terms.price),
        (TimeInForce::Ioc, None)
    );
    assert_eq!(
        decode_d(&with(&[(11, None)])),
        Err(AppError::Field(FieldError::Missing(11)))
    );
    assert_eq!(
        decode_d(&with(&[(54, Some("9"))])),
        Err(AppError::Field(FieldError::Value(54)))
    );
    assert_eq!(
        decode_d(&with(&[(60, Some("soon"))])),
        Err(AppError::Field(FieldError::Format(60)))
    );
    let mut twice = BASE.to_vec();
    twice.push((55, "Y"));
    assert_eq!(
        decode_d(&twice),
        Err(AppError::Field(FieldError::Repeated(55)))
    );
    assert!(matches!(
        decode_d(&with(&[(40, Some("P"))])),
        Err(AppError::Unsupported { tag: 40, .. })
    ));
    // A stop needs its StopPx; a limit order may not have one.
    assert!(matches!(
        decode_d(&with(&[(40, Some("3"))])),
        Err(AppError::Unsupported { tag: 99, .. })
    ));
    let mut stop_px_on_a_limit = BASE.to_vec();
    stop_px_on_a_limit.push((99, "101"));
    assert!(matches!(
        decode_d(&stop_px_on_a_limit),
        Err(AppError::Unsupported { tag: 99, .. })
    ));
    assert!(matches!(
        decode_d(&with(&[(59, Some("0"))])),
        Err(AppError::Unsupported { tag: 59, .. })
    ));
    assert!(matches!(
        decode_d(&with(&[(59, Some("6"))])),
        Err(AppError::Unsupported { tag: 126, .. })
    ));
    assert!(matches!(
        decode_d(&with(&[(44, None)])),
        Err(AppError::Unsupported { tag: 44, .. })
    ));
    assert!(
        decode_d(&with(&[(18, Some("M 6"))]))
            .unwrap()
            .terms
            .post_only
    );
    assert_eq!(
        decode_d(&with(&[(2964, Some("9"))])),
        Err(AppError::Field(FieldError::Value(2964)))
    );
    // Unknown tags are ignored.
    assert!(decode_d(&with(&[(9999, Some("x"))])).is_ok());
}

#[test]
fn decimals_convert_with_the_instruments_precision() {
    assert_eq!(decimal_units(b"100.50", 2, 44), Ok(10050));
    assert_eq!(decimal_units(b"100.505", 2, 44), Err(FieldError::Value(44)));
    assert_eq!(decimal_units(b"1e2", 2, 44), Err(FieldError::Format(44)));
}

#[test]
fn execution_report_encodes_exact_decimals_and_decodes_back() {
    let (mut s, _) = OrderState::accepted(1000, 10050);
    let t = s.fill(10050, 300, 700);
    let t2 = s.fill(10051, 700, 0);
    assert_eq!(t.ord_status, OrdStatus::PartiallyFilled);
    let report = ExecutionReport {
        order_id: 42,
        cl_ord_id: b"o-1",
        orig_cl_ord_id: None,
        exec_id: b"9",
        exec_type: t2.exec_type,
        ord_status: t2.ord_status,
        symbol: b"PGN-USD",
        side: Side::Buy,
        ord_type: Some(OrdType::Limit),
        time_in_force: Some(TimeInForce::Gtc),
        order_qty: Some(s.order_qty),
        price: Some(s.price),
        last: t2.last,
        leaves_qty: s.leaves_qty,
        cum_qty: s.cum_qty,
        notional: s.notional,
        ord_rej_reason: None,
        text: None,
        ord_status_req_id: None,
        transact_time: T,
        price_decimals: 2,
        qty_decimals: 1,
    };
    let raw = message(b"8", |w| report.encode(w, Precision::Millis));
    let msg = Message::parse(&raw).unwrap();
    let v = ExecutionReportView::decode(&msg).unwrap();
    assert_eq!(
        (v.order_id, v.exec_type, v.ord_status),
        (&b"42"[..], ExecType::Trade, OrdStatus::Filled)
    );
    assert_eq!(
        (v.cum_qty, v.leaves_qty, v.last_px, v.last_qty),
        (
            &b"100.0"[..],
            &b"0.0"[..],
            Some(&b"100.51"[..]),
            Some(&b"70.0"[..])
        )
    );
    let avg = msg.fields().flatten().find(|f| f.tag == 6).unwrap().value;
    // (100.50 × 30 + 100.51 × 70) / 100 = 100.507
    assert_eq!(avg, b"100.507");
}

#[test]
fn rejects_and_mass_cancel_reports_encode() {
    let r = OrderCancelReject {
        order_id: 0,
        cl_ord_id: b"c-1",
        orig_cl_ord_id: b"o-1",
        ord_status: OrdStatus::Rejected,
        response_to: CxlRejResponseTo::Cancel,
        reason: CxlRejReason::UnknownOrder,
        text: Some("unknown order"),
    };
    let raw = message(b"9", |w| r.encode(w));
    let v = OrderCancelRejectView::decode(&Message::parse(&raw).unwrap()).unwrap();
    assert_eq!(
        (v.cl_ord_id, v.response_to, v.reason),
        (&b"c-1"[..], CxlRejResponseTo::Cancel, Some(1))
    );
    let m = OrderMassCancelReport {
        cl_ord_id: b"m-1",
        order_id: 5,
        scope: MassCancelScope::All,
        accepted: true,
        total_affected: Some(3),
        reject_reason: None,
        symbol: None,
        side: None,
        text: None,
    };
    let raw = message(b"r", |w| m.encode(w));
    let v = OrderMassCancelReportView::decode(&Message::parse(&raw).unwrap()).unwrap();
    assert_eq!((v.accepted, v.total_affected), (true, Some(3)));
    let j = BusinessMessageReject {
        ref_seq: 4,
        ref_msg_type: b"AE",
        ref_id: None,
        reason: BusinessRejectReason::UnsupportedMessageType,
        text: "unsupported message type",
    };
    let raw = message(b"j", |w| j.encode(w));
    assert!(Message::parse(&raw).is_ok());
}
