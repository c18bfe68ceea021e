use peregrine_exchange_core::balances::{saturate, AdminReason, AssetConfig};
use peregrine_ledger::{AssetId, InstrumentAssets};
use peregrine_types::{AccountId, InstrumentId};

use super::*;

const VENUE: &str = r#"
[balances]
enabled = true
[[balances.initial]]
account = 1
asset = "USD"
amount = "1000.50"
[[balances.initial]]
account = 2
asset = "PGN"
amount = "40"

[[assets]]
id = 1
symbol = "PGN"
decimals = 0
[[assets]]
id = 2
symbol = "USD"
decimals = 2

[[instruments]]
id = 1
symbol = "PGN-USD"
price_decimals = 2
qty_decimals = 0
tick_size = 1
lot_size = 1
min_qty = 1
max_qty = 1000
reference_price = 10000
band = 5000
status = "active"
base = "PGN"
quote = "USD"

[[accounts]]
id = 1
stored_key = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
[[accounts]]
id = 2
stored_key = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
[[accounts]]
id = 9
stored_key = "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"
admin = true
"#;

fn venue() -> Config {
    Config::parse(VENUE).unwrap()
}

#[test]
fn resolves_assets_admins_and_initial_deposits() {
    let c = venue();
    assert_eq!(c.validate(), Ok(()));
    let s = c.balance_setup().unwrap().unwrap();
    assert_eq!(
        s.instruments,
        vec![(
            InstrumentId(1),
            InstrumentAssets {
                base: AssetId(1),
                quote: AssetId(2)
            }
        )]
    );
    assert_eq!(s.policy.admins, vec![AccountId(9)]);
    assert_eq!(
        s.policy.accounts,
        vec![AccountId(1), AccountId(2), AccountId(9)]
    );
    assert_eq!(s.policy.assets, vec![AssetId(1), AssetId(2)]);
    assert_eq!(
        s.initial,
        vec![
            (AccountId(1), AssetId(2), 100_050),
            (AccountId(2), AssetId(1), 40)
        ]
    );
    assert_eq!(Config::parse(&c.to_toml()).unwrap(), c);
}

#[test]
fn balances_are_off_by_default_and_cost_nothing_to_resolve() {
    let c = Config::default();
    assert!(!c.balances.enabled);
    assert!(c.balances.initial.is_empty());
    assert!(c.assets.is_empty());
    assert!(c.accounts.iter().all(|a| !a.admin));
    assert_eq!(c.balance_setup(), Ok(None));
    assert!(!c.to_toml().contains("balances"));
}

#[test]
fn config_errors_are_clear_and_all_reported() {
    let mut c = venue();
    c.instruments[0].base = Some("BTC".into());
    c.instruments[0].quote = None;
    let errs = c.validate().unwrap_err();
    assert!(
        errs.iter().any(|e| e.contains("set both base and quote")),
        "{errs:?}"
    );

    let mut c = venue();
    c.instruments[0].base = Some("BTC".into());
    c.assets[1].decimals = 4;
    c.assets.push(AssetConfig {
        id: 1,
        symbol: "PGN".into(),
        decimals: 0,
    });
    c.balances.initial[0].amount = "1.00001".into();
    c.balances.initial[1].account = AccountId(77);
    let errs = c.validate().unwrap_err();
    for want in [
        "unknown base asset \"BTC\"",
        "quote asset USD has 4 decimals, but price_decimals + qty_decimals = 2",
        "asset 1: id defined twice",
        "asset PGN: symbol defined twice",
        "amount \"1.00001\"",
        "account 77, PGN): unknown account",
    ] {
        assert!(
            errs.iter().any(|e| e.contains(want)),
            "{want} not in {errs:?}"
        );
    }

    let mut c = venue();
    c.assets.clear();
    c.instruments[0].base = None;
    c.instruments[0].quote = None;
    c.balances.initial.clear();
    let errs = c.validate().unwrap_err();
    assert!(errs
        .iter()
        .any(|e| e.contains("needs at least one [[assets]]")));
    assert!(errs
        .iter()
        .any(|e| e.contains("balances are on: set base and quote")));
    assert!(c.balance_setup().is_err());

    let mut c = venue();
    c.balances.enabled = false;
    let errs = c.validate().unwrap_err();
    assert_eq!(
        errs,
        vec!["balances.initial: needs balances.enabled = true".to_string()]
    );
    c.balances.initial.clear();
    assert_eq!(c.validate(), Ok(()));
    assert_eq!(c.balance_setup(), Ok(None));

    let mut c = venue();
    c.balances.initial[0].amount = "-5".into();
    let errs = c.validate().unwrap_err();
    assert!(errs.iter().any(|e| e.contains("amount must be positive")));
}

