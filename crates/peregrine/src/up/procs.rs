//! The child processes of `peregrine up`: spawned from the current executable, each in
//! its own process group (so a Ctrl-C at the terminal reaches only `up`, which then
//! shuts them down in order), with stdout and stderr in a log file in the run
//! directory. Dropping a [`Procs`] terminates whatever is still running, so an error
//! anywhere leaves no process behind.

use std::fs::File;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use anyhow::Context;
use rustix::process::{kill_process, Pid, Signal};

/// One child process.
#[derive(Debug)]
pub(super) struct Proc {
    /// Short name for messages (`exchange`, `engine`, a strategy name).
    pub name: String,
    /// Its log (stdout and stderr; a restarted process appends).
    pub log: PathBuf,
    child: Child,
    status: Option<ExitStatus>,
    exe: PathBuf,
    args: Vec<String>,
    dir: PathBuf,
    /// Times it was restarted, with why (`exit 1 at 12.3 s`).
    pub restarts: Vec<String>,
}

impl Proc {
    /// Starts `exe args...` in `dir`, logging to `dir/<name>.log`.
    pub(super) fn spawn(
        exe: &Path,
        name: &str,
        args: &[String],
        dir: &Path,
    ) -> anyhow::Result<Proc> {
        let log = dir.join(format!("{name}.log"));
        let child = start(exe, name, args, dir, &log, false)?;
        Ok(Proc {
            name: name.to_owned(),
            log,
            child,
            status: None,
            exe: exe.to_owned(),
            args: args.to_vec(),
            dir: dir.to_owned(),
            restarts: Vec::new(),
        })
    }

    /// Starts it again (it has exited), the same way; `why` is recorded.
    pub(super) fn restart(&mut self, why: String) -> anyhow::Result<()> {
        self.child = start(
            &self.exe, &self.name, &self.args, &self.dir, &self.log, true,
        )?;
        self.status = None;
        self.restarts.push(why);
        Ok(())
    }

    /// Its process id.
    pub(super) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Its exit status if it has exited (reaping it), else `None`.
    pub(super) fn exited(&mut self) -> Option<ExitStatus> {
        if self.status.is_none() {
            // An error here means the child was already reaped, which only `exited`
            // and `wait_for` do, and they record the status first.
            self.status = self.child.try_wait().ok().flatten();
        }
        self.status
    }

    /// Sends SIGTERM unless it has exited.
    pub(super) fn terminate(&mut self) {
        if self.exited().is_none() {
            // Not yet reaped, so the pid is still this child's.
            let _ = kill_process(Pid::from_child(&self.child), Signal::TERM);
        }
    }

    /// Waits up to `timeout` for it to exit.
    pub(super) fn wait_for(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(s) = self.exited() {
                return Some(s);
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// SIGKILL and reap (the last resort).
    pub(super) fn kill(&mut self) {
        if self.exited().is_none() {
            let _ = self.child.kill();
            self.status = self.child.wait().ok();
        }
    }

    /// Terminates it politely, then by force after `grace`; returns how it ended.
    pub(super) fn stop(&mut self, grace: Duration) -> Ended {
        if let Some(s) = self.exited() {
            return Ended::Exited(s);
        }
        self.terminate();
        match self.wait_for(grace) {
            Some(s) => Ended::Exited(s),
            None => {
                self.kill();
                Ended::Killed
            }
        }
    }

    /// What explains its exit: `n` lines from the last `Error:` or panic message in its
    /// log (a backtrace may follow them), else the log's last `n` lines.
    pub(super) fn log_excerpt(&self, n: usize) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        excerpt(&text, n)
    }
}

fn start(
    exe: &Path,
    name: &str,
    args: &[String],
    dir: &Path,
    log: &Path,
    append: bool,
) -> anyhow::Result<Child> {
    let out = File::options()
        .create(true)
        .write(true)
        .append(append)
        .truncate(!append)
        .open(log)
        .with_context(|| format!("creating {}", log.display()))?;
    let err = out.try_clone()?;
    Command::new(exe)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .process_group(0)
        .env(
            crate::cli::parent::PARENT_ENV,
            std::process::id().to_string(),
        )
        .spawn()
        .with_context(|| format!("starting the {name} process ({})", exe.display()))
}

/// `n` lines from the last line that starts an error report, else the last `n`.
fn excerpt(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines
        .iter()
        .rposition(|l| l.starts_with("Error:") || l.contains("panicked at"))
        .unwrap_or(lines.len().saturating_sub(n));
    lines[start..lines.len().min(start + n)].join("\n")
}

/// How a stopped process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ended {
    /// It exited (by itself or from SIGTERM) with this status.
    Exited(ExitStatus),
    /// It ignored SIGTERM and was killed.
    Killed,
}

