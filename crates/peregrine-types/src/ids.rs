//! Identifiers. Each is a transparent newtype so the compiler keeps them apart.

use serde::{Deserialize, Serialize};

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident, $inner:ty) => {
        $(#[$doc])*
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
        )]
        #[repr(transparent)]
        pub struct $name(pub $inner);

        impl $name {
            /// The raw value.
            #[inline]
            pub const fn get(self) -> $inner {
                self.0
            }
        }

        impl core::fmt::Display for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                write!(f, "{}", self.0)
            }
        }
    };
}

id_type!(
    /// A tradable instrument. Dense small integers: engines index tables by them.
    InstrumentId, u32
);
id_type!(
    /// A trading account; self-trade prevention and ownership checks key on it.
    AccountId, u32
);
id_type!(
    /// Exchange order id, assigned by the matching engine, unique for the venue's life.
    OrderId, u64
);
id_type!(
    /// The client's own id for an order, echoed back on every report about it.
    ClientOrderId, u64
);
id_type!(
    /// Nanoseconds on the clock the caller injects. The matching core never reads a
    /// clock itself: time arrives with each command.
    Timestamp, u64
);

/// Wall-clock nanoseconds since the Unix epoch (`CLOCK_REALTIME`); 0 if the clock is
/// set before 1970. For timestamps that leave the machine (FIX `SendingTime`, report
/// times, ids unique across restarts); intervals use the monotonic clock in
/// `peregrine-queue`.
pub fn wall_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}