#[test]
fn unknown_keys_are_refused() {
    assert!(Config::parse("[balances]\nenabeld = true\n").is_err());
    assert!(
        Config::parse("[[assets]]\nid = 1\nsymbol = \"X\"\ndecimals = 0\nscale = 1\n").is_err()
    );
}

#[test]
fn policy_gates_admin_requests() {
    let s = venue().balance_setup().unwrap().unwrap();
    let p = &s.policy;
    let (admin, user) = (AccountId(9), AccountId(1));
    assert_eq!(p.check(admin, user, AssetId(2), true), Ok(()));
    assert_eq!(
        p.check(user, user, AssetId(2), true),
        Err(AdminReason::NotAdmin)
    );
    assert_eq!(p.check(user, user, AssetId(2), false), Ok(()));
    assert_eq!(
        p.check(user, AccountId(2), AssetId(2), false),
        Err(AdminReason::NotAdmin)
    );
    assert_eq!(
        p.check(admin, AccountId(5), AssetId(2), true),
        Err(AdminReason::UnknownAccount)
    );
    assert_eq!(
        p.check(admin, user, AssetId(3), true),
        Err(AdminReason::UnknownAsset)
    );
}

#[test]
fn reason_codes_round_trip() {
    for r in AdminReason::ALL {
        assert_eq!(AdminReason::from_code(r.code()), Some(r));
    }
    assert_eq!(AdminReason::from_code(0), None);
    assert_eq!(saturate(i128::MAX), i64::MAX);
    assert_eq!(saturate(i128::MIN), i64::MIN);
    assert_eq!(saturate(-5), -5);
}

/// The instrument rules of docs/fees.md and docs/auctions.md, in their documented form.
const RULES: &str = r#"quote = "USD"
volatility = { band_bps = 500, auction_ms = 2000 }
schedule = { opening_call = "07:50", open = "08:00", closing_call = "16:25", close = "16:30" }

[instruments.fees]
maker_ppm = -20
taker_ppm = 50
[[instruments.fees.tiers]]
min_volume = "1000000"
maker_ppm = -25
taker_ppm = 40
"#;

#[test]
fn fees_need_a_fee_account_with_balances_and_only_then() {
    let with_rules = VENUE.replace("quote = \"USD\"\n", RULES);
    let parse = |prefix: &str, text: &str| Config::parse(&format!("{prefix}{text}")).unwrap();
    let c = parse("", &with_rules);
    let spec = &c.instruments[0];
    assert_eq!(spec.fees.as_ref().map(|f| f.tiers.len()), Some(1));
    assert!(spec.volatility.is_some() && spec.schedule.is_some());
    let errs = c.validate().unwrap_err();
    assert!(errs.iter().any(|e| e.contains("fee_account")), "{errs:?}");
    assert_eq!(parse("fee_account = 9\n", &with_rules).validate(), Ok(()));
    let errs = parse("fee_account = 7\n", &with_rules)
        .validate()
        .unwrap_err();
    assert!(errs.iter().any(|e| e.contains("account 7")), "{errs:?}");
    let off = with_rules.replace("enabled = true", "enabled = false");
    let errs = parse("fee_account = 9\n", &off).validate().unwrap_err();
    assert!(errs.iter().any(|e| e.contains("fee_account")), "{errs:?}");
    // Without balances fees are reported, not charged: no fee account needed.
    let errs = parse("", &off).validate().unwrap_err(); // (the initial deposits)
    assert!(!errs.iter().any(|e| e.contains("fee_account")), "{errs:?}");
}
