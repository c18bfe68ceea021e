//! The exchange venue's `feed = { ... }` in `engine.toml`: parsed under the exchange
//! venue, validated with its path, and mapped onto the market-data thread's book
//! slots (which the `md exch send` latency rows use).

use std::path::Path;

use peregrine_engine::config::{ConfigError, EngineConfig};

/// Any 64 hex digits are a well-formed key.
const KEY: &str = "11111111111111111111111111111111111111111111111111111111111111ff";

fn venue(feed: &str) -> String {
    format!(
        "instruments = [1, 2]\n[[venues]]\nname = \"sim\"\n\
         sim = {{ delay_lo_ns = 1, delay_hi_ns = 2, model = {{ kind = \"full\" }}, seed = 1 }}\n\
         [[venues]]\nname = \"px\"\n\
         exchange = {{ addr = \"127.0.0.1:7700\", account = 1, key = \"{KEY}\", {feed} }}\n"
    )
}

#[test]
fn the_feed_is_configured_under_the_exchange_venue() {
    let text = venue(r#"feed = { addr = "127.0.0.1:7701", recovery = "127.0.0.1:7702" }"#);
    let cfg = EngineConfig::from_toml(&text, Path::new("x")).unwrap();
    let feed = cfg.venues[1]
        .exchange
        .as_ref()
        .unwrap()
        .feed
        .as_ref()
        .unwrap();
    assert_eq!(feed.addr, "127.0.0.1:7701");
    assert_eq!(feed.recovery.as_deref(), Some("127.0.0.1:7702"));
    assert!(
        feed.instruments.is_empty(),
        "default: every engine instrument"
    );
    // Slots are venue-major: the sim's two books, then the exchange's two.
    assert_eq!(cfg.exchange_feed_slots(), [false, false, true, true]);
    let none = EngineConfig::from_toml(&venue("heartbeat_ms = 5"), Path::new("x")).unwrap();
    assert_eq!(none.exchange_feed_slots(), [false; 4]);
}

#[test]
fn bad_feed_settings_are_reported_with_their_path() {
    let text = venue(r#"feed = { addr = "nowhere", recovery = "x:y" }"#);
    let Err(ConfigError::Invalid(p)) = EngineConfig::from_toml(&text, Path::new("x")) else {
        panic!("expected Invalid");
    };
    assert!(
        p.iter().any(|l| l.contains("venues[1].exchange.feed.addr")),
        "{p:#?}"
    );
    assert!(
        p.iter()
            .any(|l| l.contains("venues[1].exchange.feed.recovery")),
        "{p:#?}"
    );
    let e = EngineConfig::from_toml(&venue(r#"feed = { adr = "1.2.3.4:5" }"#), Path::new("x"))
        .unwrap_err();
    assert!(e.to_string().contains("adr"), "{e}");
}
