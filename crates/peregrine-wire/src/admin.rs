//! Balance administration requests, client → exchange, for an exchange running with
//! balances: `Deposit`, `Withdraw`, `BalanceQuery` (declared in
//! `schema/protocol.xml`).
//!
//! `Deposit` and `Withdraw` are accepted only from sessions whose account the
//! exchange marks as admin; each is sequenced and journaled like an order and answered
//! with a [`Balance`](crate::v2::admin::Balance) (the account's balance after it) or an
//! [`AdminRejected`](crate::v2::admin::AdminRejected). `BalanceQuery` is answered with
//! a `Balance`: any session may ask about its own account, an admin session about any
//! account. Amounts are in the asset's smallest unit (for a quote asset, price unit ×
//! quantity unit), always positive.

include!(concat!(env!("OUT_DIR"), "/msg_admin.rs"));
