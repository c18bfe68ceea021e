use peregrine_types::{AccountId, InstrumentId, InstrumentSpec};

use super::*;
use peregrine_ledger::{AssetId, InstrumentAssets};

fn assets() -> Vec<AssetConfig> {
    vec![
        AssetConfig {
            id: 1,
            symbol: "PGN".into(),
            decimals: 0,
        },
        AssetConfig {
            id: 2,
            symbol: "USD".into(),
            decimals: 2,
        },
    ]
}

fn instrument() -> InstrumentSpec {
    let mut spec = InstrumentSpec::example(1);
    spec.price_decimals = 2;
    spec.qty_decimals = 0;
    spec.base = Some("PGN".into());
    spec.quote = Some("USD".into());
    spec
}

fn on() -> BalancesConfig {
    BalancesConfig {
        enabled: true,
        initial: vec![InitialBalance {
            account: AccountId(1),
            asset: "USD".into(),
            amount: "1000.50".into(),
        }],
    }
}

#[test]
fn resolve_maps_symbols_to_ids_and_sorts_the_policy() {
    let (instruments, assets, balances) = ([instrument()], assets(), on());
    let inputs = BalanceInputs {
        instruments: &instruments,
        accounts: &[AccountId(9), AccountId(1), AccountId(2)],
        admins: &[AccountId(9)],
        assets: &assets,
        balances: &balances,
    };
    let s = BalanceSetup::resolve(&inputs).unwrap().unwrap();
    let pair = InstrumentAssets {
        base: AssetId(1),
        quote: AssetId(2),
    };
    assert_eq!(s.instruments, vec![(InstrumentId(1), pair)]);
    assert_eq!(
        s.policy.accounts,
        vec![AccountId(1), AccountId(2), AccountId(9)]
    );
    assert_eq!(s.policy.admins, vec![AccountId(9)]);
    assert_eq!(s.initial, vec![(AccountId(1), AssetId(2), 100_050)]);
    let p = &s.policy;
    assert_eq!(
        p.check(AccountId(9), AccountId(1), AssetId(2), true),
        Ok(())
    );
    assert_eq!(
        p.check(AccountId(1), AccountId(1), AssetId(2), true),
        Err(AdminReason::NotAdmin)
    );
}

#[test]
fn resolve_reports_every_problem_and_off_is_none() {
    let (mut instruments, assets, mut balances) = ([instrument()], assets(), on());
    instruments[0].quote = Some("EUR".into());
    balances.initial[0].account = AccountId(77);
    let inputs = BalanceInputs {
        instruments: &instruments,
        accounts: &[AccountId(1)],
        admins: &[],
        assets: &assets,
        balances: &balances,
    };
    let errs = BalanceSetup::resolve(&inputs).unwrap_err();
    assert_eq!(errs.len(), 2, "{errs:?}");
    balances.enabled = false;
    balances.initial.clear();
    instruments[0].quote = Some("USD".into());
    let inputs = BalanceInputs {
        instruments: &instruments,
        accounts: &[AccountId(1)],
        admins: &[],
        assets: &assets,
        balances: &balances,
    };
    assert_eq!(BalanceSetup::resolve(&inputs), Ok(None));
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
