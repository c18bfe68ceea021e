//! `peregrine up` as a user runs it: the real binary starts the exchange, the FIX
//! gateway, the engine and the strategies, prints its summary and the kill-switch
//! demonstration, and
//! leaves no process and no shared-memory file behind. Each run gets its own run
//! directory, automatically picked ports and a unique shm name; the runs in this file
//! take turns (one lock) so they do not compete for the 2 cores; every run has a
//! timeout.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use peregrine_testkit::wait_until;
use rustix::process::{kill_process, Pid, Signal};

#[path = "support/http.rs"]
mod http_support;

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Longest a whole `up` run may take here.
const RUN_TIMEOUT: Duration = Duration::from_secs(120);

/// A running `peregrine up`; killed on drop if still running.
struct Up {
    child: Child,
    out: std::sync::mpsc::Receiver<String>,
    err: std::thread::JoinHandle<String>,
    text: String,
}

impl Up {
    fn start(dir: &Path, extra: &[&str]) -> Up {
        let mut child = Command::new(env!("CARGO_BIN_EXE_peregrine"))
            .args(["up", "--quiet", "--dir"])
            .arg(dir)
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (tx, out) = std::sync::mpsc::channel();
        let stdout = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut stderr = child.stderr.take().unwrap();
        let err = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = stderr.read_to_string(&mut s);
            s
        });
        Up {
            child,
            out,
            err,
            text: String::new(),
        }
    }

    /// Reads stdout until a line contains `needle`.
    fn read_until(&mut self, needle: &str) {
        self.read_until_line(needle, |line| line.contains(needle));
    }

    /// Reads stdout until a line satisfies `found` (described by `what`).
    fn read_until_line(&mut self, what: &str, found: impl Fn(&str) -> bool) {
        let deadline = Instant::now() + RUN_TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.out.recv_timeout(left) {
                Ok(line) => {
                    self.text.push_str(&line);
                    self.text.push('\n');
                    if found(&line) {
                        return;
                    }
                }
                Err(e) => panic!("no {what:?} ({e}); output so far:\n{}", self.text),
            }
        }
    }

    /// Waits for exit; returns the status, all of stdout and stderr.
    fn finish(mut self) -> (ExitStatus, String, String) {
        let deadline = Instant::now() + RUN_TIMEOUT;
        let status = loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                break s;
            }
            assert!(
                Instant::now() < deadline,
                "peregrine up did not finish in {RUN_TIMEOUT:?}; output so far:\n{}",
                self.text
            );
            std::thread::sleep(Duration::from_millis(50));
        };
        while let Ok(line) = self.out.recv_timeout(Duration::from_secs(5)) {
            self.text.push_str(&line);
            self.text.push('\n');
        }
        let err = std::mem::replace(&mut self.err, std::thread::spawn(String::new));
        let stderr = err.join().unwrap();
        (status, std::mem::take(&mut self.text), stderr)
    }

    fn signal(&self, sig: Signal) {
        kill_process(Pid::from_child(&self.child), sig).unwrap();
    }
}

impl Drop for Up {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The pids and the shm directory `up` announced in its header.
fn announced(out: &str) -> (Vec<(String, u32)>, PathBuf) {
    let mut pids = Vec::new();
    let mut shm = None;
    for line in out.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        if let [name, "pid", pid, rest @ ..] = words.as_slice() {
            pids.push((name.to_string(), pid.parse().unwrap()));
            if let ["shm", dir] = rest {
                shm = Some(PathBuf::from(dir));
            }
        }
    }
    (pids, shm.expect("no shm line in the header"))
}

/// Nothing of the run is left: no process whose command line names the run
/// directory or the shm directory, and no shm directory.
fn assert_nothing_left(out: &str, dir: &Path) {
    let (pids, shm) = announced(out);
    assert_eq!(
        pids.len(),
        9,
        "exchange, FIX gateway, engine, 5 strategies, the HTTP gateway: {pids:?}"
    );
    assert!(shm.starts_with("/dev/shm"), "{}", shm.display());
    assert!(!shm.exists(), "{} left behind", shm.display());
    let marks = [dir.display().to_string(), shm.display().to_string()];
    for (name, pid) in pids {
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&cmdline);
        assert!(
            !marks.iter().any(|m| cmdline.contains(m.as_str())),
            "{name} (pid {pid}) still running: {cmdline}"
        );
    }
}

