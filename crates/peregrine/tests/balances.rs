//! Balances with the real `peregrine exchange` process: a journaled exchange with
//! `[balances]` on is funded by `[[balances.initial]]` and by `peregrine admin deposit`,
//! trades over TCP, is killed with SIGKILL and restarted on the same journal; every
//! balance must be identical after recovery (the initial deposits are not applied a
//! second time), and the recovered state hash must equal an offline
//! `peregrine journal replay`.

mod support;

use std::net::SocketAddr;
use std::path::Path;
use std::process::{Command, Stdio};

use peregrine_types::{AccountId, OrderId, Side, TimeInForce};
use peregrine_wire::v2::BalanceQuery;
use peregrine_wire::v2::Outbound;
use support::{cancel, order, start, with_timeout, Client, Exchange, KillOnDrop};

const USD: u32 = 2;
const PGN: u32 = 1;

fn exchange_config(journal: &Path) -> String {
    format!(
        r#"[market_data]
enabled = false
[journal]
dir = {:?}
fsync = "batch"
snapshot_every = 4
[balances]
enabled = true
[[balances.initial]]
account = 2
asset = "PGN"
amount = "100"
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
max_qty = 1000000
reference_price = 10000
band = 5000
status = "active"
base = "PGN"
quote = "USD"
[[accounts]]
id = 9
stored_key = "{stored9}"
admin = true
"#,
        journal.display().to_string(),
        stored9 = support::key(9).stored().to_hex(),
    )
}

/// Stands for the key file of accounts 1..=4 and 9 in [`admin`]'s arguments.
const KEYS: &str = "@KEYS@";

/// Runs `peregrine admin ...`; (success, stdout + stderr).
fn admin(ex: &Exchange, args: &[&str]) -> (bool, String) {
    let keys = ex.config.with_file_name("keys.toml");
    if !keys.exists() {
        support::write_key_file(&keys, &[1, 2, 3, 4, 9]);
    }
    let args: Vec<std::ffi::OsString> = args
        .iter()
        .map(|a| match *a {
            KEYS => keys.clone().into_os_string(),
            a => a.into(),
        })
        .collect();
    let child = Command::new(env!("CARGO_BIN_EXE_peregrine"))
        .arg("admin")
        .args(&args)
        .arg("--config")
        .arg(&ex.config)
        .arg("--addr")
        .arg(ex.addr.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&child.stdout),
        String::from_utf8_lossy(&child.stderr)
    );
    (child.status.success(), text)
}

/// Every (account, asset) balance of accounts 1..=2, asked by the admin over the wire.
fn balances(addr: SocketAddr) -> Vec<(i64, i64)> {
    let mut c = admin_client(addr);
    let mut out = Vec::new();
    for account in 1..=2 {
        for asset in [PGN, USD] {
            c.send(&BalanceQuery {
                request_id: 1,
                account: AccountId(account),
                asset,
            });
            match c.recv_report() {
                Outbound::Balance(b) => out.push((b.available, b.held)),
                m => panic!("{m:?}"),
            }
        }
    }
    out
}

fn admin_client(addr: SocketAddr) -> Client {
    Client::login(addr, 9)
}

fn offline_replay_hash(config: &Path, journal: &Path) -> String {
    let child = Command::new(env!("CARGO_BIN_EXE_peregrine"))
        .args(["journal", "replay", "--config"])
        .arg(config)
        .arg("--dir")
        .arg(journal)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let out = KillOnDrop::new(child).wait_output();
    let words: Vec<String> = out
        .lines()
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_string)
        .collect();
    assert!(words.len() == 6 && words[4] == "state_hash", "{out}");
    words[5].clone()
}

fn logged_hash(ex: &Exchange) -> String {
    let log = ex.log_with("journal: replayed");
    let line = log
        .lines()
        .find(|l| l.contains("journal: replayed"))
        .unwrap_or_else(|| panic!("no replay line in {log}"));
    line.rsplit("state hash ")
        .next()
        .unwrap()
        .trim()
        .to_string()
}

