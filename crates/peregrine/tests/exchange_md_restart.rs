//! `peregrine md` across restarts of a real exchange process (issue 12): after a
//! restart (graceful, and `kill -9` with the new process up within the same
//! wall-clock second) the subscriber sees a new feed session, fetches a snapshot and
//! follows the new session's messages: its book is the exchange's, never an emptied
//! one and never one that dropped the new session's messages as duplicates.

mod support;

use std::net::UdpSocket;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use peregrine_types::{Side, TimeInForce};
use support::{order, start, with_timeout, Client, Exchange, KillOnDrop};

fn wall() -> Duration {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap()
}

/// Sends one order from account 1 and waits for its answer.
fn place(ex: &Exchange, id: u64, side: Side, price: i64, qty: i64, tif: TimeInForce) {
    let mut c = Client::login(ex.addr, 1);
    c.send(&order(id, side, price, qty, tif));
    c.recv_report();
}

#[test]
fn md_follows_exchange_restarts_including_one_within_the_same_second() {
    with_timeout(180, || {
        let dir = tempfile::tempdir().unwrap();
        let feed = UdpSocket::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let rec = support::free_port();
        let extra = format!(
            "recovery_listen = \"127.0.0.1:{rec}\"\n[market_data]\ntarget = \"127.0.0.1:{feed}\"\n\
             [journal]\ndir = {:?}\nfsync = \"none\"\n",
            dir.path().join("journal").display().to_string()
        );
        let ex = start(&extra);
        // md reads the feed and recovery addresses from a config of its own.
        let md_config = dir.path().join("md.toml");
        std::fs::copy(&ex.config, &md_config).unwrap();
        place(&ex, 1, Side::Sell, 10_005, 4, TimeInForce::Gtc);
        place(&ex, 2, Side::Buy, 9_990, 7, TimeInForce::Gtc);
        let md = std::process::Command::new(env!("CARGO_BIN_EXE_peregrine"))
            .args(["md", "--instrument", "PGN-USD", "--duration", "60"])
            .arg("--config")
            .arg(&md_config)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut md = KillOnDrop::new(md);
        md.read_until("BOOK bid 7@99.90 | ask 4@100.05");

        // A graceful restart (SIGTERM), then a change made by the new process.
        let (status, _) = ex.terminate();
        assert!(status.success(), "{status:?}");
        let ex = start(&extra);
        place(&ex, 3, Side::Buy, 10_005, 1, TimeInForce::Ioc);
        let seen = md.read_until("BOOK bid 7@99.90 | ask 3@100.05");
        assert!(seen.contains("new feed session"), "{seen}");
        assert!(
            !seen.contains("BOOK bid - |"),
            "md emptied its book: {seen}"
        );

        // kill -9 just after a second boundary and restart at once, until the new
        // process listens within the second the old one died in (at most 3 tries on
        // a slow machine); each restart must be followed correctly.
        let mut ex = ex;
        let mut same_second = false;
        for attempt in 0..3u64 {
            while wall().subsec_millis() > 50 {
                std::thread::sleep(Duration::from_millis(5));
            }
            let died = wall().as_secs();
            drop(ex);
            ex = start(&extra);
            same_second |= wall().as_secs() == died;
            // Each attempt moves the best ask down one tick with a new resting sell.
            let price = 10_004 - attempt as i64;
            place(&ex, 10 + attempt, Side::Sell, price, 2, TimeInForce::Gtc);
            let seen = md.read_until(&format!(
                "BOOK bid 7@99.90 | ask 2@{}.{:02}",
                price / 100,
                price % 100
            ));
            assert!(seen.contains("new feed session"), "{seen}");
            assert!(
                !seen.contains("BOOK bid - |"),
                "md emptied its book: {seen}"
            );
            if same_second {
                break;
            }
        }
        assert!(
            same_second,
            "no restart landed within one wall-clock second in 3 tries (slow machine)"
        );
    });
}
