//! The gateway under `wait = "park"`: idle, its thread leaves the CPU (it blocks in
//! epoll), and a FIX client's input wakes it, on a pending connection (the Logon)
//! and on a logged-on one (a TestRequest). Every wait here has a timeout; nothing
//! asserts how fast anything is.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread;
use std::time::{Duration, Instant};

use peregrine_client::keys::KeyFile;
use peregrine_fix::codec::{Encoder, Precision};
use peregrine_fix_gateway::{run, GatewayConfig};
use peregrine_types::{wall_ns, AccountId};

const WAIT: Duration = Duration::from_secs(20);
const THREAD: &str = "fix-gw-park";

fn config(dir: &std::path::Path, exchange: SocketAddr) -> GatewayConfig {
    let keys = dir.join("keys.toml");
    KeyFile::generate(&[AccountId(1)])
        .unwrap()
        .save_new(&keys)
        .unwrap();
    let text = format!(
        r#"
listen = "127.0.0.1:0"
exchange = "{exchange}"
store_dir = "{store}"
keys_file = "{keys}"
wait = "park"

[[instruments]]
symbol = "PGN-USD"
id = 1
price_decimals = 2
qty_decimals = 0

[[sessions]]
comp_id = "CLIENT1"
account = 1
"#,
        store = dir.join("store").display(),
        keys = keys.display(),
    );
    let config: GatewayConfig = toml::from_str(&text).unwrap();
    config.validate().unwrap();
    config
}

/// The gateway thread's procfs directory.
fn gateway_thread() -> Option<std::path::PathBuf> {
    std::fs::read_dir("/proc/self/task")
        .ok()?
        .filter_map(|t| t.ok().map(|t| t.path()))
        .find(|p| std::fs::read_to_string(p.join("comm")).is_ok_and(|c| c.trim() == THREAD))
}

/// Whether the gateway thread is asleep (`S`) in an epoll wait. Where procfs does not
/// show the system call (`/proc/PID/task/TID/syscall` needs ptrace rights), asleep
/// is enough.
fn gateway_blocked_in_epoll() -> bool {
    let Some(task) = gateway_thread() else {
        return false;
    };
    let stat = std::fs::read_to_string(task.join("stat")).unwrap_or_default();
    let state = stat
        .rfind(')')
        .and_then(|i| stat[i + 1..].trim_start().chars().next());
    if state != Some('S') {
        return false;
    }
    let Ok(syscall) = std::fs::read_to_string(task.join("syscall")) else {
        return true;
    };
    let nr = syscall.split_whitespace().next().unwrap_or("");
    // x86_64: epoll_wait 232, epoll_pwait 281, epoll_pwait2 441; aarch64:
    // epoll_pwait 22, epoll_pwait2 441.
    let epoll: &[&str] = if cfg!(target_arch = "x86_64") {
        &["232", "281", "441"]
    } else if cfg!(target_arch = "aarch64") {
        &["22", "441"]
    } else {
        return true;
    };
    epoll.contains(&nr)
}

fn message(
    seq: u64,
    msg_type: &[u8],
    extra: impl FnOnce(&mut peregrine_fix::codec::MessageWriter<'_>),
) -> Vec<u8> {
    let mut enc = Encoder::default();
    let mut w = enc.start(msg_type);
    w.bytes(49, b"CLIENT1")
        .bytes(56, b"PEREGRINE")
        .uint(34, seq)
        .timestamp(52, wall_ns(), Precision::Millis);
    extra(&mut w);
    w.seal().to_vec()
}

/// Reads until `needle` has arrived (the read timeout bounds each read).
fn read_until(s: &mut TcpStream, needle: &[u8], what: &str) {
    let started = Instant::now();
    let mut got = Vec::new();
    let mut buf = [0u8; 1024];
    while !got.windows(needle.len()).any(|w| w == needle) {
        assert!(
            started.elapsed() < WAIT,
            "no {what} from the gateway: {got:?}"
        );
        match s.read(&mut buf) {
            Ok(0) => panic!("the gateway closed the connection before {what}"),
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) => panic!("waiting for {what}: {e}"),
        }
    }
}

/// Lets the loop go idle for far longer than its spin and yield phases (and the old
/// policy's 10,000 empty iterations), until its thread is seen blocked in epoll.
fn idle_until_asleep() {
    thread::sleep(Duration::from_millis(300));
    let started = Instant::now();
    while !gateway_blocked_in_epoll() {
        assert!(
            started.elapsed() < WAIT,
            "the parked gateway never blocked in epoll"
        );
        thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn a_parked_gateway_wakes_for_a_fix_client_after_idling() {
    let dir = tempfile::tempdir().unwrap();
    // An "exchange" that accepts the connection (backlog) and never answers: the
    // native socket is open and silent, as an idle exchange's is.
    let exchange = TcpListener::bind("127.0.0.1:0").unwrap();
    let config = config(dir.path(), exchange.local_addr().unwrap());
    let stop = Arc::new(AtomicBool::new(false));
    let (tx, rx) = mpsc::channel();
    let gateway = {
        let stop = Arc::clone(&stop);
        thread::Builder::new()
            .name(THREAD.into())
            .spawn(move || run(config, &stop, |a| tx.send(a).unwrap()))
            .unwrap()
    };
    let addr = rx.recv_timeout(WAIT).expect("the gateway listens");

    idle_until_asleep();
    let mut client = TcpStream::connect(addr).unwrap();
    client.set_read_timeout(Some(WAIT)).unwrap();
    client
        .write_all(&message(1, b"A", |w| {
            w.uint(98, 0).uint(108, 30);
        }))
        .unwrap();
    read_until(&mut client, b"\x0135=A\x01", "Logon answer");

    idle_until_asleep();
    client
        .write_all(&message(2, b"1", |w| {
            w.text(112, "WAKE");
        }))
        .unwrap();
    read_until(
        &mut client,
        b"\x01112=WAKE\x01",
        "Heartbeat answering the TestRequest",
    );

    stop.store(true, Ordering::Relaxed);
    gateway.join().unwrap().unwrap();
}
