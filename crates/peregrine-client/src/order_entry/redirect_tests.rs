use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::thread;

use peregrine_testkit::wait::with_timeout;
use peregrine_types::{AccountId, Timestamp};
use peregrine_wire::field::{LeaderAddress, Pad};
use peregrine_wire::v2::session::{Challenge, LeaderRedirect, Login, LoginAccepted};
use peregrine_wire::WireMessage;

use super::*;

const A: AccountId = AccountId(5);
const KEY: AccountKey = AccountKey([7; 32]);
const T: Duration = Duration::from_secs(5);

fn addr(port: u16) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], port))
}

fn send<M: WireMessage>(s: &mut TcpStream, m: &M) {
    let mut buf = [0u8; 512];
    let n = m.encode(&mut buf).unwrap();
    s.write_all(&buf[..n]).unwrap();
}

/// A node that is not the leader: answers every connection with one
/// `LeaderRedirect` and closes. Runs until the test process ends.
fn follower(leader_id: u64, address: &str, retry_after_ms: u32) -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let at = l.local_addr().unwrap();
    let m = LeaderRedirect {
        session_seq: 1,
        engine_seq: 0,
        engine_time: Timestamp(0),
        leader_id,
        retry_after_ms,
        reserved: Pad,
        address: LeaderAddress::from_text(address).unwrap(),
    };
    thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { return };
            send(&mut s, &m);
        }
    });
    at
}

/// Followers pointing at each other (a, b).
fn loop_pair() -> (SocketAddr, SocketAddr) {
    let la = TcpListener::bind("127.0.0.1:0").unwrap();
    let lb = TcpListener::bind("127.0.0.1:0").unwrap();
    let (a, b) = (la.local_addr().unwrap(), lb.local_addr().unwrap());
    for (l, to) in [(la, b), (lb, a)] {
        let m = LeaderRedirect {
            session_seq: 1,
            engine_seq: 0,
            engine_time: Timestamp(0),
            leader_id: 9,
            retry_after_ms: 0,
            reserved: Pad,
            address: LeaderAddress::from_text(&to.to_string()).unwrap(),
        };
        thread::spawn(move || {
            for s in l.incoming() {
                let Ok(mut s) = s else { return };
                send(&mut s, &m);
            }
        });
    }
    (a, b)
}

/// A leader that logs every connection in (without checking the proof) and sends
/// no instrument definitions.
fn leader() -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let at = l.local_addr().unwrap();
    thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { return };
            thread::spawn(move || {
                send(
                    &mut s,
                    &Challenge {
                        session_seq: 1,
                        engine_seq: 0,
                        engine_time: Timestamp(0),
                        nonce: [1; 32],
                    },
                );
                let mut login = [0u8; Login::SIZE];
                if s.read_exact(&mut login).is_err() {
                    return;
                }
                let mut a = LoginAccepted::sample(&[0]);
                a.session_seq = 2;
                a.account = A;
                a.target = Some(A);
                a.instrument_count = 0;
                send(&mut s, &a);
                // Hold the connection until the client closes it.
                let _ = s.set_read_timeout(Some(T));
                let _ = s.read(&mut [0u8; 64]);
            });
        }
    });
    at
}

/// An address nothing listens on.
fn refusing() -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap()
}

fn params() -> LoginParams {
    LoginParams::trading(A, 0)
}

#[test]
fn connect_reports_a_redirect_with_the_leaders_address() {
    with_timeout(30, || {
        let f = follower(3, "10.1.2.3:7700", 0);
        match Connection::connect(f, params(), KEY.clone(), T) {
            Err(ClientError::Redirected {
                leader_id: 3,
                address: Some(a),
                retry_after_ms: 0,
            }) => assert_eq!(a, "10.1.2.3:7700"),
            other => panic!("{other:?}"),
        }
        let f = follower(0, "", 40);
        match Connection::connect(f, params(), KEY.clone(), T) {
            Err(ClientError::Redirected {
                leader_id: 0,
                address: None,
                retry_after_ms: 40,
            }) => {}
            other => panic!("{other:?}"),
        }
    });
}

#[test]
fn connect_any_follows_the_redirect_past_a_dead_node() {
    with_timeout(30, || {
        let lead = leader();
        let f = follower(2, &lead.to_string(), 0);
        let dead = refusing();
        let (c, info, at) =
            Connection::connect_any(&[dead, f], params(), KEY.clone(), T, T).unwrap();
        assert_eq!(at, lead);
        assert_eq!(info.accepted.account, A);
        assert_eq!(c.session().next_session_seq(), 3);
    });
}

