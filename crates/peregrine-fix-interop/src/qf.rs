//! QuickFIX test support: a recording QuickFIX application, its settings files, a
//! log that keeps the raw messages, and bounded waits.
#![allow(missing_docs, reason = "test support; each item says what it is")]

use peregrine_types::wall_ns;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use quickfix::{
    Application, ApplicationCallback, ConnectionHandler, FieldMap, FileMessageStoreFactory,
    Initiator, LogFactory, Message, MsgFromAdminError, MsgFromAppError, MsgToAppError, SessionId,
    SessionSettings,
};

/// QuickFIX keeps a process-wide session registry: one QuickFIX engine at a time.
pub static QUICKFIX: Mutex<()> = Mutex::new(());

/// The acceptor kind every test uses: QuickFIX's thread-per-connection acceptor.
/// The single-threaded `SocketAcceptor` has a race in `Acceptor::stop` (QuickFIX
/// calls `onStop`, which closes the socket server, before joining the thread that
/// deletes that server at the same moment): a test stopping it on a loaded machine
/// crashed with SIGSEGV in `SocketServer::close` (4 of 60 runs at load ~6, CI
/// 2026-11-28). The threaded acceptor joins its threads in `onStop`.
pub const ACCEPTOR_KIND: quickfix::FixSocketServerKind =
    quickfix::FixSocketServerKind::MultiThreaded;

/// Waits (bounded) for `cond`, checking every 5 ms.
pub fn wait_until(what: &str, timeout: Duration, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// QuickFIX's own FIX 4.4 dictionary (`scripts/quickfix-spec.sh` puts it there);
/// `None` when it is absent (QuickFIX then checks only the session layer).
pub fn fix44_dictionary() -> Option<PathBuf> {
    if let Ok(p) = std::env::var("QUICKFIX_FIX44_XML") {
        return Some(PathBuf::from(p));
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let target = std::env::var("CARGO_TARGET_DIR").map_or(root.join("target"), PathBuf::from);
    let p = target.join("quickfix-spec/FIX44.xml");
    if p.exists() {
        Some(p)
    } else {
        eprintln!("note: {} missing (run scripts/quickfix-spec.sh): QuickFIX runs without its data dictionary", p.display());
        None
    }
}

/// A QuickFIX settings file: one session, the given role and extra lines.
pub fn settings(
    dir: &Path,
    role: &str,
    sender: &str,
    target: &str,
    port: u16,
    extra: &str,
) -> PathBuf {
    let dictionary = match fix44_dictionary() {
        Some(p) => format!("UseDataDictionary=Y\nDataDictionary={}\n", p.display()),
        None => "UseDataDictionary=N\n".to_string(),
    };
    let text = format!(
        "[DEFAULT]\nConnectionType={role}\nReconnectInterval=1\nFileStorePath={store}\nStartTime=00:00:00\nEndTime=23:59:59\n\
         HeartBtInt=1\nSocketConnectHost=127.0.0.1\nSocketConnectPort={port}\nSocketAcceptPort={port}\n\
         ResetOnLogon={reset}\nResetOnLogout=N\nResetOnDisconnect=N\n{dictionary}{extra}\n\
         [SESSION]\nBeginString=FIX.4.4\nSenderCompID={sender}\nTargetCompID={target}\n",
        store = dir.join("qf-store").display(),
        reset = if extra.contains("ResetOnLogon=Y") { "Y" } else { "N" },
        extra = extra.replace("ResetOnLogon=Y", ""),
    );
    let path = dir.join(format!("{role}-{}.cfg", wall_ns()));
    std::fs::write(&path, text).unwrap();
    path
}

/// A QuickFIX initiator started by [`InitiatorKit::start`].
pub type QfInitiator<'k> = Initiator<'k, Recorder, WireLog, FileMessageStoreFactory>;

/// What a QuickFIX initiator is made of, from one settings file (see [`settings`]),
/// borrowing the test's [`Recorder`] and [`WireLog`]. Keep it alive while an
/// initiator it started runs; `start` again after dropping one to reconnect with
/// the same store (QuickFIX resumes its sequence numbers).
pub struct InitiatorKit<'a> {
    settings: SessionSettings,
    app: Application<'a, Recorder>,
    log: LogFactory<'a, WireLog>,
    store: FileMessageStoreFactory,
}

impl std::fmt::Debug for InitiatorKit<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InitiatorKit").finish_non_exhaustive()
    }
}

impl<'a> InitiatorKit<'a> {
    pub fn new(qf: &'a Recorder, wire: &'a WireLog, cfg: &Path) -> InitiatorKit<'a> {
        let settings = SessionSettings::try_from_path(cfg).unwrap();
        InitiatorKit {
            app: Application::try_new(qf).unwrap(),
            log: LogFactory::try_new(wire).unwrap(),
            store: FileMessageStoreFactory::try_new(&settings).unwrap(),
            settings,
        }
    }

    /// A single-threaded socket initiator, started (it logs on by itself).
    pub fn start(&self) -> QfInitiator<'_> {
        let mut initiator = Initiator::try_new(
            &self.settings,
            &self.app,
            &self.store,
            &self.log,
            quickfix::FixSocketServerKind::SingleThreaded,
        )
        .unwrap();
        initiator.start().unwrap();
        initiator
    }
}

/// One message QuickFIX saw or sent: MsgType, MsgSeqNum, PossDupFlag and the raw
/// text.
#[derive(Debug, Clone)]
pub struct Seen {
    pub msg_type: String,
    pub seq: u64,
    pub poss_dup: bool,
    pub text: String,
}

