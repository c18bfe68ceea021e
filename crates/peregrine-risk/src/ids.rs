//! Small ids shared by the engine's modules (kept apart so that `position` and
//! `risk` do not depend on each other for them).

use serde::{Deserialize, Serialize};

/// A strategy, dense small ids (index in the engine config).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
pub struct StrategyId(pub u16);
