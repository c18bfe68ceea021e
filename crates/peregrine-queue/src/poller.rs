//! Readiness of a polling thread's file descriptors: a level-triggered `epoll` set
//! (through `rustix`), the one the workspace's socket loops block in when their
//! [`crate::wait::Idler`] parks. The exchange's thread holds its listener, every
//! session socket and the group commit's eventfd here, reads only what is ready and
//! blocks in `epoll_wait` when it parks, so an idle exchange sleeps until a byte
//! arrives; the FIX gateway's loop holds its listener and connections, and asks for
//! write readiness only where output is backed up ([`Poller::add_rw`],
//! [`Poller::modify`]).
//!
//! Level-triggered, so a socket with more data than one `read` took is reported
//! again on the next wait: one `read` per ready socket per iteration, never a
//! `read` that returns `EAGAIN` just to learn that nothing came.
//!
//! **Timeouts finer than a millisecond.** `epoll_wait` takes whole milliseconds (its
//! nanosecond sibling, `epoll_pwait2`, needs Linux 5.11, which rustix only calls when
//! built for it), so a 300 µs wait used to last a full millisecond: a parked exchange
//! overslept the batch tick it was waiting for. A wait whose timeout has a
//! sub-millisecond part (and is under [`FINE_LIMIT`]) arms the poller's own timerfd
//! (`CLOCK_MONOTONIC`, in the set under [`TIMER_TOKEN`]) for the exact time; the
//! millisecond timeout, rounded up, stays as the backstop. The timer's event is
//! consumed here and never returned.

use std::os::fd::{AsFd, OwnedFd};
use std::time::Duration;

use rustix::buffer::spare_capacity;
use rustix::event::epoll::{self, CreateFlags, Event, EventData, EventFlags};
use rustix::event::Timespec;
use rustix::time::{
    timerfd_create, timerfd_settime, Itimerspec, TimerfdClockId, TimerfdFlags, TimerfdTimerFlags,
};

/// The token of the poller's own timer: [`Poller::add`] refuses it.
pub const TIMER_TOKEN: u64 = u64::MAX;

/// Timeouts from this long up are left to `epoll_wait`'s milliseconds (rounding
/// one up is then at most 1% late, not worth a timer system call).
pub const FINE_LIMIT: Duration = Duration::from_millis(100);

/// Whether a wait of `d` needs the fine timer.
fn needs_timer(d: Duration) -> bool {
    !d.subsec_nanos().is_multiple_of(1_000_000) && d < FINE_LIMIT
}

/// One ready descriptor (a hang-up or an error is reported as readable: the next
/// `read` returns it).
#[derive(Debug, Clone, Copy)]
pub struct Ready {
    /// Its token (what the caller gave [`Poller::add`]).
    pub token: u64,
}

/// An epoll set and its event buffer (allocated once).
pub struct Poller {
    epoll: OwnedFd,
    events: Vec<Event>,
    /// The fine timer, created at the first sub-millisecond wait (`None` until then,
    /// or for good if it could not be created: waits then round up as before).
    timer: Option<OwnedFd>,
    /// The timer is set and has not been seen to fire.
    armed: bool,
    /// Creating the timer failed once; not tried again.
    no_timer: bool,
}

impl std::fmt::Debug for Poller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Poller")
            .field("epoll", &self.epoll)
            .field("capacity", &self.events.capacity())
            .finish()
    }
}

impl Poller {
    /// A set that reports up to `capacity` descriptors per wait.
    pub fn new(capacity: usize) -> std::io::Result<Self> {
        Ok(Poller {
            epoll: epoll::create(CreateFlags::CLOEXEC)?,
            // One more slot for the timer's event.
            events: Vec::with_capacity(capacity.max(4) + 1),
            timer: None,
            armed: false,
            no_timer: false,
        })
    }

    /// Watches `fd` for input (level-triggered).
    pub fn add(&self, fd: impl AsFd, token: u64) -> std::io::Result<()> {
        self.add_rw(fd, token, false)
    }

