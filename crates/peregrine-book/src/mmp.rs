//! Market-maker protection of one book: per account, a sliding window of its maker
//! fills. Memory for an account's window is allocated when its limits are set (an
//! admin-rate command), never on the order path.

use std::collections::VecDeque;

use hashbrown::HashMap;
use peregrine_types::{AccountId, Qty, Timestamp};
use rustc_hash::FxBuildHasher;

use crate::command::{MmpParams, MMP_MAX_FILLS};
use crate::venue::MmpView;

/// One account's protection.
#[derive(Debug, Clone)]
pub(crate) struct MmpSlot {
    pub(crate) params: MmpParams,
    /// (time, quantity) of the maker fills in the window, oldest first.
    pub(crate) fills: VecDeque<(u64, i64)>,
    pub(crate) qty: i64,
    pub(crate) frozen: bool,
    pub(crate) frozen_until: u64,
    /// Tripped by the current aggressor; its quotes are cancelled when it finishes.
    pub(crate) tripped: bool,
}

/// Why a protection command is refused.
pub(crate) fn params_ok(p: &MmpParams) -> bool {
    p.window_ns > 0 && p.max_qty > 0 && (1..=MMP_MAX_FILLS).contains(&p.max_fills)
}

/// The book's protections.
#[derive(Debug, Default)]
pub(crate) struct Mmp {
    slots: HashMap<u32, MmpSlot, FxBuildHasher>,
    /// Accounts tripped by the current aggressor, in the order they tripped.
    pub(crate) tripped: Vec<AccountId>,
    /// Frozen accounts (a quick check on the order path).
    frozen: usize,
    /// Scratch for thawing in account order.
    due: Vec<u32>,
}

/// What a trip recorded: the window's quantity and fill count.
pub(crate) type Trip = (i64, u32);

impl Mmp {
    /// Whether any account has a protection (the order path's one check).
    #[inline]
    pub(crate) fn any(&self) -> bool {
        !self.slots.is_empty()
    }

    /// Whether `account` is frozen.
    #[inline]
    pub(crate) fn is_frozen(&self, account: AccountId) -> bool {
        self.frozen > 0 && self.slots.get(&account.0).is_some_and(|s| s.frozen)
    }

    /// Sets `account`'s limits: a fresh window, no freeze. The first Set of an account
    /// allocates its window; a later one reuses it (and grows it only for a larger
    /// fill limit than it has room for).
    pub(crate) fn set(&mut self, account: AccountId, params: MmpParams) {
        let room = params.max_fills as usize + 1;
        if let Some(s) = self.slots.get_mut(&account.0) {
            if s.frozen {
                self.frozen -= 1;
            }
            s.params = params;
            s.fills.clear();
            s.fills.reserve(room);
            s.qty = 0;
            s.frozen = false;
            s.frozen_until = 0;
            s.tripped = false;
            return;
        }
        self.slots.insert(
            account.0,
            MmpSlot {
                params,
                fills: VecDeque::with_capacity(room),
                qty: 0,
                frozen: false,
                frozen_until: 0,
                tripped: false,
            },
        );
        let n = self.slots.len();
        self.tripped.reserve(n.saturating_sub(self.tripped.len()));
        self.due.reserve(n.saturating_sub(self.due.len()));
    }

    /// Lifts `account`'s freeze and clears its window; `None` without a protection.
    pub(crate) fn reset(&mut self, account: AccountId) -> Option<MmpParams> {
        let s = self.slots.get_mut(&account.0)?;
        if s.frozen {
            self.frozen -= 1;
        }
        s.frozen = false;
        s.frozen_until = 0;
        s.fills.clear();
        s.qty = 0;
        Some(s.params)
    }

    /// Removes `account`'s protection; `false` if it had none.
    pub(crate) fn clear(&mut self, account: AccountId) -> bool {
        match self.slots.remove(&account.0) {
            Some(s) => {
                if s.frozen {
                    self.frozen -= 1;
                }
                true
            }
            None => false,
        }
    }

    /// Counts a maker fill of `qty` for `account` at time `now`; marks a trip (and
    /// queues the account in [`Mmp::tripped`]) when a limit is reached.
    #[inline]
    pub(crate) fn on_fill(&mut self, account: AccountId, qty: i64, now: u64) {
        let Some(s) = self.slots.get_mut(&account.0) else {
            return;
        };
        if s.frozen || s.tripped {
            return;
        }
        while let Some(&(t, q)) = s.fills.front() {
            if now.saturating_sub(t) < s.params.window_ns {
                break;
            }
            s.fills.pop_front();
            s.qty -= q;
        }
        s.fills.push_back((now, qty));
        s.qty += qty;
        if s.fills.len() >= s.params.max_fills as usize || s.qty >= s.params.max_qty {
            s.tripped = true;
            self.tripped.push(account);
        }
    }

    /// Freezes a tripped account at `now`: returns the window it tripped on, and
    /// clears it.
    pub(crate) fn freeze(&mut self, account: AccountId, now: u64) -> (MmpParams, Trip) {
        let Some(s) = self.slots.get_mut(&account.0) else {
            return (MmpParams::default(), (0, 0));
        };
        let trip = (s.qty, s.fills.len() as u32);
        s.tripped = false;
        if !s.frozen {
            self.frozen += 1;
        }
        s.frozen = true;
        s.frozen_until = if s.params.freeze_ns == 0 {
            0
        } else {
            now.saturating_add(s.params.freeze_ns)
        };
        s.fills.clear();
        s.qty = 0;
        (s.params, trip)
    }

    /// The earliest time a freeze thaws by itself.
    pub(crate) fn next_thaw(&self) -> Option<u64> {
        if self.frozen == 0 {
            return None;
        }
        self.slots
            .values()
            .filter(|s| s.frozen && s.frozen_until != 0)
            .map(|s| s.frozen_until)
            .min()
    }

    /// Thaws every account due at `now`, in account order, calling `f` for each.
    pub(crate) fn thaw_due(&mut self, now: u64, f: &mut dyn FnMut(AccountId, MmpParams)) {
        self.due.clear();
        for (a, s) in &self.slots {
            if s.frozen && s.frozen_until != 0 && s.frozen_until <= now {
                self.due.push(*a);
            }
        }
        self.due.sort_unstable();
        for i in 0..self.due.len() {
            let a = AccountId(self.due[i]);
            if let Some(p) = self.reset(a) {
                f(a, p);
            }
        }
    }

    /// The canonical views, by account.
    pub(crate) fn views(&self) -> Vec<MmpView> {
        let mut v: Vec<MmpView> = self
            .slots
            .iter()
            .map(|(a, s)| MmpView {
                account: AccountId(*a),
                params: s.params,
                frozen: s.frozen,
                frozen_until: Timestamp(s.frozen_until),
                fills: s
                    .fills
                    .iter()
                    .map(|&(t, q)| (Timestamp(t), Qty::from_raw(q)))
                    .collect(),
            })
            .collect();
        v.sort_unstable_by_key(|m| m.account);
        v
    }

    /// Restores from views.
    pub(crate) fn restore(&mut self, views: &[MmpView]) {
        for m in views {
            self.set(m.account, m.params);
            let s = self.slots.get_mut(&m.account.0).expect("just set");
            for (t, q) in &m.fills {
                s.fills.push_back((t.0, q.lots()));
                s.qty += q.lots();
            }
            if m.frozen {
                s.frozen = true;
                s.frozen_until = m.frozen_until.0;
                self.frozen += 1;
            }
        }
    }
}
