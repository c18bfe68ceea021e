//! Counters of a transport (plain fields of the owning thread).

/// What a transport did since it started.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TransportStats {
    /// Frames queued for sending.
    pub frames_queued: u64,
    /// Frames received and decoded.
    pub frames_received: u64,
    /// Bytes written to peers.
    pub bytes_sent: u64,
    /// Bytes read from peers.
    pub bytes_received: u64,
    /// Messages dropped: peer unknown, disconnected, or its buffer full.
    pub dropped: u64,
    /// Connects started.
    pub connect_attempts: u64,
    /// Connects completed.
    pub connects: u64,
    /// Outbound connections lost.
    pub disconnects: u64,
    /// Inbound connections refused (limit, or no hello in time).
    pub refused: u64,
    /// Inbound connections closed for bad input.
    pub bad_input: u64,
    /// Why the last one was closed.
    pub last_bad_input: Option<String>,
}