#[test]
fn connect_any_waits_for_a_leader_then_logs_in() {
    with_timeout(30, || {
        // No leader known on the first node; the second is the leader.
        let lead = leader();
        let f = follower(0, "", 10);
        let (_, _, at) = Connection::connect_any(&[f, lead], params(), KEY.clone(), T, T).unwrap();
        assert_eq!(at, lead);
    });
}

#[test]
fn a_redirect_loop_gives_up_at_the_deadline_with_the_last_redirect() {
    with_timeout(30, || {
        let (a, b) = loop_pair();
        let err = Connection::connect_any(
            &[a, b],
            params(),
            KEY.clone(),
            T,
            Duration::from_millis(300),
        )
        .unwrap_err();
        assert!(
            matches!(err, ClientError::Redirected { leader_id: 9, .. }),
            "{err:?}"
        );
    });
}

#[test]
fn nothing_listening_gives_up_with_the_connect_error() {
    with_timeout(30, || {
        let err = Connection::connect_any(
            &[refusing(), refusing()],
            params(),
            KEY.clone(),
            T,
            Duration::from_millis(100),
        )
        .unwrap_err();
        assert!(matches!(err, ClientError::Io { .. }), "{err:?}");
        let err = Connection::connect_any(&[], params(), KEY.clone(), T, T).unwrap_err();
        assert!(matches!(err, ClientError::Invalid(_)), "{err:?}");
    });
}

#[test]
fn an_unresolvable_leader_address_passes_to_the_next_node() {
    with_timeout(30, || {
        let lead = leader();
        let f = follower(4, "no-such-host.invalid:1", 0);
        let (_, _, at) = Connection::connect_any(&[f, lead], params(), KEY.clone(), T, T).unwrap();
        assert_eq!(at, lead);
    });
}

#[test]
fn the_walk_follows_redirects_a_bounded_number_of_times_per_round() {
    let (a, b, c) = (addr(1), addr(2), addr(3));
    let addrs = [a, b];
    let mut w = LeaderWalk::new(addrs.to_vec());
    assert_eq!(w.next(), Next::Try(a));
    for _ in 0..MAX_HOPS_PER_ROUND {
        assert!(w.redirected(Some(c), 0));
        assert_eq!(w.next(), Next::Try(c));
    }
    assert!(!w.redirected(Some(c), 0), "not followed");
    assert_eq!(w.next(), Next::Try(b), "hops exhausted: the next node");
    w.redirected(Some(c), 0);
    assert_eq!(w.next(), Next::Wait(BACKOFF_MIN));
    // A new round may follow redirects again.
    assert_eq!(w.next(), Next::Try(a));
    w.redirected(Some(c), 0);
    assert_eq!(w.next(), Next::Try(c));
}

#[test]
fn the_walk_waits_as_asked_else_backs_off_up_to_the_cap() {
    let addrs = [addr(1)];
    let mut w = LeaderWalk::new(addrs.to_vec());
    let mut waits = Vec::new();
    for _ in 0..7 {
        assert_eq!(w.next(), Next::Try(addr(1)));
        w.redirected(None, 0);
        let Next::Wait(d) = w.next() else {
            panic!("a round is one node")
        };
        waits.push(d.as_millis());
    }
    assert_eq!(waits, [20, 40, 80, 160, 320, 500, 500]);
    assert_eq!(w.next(), Next::Try(addr(1)));
    w.redirected(None, 1234);
    assert_eq!(w.next(), Next::Wait(Duration::from_millis(1234)));
}

#[test]
fn after_a_login_the_next_round_starts_where_it_worked() {
    let (a, b, c) = (addr(1), addr(2), addr(3));
    let mut w = LeaderWalk::new(vec![a, b, c]);
    assert_eq!(w.next(), Next::Try(a));
    w.logged_in(b);
    assert_eq!(w.current(), Some(b));
    // The session at b is lost: b first, then the others in their configured order.
    assert_eq!(w.next(), Next::Try(b));
    assert_eq!(w.next(), Next::Try(a));
    assert_eq!(w.next(), Next::Try(c));
    assert_eq!(w.next(), Next::Wait(BACKOFF_MIN));
    assert_eq!(w.next(), Next::Try(b), "every round starts at b");
}

