//! Every queue the benches compare, behind one static interface.
//!
//! [`Family`] is implemented by a zero-sized marker per queue; the pipeline and the
//! hand-off bench are generic over it, so each candidate is monomorphised and the hot
//! path has no dynamic dispatch. `channel(producers, capacity)` returns one sender per
//! producer (clones, or separate rings for the per-producer SPSC muxes) and the single
//! receiver. The baselines (std, crossbeam, rtrb) are used as their crates ship them.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc};

use peregrine_queue::shm::{Pod, ShmMpsc, ShmMpscConsumer, ShmMpscProducer};
use peregrine_queue::shm::{ShmSpsc, ShmSpscConsumer, ShmSpscProducer};
use peregrine_queue::{spsc, Mux};

/// A queue candidate.
pub trait Family<T>: 'static {
    /// The sending handle (one per producer).
    type Tx: Send + 'static;
    /// The receiving handle.
    type Rx: Send + 'static;
    /// Short name for tables.
    const NAME: &'static str;
    /// Creates the queue with `producers` senders and room for `capacity` values (per
    /// producer ring for the muxes; ignored by the unbounded std channel).
    fn channel(producers: usize, capacity: usize) -> anyhow::Result<(Vec<Self::Tx>, Self::Rx)>;
    /// Non-blocking send; hands the value back when full.
    fn send(tx: &mut Self::Tx, value: T) -> Result<(), T>;
    /// Non-blocking receive.
    fn recv(rx: &mut Self::Rx) -> Option<T>;
}

/// `std::sync::mpsc::channel` (unbounded).
#[derive(Debug)]
pub struct StdMpsc;
impl<T: Send + 'static> Family<T> for StdMpsc {
    type Tx = mpsc::Sender<T>;
    type Rx = mpsc::Receiver<T>;
    const NAME: &'static str = "std-mpsc";
    fn channel(producers: usize, _capacity: usize) -> anyhow::Result<(Vec<Self::Tx>, Self::Rx)> {
        let (tx, rx) = mpsc::channel();
        Ok((vec![tx; producers], rx))
    }
    #[inline]
    fn send(tx: &mut Self::Tx, value: T) -> Result<(), T> {
        tx.send(value).map_err(|e| e.0)
    }
    #[inline]
    fn recv(rx: &mut Self::Rx) -> Option<T> {
        rx.try_recv().ok()
    }
}

/// `crossbeam_channel::bounded`.
#[derive(Debug)]
pub struct CrossbeamChannel;
impl<T: Send + 'static> Family<T> for CrossbeamChannel {
    type Tx = crossbeam_channel::Sender<T>;
    type Rx = crossbeam_channel::Receiver<T>;
    const NAME: &'static str = "crossbeam-channel";
    fn channel(producers: usize, capacity: usize) -> anyhow::Result<(Vec<Self::Tx>, Self::Rx)> {
        let (tx, rx) = crossbeam_channel::bounded(capacity);
        Ok((vec![tx; producers], rx))
    }
    #[inline]
    fn send(tx: &mut Self::Tx, value: T) -> Result<(), T> {
        tx.try_send(value).map_err(|e| e.into_inner())
    }
    #[inline]
    fn recv(rx: &mut Self::Rx) -> Option<T> {
        rx.try_recv().ok()
    }
}

/// `crossbeam_queue::ArrayQueue` shared through an `Arc`.
#[derive(Debug)]
pub struct ArrayQ;
impl<T: Send + 'static> Family<T> for ArrayQ {
    type Tx = Arc<crossbeam_queue::ArrayQueue<T>>;
    type Rx = Arc<crossbeam_queue::ArrayQueue<T>>;
    const NAME: &'static str = "array-queue";
    fn channel(producers: usize, capacity: usize) -> anyhow::Result<(Vec<Self::Tx>, Self::Rx)> {
        let queue = Arc::new(crossbeam_queue::ArrayQueue::new(capacity));
        Ok((vec![Arc::clone(&queue); producers], queue))
    }
    #[inline]
    fn send(tx: &mut Self::Tx, value: T) -> Result<(), T> {
        tx.push(value)
    }
    #[inline]
    fn recv(rx: &mut Self::Rx) -> Option<T> {
        rx.pop()
    }
}

