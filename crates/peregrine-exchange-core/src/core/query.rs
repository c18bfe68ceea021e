//! Order status and open orders: answered from the books, not sequenced, not
//! journaled, sent to the requesting session only ([`crate::queries`]).

use peregrine_types::{AccountId, Timestamp};
use peregrine_wire::v2::queries::{OpenOrdersRequest, OrderStatusRequest};

use super::Core;
use crate::journal::CommandLog;
use crate::queries::{self, AsOf};
use crate::seams::{Outbox, Scope, SessionKey};

impl<L: CommandLog> Core<L> {
    fn as_of(&self, ts: Timestamp) -> AsOf {
        AsOf {
            engine_seq: self.engine_seq,
            engine_time: ts,
        }
    }

    /// The last report sequence number of `account` (0: none yet).
    fn last_report(&self, account: AccountId) -> u64 {
        self.next_report_seq(account) - 1
    }

    pub(super) fn answer_status(
        &mut self,
        from: SessionKey,
        scope: Scope,
        req: &OrderStatusRequest,
        ts: Timestamp,
        out: &mut impl Outbox,
    ) {
        let at = self.as_of(ts);
        let status = queries::order_status(
            &self.engine,
            scope,
            req,
            at,
            |a| self.last_report(a),
            |id| self.owners.get(&id.0).is_some_and(|o| o.traded),
        );
        out.answer(from, status.into());
    }

    pub(super) fn answer_open_orders(
        &mut self,
        from: SessionKey,
        scope: Scope,
        req: &OpenOrdersRequest,
        ts: Timestamp,
        out: &mut impl Outbox,
    ) {
        let at = self.as_of(ts);
        // What the list reflects: the account's last report, or for every account
        // the engine sequence number.
        let as_of = match (scope, req.account) {
            (Scope::Account(a), _) => self.last_report(a),
            (Scope::All, Some(a)) => self.last_report(a),
            (Scope::All, None) => self.engine_seq,
        };
        let end = queries::open_orders(&self.engine, scope, req, at, as_of, |o| {
            out.answer(from, o.into())
        });
        out.answer(from, end.into());
    }
}
