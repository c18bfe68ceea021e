//! Admin requests in the core: deposits and withdrawals (sequenced, journaled and
//! applied to the ledger like any command) and balance queries (answered from the
//! ledger; nothing to journal). Permission and id checks come first and refuse with
//! an `AdminRejected` without touching the sequence or the journal.

use std::sync::atomic::Ordering;

use peregrine_ledger::{AssetId, Balance};
use peregrine_types::AccountId;
use peregrine_wire::field::Pad;
use peregrine_wire::v2::admin::{AdminRejected, Balance as BalanceMsg};
use peregrine_wire::v2::{Inbound, Outbound};
use peregrine_wire::ReasonCode;

use super::Core;
use crate::balances::{apply_admin, saturate, AdminCommand, AdminKind, AdminReason};
use crate::codec::command::Record;
use crate::codec::snapshot::EngineSnapshot;
use crate::journal::CommandLog;
use crate::seams::{Outbox, SessionKey};

/// An admin message, decoded from the wire.
#[derive(Debug, Clone, Copy)]
pub(super) enum AdminRequest {
    /// Deposit or withdraw `amount` of `asset` for `account`.
    Move {
        kind: AdminKind,
        account: AccountId,
        asset: AssetId,
        amount: i64,
        request_id: u64,
    },
    /// Report `account`'s balance of `asset`.
    Query {
        account: AccountId,
        asset: AssetId,
        request_id: u64,
    },
}

/// The answer to an admin request: the balance after it, or why it was refused.
fn admin_answer(
    engine_seq: u64,
    engine_time: peregrine_types::Timestamp,
    request_id: u64,
    account: AccountId,
    asset: AssetId,
    result: Result<Balance, AdminReason>,
) -> Outbound {
    match result {
        Ok(b) => Outbound::Balance(BalanceMsg {
            session_seq: 0,
            engine_seq,
            engine_time,
            request_id,
            available: saturate(b.available),
            held: saturate(b.reserved),
            account,
            asset: asset.0,
            report_seq: 0,
        }),
        Err(reason) => Outbound::AdminRejected(AdminRejected {
            session_seq: 0,
            engine_seq,
            engine_time,
            request_id,
            account,
            asset: asset.0,
            reason: ReasonCode(reason.code()),
            reserved: Pad,
            report_seq: 0,
        }),
    }
}

/// The admin request in `msg`, if it is one.
#[inline]
pub(super) fn request_of(msg: &Inbound) -> Option<AdminRequest> {
    let (kind, m) = match msg {
        Inbound::Deposit(d) => (
            AdminKind::Deposit,
            (d.account, d.asset, d.amount, d.request_id),
        ),
        Inbound::Withdraw(w) => (
            AdminKind::Withdraw,
            (w.account, w.asset, w.amount, w.request_id),
        ),
        Inbound::BalanceQuery(q) => {
            return Some(AdminRequest::Query {
                account: q.account,
                asset: AssetId(q.asset),
                request_id: q.request_id,
            })
        }
        _ => return None,
    };
    Some(AdminRequest::Move {
        kind,
        account: m.0,
        asset: AssetId(m.1),
        amount: m.2,
        request_id: m.3,
    })
}

impl<L: CommandLog> Core<L> {
    /// Answers one admin request from session `from` of `account`.
    pub(super) fn handle_admin(
        &mut self,
        from: SessionKey,
        account: AccountId,
        req: &AdminRequest,
        ts: peregrine_types::Timestamp,
        out: &mut impl Outbox,
    ) -> std::io::Result<()> {
        let (target, asset, request_id, write) = match *req {
            AdminRequest::Move {
                account,
                asset,
                request_id,
                ..
            } => (account, asset, request_id, true),
            AdminRequest::Query {
                account,
                asset,
                request_id,
            } => (account, asset, request_id, false),
        };
        let checked = match &self.admin {
            None => Err(AdminReason::BalancesOff),
            Some(p) => p.check(account, target, asset, write),
        };
        let result = match (checked, *req) {
            (Err(reason), _) => Err(reason),
            (Ok(()), AdminRequest::Query { .. }) => Ok(self
                .ledger()
                .map_or_else(Balance::default, |l| l.balance(target, asset))),
            (Ok(()), AdminRequest::Move { kind, amount, .. }) => {
                let cmd = AdminCommand {
                    ts,
                    kind,
                    account: target,
                    asset,
                    amount,
                    request_id,
                };
                // Sequenced: part of the named account's stream (and to the requester).
                let (_, msg) = self.execute_admin(&cmd)?;
                out.report(target, msg, from);
                return Ok(());
            }
        };
        out.answer(
            from,
            admin_answer(self.engine_seq, ts, request_id, target, asset, result),
        );
        Ok(())
    }

