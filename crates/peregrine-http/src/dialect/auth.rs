//! API keys and request signatures (Binance `SIGNED` endpoints).
//!
//! A signed request names its key in the `X-MBX-APIKEY` header and carries
//! `timestamp`, optionally `recvWindow`, and `signature`: the hex HMAC-SHA256, keyed
//! with the secret, of *totalParams* = the raw query string followed directly by the
//! raw request body, without the `signature` parameter. The bytes are verified as
//! they were received, so any client that signs what it sends agrees with the
//! gateway. The comparison is constant-time (`hmac`'s `verify_slice`).

use std::collections::HashMap;
use std::sync::Arc;

use hmac::{Hmac, KeyInit, Mac};
use peregrine_types::AccountId;
use sha2::Sha256;

use super::error::{ApiError, ApiResult};
use super::params::parse_u64;
use crate::config::ApiKeyConfig;

/// Default `recvWindow`, ms.
pub const DEFAULT_RECV_WINDOW: u64 = 5_000;
/// Largest `recvWindow`, ms.
pub const MAX_RECV_WINDOW: u64 = 60_000;
/// How far ahead of the server a timestamp may be, ms.
pub const MAX_AHEAD_MS: u64 = 1_000;

/// One API key.
#[derive(Debug)]
pub struct Key {
    /// The account it trades.
    pub account: AccountId,
    /// Its public name.
    pub api_key: String,
    secret: Vec<u8>,
    /// May use the operations API.
    pub operator: bool,
}

impl Key {
    /// HMAC-SHA256 of `payload` with this key's secret, as lower-case hex.
    pub fn sign(&self, payload: &[u8]) -> String {
        sign_hex(&self.secret, payload)
    }

    /// Checks a hex signature of `payload` in constant time.
    pub fn verify(&self, payload: &[u8], signature_hex: &str) -> bool {
        let Some(sig) = decode_hex32(signature_hex) else {
            return false;
        };
        let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(&self.secret) else {
            return false;
        };
        mac.update(payload);
        mac.verify_slice(&sig).is_ok()
    }
}

/// HMAC-SHA256 of `payload` keyed with `secret`, lower-case hex.
pub fn sign_hex(secret: &[u8], payload: &[u8]) -> String {
    // An HMAC key may have any length: this cannot fail.
    let mut mac = Hmac::<Sha256>::new_from_slice(secret).expect("HMAC takes any key length");
    mac.update(payload);
    let out = mac.finalize().into_bytes();
    let mut s = String::with_capacity(64);
    for b in out.iter() {
        s.push(char::from(b"0123456789abcdef"[usize::from(b >> 4)]));
        s.push(char::from(b"0123456789abcdef"[usize::from(b & 15)]));
    }
    s
}

/// Exactly 64 hex digits (either case) to 32 bytes.
pub fn decode_hex32(s: &str) -> Option<[u8; 32]> {
    let b = s.as_bytes();
    if b.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, pair) in b.chunks_exact(2).enumerate() {
        out[i] = (nibble(pair[0])? << 4) | nibble(pair[1])?;
    }
    Some(out)
}

fn nibble(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// Every configured key.
#[derive(Debug, Default)]
pub struct Keys {
    by_key: HashMap<String, Arc<Key>>,
}

impl Keys {
    /// From the config.
    pub fn new(config: &[ApiKeyConfig]) -> Keys {
        let by_key = config
            .iter()
            .map(|k| {
                (
                    k.api_key.clone(),
                    Arc::new(Key {
                        account: AccountId(k.account),
                        api_key: k.api_key.clone(),
                        secret: k.secret_key.as_bytes().to_vec(),
                        operator: k.operator,
                    }),
                )
            })
            .collect();
        Keys { by_key }
    }

    /// The key named by an `X-MBX-APIKEY` header value: -2014 if absent or
    /// malformed, -2015 if unknown.
    pub fn lookup(&self, header: Option<&str>) -> ApiResult<Arc<Key>> {
        let name = header.ok_or_else(ApiError::api_key_format)?;
        if name.is_empty()
            || name.len() > 128
            || !name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return Err(ApiError::api_key_format());
        }
        self.by_key
            .get(name)
            .cloned()
            .ok_or_else(ApiError::bad_api_key)
    }

    /// Every key (for the listen-key and user-stream tables).
    pub fn all(&self) -> impl Iterator<Item = &Arc<Key>> {
        self.by_key.values()
    }
}