/// The taker's fills in `peregrine engine stats` of the run's engine (0 while the
/// engine does not answer, e.g. while it restarts).
fn taker_fills(shm: &Path) -> u64 {
    fills_of(shm, "taker")
}

/// Strategy `name`'s fills, as [`taker_fills`].
fn fills_of(shm: &Path, name: &str) -> u64 {
    let Ok(out) = Command::new(env!("CARGO_BIN_EXE_peregrine"))
        .arg("engine")
        .arg("--dir")
        .arg(shm)
        .arg("stats")
        .output()
    else {
        return 0;
    };
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .skip_while(|l| !l.starts_with("position"))
        .find(|l| l.split_whitespace().next() == Some(name))
        .and_then(|l| l.split_whitespace().nth(3))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// `N` after `label ` in `line` (commas removed).
fn number_after(line: &str, label: &str) -> u64 {
    let rest = line
        .split(label)
        .nth(1)
        .unwrap_or_else(|| panic!("no {label:?} in {line:?}"));
    let digits: String = rest
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == ',')
        .filter(|c| *c != ',')
        .collect();
    digits.parse().unwrap()
}

/// The fills column of `venue`'s row in the summary's `== venues` table.
fn venue_fills(out: &str, venue: &str) -> u64 {
    let row = out
        .split("== venues")
        .nth(1)
        .and_then(|t| {
            t.lines()
                .find(|l| l.split_whitespace().next() == Some(venue))
        })
        .unwrap_or_else(|| panic!("no {venue} row in the venues table:\n{out}"));
    row.split_whitespace()
        .nth(3)
        .unwrap()
        .replace(',', "")
        .parse()
        .unwrap()
}

fn check_full_report(out: &str, dir: &Path) {
    for section in [
        "== summary after",
        "submit      t1->t2",
        "return      t7->t8",
        "round trip  t8-t1",
        "== positions and PnL",
        "== venues",
        "== rejects",
        "== kill switch demonstration",
        "== shutdown",
    ] {
        assert!(out.contains(section), "{section:?} missing:\n{out}");
    }
    let head = out.lines().find(|l| l.starts_with("== summary")).unwrap();
    assert!(number_after(head, "orders ") > 0, "{head}");
    assert!(number_after(head, "fills ") > 0, "{head}");
    for name in ["maker", "taker", "fix-taker", "sim-maker", "reverter"] {
        assert!(
            out.lines()
                .any(|l| l.starts_with(name) && l.contains("alive")),
            "no position row for {name}:\n{out}"
        );
        assert!(
            out.lines()
                .any(|l| l.starts_with(name) && l.ends_with("exit 0")),
            "{name} did not exit cleanly:\n{out}"
        );
    }
    assert!(
        out.contains("result:  all cancels confirmed"),
        "kill demonstration:\n{out}"
    );
    let after = out.lines().find(|l| l.starts_with("after:")).unwrap();
    assert_eq!(number_after(after, "after:"), 0, "{after}");
    for name in ["engine", "fix-gateway"] {
        assert!(
            out.lines()
                .any(|l| l.split_whitespace().take(3).eq([name, "exit", "0"])),
            "{name} did not exit cleanly:\n{out}"
        );
    }
    assert!(out.contains("no child process left"), "{out}");
    // The simulated market filled orders, and so did the exchange through the FIX
    // gateway (the fix-taker's route).
    assert!(
        venue_fills(out, "sim") > 0,
        "no fills on the simulated market: {out}"
    );
    assert!(
        venue_fills(out, "fix") > 0,
        "no fills through the FIX gateway: {out}"
    );
    assert!(
        out.lines()
            .any(|l| l.starts_with("fix-taker") && l.contains(" fix ")),
        "fix-taker's position row names venue fix: {out}"
    );
    assert!(out.contains("== restarts\nnone"), "{out}");
    // The demo market stays near its reference: the maker's mid walking into the
    // price band showed up as these.
    assert!(!out.contains("price_out_of_band"), "{out}");
    assert!(out.contains("/metrics"), "metrics URLs: {out}");
    assert!(out.contains(" USD"), "money with its currency: {out}");
    assert_nothing_left(out, dir);
    for file in [
        "exchange.toml",
        "engine.toml",
        "gateway-fix.toml",
        "exchange.log",
        "engine.log",
        "fix-gateway.log",
    ] {
        assert!(dir.join(file).exists(), "{file} missing from the run dir");
    }
}

