//! Commitment windows: which commands a commitment covers, as a pure function of the
//! command journal.
//!
//! A window is identified by its index `k = ts / window_ns`, where `ts` is the
//! command's (journaled) timestamp. In batch mode `window_ns` is the tick and every
//! command of tick `k` carries timestamp `k · tick`, so a window is exactly a tick; in
//! continuous mode window `k` holds the commands with timestamp in
//! `[k · I, (k + 1) · I)`. Command timestamps never decrease, so a window closes
//! when the first command of a later window arrives (or, live, when the clock has
//! passed its end). A window's commitment uses `tick_seq = k`, `timestamp = k ·
//! window_ns`, `tx_count` = its commands, and its trades (one
//! [`TradeRecord`] per `Fill`, in event order, stamped with the command's timestamp).
//! Windows without commands produce no commitment.
//!
//! [`WindowState`] is that rule, shared by the live path ([`crate::hasher`]) and the
//! offline recomputation ([`Recomputer`], used by `peregrine verify`).

use crate::tick::{commit_tick, Commitment};
use crate::trade::TradeRecord;
use peregrine_book::Event;

/// The window index of timestamp `ts`.
#[inline]
pub fn window_of(ts: u64, window_ns: u64) -> u64 {
    ts / window_ns.max(1)
}

/// A window that has ended: its index and command count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Closed {
    /// Window index (`tick_seq`).
    pub index: u64,
    /// The window's timestamp, `index · window_ns`.
    pub timestamp: u64,
    /// Commands in the window.
    pub tx_count: u64,
}

/// The open window, if any.
#[derive(Debug, Clone, Copy)]
pub struct WindowState {
    window_ns: u64,
    open: Option<(u64, u64)>,
}

impl WindowState {
    /// No window open yet.
    pub fn new(window_ns: u64) -> Self {
        WindowState {
            window_ns: window_ns.max(1),
            open: None,
        }
    }

    /// The window length.
    pub fn window_ns(&self) -> u64 {
        self.window_ns
    }

    /// Index of the open window.
    pub fn open_index(&self) -> Option<u64> {
        self.open.map(|(k, _)| k)
    }

    /// A command with timestamp `ts` arrives: returns the window it closes (if it
    /// starts a later one), and counts it in its own window.
    #[inline]
    pub fn command(&mut self, ts: u64) -> Option<Closed> {
        let k = window_of(ts, self.window_ns);
        let closed = match self.open {
            Some((open, _)) if k > open => self.close(),
            _ => None,
        };
        let (_, tx) = self.open.get_or_insert((k, 0));
        *tx += 1;
        closed
    }

    /// Closes the open window if the clock `now` has passed its end.
    pub fn close_if_past(&mut self, now: u64) -> Option<Closed> {
        match self.open {
            Some((k, _)) if window_of(now, self.window_ns) > k => self.close(),
            _ => None,
        }
    }

    /// Closes the open window now (batch mode after a tick: no later command can
    /// carry its timestamp).
    pub fn close(&mut self) -> Option<Closed> {
        self.open.take().map(|(index, tx_count)| Closed {
            index,
            timestamp: index.saturating_mul(self.window_ns),
            tx_count,
        })
    }
}

/// Appends a [`TradeRecord`] for every `Fill` in `events` (command time `ts`).
#[inline]
pub fn trades_of(events: &[Event], ts: u64, mut push: impl FnMut(TradeRecord)) {
    for ev in events {
        if let Event::Fill(f) = ev {
            push(TradeRecord::from_fill(f, ts));
        }
    }
}

/// Recomputes commitments offline from a replayed command stream: feed it every
/// command's timestamp and events in journal order; it calls `on_close` with each
/// closed window's commitment and trades.
#[derive(Debug)]
pub struct Recomputer {
    state: WindowState,
    trades: Vec<TradeRecord>,
    leaves: Vec<[u8; 32]>,
    scratch: Vec<[u8; 32]>,
}

impl Recomputer {
    /// For windows of `window_ns`.
    pub fn new(window_ns: u64) -> Self {
        Recomputer {
            state: WindowState::new(window_ns),
            trades: Vec::new(),
            leaves: Vec::new(),
            scratch: Vec::new(),
        }
    }

    /// One command (before its events): may close the previous window.
    pub fn command(&mut self, ts: u64, on_close: &mut impl FnMut(&Commitment, &[TradeRecord])) {
        if let Some(c) = self.state.command(ts) {
            self.emit(c, on_close);
        }
    }

    /// The events of the command just fed.
    pub fn events(&mut self, events: &[Event], ts: u64) {
        trades_of(events, ts, |t| self.trades.push(t));
    }

    /// Ends the stream: the window still open (if any) is closed and returned through
    /// `on_close` too; returns its index.
    pub fn finish(
        &mut self,
        on_close: &mut impl FnMut(&Commitment, &[TradeRecord]),
    ) -> Option<u64> {
        let c = self.state.close()?;
        self.emit(c, on_close);
        Some(c.index)
    }

    fn emit(&mut self, c: Closed, on_close: &mut impl FnMut(&Commitment, &[TradeRecord])) {
        let commitment = commit_tick(
            c.index,
            c.timestamp,
            c.tx_count,
            &self.trades,
            &mut self.leaves,
            &mut self.scratch,
        );
        on_close(&commitment, &self.trades);
        self.trades.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_follow_timestamps() {
        assert_eq!(window_of(0, 10), 0);
        assert_eq!(window_of(9, 10), 0);
        assert_eq!(window_of(10, 10), 1);
        assert_eq!(window_of(5, 0), 5, "a zero window is treated as 1 ns");
        let mut w = WindowState::new(10);
        assert_eq!(w.command(3), None);
        assert_eq!(w.command(9), None);
        assert_eq!(w.open_index(), Some(0));
        // Skips window 1 and 2 (no commands: no commitment).
        assert_eq!(
            w.command(35),
            Some(Closed {
                index: 0,
                timestamp: 0,
                tx_count: 2
            })
        );
        assert_eq!(w.command(35), None);
        assert_eq!(w.close_if_past(39), None, "still inside window 3");
        assert_eq!(
            w.close_if_past(40),
            Some(Closed {
                index: 3,
                timestamp: 30,
                tx_count: 2
            })
        );
        assert_eq!(w.close(), None);
        assert_eq!(w.command(41), None);
        assert_eq!(w.close().map(|c| c.tx_count), Some(1));
    }

    #[test]
    fn batch_ticks_are_windows() {
        // Every command of tick k carries k * tick.
        let tick = 1_000_000;
        let mut w = WindowState::new(tick);
        for _ in 0..5 {
            assert_eq!(w.command(7 * tick), None);
        }
        let c = w.command(9 * tick).unwrap();
        assert_eq!((c.index, c.timestamp, c.tx_count), (7, 7 * tick, 5));
    }
}