impl Seen {
    fn of(msg: &Message) -> Seen {
        let header = msg.clone_header();
        Seen {
            msg_type: header.get_field(35).unwrap_or_default(),
            seq: header
                .get_field(34)
                .and_then(|s| s.parse().ok())
                .unwrap_or(0),
            poss_dup: header.get_field(43).as_deref() == Some("Y"),
            text: msg.to_fix_string().unwrap_or_default().replace('\x01', "|"),
        }
    }

    /// The value of `tag` in the raw text.
    pub fn field(&self, tag: u32) -> Option<&str> {
        let key = format!("|{tag}=");
        let at = self.text.find(&key)? + key.len();
        self.text[at..].split('|').next()
    }
}

/// Records everything; adds the password to Logons it sends; answers
/// NewOrderSingle with an ExecutionReport (New) when `venue` is set.
#[derive(Debug, Default)]
pub struct Recorder {
    pub password: Option<String>,
    pub venue: bool,
    pub logons: Mutex<u32>,
    pub logouts: Mutex<u32>,
    pub from_app: Mutex<Vec<Seen>>,
    pub from_admin: Mutex<Vec<Seen>>,
    pub to_admin: Mutex<Vec<Seen>>,
}

impl Recorder {
    pub fn logons(&self) -> u32 {
        *self.logons.lock().unwrap()
    }
    pub fn logouts(&self) -> u32 {
        *self.logouts.lock().unwrap()
    }
    pub fn app(&self) -> Vec<Seen> {
        self.from_app.lock().unwrap().clone()
    }
    pub fn admin_in(&self) -> Vec<Seen> {
        self.from_admin.lock().unwrap().clone()
    }
    pub fn admin_out(&self) -> Vec<Seen> {
        self.to_admin.lock().unwrap().clone()
    }
}

impl ApplicationCallback for Recorder {
    fn on_logon(&self, _: &SessionId) {
        *self.logons.lock().unwrap() += 1;
    }

    fn on_logout(&self, _: &SessionId) {
        *self.logouts.lock().unwrap() += 1;
    }

    fn on_msg_to_admin(&self, msg: &mut Message, _: &SessionId) {
        let is_logon = msg.clone_header().get_field(35).as_deref() == Some("A");
        if is_logon {
            if let Some(p) = &self.password {
                msg.set_field(554, p.as_str()).unwrap();
            }
        }
        self.to_admin.lock().unwrap().push(Seen::of(msg));
    }

    fn on_msg_to_app(&self, _: &mut Message, _: &SessionId) -> Result<(), MsgToAppError> {
        Ok(())
    }

    fn on_msg_from_admin(&self, msg: &Message, _: &SessionId) -> Result<(), MsgFromAdminError> {
        self.from_admin.lock().unwrap().push(Seen::of(msg));
        Ok(())
    }

    fn on_msg_from_app(&self, msg: &Message, session: &SessionId) -> Result<(), MsgFromAppError> {
        let seen = Seen::of(msg);
        if self.venue && seen.msg_type == "D" {
            let mut report = Message::new();
            report.with_header_mut(|h| h.set_field(35, "8")).unwrap();
            for (tag, value) in [
                (37, "V-1".to_string()),
                (11, seen.field(11).unwrap_or("?").to_string()),
                (17, format!("E-{}", seen.seq)),
                (150, "0".to_string()),
                (39, "0".to_string()),
                (55, seen.field(55).unwrap_or("?").to_string()),
                (54, seen.field(54).unwrap_or("1").to_string()),
                (38, seen.field(38).unwrap_or("1").to_string()),
                (151, seen.field(38).unwrap_or("1").to_string()),
                (14, "0".to_string()),
                (6, "0".to_string()),
            ] {
                report.set_field(tag, value.as_str()).unwrap();
            }
            quickfix::send_to_target(report, session).unwrap();
        }
        self.from_app.lock().unwrap().push(seen);
        Ok(())
    }
}

/// A free TCP port on loopback, outside the kernel's ephemeral range
/// ([`peregrine_testkit::free_port`]).
pub fn free_port() -> u16 {
    peregrine_testkit::free_port()
}

/// QuickFIX's log: every raw message it received, and its events (printed too when
/// `FIX_TRACE` is set: QuickFIX calls from its own threads, which the test harness
/// does not capture).
#[derive(Debug, Default)]
pub struct WireLog {
    pub incoming: Mutex<Vec<String>>,
    pub events: Mutex<Vec<String>>,
}

impl WireLog {
    /// Raw incoming messages (SOH shown as `|`) containing every one of `parts`.
    pub fn incoming_with(&self, parts: &[&str]) -> usize {
        self.incoming
            .lock()
            .unwrap()
            .iter()
            .filter(|m| parts.iter().all(|p| m.contains(p)))
            .count()
    }
}

impl quickfix::LogCallback for WireLog {
    fn on_incoming(&self, _: Option<&SessionId>, msg: &str) {
        let msg = msg.replace('\x01', "|");
        trace(&format!("QuickFIX in:  {msg}"));
        self.incoming.lock().unwrap().push(msg);
    }

    fn on_outgoing(&self, _: Option<&SessionId>, msg: &str) {
        trace(&format!("QuickFIX out: {}", msg.replace('\x01', "|")));
    }

    fn on_event(&self, _: Option<&SessionId>, msg: &str) {
        trace(&format!("QuickFIX event: {msg}"));
        self.events.lock().unwrap().push(msg.to_string());
    }
}

fn trace(line: &str) {
    if std::env::var_os("FIX_TRACE").is_some() {
        println!("{line}");
    }
}