/// One `peregrine_queue::spsc` ring per producer, drained by a [`Mux`].
#[derive(Debug)]
pub struct SpscMux;
impl<T: Send + 'static> Family<T> for SpscMux {
    type Tx = spsc::Producer<T>;
    type Rx = Mux<T>;
    const NAME: &'static str = "spsc-mux";
    fn channel(producers: usize, capacity: usize) -> anyhow::Result<(Vec<Self::Tx>, Self::Rx)> {
        Ok(peregrine_queue::mux::mux(producers, capacity))
    }
    #[inline]
    fn send(tx: &mut Self::Tx, value: T) -> Result<(), T> {
        tx.try_push(value).map_err(|e| e.into_inner())
    }
    #[inline]
    fn recv(rx: &mut Self::Rx) -> Option<T> {
        rx.try_pop()
    }
}

/// One plain `peregrine_queue::spsc` ring (1 → 1 only).
#[derive(Debug)]
pub struct PeregrineSpsc;
impl<T: Send + 'static> Family<T> for PeregrineSpsc {
    type Tx = spsc::Producer<T>;
    type Rx = spsc::Consumer<T>;
    const NAME: &'static str = "peregrine-spsc";
    fn channel(producers: usize, capacity: usize) -> anyhow::Result<(Vec<Self::Tx>, Self::Rx)> {
        anyhow::ensure!(producers == 1, "an SPSC ring has one producer");
        let (tx, rx) = spsc::ring(capacity);
        Ok((vec![tx], rx))
    }
    #[inline]
    fn send(tx: &mut Self::Tx, value: T) -> Result<(), T> {
        tx.try_push(value).map_err(|e| e.into_inner())
    }
    #[inline]
    fn recv(rx: &mut Self::Rx) -> Option<T> {
        rx.try_pop()
    }
}

/// One `rtrb` ring per producer, scanned round-robin like [`Mux`].
#[derive(Debug)]
pub struct RtrbMux;

/// The consumer side of [`RtrbMux`].
#[derive(Debug)]
pub struct RtrbRx<T> {
    rings: Vec<rtrb::Consumer<T>>,
    next: usize,
}

impl<T: Send + 'static> Family<T> for RtrbMux {
    type Tx = rtrb::Producer<T>;
    type Rx = RtrbRx<T>;
    const NAME: &'static str = "rtrb-mux";
    fn channel(producers: usize, capacity: usize) -> anyhow::Result<(Vec<Self::Tx>, Self::Rx)> {
        let (txs, rings) = (0..producers)
            .map(|_| rtrb::RingBuffer::new(capacity))
            .unzip();
        Ok((txs, RtrbRx { rings, next: 0 }))
    }
    #[inline]
    fn send(tx: &mut Self::Tx, value: T) -> Result<(), T> {
        tx.push(value).map_err(|rtrb::PushError::Full(v)| v)
    }
    #[inline]
    fn recv(rx: &mut Self::Rx) -> Option<T> {
        let n = rx.rings.len();
        for step in 0..n {
            let index = (rx.next + step) % n;
            if let Ok(value) = rx.rings[index].pop() {
                rx.next = (index + 1) % n;
                return Some(value);
            }
        }
        None
    }
}

/// One plain `rtrb` ring (1 → 1 only).
#[derive(Debug)]
pub struct RtrbSpsc;
impl<T: Send + 'static> Family<T> for RtrbSpsc {
    type Tx = rtrb::Producer<T>;
    type Rx = rtrb::Consumer<T>;
    const NAME: &'static str = "rtrb";
    fn channel(producers: usize, capacity: usize) -> anyhow::Result<(Vec<Self::Tx>, Self::Rx)> {
        anyhow::ensure!(producers == 1, "an SPSC ring has one producer");
        let (tx, rx) = rtrb::RingBuffer::new(capacity);
        Ok((vec![tx], rx))
    }
    #[inline]
    fn send(tx: &mut Self::Tx, value: T) -> Result<(), T> {
        tx.push(value).map_err(|rtrb::PushError::Full(v)| v)
    }
    #[inline]
    fn recv(rx: &mut Self::Rx) -> Option<T> {
        rx.pop().ok()
    }
}

