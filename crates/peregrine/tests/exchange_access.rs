//! Who can get in, seen from outside a real exchange process (issue 12): a flood of
//! idle sockets on the order port and on the recovery service, password guessing
//! from one address, and a stall of the exchange itself with client input queued.
//!
//! Hostile connections come from their own loopback addresses (127.0.0.10 and up,
//! bound before connecting), as an attacker's would; legitimate clients from
//! 127.0.0.1.

mod support;

use std::io::{ErrorKind, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use peregrine_types::{AccountId, Side, TimeInForce};
use peregrine_wire::auth::AccountKey;
use peregrine_wire::session::ClientHeartbeat;
use peregrine_wire::stream::RecvBuffer;
use peregrine_wire::v2::client::{ClientSession, LoginParams, Step};
use peregrine_wire::v2::Outbound;
use peregrine_wire::WireMessage;
use support::{key, order, start, wait_until, with_timeout, Client, IO_TIMEOUT};

/// Login reason codes (docs/protocol.md, LoginCode).
const BAD_CREDENTIALS: u16 = 1;
const THROTTLED: u16 = 2;

/// A TCP connection to `to` from the loopback address `src`.
fn connect_from(src: Ipv4Addr, to: SocketAddr) -> std::io::Result<TcpStream> {
    use rustix::net::{AddressFamily, SocketType};
    let fd = rustix::net::socket(AddressFamily::INET, SocketType::STREAM, None)?;
    rustix::net::bind(&fd, &SocketAddrV4::new(src, 0))?;
    rustix::net::connect(&fd, &to)?;
    Ok(TcpStream::from(fd))
}

/// The `i`-th hostile address of a pool starting at 127.0.0.`first`.
fn hostile(first: u8, i: usize, per_address: usize) -> Ipv4Addr {
    Ipv4Addr::new(127, 0, 0, first + (i / per_address) as u8)
}

/// How a login from a chosen address ended.
#[derive(Debug)]
enum Login {
    /// Logged in (the session is closed when this is dropped).
    Accepted(#[allow(dead_code, reason = "held open until dropped")] TcpStream),
    Refused {
        reason: u16,
        retry_after_ms: u32,
    },
}

/// Logs in as `account` proving `key`, from `src`.
fn login_from(src: Ipv4Addr, addr: SocketAddr, account: u32, key: &AccountKey) -> Login {
    let mut stream = connect_from(src, addr).unwrap();
    stream.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
    let mut rx = Box::new(RecvBuffer::<65536>::new());
    let mut session = ClientSession::new(LoginParams::trading(AccountId(account), 0));
    loop {
        let m = loop {
            if let Some(m) = rx.next(Outbound::decode).unwrap() {
                break m;
            }
            match stream.read(rx.spare()) {
                Ok(0) => panic!("closed during the login of account {account}"),
                Ok(n) => rx.commit(n),
                Err(e) => panic!("login of account {account}: {e}"),
            }
        };
        match session.on_message(&m, key).expect("a protocol violation") {
            Step::SendLogin(l) => {
                let mut buf = [0u8; 64];
                let n = l.encode(&mut buf).unwrap();
                stream.write_all(&buf[..n]).unwrap();
            }
            Step::Rejected {
                reason,
                retry_after_ms,
            } => {
                return Login::Refused {
                    reason,
                    retry_after_ms,
                }
            }
            Step::RecoveryDone => return Login::Accepted(stream),
            _ => {}
        }
    }
}

/// `n` idle connections to `to` (`per_address` from each hostile address from
/// 127.0.0.`first` on), held open by a thread: each one the server closes is opened
/// again. Drop it to stop.
struct Flood {
    stop: Arc<AtomicBool>,
    /// Connections that received at least one byte from the server (its `Challenge`
    /// on the order port): they were taken in by the server, not just by the kernel.
    greeted: Arc<AtomicUsize>,
    /// Connections opened (including re-openings).
    opened: Arc<AtomicUsize>,
    thread: Option<JoinHandle<()>>,
}

impl Flood {
    fn start(to: SocketAddr, n: usize, per_address: usize, first: u8) -> Flood {
        let stop = Arc::new(AtomicBool::new(false));
        let greeted = Arc::new(AtomicUsize::new(0));
        let opened = Arc::new(AtomicUsize::new(0));
        let (s, g, o) = (stop.clone(), greeted.clone(), opened.clone());
        let thread = std::thread::spawn(move || {
            let mut socks: Vec<Option<(TcpStream, bool)>> = (0..n).map(|_| None).collect();
            let mut buf = [0u8; 512];
            while !s.load(Ordering::Relaxed) {
                for (i, slot) in socks.iter_mut().enumerate() {
                    if slot.is_none() {
                        if let Ok(c) = connect_from(hostile(first, i, per_address), to) {
                            c.set_nonblocking(true).unwrap();
                            o.fetch_add(1, Ordering::Relaxed);
                            *slot = Some((c, false));
                        }
                        continue;
                    }
                    let Some((c, seen)) = slot.as_mut() else {
                        continue;
                    };
                    match c.read(&mut buf) {
                        Ok(0) => *slot = None,
                        Ok(_) => {
                            if !*seen {
                                *seen = true;
                                g.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                        Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                        Err(_) => *slot = None,
                    }
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        });
        Flood {
            stop,
            greeted,
            opened,
            thread: Some(thread),
        }
    }
}

impl Drop for Flood {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// 1,000 idle connections held open to the order port (from 16 addresses, each
/// under the per-address share) while legitimate clients log in: at least 99% of
/// the legitimate logins succeed. Negative control: with pending connections
/// sharing the `max_sessions` slots (the original bug) this fails (a legitimate
/// connection is closed unanswered); shrinking the pending pool to 16 does not
/// make it fail (a prompt login is never the oldest pending connection).
#[test]
fn a_thousand_idle_connections_do_not_lock_out_logins() {
    with_timeout(180, || {
        let ex = start("[market_data]\nenabled = false");
        let flood = Flood::start(ex.addr, 1000, 63, 10);
        wait_until(
            "1,000 idle connections greeted by the exchange",
            Duration::from_secs(60),
            || flood.greeted.load(Ordering::Relaxed) >= 1000,
        );
        let tries = 200;
        let mut ok = 0;
        let mut refused = Vec::new();
        for i in 0..tries {
            let account = 1 + (i % 4) as u32;
            match login_from(Ipv4Addr::LOCALHOST, ex.addr, account, &key(account)) {
                Login::Accepted(_) => ok += 1,
                Login::Refused { reason, .. } => refused.push(reason),
            }
        }
        let opened = flood.opened.load(Ordering::Relaxed);
        drop(flood);
        assert!(
            ok * 100 >= tries * 99,
            "{ok} of {tries} logins succeeded under the flood (refusals: {refused:?}; \
             {opened} flood connections opened)"
        );
    });
}

/// Idle connections to the recovery service (more than it admits at once, from
/// more addresses than its per-address share covers, re-opened as fast as they are
/// closed) do not keep `peregrine md` from its snapshot. Negative controls: the
/// service with a fixed 16 clients and no idle timeout failed; so did the service
/// that let a newcomer replace the connection idle longest whatever it was doing,
/// with an `md` that gave up after one failed recovery (3 of 5 runs: md's
/// connection reset). Either fix alone passed, so each has a deterministic test of
/// its own (docs/testing.md).
#[test]
fn idle_recovery_connections_do_not_keep_md_from_its_snapshot() {
    with_timeout(120, || {
        let feed = std::net::UdpSocket::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let rec = support::free_port();
        let ex = start(&format!(
            "recovery_listen = \"127.0.0.1:{rec}\"\n[market_data]\ntarget = \"127.0.0.1:{feed}\""
        ));
        let mut a = Client::login(ex.addr, 1);
        a.send(&order(1, Side::Sell, 10_005, 4, TimeInForce::Gtc));
        a.recv_report();
        a.send(&order(2, Side::Buy, 9_990, 7, TimeInForce::Gtc));
        a.recv_report();
        let rec_addr: SocketAddr = format!("127.0.0.1:{rec}").parse().unwrap();
        // 200 silent connections, 8 per address (the default share), 25 addresses:
        // three times the default 64 clients.
        let flood = Flood::start(rec_addr, 200, 8, 100);
        wait_until(
            "200 idle recovery connections opened",
            Duration::from_secs(30),
            || flood.opened.load(Ordering::Relaxed) >= 200,
        );
        let md = std::process::Command::new(env!("CARGO_BIN_EXE_peregrine"))
            .args(["md", "--instrument", "PGN-USD", "--duration", "30"])
            .arg("--config")
            .arg(&ex.config)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut md = support::KillOnDrop::new(md);
        let out = md.read_until("BOOK");
        drop(flood);
        assert!(out.contains("snapshot as of #2"), "{out}");
        assert!(out.contains("BOOK bid 7@99.90 | ask 4@100.05"), "{out}");
    });
}

/// Wrong proofs from one address are answered `throttled` (reason 2, with a
/// retry delay that doubles) once the free failures are used, even when the key is
/// then right; meanwhile another account, and the attacked account from an address
/// it logged in from before, still log in (docs/protocol.md 4.1; the defaults:
/// 3 free failures, 250 ms doubling). Negative control: with the throttle's check
/// disabled every attempt was answered `bad_credentials` and this failed.
#[test]
fn password_guesses_from_one_address_are_throttled_and_others_still_log_in() {
    with_timeout(120, || {
        let ex = start("[market_data]\nenabled = false");
        let attacker = Ipv4Addr::new(127, 0, 0, 66);
        let wrong = AccountKey([0xEE; 32]);
        // The owner logs in from 127.0.0.1 first: that address is trusted for it.
        assert!(matches!(
            login_from(Ipv4Addr::LOCALHOST, ex.addr, 1, &key(1)),
            Login::Accepted(_)
        ));
        let mut answers = Vec::new();
        for _ in 0..8 {
            match login_from(attacker, ex.addr, 1, &wrong) {
                Login::Refused {
                    reason,
                    retry_after_ms,
                } => answers.push((reason, retry_after_ms)),
                Login::Accepted(_) => panic!("a wrong proof was accepted"),
            }
        }
        let checked = answers.iter().filter(|a| a.0 == BAD_CREDENTIALS).count();
        let throttled: Vec<u32> = answers
            .iter()
            .filter(|a| a.0 == THROTTLED)
            .map(|a| a.1)
            .collect();
        assert!(
            (3..=4).contains(&checked) && throttled.len() + checked == answers.len(),
            "the free failures, then throttled: {answers:?}"
        );
        assert!(throttled.iter().all(|&ms| ms > 0), "{answers:?}");
        // Inside the delay even the right key is not checked.
        let Login::Refused {
            reason,
            retry_after_ms,
        } = login_from(attacker, ex.addr, 1, &key(1))
        else {
            panic!("a throttled address logged in");
        };
        assert_eq!(reason, THROTTLED);
        // After the delay one more wrong guess is checked, and the next delay is longer.
        std::thread::sleep(Duration::from_millis(u64::from(retry_after_ms) + 50));
        let checked_again = login_from(attacker, ex.addr, 1, &wrong);
        assert!(
            matches!(
                checked_again,
                Login::Refused {
                    reason: BAD_CREDENTIALS,
                    ..
                }
            ),
            "{checked_again:?}"
        );
        let Login::Refused {
            reason: THROTTLED,
            retry_after_ms: longer,
        } = login_from(attacker, ex.addr, 1, &wrong)
        else {
            panic!("not throttled after the delay's failure");
        };
        assert!(
            longer > retry_after_ms,
            "the delay doubles: {retry_after_ms} ms, then {longer} ms"
        );
        // Others are not locked out: another account from elsewhere, and the
        // attacked account from its own (trusted) address.
        let elsewhere = Ipv4Addr::new(127, 0, 0, 67);
        assert!(matches!(
            login_from(elsewhere, ex.addr, 2, &key(2)),
            Login::Accepted(_)
        ));
        assert!(matches!(
            login_from(Ipv4Addr::LOCALHOST, ex.addr, 1, &key(1)),
            Login::Accepted(_)
        ));
    });
}

/// The exchange stops for 3.5 s (SIGSTOP, then SIGCONT) while 30 healthy sessions
/// keep sending heartbeats into their sockets (heartbeat interval 1 s: the stall is
/// longer than the three intervals of silence that drop a session). No session is
/// dropped, and each one's next order is answered. Known limit: this has not been
/// seen to fail under sabotage (removing `Session::forgive` and judging liveness
/// before reading both still pass: the loop reads every ready session on waking, so
/// queued input refreshes liveness first); it guards the outcome, not one mechanism.
#[test]
fn a_stall_of_the_exchange_drops_no_session_whose_input_is_queued() {
    with_timeout(120, || {
        let mut ex = start("heartbeat_ms = 1000\n[market_data]\nenabled = false");
        let mut clients: Vec<Client> = (0..30).map(|i| Client::login(ex.addr, 1 + i % 4)).collect();
        let beat = |clients: &mut [Client]| {
            for c in clients.iter_mut() {
                c.send(&ClientHeartbeat {});
            }
        };
        let pid = rustix::process::Pid::from_raw(ex.pid() as i32).unwrap();
        rustix::process::kill_process(pid, rustix::process::Signal::STOP).unwrap();
        // The stall: clients keep sending as healthy clients do (every 250 ms).
        for _ in 0..14 {
            beat(&mut clients);
            std::thread::sleep(Duration::from_millis(250));
        }
        rustix::process::kill_process(pid, rustix::process::Signal::CONT).unwrap();
        // Three more intervals after the stall, still beating: a wrongly judged
        // session is closed by now.
        for _ in 0..12 {
            beat(&mut clients);
            std::thread::sleep(Duration::from_millis(250));
        }
        assert!(ex.alive());
        for (i, c) in clients.iter_mut().enumerate() {
            c.send(&order(
                1000 + i as u64,
                Side::Buy,
                9_990,
                1,
                TimeInForce::Ioc,
            ));
            loop {
                match c.recv() {
                    Some(Outbound::Accepted(_)) | Some(Outbound::Rejected(_)) => break,
                    Some(_) => continue,
                    None => panic!(
                        "session {i} was dropped after the stall; exchange log:\n{}",
                        ex.log_text()
                    ),
                }
            }
        }
        let log = ex.log_text();
        assert!(
            !log.contains("no input for three heartbeat intervals"),
            "{log}"
        );
    });
}
