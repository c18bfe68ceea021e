//! Per-account, per-asset balances.

/// An asset (currency or coin), dense small ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct AssetId(pub u32);

/// One account's holding of one asset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Balance {
    /// Free to use for new orders or withdrawal.
    pub available: i128,
    /// Held by open orders.
    pub reserved: i128,
}

impl Balance {
    /// available + reserved.
    pub fn total(&self) -> i128 {
        self.available + self.reserved
    }
}