    /// Sequences, journals and applies one admin command; the balance after it, or
    /// why the ledger refused it (a refusal is journaled too: replay refuses it the
    /// same way).
    pub fn execute_admin(
        &mut self,
        cmd: &AdminCommand,
    ) -> std::io::Result<(Result<Balance, AdminReason>, Outbound)> {
        self.engine_seq += 1;
        // Relaxed: a display value for the session layer; orders nothing else.
        self.shared_seq.store(self.engine_seq, Ordering::Relaxed);
        self.log.append_admin(self.engine_seq, cmd)?;
        let result = self.apply_admin(cmd);
        // The answer is part of the named account's stream, stamped live exactly as a
        // replay stamps it, before a snapshot of this point saves the counters.
        let msg = admin_answer(
            self.engine_seq,
            cmd.ts,
            cmd.request_id,
            cmd.account,
            cmd.asset,
            result,
        );
        let msg = self.stamp(cmd.account, msg);
        if let Some(s) = self.snapshots.as_mut() {
            s.after_command(
                self.engine_seq,
                Record::Admin(*cmd),
                &self.engine,
                cmd.ts,
                &self.report_next,
            );
        }
        Ok((result, msg))
    }

    fn apply_admin(&mut self, cmd: &AdminCommand) -> Result<Balance, AdminReason> {
        match self.engine.pre_match().ledger_mut() {
            Some(l) => apply_admin(l, cmd),
            None => Err(AdminReason::BalancesOff),
        }
    }

    /// Re-applies journaled admin command `seq` on start (no journal write); its
    /// answer is renumbered into the account's stream as it was live.
    pub fn replay_admin(&mut self, seq: u64, cmd: &AdminCommand) {
        self.engine_seq = seq;
        // Relaxed: a display value for the session layer; orders nothing else.
        self.shared_seq.store(seq, Ordering::Relaxed);
        self.clock.not_before(cmd.ts);
        let result = self.apply_admin(cmd);
        let msg = admin_answer(seq, cmd.ts, cmd.request_id, cmd.account, cmd.asset, result);
        self.stamp(cmd.account, msg);
    }

    /// Funds a fresh venue (`[[balances.initial]]`): on an empty sequence (nothing
    /// journaled yet) applies each deposit as a journaled admin command and commits.
    /// Returns how many were applied (0 when the venue already has history).
    pub fn fund_initial(
        &mut self,
        initial: &[(AccountId, AssetId, i64)],
    ) -> std::io::Result<usize> {
        if self.engine_seq != 0 || self.ledger().is_none() {
            return Ok(0);
        }
        for &(account, asset, amount) in initial {
            let cmd = AdminCommand {
                ts: self.clock.now(),
                kind: AdminKind::Deposit,
                account,
                asset,
                amount,
                request_id: 0,
            };
            if let (Err(reason), _) = self.execute_admin(&cmd)? {
                log::warn!(
                    "balances.initial: deposit to account {account} refused: {}",
                    reason.as_str()
                );
            }
        }
        self.end_batch()?;
        Ok(initial.len())
    }

    /// Restores the ledger part of a snapshot and verifies it.
    pub(super) fn restore_ledger(&mut self, snap: &EngineSnapshot) -> Result<(), String> {
        match (self.engine.pre_match().ledger_mut(), &snap.ledger) {
            (Some(l), Some(state)) => {
                l.restore(state);
                l.check().map_err(|e| format!("snapshot balances: {e}"))
            }
            (None, None) => Ok(()),
            (Some(_), None) => Err("the snapshot has no balances but balances are enabled \
                 (turn balances on only with a fresh journal)"
                .into()),
            (None, Some(_)) => Err("the snapshot has balances but balances are disabled \
                 (turn balances off only with a fresh journal)"
                .into()),
        }
    }
}
