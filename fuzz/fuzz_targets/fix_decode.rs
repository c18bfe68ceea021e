//! FIX decoder: framing, the header view, every application decoder, and the session
//! state machine fed the same bytes. Contract: never panics, errors are typed, and
//! memory stays bounded whatever BodyLength says (framing never buffers; the session
//! keeps nothing per byte beyond its bounded output).
#![no_main]

use libfuzzer_sys::fuzz_target;
use peregrine_fix::app::{
    ExecutionReportView, ListCancelRequest, NewOrderList, NewOrderSingle, OrderCancelRejectView, OrderCancelReplaceRequest, OrderCancelRequest,
    OrderMassCancelReportView, OrderMassCancelRequest, OrderStatusRequest,
};
use peregrine_fix::codec::{frame, Frame, FrameLimits, Message};
use peregrine_fix::session::{Received, Role, Session, SessionConfig};
use peregrine_fix::store::MemoryStore;

const T0: u64 = 1_700_000_000_000_000_000;

fuzz_target!(|data: &[u8]| {
    let limits = FrameLimits { max_body: 1024 };
    // The codec alone.
    let mut at = 0;
    while at < data.len() {
        match frame(&data[at..], limits) {
            Some(Frame::Message { len }) => {
                assert!(len <= limits.max_message());
                if let Ok(m) = Message::parse(&data[at..at + len]) {
                    let _ = NewOrderSingle::decode(&m);
                    let _ = OrderCancelRequest::decode(&m);
                    let _ = OrderCancelReplaceRequest::decode(&m);
                    let _ = OrderMassCancelRequest::decode(&m);
                    let _ = OrderStatusRequest::decode(&m);
                    let _ = ExecutionReportView::decode(&m);
                    let _ = NewOrderList::decode(&m);
                    let _ = ListCancelRequest::decode(&m);
                    let _ = OrderCancelRejectView::decode(&m);
                    let _ = OrderMassCancelReportView::decode(&m);
                }
                at += len;
            }
            // Garbled bytes end at the next message start, however far that is
            // (junk, or a body with no trailer within max_body): never past the input.
            Some(Frame::Garbled { len, .. }) => {
                assert!(len > 0 && len <= data.len() - at);
                at += len;
            }
            // It decides within one message's bytes: a receive buffer of
            // max_message() never waits for more.
            None => {
                assert!(data.len() - at <= limits.max_message());
                break;
            }
        }
    }
    // The session: an acceptor without a password, fed everything.
    let mut config = SessionConfig::new(Role::Acceptor, "PGN", "CLIENT");
    config.limits = limits;
    config.max_clock_skew_ns = u64::MAX;
    let mut s = Session::new(config, MemoryStore::new(T0));
    s.connect(T0).unwrap();
    let mut at = 0;
    let mut now = T0;
    while at < data.len() {
        match s.receive(&data[at..], now).unwrap() {
            Received::NeedMore => break,
            Received::Consumed { len, .. } => at += len,
        }
        now += 1_000_000_000;
        let _ = s.poll(now).unwrap();
        let n = s.outbound().unwrap().len();
        s.consume_outbound(n);
    }
});