    /// Watches `fd` for input, and for room to write when `out` (level-triggered).
    pub fn add_rw(&self, fd: impl AsFd, token: u64, out: bool) -> std::io::Result<()> {
        refuse_timer_token(token)?;
        Ok(epoll::add(
            &self.epoll,
            fd,
            EventData::new_u64(token),
            rw_flags(out),
        )?)
    }

    /// Changes whether a watched `fd` is also reported when it can be written.
    pub fn modify(&self, fd: impl AsFd, token: u64, out: bool) -> std::io::Result<()> {
        Ok(epoll::modify(
            &self.epoll,
            fd,
            EventData::new_u64(token),
            rw_flags(out),
        )?)
    }

    /// Watches `fd` edge-triggered: one report per signal, nothing to drain (the
    /// group commit's eventfd).
    pub fn add_edge(&self, fd: impl AsFd, token: u64) -> std::io::Result<()> {
        refuse_timer_token(token)?;
        let flags = EventFlags::IN | EventFlags::ET;
        Ok(epoll::add(
            &self.epoll,
            fd,
            EventData::new_u64(token),
            flags,
        )?)
    }

    /// Stops watching `fd`.
    pub fn remove(&self, fd: impl AsFd) {
        let _ = epoll::delete(&self.epoll, fd);
    }

    /// Waits up to `timeout` (zero: just look; `None`: until something is ready)
    /// and returns what is ready.
    pub fn wait(&mut self, timeout: Option<Duration>) -> std::io::Result<&[Event]> {
        self.events.clear();
        match timeout {
            Some(d) if needs_timer(d) => self.arm(d),
            _ if self.armed => self.disarm(),
            _ => {}
        }
        let ts = timeout.map(|d| Timespec {
            tv_sec: d.as_secs() as _,
            tv_nsec: d.subsec_nanos() as _,
        });
        match epoll::wait(&self.epoll, spare_capacity(&mut self.events), ts.as_ref()) {
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
        if self.armed && self.events.iter().any(|e| e.data.u64() == TIMER_TOKEN) {
            self.armed = false;
            if let Some(t) = &self.timer {
                // Consume the expiration (the timer is level-triggered in the set).
                let _ = rustix::io::read(t, &mut [0u8; 8]);
            }
            self.events.retain(|e| e.data.u64() != TIMER_TOKEN);
        }
        Ok(&self.events)
    }

    /// Sets the fine timer to fire after `d` (creating it on first use). Setting it
    /// also clears an expiration not yet consumed. On failure the wait just rounds
    /// up to the millisecond.
    fn arm(&mut self, d: Duration) {
        if self.timer.is_none() && !self.no_timer {
            let made = timerfd_create(
                TimerfdClockId::Monotonic,
                TimerfdFlags::NONBLOCK | TimerfdFlags::CLOEXEC,
            )
            .and_then(|t| {
                epoll::add(
                    &self.epoll,
                    &t,
                    EventData::new_u64(TIMER_TOKEN),
                    EventFlags::IN,
                )?;
                Ok(t)
            });
            match made {
                Ok(t) => self.timer = Some(t),
                Err(_) => self.no_timer = true,
            }
        }
        let Some(t) = &self.timer else { return };
        let spec = Itimerspec {
            it_interval: Timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: Timespec {
                tv_sec: d.as_secs() as _,
                tv_nsec: d.subsec_nanos() as _,
            },
        };
        self.armed = timerfd_settime(t, TimerfdTimerFlags::empty(), &spec).is_ok();
    }

    /// Stops a timer armed for an earlier wait that ended some other way, so it
    /// cannot end a later wait early.
    fn disarm(&mut self) {
        if let Some(t) = &self.timer {
            let zero = Timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            let spec = Itimerspec {
                it_interval: zero,
                it_value: zero,
            };
            let _ = timerfd_settime(t, TimerfdTimerFlags::empty(), &spec);
        }
        self.armed = false;
    }
}

/// [`TIMER_TOKEN`] is the poller's own.
fn refuse_timer_token(token: u64) -> std::io::Result<()> {
    if token == TIMER_TOKEN {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "token u64::MAX is the poller's timer",
        ));
    }
    Ok(())
}

