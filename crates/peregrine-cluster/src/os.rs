//! What the node's threads ask of the operating system beyond I/O: their priority,
//! and the wall clock for log lines.

/// The wall clock as UTC text, for the node's log lines (operators compare them
/// across machines).
pub(crate) fn utc_now() -> peregrine_types::Utc {
    peregrine_types::Utc::now()
}

/// Sets the calling thread's nice value (Linux: per thread); a refusal is logged,
/// not fatal: only how soon the thread runs on a busy machine depends on it.
pub(crate) fn set_nice(thread: &str, nice: i32) {
    let me = rustix::thread::gettid();
    if let Err(e) = rustix::process::setpriority_process(Some(me), nice) {
        eprintln!(
            "{} cluster: {thread} thread: nice {nice} refused ({e}); it keeps the process's \
             priority (allow it with CAP_SYS_NICE or RLIMIT_NICE, systemd LimitNICE=)",
            utc_now()
        );
    }
}