#[test]
fn up_runs_the_stack_for_a_duration_and_cleans_up() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let up = Up::start(&dir, &["--duration", "4"]);
    let (status, out, err) = up.finish();
    assert!(
        status.success(),
        "exit {status}\nstdout:\n{out}\nstderr:\n{err}"
    );
    check_full_report(&out, &dir.canonicalize().unwrap());
}

#[test]
fn ctrl_c_prints_the_summary_and_exits_zero() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let mut up = Up::start(&dir, &[]);
    up.read_until("Ctrl-C stops");
    // The report must show trading: interrupt once the engine counts a taker fill.
    let (_, shm) = announced(&up.text);
    wait_until("a taker fill", RUN_TIMEOUT, || taker_fills(&shm) > 0);
    up.signal(Signal::INT);
    let (status, out, err) = up.finish();
    assert!(
        status.success(),
        "exit {status}\nstdout:\n{out}\nstderr:\n{err}"
    );
    check_full_report(&out, &dir.canonicalize().unwrap());
}

/// The supervisor: a strategy, the FIX gateway and then the engine are `kill -9`ed
/// mid-run; all come back (the gateway from its FIX store, the engine from its
/// journal), the run ends cleanly and its summary lists the restarts.
#[test]
fn killed_pieces_come_back_and_the_summary_lists_the_restarts() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let mut up = Up::start(&dir, &["--duration", "20"]);
    up.read_until("Ctrl-C stops");
    let (pids, _) = announced(&up.text);
    let pid_of = |n: &str| pids.iter().find(|(name, _)| name == n).unwrap().1;
    let (_, shm) = announced(&up.text);
    wait_until("a taker fill", RUN_TIMEOUT, || taker_fills(&shm) > 0);
    kill_process(Pid::from_raw(pid_of("taker") as i32).unwrap(), Signal::KILL).unwrap();
    // Each kill only once the supervisor has the last one's victim trading again, so
    // the restarts are separate events.
    let before = taker_fills(&shm);
    wait_until("the restarted taker trading", RUN_TIMEOUT, || {
        taker_fills(&shm) > before
    });
    wait_until("a fix-taker fill", RUN_TIMEOUT, || {
        fills_of(&shm, "fix-taker") > 0
    });
    kill_process(
        Pid::from_raw(pid_of("fix-gateway") as i32).unwrap(),
        Signal::KILL,
    )
    .unwrap();
    // Fills through the restarted gateway: the engine's FIX venue logged on again.
    let before = fills_of(&shm, "fix-taker");
    wait_until(
        "fix-taker trading through the restarted gateway",
        RUN_TIMEOUT,
        || fills_of(&shm, "fix-taker") > before + 5,
    );
    kill_process(
        Pid::from_raw(pid_of("engine") as i32).unwrap(),
        Signal::KILL,
    )
    .unwrap();
    let (status, out, err) = up.finish();
    assert!(
        status.success(),
        "exit {status}\nstdout:\n{out}\nstderr:\n{err}"
    );
    let restarts = out.split("== restarts").nth(1).unwrap_or_default();
    assert!(
        restarts.contains("taker") && restarts.contains("signal 9"),
        "{out}"
    );
    assert!(restarts.contains("engine"), "{out}");
    assert!(restarts.contains("fix-gateway"), "{out}");
    assert!(
        out.lines()
            .any(|l| l.starts_with("fix-gateway") && l.ends_with("exit 0")),
        "the restarted FIX gateway exited cleanly: {out}"
    );
    let engine_log = std::fs::read_to_string(dir.join("engine.log")).unwrap();
    assert!(
        engine_log.contains("recovered"),
        "the engine recovered from its journal:\n{engine_log}"
    );
    assert!(out.contains("no child process left"), "{out}");
}