/// Where ring files go: `/dev/shm` when it exists, else the temp dir.
fn shm_path(tag: &str) -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    // Relaxed: only uniqueness matters.
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let dir = PathBuf::from("/dev/shm");
    let dir = if dir.is_dir() {
        dir
    } else {
        std::env::temp_dir()
    };
    dir.join(format!("peregrine-bench-{tag}-{}-{n}", std::process::id()))
}

/// Removes a ring file when dropped.
#[derive(Debug)]
pub struct FileGuard(PathBuf);
impl Drop for FileGuard {
    fn drop(&mut self) {
        // The file may already be gone; nothing useful to do about an error here.
        let _ = std::fs::remove_file(&self.0);
    }
}

/// `peregrine_queue::shm::ShmMpsc` mapped in this process.
#[derive(Debug)]
pub struct ShmMpscRing;
impl<T: Pod> Family<T> for ShmMpscRing {
    type Tx = ShmMpscProducer<T>;
    type Rx = (ShmMpscConsumer<T>, FileGuard);
    const NAME: &'static str = "shm-mpsc";
    fn channel(producers: usize, capacity: usize) -> anyhow::Result<(Vec<Self::Tx>, Self::Rx)> {
        let path = shm_path("mpsc");
        let ring = ShmMpsc::<T>::create(&path, capacity.next_power_of_two())?;
        let guard = FileGuard(path);
        let txs = (0..producers).map(|_| ring.producer()).collect();
        Ok((txs, (ring.consumer()?, guard)))
    }
    #[inline]
    fn send(tx: &mut Self::Tx, value: T) -> Result<(), T> {
        tx.try_push(value).map_err(|e| e.into_inner())
    }
    #[inline]
    fn recv(rx: &mut Self::Rx) -> Option<T> {
        rx.0.try_pop()
    }
}

/// `peregrine_queue::shm::ShmSpsc` mapped in this process (1 → 1 only).
#[derive(Debug)]
pub struct ShmSpscRing;
impl<T: Pod> Family<T> for ShmSpscRing {
    type Tx = ShmSpscProducer<T>;
    type Rx = (ShmSpscConsumer<T>, FileGuard);
    const NAME: &'static str = "shm-spsc";
    fn channel(producers: usize, capacity: usize) -> anyhow::Result<(Vec<Self::Tx>, Self::Rx)> {
        anyhow::ensure!(producers == 1, "an SPSC ring has one producer");
        let path = shm_path("spsc");
        let ring = ShmSpsc::<T>::create(&path, capacity.next_power_of_two())?;
        let guard = FileGuard(path);
        Ok((vec![ring.producer()?], (ring.consumer()?, guard)))
    }
    #[inline]
    fn send(tx: &mut Self::Tx, value: T) -> Result<(), T> {
        tx.try_push(value).map_err(|e| e.into_inner())
    }
    #[inline]
    fn recv(rx: &mut Self::Rx) -> Option<T> {
        rx.0.try_pop()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip<F: Family<u64>>() {
        let (mut txs, mut rx) = F::channel(2, 4).unwrap();
        let mut sent = 0;
        for tx in txs.iter_mut() {
            F::send(tx, 7).unwrap();
            sent += 1;
        }
        let got: Vec<u64> = std::iter::from_fn(|| F::recv(&mut rx)).collect();
        assert_eq!(got, vec![7; sent], "{}", F::NAME);
    }

    #[test]
    fn every_mpsc_family_delivers() {
        round_trip::<StdMpsc>();
        round_trip::<CrossbeamChannel>();
        round_trip::<ArrayQ>();
        round_trip::<SpscMux>();
        round_trip::<RtrbMux>();
        round_trip::<ShmMpscRing>();
    }

    #[test]
    fn spsc_families_refuse_two_producers() {
        assert!(<PeregrineSpsc as Family<u64>>::channel(2, 4).is_err());
        assert!(<ShmSpscRing as Family<u64>>::channel(2, 4).is_err());
        let (mut txs, mut rx) = <ShmSpscRing as Family<u64>>::channel(1, 4).unwrap();
        <ShmSpscRing as Family<u64>>::send(&mut txs[0], 3).unwrap();
        assert_eq!(<ShmSpscRing as Family<u64>>::recv(&mut rx), Some(3));
    }
}
