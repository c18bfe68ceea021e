//! The published state every thread writes into and the HTTP thread reads: the
//! matching stage's [`StatsSlot`] and depth slot (from the core), the session
//! layer's counters, and the instruments' labels.

use std::sync::{Arc, Mutex, PoisonError, TryLockError};

use peregrine_exchange_core::telemetry::{CoreStats, DepthSlot, StatsSlot};
use peregrine_types::{InstrumentId, InstrumentSpec};

use crate::metrics::ack_stats::AckStats;
use crate::metrics::sessions::SessionStats;

/// Labels of one instrument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct InstrumentLabel {
    /// Id.
    pub id: InstrumentId,
    /// Symbol (the `instrument` label).
    pub symbol: String,
    /// Decimals of prices.
    pub price_decimals: u32,
    /// Decimals of quantities.
    pub qty_decimals: u32,
}

/// The published state every thread writes into and the HTTP thread reads.
#[derive(Debug)]
pub(crate) struct MetricsHub {
    pub(crate) instruments: Vec<InstrumentLabel>,
    core: Arc<StatsSlot>,
    sessions: Mutex<SessionStats>,
    ack: Mutex<Option<AckStats>>,
    pub(crate) depth: Option<Arc<DepthSlot>>,
}

impl MetricsHub {
    /// A hub for these instruments; `depth` is the slot of the core's depth
    /// publisher, if any.
    pub(crate) fn new(instruments: &[InstrumentSpec], depth: Option<Arc<DepthSlot>>) -> Self {
        let instruments: Vec<InstrumentLabel> = instruments
            .iter()
            .map(|s| InstrumentLabel {
                id: s.id,
                symbol: s.symbol.clone(),
                price_decimals: s.price_decimals,
                qty_decimals: s.qty_decimals,
            })
            .collect();
        let core = Arc::new(StatsSlot::new(instruments.len()));
        MetricsHub {
            instruments,
            core,
            sessions: Mutex::new(SessionStats::default()),
            ack: Mutex::new(None),
            depth,
        }
    }

    /// The slot the matching stage publishes its counters to.
    pub(crate) fn core_slot(&self) -> Arc<StatsSlot> {
        Arc::clone(&self.core)
    }

    /// Copies the session layer's counters in, unless a reader holds the lock.
    pub(crate) fn publish_sessions(&self, stats: &SessionStats) -> bool {
        match self.sessions.try_lock() {
            Ok(mut g) => *g = *stats,
            Err(TryLockError::Poisoned(p)) => *p.into_inner() = *stats,
            Err(TryLockError::WouldBlock) => return false,
        }
        true
    }

    /// Copies the loop's order→ack stage histograms in, unless a reader holds the
    /// lock.
    pub(crate) fn publish_ack(&self, stats: &AckStats) -> bool {
        match self.ack.try_lock() {
            Ok(mut g) => *g = Some(*stats),
            Err(TryLockError::Poisoned(p)) => *p.into_inner() = Some(*stats),
            Err(TryLockError::WouldBlock) => return false,
        }
        true
    }

    /// The last published order→ack stage histograms (`None`: not measured, e.g.
    /// the split topology).
    pub(crate) fn read_ack(&self) -> Option<AckStats> {
        *self.ack.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Copies of the last published counters.
    pub(crate) fn read(&self) -> (CoreStats, SessionStats) {
        let core = self.core.read();
        let sessions = *self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        (core, sessions)
    }

    /// The labels of an instrument, if the hub knows it.
    pub(crate) fn symbol(&self, id: InstrumentId) -> Option<&InstrumentLabel> {
        self.instruments.iter().find(|i| i.id == id)
    }
}
