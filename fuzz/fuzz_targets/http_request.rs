//! The HTTP gateway's hand-written request decoding: parameters (query + body),
//! signature extraction, hex signatures, decimal amounts, WebSocket API payloads,
//! client ids. None may panic; what they accept must be consistent.
#![no_main]

use libfuzzer_sys::fuzz_target;
use peregrine_http::dialect::{auth, params::Params};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let (query, body) = text.split_once('\u{1}').unwrap_or((text, ""));
    if let Ok(mut p) = Params::parse(query, body) {
        for name in ["symbol", "price", "quantity", "timestamp", "limit", "newClientOrderId"] {
            let _ = p.opt(name);
        }
        let _ = p.opt_u64("orderId");
        let _ = p.limit(500, 1000);
        let _ = p.finish();
    }
    if let Ok((payload, sig)) = auth::signed_payload(query, body) {
        // Exactly one `signature=<sig>` segment (and at most its `&`) was taken out. The
        // payload itself may still read "&signature=": totalParams is query and body
        // concatenated, so "..&s" + "ignature=.." spells it across the seam (CI found it).
        let removed = query.len() + body.len() - payload.len();
        let segment = "signature=".len() + sig.len();
        assert!(removed == segment || removed == segment + 1, "{removed} vs {segment}");
        let _ = auth::decode_hex32(&sig);
    }
    let _ = auth::check_timestamp(Some(query), Some(body), 1_700_000_000_000);
    let _ = peregrine_http::rest::trade::valid_client_id(query);
    let _ = peregrine_http::market::symbols::Symbol::new({
        let mut s = peregrine_types::InstrumentSpec::example(1);
        s.price_decimals = (data.len() % 9) as u32;
        s
    })
    .parse_price(query);
    if let Ok(serde_json::Value::Object(m)) = serde_json::from_str::<serde_json::Value>(text) {
        let _ = peregrine_http::ws::methods::payload(&m, false);
        let _ = peregrine_http::ws::methods::payload(&m, true);
    }
});