/// Splits a raw form string into (itself without its `signature` segments, the
/// signature value if there was one). More than one `signature` is -1101.
pub fn strip_signature(raw: &str) -> ApiResult<(String, Option<String>)> {
    let mut kept: Vec<&str> = Vec::new();
    let mut sig: Option<String> = None;
    for seg in raw.split('&') {
        let key = seg.split_once('=').map_or(seg, |(k, _)| k);
        if key == "signature" {
            if sig.is_some() {
                return Err(ApiError::duplicate("signature"));
            }
            sig = Some(seg.split_once('=').map_or("", |(_, v)| v).to_owned());
        } else {
            kept.push(seg);
        }
    }
    Ok((kept.join("&"), sig))
}

/// The bytes a signature covers (totalParams without `signature`) and the signature.
pub fn signed_payload(query: &str, body: &str) -> ApiResult<(String, String)> {
    let (q, qs) = strip_signature(query)?;
    let (b, bs) = strip_signature(body)?;
    let sig = match (qs, bs) {
        (Some(_), Some(_)) => return Err(ApiError::duplicate("signature")),
        (Some(s), None) | (None, Some(s)) if !s.is_empty() => s,
        _ => return Err(ApiError::mandatory("signature")),
    };
    let mut payload = q;
    payload.push_str(&b);
    Ok((payload, sig))
}