#[test]
fn a_leader_outside_the_list_is_remembered_too() {
    let (a, b, l) = (addr(1), addr(2), addr(9));
    let mut w = LeaderWalk::new(vec![a, b]);
    assert_eq!(w.next(), Next::Try(a));
    w.redirected_to(Some(&l.to_string()), 0);
    assert_eq!(w.next(), Next::Try(l), "a redirect jumps there at once");
    w.logged_in(l);
    assert_eq!(w.next(), Next::Try(l));
    assert_eq!(w.next(), Next::Try(a));
    assert_eq!(w.next(), Next::Try(b));
    assert!(matches!(w.next(), Next::Wait(_)));
}

#[test]
fn a_failover_moves_home_to_the_new_leader() {
    // Node 1 leads, then dies; node 3 (redirected to by node 2) leads.
    let (n1, n2, n3) = (addr(1), addr(2), addr(3));
    let mut w = LeaderWalk::new(vec![n2, n3, n1]);
    assert_eq!(w.next(), Next::Try(n2));
    w.redirected(Some(n1), 0);
    assert_eq!(w.next(), Next::Try(n1));
    w.logged_in(n1);
    // Lost: n1 refuses (just ask again), n2 knows no leader yet, n3 leads.
    assert_eq!(w.next(), Next::Try(n1));
    assert_eq!(w.next(), Next::Try(n2));
    w.redirected(None, 30);
    assert_eq!(w.next(), Next::Try(n3));
    w.redirected(None, 10);
    assert_eq!(
        w.next(),
        Next::Wait(Duration::from_millis(30)),
        "the largest asked"
    );
    assert_eq!(w.next(), Next::Try(n1));
    assert_eq!(w.next(), Next::Try(n2));
    w.redirected(Some(n3), 0);
    assert_eq!(w.next(), Next::Try(n3));
    w.logged_in(n3);
    assert_eq!(
        w.next(),
        Next::Try(n3),
        "the next reconnect tries the new leader first"
    );
}

#[test]
fn a_login_starts_the_backoff_over_and_no_address_only_waits() {
    let a = addr(1);
    let mut w = LeaderWalk::new(vec![a]);
    for _ in 0..4 {
        assert_eq!(w.next(), Next::Try(a));
        assert!(matches!(w.next(), Next::Wait(_)));
    }
    assert_eq!(w.next(), Next::Try(a));
    w.logged_in(a);
    assert_eq!(w.next(), Next::Try(a));
    assert_eq!(w.next(), Next::Wait(BACKOFF_MIN));
    let mut none = LeaderWalk::new(Vec::new());
    assert_eq!(none.next(), Next::Wait(BACKOFF_MIN));
    assert!(matches!(none.next(), Next::Wait(_)));
    assert_eq!(none.current(), None);
}

#[test]
fn address_lists_parse_one_or_several_and_name_the_bad_entry() {
    assert_eq!(parse_addrs("127.0.0.1:1").unwrap(), [addr(1)]);
    assert_eq!(
        parse_addrs("127.0.0.1:1, 127.0.0.1:2 ,127.0.0.1:3").unwrap(),
        [addr(1), addr(2), addr(3)]
    );
    assert_eq!(parse_addrs("127.0.0.1:1,"), Err(BadAddress(String::new())));
    assert_eq!(
        parse_addrs("127.0.0.1:1,host:2"),
        Err(BadAddress("host:2".into()))
    );
    assert!(parse_addrs("  ").is_err());
    assert!(parse_addrs("").is_err());
}

#[test]
fn a_long_lived_client_follows_a_real_redirect_and_returns_home() {
    with_timeout(30, || {
        let lead = leader();
        let f = follower(2, &lead.to_string(), 0);
        let dead = refusing();
        let mut w = LeaderWalk::new(vec![dead, f]);
        let mut logins = Vec::new();
        // Two sessions, each dropped after its login: the second goes straight to
        // where the first logged in.
        while logins.len() < 2 {
            let Next::Try(at) = w.next() else {
                continue;
            };
            match Connection::connect(at, params(), KEY.clone(), T) {
                Ok(_) => {
                    w.logged_in(at);
                    logins.push(at);
                }
                Err(ClientError::Redirected {
                    address,
                    retry_after_ms,
                    ..
                }) => {
                    w.redirected_to(address.as_deref(), retry_after_ms);
                }
                Err(e) => assert!(transient(&e), "{e:?}"),
            }
        }
        assert_eq!(logins, [lead, lead]);
    });
}
