//! How the load generators wait without taking a core: block in `poll(2)` until one
//! of their sockets is readable or the next send is due. The thread's timer slack is
//! set to 1 ns first, so a timed wake is not deferred by the default 50 µs.

use std::os::fd::BorrowedFd;
use std::time::Instant;

use rustix::event::{poll, PollFd, PollFlags, Timespec};

/// Sets this thread's timer slack to 1 ns (best effort).
pub fn tight_timers() {
    let _ = rustix::thread::set_current_timer_slack(std::num::NonZeroU64::new(1));
}

/// Blocks until one of `fds` is readable or `until` (if any) has passed; returns at
/// once if `until` has passed already. Errors (an interrupted call) return early:
/// callers loop.
pub fn wait(fds: &[BorrowedFd<'_>], until: Option<Instant>) {
    let timeout = match until {
        Some(t) => {
            let left = t.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            Some(Timespec {
                tv_sec: left.as_secs() as _,
                tv_nsec: left.subsec_nanos() as _,
            })
        }
        None => None,
    };
    let mut pfds: Vec<PollFd<'_>> = fds
        .iter()
        .map(|fd| PollFd::from_borrowed_fd(*fd, PollFlags::IN))
        .collect();
    let _ = poll(&mut pfds, timeout.as_ref());
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::fd::AsFd;
    use std::time::Duration;

    #[test]
    fn wait_returns_when_data_arrives_or_the_time_is_up() {
        let (a, mut b) = std::os::unix::net::UnixStream::pair().unwrap();
        tight_timers();
        let t = Instant::now();
        wait(&[a.as_fd()], Some(t + Duration::from_millis(20)));
        assert!(t.elapsed() >= Duration::from_millis(20), "timed out early");
        b.write_all(b"x").unwrap();
        // Readable: returns at once, not at the deadline a minute away.
        let t = Instant::now();
        wait(&[a.as_fd()], Some(t + Duration::from_secs(60)));
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "waited for the deadline"
        );
        // A deadline already passed returns at once.
        wait(&[], Some(Instant::now()));
    }
}