/// Checks `timestamp` and `recvWindow` (raw parameter values) against `now_ms`.
pub fn check_timestamp(
    timestamp: Option<&str>,
    recv_window: Option<&str>,
    now_ms: u64,
) -> ApiResult<()> {
    let ts = match timestamp {
        None | Some("") => return Err(ApiError::mandatory("timestamp")),
        Some(t) => parse_u64(t).ok_or_else(|| ApiError::illegal_chars("timestamp"))?,
    };
    let window = match recv_window {
        None | Some("") => DEFAULT_RECV_WINDOW,
        Some(w) => parse_u64(w).ok_or_else(|| ApiError::illegal_chars("recvWindow"))?,
    };
    if window == 0 || window > MAX_RECV_WINDOW {
        return Err(ApiError::bad_recv_window(window));
    }
    if ts > now_ms.saturating_add(MAX_AHEAD_MS) {
        return Err(ApiError::timestamp_ahead());
    }
    if now_ms.saturating_sub(ts) > window {
        return Err(ApiError::timestamp_outside());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The worked example of Binance's "SIGNED Endpoint Examples for POST
    /// /api/v3/order": this key, this payload, this signature.
    const DOC_SECRET: &str = "NhqPtmdSJYdKjVHjA7PZj4Mge3R5YNiP1e3UZjInClVN65XAbvqqM6A7H5fATj0j";
    const DOC_PAYLOAD: &str = "symbol=LTCBTC&side=BUY&type=LIMIT&timeInForce=GTC&quantity=1&price=0.1&recvWindow=5000&timestamp=1499827319559";
    const DOC_SIGNATURE: &str = "c8db56825ae71d6d79447849e617115f4a920fa2acdcab2b053c4b2838bd6b71";

    fn key() -> Key {
        Key {
            account: AccountId(1),
            api_key: "k".into(),
            secret: DOC_SECRET.as_bytes().to_vec(),
            operator: false,
        }
    }

    #[test]
    fn the_documented_example_verifies() {
        assert_eq!(
            sign_hex(DOC_SECRET.as_bytes(), DOC_PAYLOAD.as_bytes()),
            DOC_SIGNATURE
        );
        assert!(key().verify(DOC_PAYLOAD.as_bytes(), DOC_SIGNATURE));
        assert!(key().verify(DOC_PAYLOAD.as_bytes(), &DOC_SIGNATURE.to_uppercase()));
        let mut bad = DOC_SIGNATURE.to_owned();
        bad.replace_range(0..1, "d");
        assert!(!key().verify(DOC_PAYLOAD.as_bytes(), &bad));
        assert!(!key().verify(b"symbol=LTCBTC", DOC_SIGNATURE));
        assert!(!key().verify(DOC_PAYLOAD.as_bytes(), "zz"));
    }

    #[test]
    fn query_and_body_are_concatenated_without_separator() {
        // Binance's mixed example: part in the query, part in the body.
        let q = "symbol=LTCBTC&side=BUY&type=LIMIT&timeInForce=GTC";
        let b = format!("quantity=1&price=0.1&recvWindow=5000&timestamp=1499827319559&signature={DOC_SIGNATURE}");
        let (payload, sig) = signed_payload(q, &b).unwrap();
        assert_eq!(payload, "symbol=LTCBTC&side=BUY&type=LIMIT&timeInForce=GTCquantity=1&price=0.1&recvWindow=5000&timestamp=1499827319559");
        assert_eq!(sig, DOC_SIGNATURE);
    }

    #[test]
    fn a_signature_spelled_across_the_seam_is_signed_text_not_a_second_signature() {
        // The query ends "&s", the body starts "ignature=": concatenated, totalParams reads
        // "&signature=", but neither part holds a second signature parameter (fuzz find).
        let (payload, sig) = signed_payload("a=1&signature=ab&s", "ignature=2").unwrap();
        assert_eq!((payload.as_str(), sig.as_str()), ("a=1&signature=2", "ab"));
    }

    #[test]
    fn signature_anywhere_once() {
        let (p, s) = strip_signature("signature=ab&a=1&b=2").unwrap();
        assert_eq!((p.as_str(), s.as_deref()), ("a=1&b=2", Some("ab")));
        assert_eq!(
            strip_signature("signature=a&signature=b").unwrap_err().code,
            -1101
        );
        assert_eq!(signed_payload("a=1", "").unwrap_err().code, -1102);
        assert_eq!(signed_payload("signature=", "").unwrap_err().code, -1102);
        assert_eq!(
            signed_payload("signature=a", "signature=b")
                .unwrap_err()
                .code,
            -1101
        );
    }

    #[test]
    fn timestamps() {
        let now = 1_700_000_000_000;
        check_timestamp(Some(&now.to_string()), None, now).unwrap();
        check_timestamp(Some(&(now - 5_000).to_string()), None, now).unwrap();
        assert_eq!(
            check_timestamp(Some(&(now - 5_001).to_string()), None, now)
                .unwrap_err()
                .code,
            -1021
        );
        check_timestamp(Some(&(now - 59_000).to_string()), Some("60000"), now).unwrap();
        assert_eq!(
            check_timestamp(Some(&now.to_string()), Some("0"), now)
                .unwrap_err()
                .msg,
            "recvWindow must be greater than 0."
        );
        assert_eq!(
            check_timestamp(Some(&now.to_string()), Some("60001"), now)
                .unwrap_err()
                .code,
            -1131
        );
        assert_eq!(
            check_timestamp(Some(&(now + 1_001).to_string()), None, now)
                .unwrap_err()
                .code,
            -1021
        );
        assert_eq!(check_timestamp(None, None, now).unwrap_err().code, -1102);
        assert_eq!(
            check_timestamp(Some("12a"), None, now).unwrap_err().code,
            -1100
        );
    }

    #[test]
    fn key_lookup() {
        let keys = Keys::new(&[ApiKeyConfig {
            account: 3,
            api_key: "key-three".into(),
            secret_key: "secret-three".into(),
            operator: false,
        }]);
        assert_eq!(
            keys.lookup(Some("key-three")).unwrap().account,
            AccountId(3)
        );
        assert_eq!(keys.lookup(Some("key-four")).unwrap_err().code, -2015);
        assert_eq!(keys.lookup(None).unwrap_err().code, -2014);
        assert_eq!(keys.lookup(Some("bad key")).unwrap_err().code, -2014);
    }
}

#[cfg(test)]
mod fuzz_contract {
    //! The fuzz target's contract (request decoding: parameters and signatures) (fuzz/fuzz_targets/http_request.rs) on stable.
    use super::*;
    use crate::dialect::params::Params;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn prop_request_decoding_never_panics(q in ".{0,200}", b in ".{0,200}", raw in proptest::collection::vec(any::<u8>(), 0..200)) {
            if let Ok(mut p) = Params::parse(&q, &b) {
                let _ = p.opt("symbol");
                let _ = p.opt_u64("orderId");
                let _ = p.limit(500, 1000);
                let _ = p.finish();
            }
            let _ = signed_payload(&q, &b);
            let _ = decode_hex32(&q);
            let _ = check_timestamp(Some(&q), Some(&b), 1_700_000_000_000);
            let s = String::from_utf8_lossy(&raw);
            let _ = Params::parse(&s, "");
        }

        #[test]
        fn prop_signature_is_removed_exactly(keys in proptest::collection::vec("[a-z]{1,8}", 1..6), sig in "[0-9a-f]{64}", at in 0usize..6) {
            let mut parts: Vec<String> = keys.iter().enumerate().map(|(i, k)| format!("{k}{i}=v{i}")).collect();
            let plain = parts.join("&");
            parts.insert(at.min(parts.len()), format!("signature={sig}"));
            let (payload, got) = signed_payload(&parts.join("&"), "").unwrap();
            prop_assert_eq!(payload, plain);
            prop_assert_eq!(got, sig);
        }
    }
}