/// A status in words: `exit 0`, `exit 3`, `signal 15 (SIGTERM)`.
pub(super) fn describe(status: ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(c), _) => format!("exit {c}"),
        (None, Some(15)) => "signal 15 (SIGTERM)".to_owned(),
        (None, Some(9)) => "signal 9 (SIGKILL)".to_owned(),
        (None, Some(s)) => format!("signal {s}"),
        (None, None) => "unknown status".to_owned(),
    }
}

/// Every child of one run. Dropping it terminates (then kills) the ones still running.
#[derive(Debug, Default)]
pub(super) struct Procs {
    /// In start order.
    pub list: Vec<Proc>,
}

impl Procs {
    /// The first child that has exited, with its status.
    pub(super) fn first_exited(&mut self) -> Option<(&Proc, ExitStatus)> {
        let i = self.list.iter_mut().position(|p| p.exited().is_some())?;
        let p = &self.list[i];
        p.status.map(|s| (p, s))
    }

    /// The child called `name`.
    pub(super) fn get(&mut self, name: &str) -> Option<&mut Proc> {
        self.list.iter_mut().find(|p| p.name == name)
    }

    /// Process ids of children that have not been reaped.
    pub(super) fn running_pids(&mut self) -> Vec<u32> {
        self.list
            .iter_mut()
            .filter_map(|p| p.exited().is_none().then(|| p.pid()))
            .collect()
    }
}

impl Drop for Procs {
    fn drop(&mut self) {
        // Newest first: the HTTP gateway and the strategies, the engine, the FIX
        // gateway, the exchange.
        for p in self.list.iter_mut().rev() {
            p.terminate();
        }
        for p in self.list.iter_mut().rev() {
            if p.wait_for(Duration::from_secs(2)).is_none() {
                p.kill();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_terminates_and_reports() {
        let dir = tempfile::tempdir().unwrap();
        let mut p = Proc::spawn(
            Path::new("/bin/sh"),
            "sleeper",
            &["-c".into(), "echo hello; exec sleep 30".into()],
            dir.path(),
        )
        .unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while !p.log_excerpt(5).contains("hello") {
            assert!(Instant::now() < deadline, "the child never wrote its log");
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(p.exited().is_none());
        let ended = p.stop(Duration::from_secs(5));
        let Ended::Exited(status) = ended else {
            panic!("sleep ignored SIGTERM");
        };
        assert_eq!(describe(status), "signal 15 (SIGTERM)");
        // Stopping again is harmless.
        assert_eq!(p.stop(Duration::from_millis(10)), ended);
    }

    #[test]
    fn drop_leaves_nothing_running() {
        let dir = tempfile::tempdir().unwrap();
        let mut procs = Procs::default();
        for name in ["a", "b"] {
            let p = Proc::spawn(
                Path::new("/bin/sh"),
                name,
                &["-c".into(), "exec sleep 30".into()],
                dir.path(),
            )
            .unwrap();
            procs.list.push(p);
        }
        let pids = procs.running_pids();
        assert_eq!(pids.len(), 2);
        assert!(procs.first_exited().is_none());
        drop(procs);
        for pid in pids {
            assert!(!Path::new(&format!("/proc/{pid}")).exists(), "{pid} left");
        }
    }

    #[test]
    fn excerpt_starts_at_the_error() {
        let log = "starting\nError: bad config\n\nCaused by:\n  unknown field\n   0: frame\n   1: frame\n";
        assert_eq!(
            excerpt(log, 5),
            "Error: bad config\n\nCaused by:\n  unknown field\n   0: frame"
        );
        assert_eq!(excerpt("a\nb\nc\n", 2), "b\nc");
        assert_eq!(excerpt("", 3), "");
    }

    #[test]
    fn describe_names_exit_codes() {
        assert_eq!(describe(ExitStatus::from_raw(0)), "exit 0");
        assert_eq!(describe(ExitStatus::from_raw(3 << 8)), "exit 3");
        assert_eq!(describe(ExitStatus::from_raw(9)), "signal 9 (SIGKILL)");
    }
}
