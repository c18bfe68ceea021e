//! Logging in to a cluster through a node that is not the leader (docs/protocol.md
//! 4.10), against a real `peregrine exchange` process as the leader: a stand-in
//! follower (a listener in the test that answers `LeaderRedirect` and closes) points
//! at it. `Connection::connect_any` and `peregrine loadgen --addr a,b,c` must end up
//! logged in at the exchange, past a dead node and the follower.

mod support;

use std::io::Write;
use std::net::{SocketAddr, TcpListener};
use std::process::Command;

use peregrine_client::order_entry::Connection;
use peregrine_client::ClientError;
use peregrine_types::{AccountId, ClientOrderId, Side, TimeInForce, Timestamp};
use peregrine_wire::field::{LeaderAddress, Pad};
use peregrine_wire::v2::client::LoginParams;
use peregrine_wire::v2::session::LeaderRedirect;
use peregrine_wire::v2::{Outbound, RequestRef};
use peregrine_wire::WireMessage;
use support::{key, order, start, with_timeout, IO_TIMEOUT};

/// A stand-in follower: every connection gets one `LeaderRedirect` to `leader`, then
/// the close. Serves until the test process ends.
fn follower(leader: SocketAddr) -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let at = l.local_addr().unwrap();
    let m = LeaderRedirect {
        session_seq: 1,
        engine_seq: 0,
        engine_time: Timestamp(0),
        leader_id: 1,
        retry_after_ms: 0,
        reserved: Pad,
        address: LeaderAddress::from_text(&leader.to_string()).unwrap(),
    };
    let mut buf = [0u8; LeaderRedirect::SIZE];
    m.encode(&mut buf).unwrap();
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { return };
            let _ = s.write_all(&buf);
        }
    });
    at
}

/// An address nothing listens on.
fn dead() -> SocketAddr {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
}

#[test]
fn connect_any_logs_in_at_the_leader_past_a_dead_node_and_a_follower() {
    with_timeout(120, || {
        let ex = start("");
        let f = follower(ex.addr);
        let params = LoginParams::trading(AccountId(1), 0);
        let redirected = Connection::connect(f, params, key(1), IO_TIMEOUT);
        assert!(
            matches!(&redirected, Err(ClientError::Redirected { leader_id: 1, address: Some(a), .. })
                if *a == ex.addr.to_string()),
            "{redirected:?}"
        );
        let (mut c, login, at) =
            Connection::connect_any(&[dead(), f], params, key(1), IO_TIMEOUT, IO_TIMEOUT).unwrap();
        assert_eq!(at, ex.addr);
        assert_eq!(login.accepted.account, AccountId(1));
        c.recover(|_| {}).unwrap();
        let answer = c
            .request(
                &order(7, Side::Buy, 9_950, 1, TimeInForce::Gtc),
                RequestRef::NewOrder(ClientOrderId(7)),
                |_| {},
            )
            .unwrap();
        assert!(matches!(answer, Outbound::Accepted(_)), "{answer:?}");
    });
}

#[test]
fn loadgen_takes_a_list_of_addresses_and_says_where_it_logged_in() {
    with_timeout(120, || {
        let mut ex = start("");
        let f = follower(ex.addr);
        let dir = tempfile::tempdir().unwrap();
        let keys = dir.path().join("keys.toml");
        support::write_key_file(&keys, &[1, 2]);
        let out = Command::new(env!("CARGO_BIN_EXE_peregrine"))
            .args([
                "loadgen",
                "--duration",
                "0.3",
                "--rate",
                "200",
                "--connections",
                "2",
                "--wait",
                "park",
            ])
            .arg("--config")
            .arg(&ex.config)
            .arg("--keys")
            .arg(&keys)
            .arg("--addr")
            .arg(format!("{},{f}", dead()))
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "{text}");
        assert!(
            text.contains(&format!("logged in at {}", ex.addr)),
            "{text}"
        );
        assert!(ex.alive(), "{}", ex.log_text());
    });
}