fn rw_flags(out: bool) -> EventFlags {
    let read = EventFlags::IN | EventFlags::RDHUP;
    if out {
        read | EventFlags::OUT
    } else {
        read
    }
}

/// The token and state of one event.
#[inline]
pub fn ready(e: &Event) -> Ready {
    Ready {
        token: e.data.u64(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::net::{TcpListener, TcpStream};

    /// The tokens one wait of up to `timeout` reports.
    fn tokens(p: &mut Poller, timeout: Duration) -> Vec<u64> {
        let ready_now = p.wait(Some(timeout)).unwrap();
        ready_now.iter().map(|e| ready(e).token).collect()
    }

    #[test]
    fn reports_only_ready_descriptors_and_blocks_when_idle() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut p = Poller::new(8).unwrap();
        p.add(&listener, 99).unwrap();
        assert!(p.wait(Some(Duration::ZERO)).unwrap().is_empty());
        let mut client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        assert_eq!(tokens(&mut p, Duration::from_secs(5)), [99]);
        let (server, _) = listener.accept().unwrap();
        p.add(&server, 7).unwrap();
        assert!(
            p.wait(Some(Duration::ZERO)).unwrap().is_empty(),
            "nothing to read"
        );
        client.write_all(b"hello").unwrap();
        let e = p.wait(Some(Duration::from_secs(5))).unwrap()[0];
        assert_eq!(ready(&e).token, 7);
        let again = p.wait(Some(Duration::ZERO)).unwrap().len();
        assert_eq!(again, 1, "level-triggered: unread data is reported again");
        drop(client);
        let e = p.wait(Some(Duration::from_secs(5))).unwrap()[0];
        let flags = e.flags;
        assert!(flags.contains(EventFlags::RDHUP), "a hang-up is reported");
        p.remove(&server);
        let started = std::time::Instant::now();
        assert!(p.wait(Some(Duration::from_millis(20))).unwrap().is_empty());
        assert!(started.elapsed() >= Duration::from_millis(15), "it blocked");
    }

    #[test]
    fn only_waits_with_a_sub_millisecond_part_under_the_limit_use_the_timer() {
        assert!(needs_timer(Duration::from_micros(300)));
        assert!(needs_timer(Duration::from_micros(1_500)));
        assert!(!needs_timer(Duration::ZERO));
        assert!(!needs_timer(Duration::from_millis(3)));
        assert!(!needs_timer(FINE_LIMIT + Duration::from_micros(1)));
    }

    #[test]
    fn the_timer_ends_a_fine_wait_and_never_shows_or_fires_late() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut p = Poller::new(8).unwrap();
        p.add(&listener, 5).unwrap();
        // The token is the poller's.
        assert!(p.add(&listener, TIMER_TOKEN).is_err());
        // A fine wait on an idle set ends by the timer, which is not reported.
        for _ in 0..3 {
            let started = std::time::Instant::now();
            assert!(p.wait(Some(Duration::from_micros(300))).unwrap().is_empty());
            assert!(
                started.elapsed() >= Duration::from_micros(300),
                "it blocked"
            );
        }
        assert!(p.timer.is_some(), "the timer was made");
        // A fine wait ended by input leaves the timer armed ...
        let _client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        assert_eq!(tokens(&mut p, Duration::from_micros(50_300)), [5]);
        assert!(p.armed);
        let (_server, _) = listener.accept().unwrap();
        // ... and a later plain wait disarms it: after the old deadline has passed,
        // a whole-millisecond wait still blocks its full time (a stale expiration
        // would end it at once).
        std::thread::sleep(Duration::from_millis(60));
        let started = std::time::Instant::now();
        assert!(p.wait(Some(Duration::from_millis(20))).unwrap().is_empty());
        assert!(
            started.elapsed() >= Duration::from_millis(15),
            "woken early by the old timer"
        );
        assert!(!p.armed);
    }
}