/// `up --write-config DIR` then `up --config DIR` runs from the user's (edited)
/// files: here the reverter is taken out of the engine config and is not started,
/// and the FIX gateway's config gets a setting the built-in one does not have.
#[test]
fn write_config_then_run_from_it() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    let cfg = tmp.path().join("cfg");
    let out = Command::new(env!("CARGO_BIN_EXE_peregrine"))
        .args(["up", "--write-config"])
        .arg(&cfg)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let engine = cfg.join("engine.toml");
    let text = std::fs::read_to_string(&engine).unwrap();
    let cut = text.find("[[strategies]]\nname = \"reverter\"").unwrap();
    let end = text[cut..].find("\n\n").map_or(text.len(), |e| cut + e);
    std::fs::write(&engine, format!("{}{}", &text[..cut], &text[end..])).unwrap();
    let fix = cfg.join("gateway-fix.toml");
    let text = std::fs::read_to_string(&fix).unwrap();
    let edit = "max_pending_connections = 7";
    assert!(!text.contains(edit));
    let text = text.replacen(
        "comp_id = \"PEREGRINE\"\n",
        &format!("comp_id = \"PEREGRINE\"\n{edit}\n"),
        1,
    );
    assert!(text.contains(edit), "{text}");
    std::fs::write(&fix, text).unwrap();
    let again = Command::new(env!("CARGO_BIN_EXE_peregrine"))
        .args(["up", "--write-config"])
        .arg(&cfg)
        .output()
        .unwrap();
    assert!(!again.status.success(), "never overwrites");
    let dir = tmp.path().join("run");
    let up = Up::start(
        &dir,
        &["--duration", "3", "--config", cfg.to_str().unwrap()],
    );
    let (status, out, err) = up.finish();
    assert!(
        status.success(),
        "exit {status}\nstdout:\n{out}\nstderr:\n{err}"
    );
    assert!(!out.contains("reverter"), "{out}");
    assert!(out.contains("sim-maker"), "{out}");
    let used = std::fs::read_to_string(dir.join("gateway-fix.toml")).unwrap();
    assert!(
        used.contains(edit),
        "the run used the edited FIX gateway config: {used}"
    );
    assert!(venue_fills(&out, "fix") > 0, "{out}");
}