#[test]
fn balances_survive_kill_9_and_match_an_offline_replay() {
    with_timeout(90, || {
        let dir = tempfile::tempdir().unwrap();
        let journal = dir.path().join("journal");
        let extra = exchange_config(&journal);
        let ex = start(&extra);
        assert!(
            ex.log_text().contains("1 initial deposit(s) applied"),
            "{}",
            ex.log_text()
        );

        // Admin deposit through the CLI; a non-admin is refused.
        let (ok, text) = admin(
            &ex,
            &[
                "deposit",
                "--account",
                "9",
                "--keys",
                KEYS,
                "--for-account",
                "1",
                "--asset",
                "USD",
                "--amount",
                "1000.00",
            ],
        );
        assert!(ok, "{text}");
        assert!(text.contains("available 1000.00 reserved 0.00"), "{text}");
        let (ok, text) = admin(
            &ex,
            &[
                "deposit",
                "--account",
                "1",
                "--keys",
                KEYS,
                "--asset",
                "USD",
                "--amount",
                "5",
            ],
        );
        assert!(!ok && text.contains("not_admin"), "{text}");

        // Trade: 1 bids 5 @ 100.00 (reserves 500.00), 2 sells 3 into it.
        let mut buyer = Client::login(ex.addr, 1);
        buyer.send(&order(1, Side::Buy, 10_000, 5, TimeInForce::Gtc));
        let resting: OrderId = match buyer.recv_report() {
            Outbound::Accepted(a) => a.order_id,
            m => panic!("{m:?}"),
        };
        let mut seller = Client::login(ex.addr, 2);
        seller.send(&order(2, Side::Sell, 10_000, 3, TimeInForce::Gtc));
        assert!(matches!(seller.recv_report(), Outbound::Accepted(_)));
        assert!(matches!(seller.recv_report(), Outbound::Fill(_)));
        assert!(matches!(buyer.recv_report(), Outbound::Fill(_)));
        // 50 × 100.00 is more than the 500.00 left: reason 17.
        buyer.send(&order(3, Side::Buy, 10_000, 50, TimeInForce::Gtc));
        match buyer.recv_report() {
            Outbound::Rejected(r) => assert_eq!(r.reason.0, 17),
            m => panic!("{m:?}"),
        }
        // Reserved funds cannot be withdrawn.
        let (ok, text) = admin(
            &ex,
            &[
                "withdraw",
                "--account",
                "9",
                "--keys",
                KEYS,
                "--for-account",
                "1",
                "--asset",
                "USD",
                "--amount",
                "600",
            ],
        );
        assert!(!ok && text.contains("insufficient_available"), "{text}");
        let (ok, text) = admin(
            &ex,
            &[
                "withdraw",
                "--account",
                "9",
                "--keys",
                KEYS,
                "--for-account",
                "2",
                "--asset",
                "USD",
                "--amount",
                "100.00",
            ],
        );
        assert!(ok && text.contains("available 200.00"), "{text}");

        let before = balances(ex.addr);
        assert_eq!(
            before,
            vec![(3, 0), (50_000, 20_000), (97, 0), (20_000, 0)],
            "(PGN, USD) of accounts 1 and 2"
        );
        drop(buyer);
        drop(seller);

        drop(ex); // SIGKILL, then reap
        let copy = dir.path().join("copy");
        std::fs::create_dir_all(&copy).unwrap();
        for e in std::fs::read_dir(&journal).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_file() {
                std::fs::copy(e.path(), copy.join(e.file_name())).unwrap();
            }
        }

        let ex = start(&extra);
        assert!(
            !ex.log_text().contains("1 initial deposit(s) applied"),
            "initial deposits applied twice: {}",
            ex.log_text()
        );
        assert_eq!(balances(ex.addr), before, "balances after recovery");
        assert_eq!(logged_hash(&ex), offline_replay_hash(&ex.config, &copy));
        let (ok, text) = admin(
            &ex,
            &[
                "balance",
                "--account",
                "1",
                "--keys",
                KEYS,
                "--asset",
                "USD",
            ],
        );
        assert!(
            ok && text.contains("available 500.00 reserved 200.00"),
            "{text}"
        );

        // The recovered hold is released by a cancel.
        let mut buyer = Client::login(ex.addr, 1);
        buyer.send(&cancel(4, resting));
        assert!(matches!(buyer.recv_report(), Outbound::Cancelled(_)));
        assert_eq!(balances(ex.addr)[1], (70_000, 0));
    });
}
