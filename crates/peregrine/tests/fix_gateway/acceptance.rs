//! Session rules over a real socket, against the real processes: QuickFIX's
//! acceptance definitions for FIX 4.4 servers (not in the repository: run by hand
//! on a copy of the QuickFIX sources), and Peregrine's own definitions of the same
//! rules (`rules/*.def`, written from the FIX 4.4 session test cases; in CI). Both
//! go through `peregrine_fix_interop::acceptance` (format, comparison rules and
//! adaptations in docs/fix.md).
//!
//! ```sh
//! git clone https://github.com/quickfix/quickfix /tmp/quickfix
//! QUICKFIX_DEFS=/tmp/quickfix/test/definitions/server/fix44 \
//!     cargo test -p peregrine --test fix_gateway acceptance -- --ignored --nocapture
//! ```
//! (`QUICKFIX_FILTER=2d` runs only the definitions whose names contain it.)

use std::path::{Path, PathBuf};

use peregrine_fix_interop::acceptance::{run_dir, Outcome, RunConfig};

use super::support::fix::{log_has, start_exchange, start_gateway_from, Proc};
use super::WAIT;

/// The exchange and a gateway whose CompID is `comp_id`, with one session,
/// `client`, for account 1, reset at every Logon (as QuickFIX's own acceptor is
/// set up for these definitions), no password.
fn venue(dir: &Path, comp_id: &str, client: &str) -> (Proc, Proc) {
    let exchange = start_exchange(dir);
    let config = dir.join("gateway-acceptance.toml");
    std::fs::write(
        &config,
        format!(
            "listen = \"127.0.0.1:0\"\nexchange = \"{}\"\ncomp_id = \"{comp_id}\"\nstore_dir = \"{}\"\n\
             keys_file = \"{}\"\nheartbeat_bounds = [1, 300]\n\
             [[instruments]]\nsymbol = \"PGN-USD\"\nid = 1\nprice_decimals = 2\nqty_decimals = 0\n\
             [[sessions]]\ncomp_id = \"{client}\"\naccount = 1\nreset_on_logon = true\n",
            exchange.addr,
            dir.join("fix-store").display(),
            dir.join("keys.toml").display()
        ),
    )
    .unwrap();
    let gateway = start_gateway_from(&config, dir, "gateway.log");
    peregrine_fix_interop::qf::wait_until("the gateway's exchange session", WAIT, || {
        log_has(dir, "gateway.log", "account 1 logged in")
    });
    (exchange, gateway)
}

/// Prints one line per definition and returns the failures.
fn report(outcomes: &[Outcome]) -> Vec<&Outcome> {
    for o in outcomes {
        match &o.failure {
            None if o.notes.is_empty() => println!("pass  {}", o.name),
            None => println!("pass  {} ({})", o.name, o.notes.join("; ")),
            Some(why) => println!("FAIL  {}: {why}", o.name),
        }
    }
    let failed: Vec<&Outcome> = outcomes.iter().filter(|o| o.failure.is_some()).collect();
    println!(
        "{} of {} passed",
        outcomes.len() - failed.len(),
        outcomes.len()
    );
    failed
}

#[test]
#[ignore = "needs QuickFIX's definitions: QUICKFIX_DEFS=<quickfix>/test/definitions/server/fix44"]
fn quickfix_acceptance_definitions_for_fix44_servers() {
    let defs = PathBuf::from(std::env::var("QUICKFIX_DEFS").expect(
        "QUICKFIX_DEFS: the directory test/definitions/server/fix44 of the QuickFIX sources",
    ));
    let filter = std::env::var("QUICKFIX_FILTER").unwrap_or_default();
    let dir = tempfile::tempdir().unwrap();
    let (_exchange, gateway) = venue(dir.path(), "ISLD", "TW44");
    let outcomes = run_dir(&defs, &filter, &RunConfig::new(gateway.addr)).unwrap();
    assert!(!outcomes.is_empty(), "no definitions in {}", defs.display());
    let failed = report(&outcomes);
    assert!(failed.is_empty(), "{} definitions failed", failed.len());
}

/// Peregrine's own definitions of the session rules, over the real socket.
#[test]
fn peregrine_session_rule_definitions() {
    let rules = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fix_gateway/rules");
    let dir = tempfile::tempdir().unwrap();
    let (_exchange, gateway) = venue(dir.path(), "PEREGRINE", "RULES");
    let mut cfg = RunConfig::new(gateway.addr);
    cfg.pause = std::time::Duration::from_millis(150);
    let filter = std::env::var("RULES_FILTER").unwrap_or_default();
    let outcomes = run_dir(&rules, &filter, &cfg).unwrap();
    assert!(filter.is_empty() || !outcomes.is_empty());
    assert!(
        !filter.is_empty() || outcomes.len() >= 10,
        "{} definitions",
        outcomes.len()
    );
    let failed = report(&outcomes);
    if !failed.is_empty() {
        let log = std::fs::read_to_string(dir.path().join("gateway.log")).unwrap_or_default();
        println!("gateway.log:\n{log}");
    }
    assert!(failed.is_empty(), "{} definitions failed", failed.len());
}