/// `kill -9` of `up` itself: its children get SIGTERM from the kernel (parent-death
/// signal) and none outlives it.
#[test]
fn killing_up_with_sigkill_takes_its_children_down() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let mut up = Up::start(&dir, &["--duration", "60"]);
    up.read_until("Ctrl-C stops");
    let (pids, shm) = announced(&up.text);
    assert_eq!(pids.len(), 8, "{pids:?}");
    assert!(pids.iter().any(|(n, _)| n == "fix-gateway"), "{pids:?}");
    up.signal(Signal::KILL);
    let _ = up.finish();
    let mark = dir.canonicalize().unwrap().display().to_string();
    let running = |pid: u32| {
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        String::from_utf8_lossy(&cmdline).contains(mark.as_str())
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while pids.iter().any(|(_, pid)| running(*pid)) {
        assert!(
            std::time::Instant::now() < deadline,
            "children outlived `up`: {:?}",
            pids.iter().filter(|(_, p)| running(*p)).collect::<Vec<_>>()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // The engine stops cleanly on SIGTERM: nothing is left in /dev/shm.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while shm.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "{} left behind in /dev/shm",
            shm.display()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `--no-fix`: no FIX gateway, no FIX venue; the fix-taker trades at the exchange
/// venue instead.
#[test]
fn no_fix_leaves_the_fix_gateway_out() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let up = Up::start(&dir, &["--duration", "3", "--no-fix"]);
    let (status, out, err) = up.finish();
    assert!(
        status.success(),
        "exit {status}\nstdout:\n{out}\nstderr:\n{err}"
    );
    assert!(!out.contains("fix-gateway"), "{out}");
    assert!(out.contains("fix-taker   pid"), "{out}");
    assert!(
        out.lines()
            .any(|l| l.starts_with("  fix-taker") && l.ends_with("on venue 1 (px)")),
        "{out}"
    );
    let venues = out.split("== venues").nth(1).unwrap_or_default();
    assert!(!venues.lines().any(|l| l.starts_with("fix ")), "{out}");
    assert!(!dir.join("gateway-fix.toml").exists());
    assert!(out.contains("no child process left"), "{out}");
}

#[test]
fn bad_flags_are_refused_before_anything_starts() {
    let tmp = tempfile::tempdir().unwrap();
    for (flags, message) in [
        (&["--port-base", "65535"][..], "--port-base 65535"),
        (
            &["--config", "/nonexistent-peregrine"][..],
            "nonexistent-peregrine",
        ),
        (&["--duration", "0"][..], "--duration must be a positive"),
        (&["--duration", "nan"][..], "--duration must be a positive"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_peregrine"))
            .args(["up", "--dir"])
            .arg(tmp.path())
            .args(flags)
            .output()
            .unwrap();
        assert!(!out.status.success(), "{flags:?} accepted");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(message), "{flags:?}: {err}");
    }
    // Nothing was written: the flags are checked before the run directory is used.
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
}

/// The demo market survives a person trading by hand through the HTTP gateway (at a
/// port given with `--http-port`): a bid far below the market (the order that used
/// to stop it), an ask far above, an order crossing the maker's quote, the kill
/// switch engaged and released from the operations API, then every order cancelled.
/// After each, the taker keeps getting fills at the exchange; the run ends with
/// hardly any price-collar rejects.
#[test]
fn hand_orders_during_up_do_not_stop_the_market() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut up = Up::start(
        &dir,
        &["--duration", "60", "--http-port", &port.to_string()],
    );
    up.read_until("trade by hand:");
    let url = format!("http://127.0.0.1:{port}");
    assert!(
        up.text.contains(&format!("trade by hand: {url}/")),
        "{}",
        up.text
    );
    let (_, shm) = announced(&up.text);
    let http: std::net::SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let call = |method: &str, path: &str, params: &str| {
        let r = http_support::signed_with(
            http,
            method,
            path,
            "peregrine-demo-key",
            "peregrine-demo-secret",
            params,
            http_support::now_ms(),
        );
        assert_eq!(r.status, 200, "{method} {path} {params}: {}", r.body);
        r
    };
    let limit = |side: &str, qty: u32, price: &str| {
        call(
            "POST",
            "/api/v3/order",
            &format!("symbol=PGN-USD&side={side}&type=LIMIT&timeInForce=GTC&quantity={qty}&price={price}"),
        )
    };
    // The market trades before anything is done by hand.
    let trading = |what: &str| {
        let before = taker_fills(&shm);
        wait_until(
            &format!("20 more taker fills after {what} (from {before})"),
            Duration::from_secs(20),
            || taker_fills(&shm) >= before + 20,
        );
    };
    trading("the start");
    limit("BUY", 3, "94.50");
    trading("a bid far below the market");
    limit("SELL", 3, "106.00");
    trading("an ask far above it");
    limit("BUY", 2, "101.00");
    trading("an order crossing the maker's ask");
    let killed = call("POST", "/ops/api/kill", "confirm=KILL").json();
    assert_eq!(killed["ok"], true, "{killed}");
    std::thread::sleep(Duration::from_secs(1));
    let released = call("POST", "/ops/api/release", "").json();
    assert_eq!(released["ok"], true, "{released}");
    trading("the kill switch and its release");
    call("DELETE", "/api/v3/openOrders", "symbol=PGN-USD");
    trading("every hand order cancelled");
    up.signal(Signal::INT);
    let (status, out, err) = up.finish();
    assert!(status.success(), "{out}\n{err}");
    let collar: u64 = out
        .lines()
        .find(|l| l.starts_with("risk") && l.contains("price_collar"))
        .map_or(0, |l| {
            l.split_whitespace()
                .nth(3)
                .and_then(|n| n.replace(',', "").parse().ok())
                .unwrap_or(0)
        });
    assert!(collar <= 20, "{collar} price-collar rejects:\n{out}");
}
