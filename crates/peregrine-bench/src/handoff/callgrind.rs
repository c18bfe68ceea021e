//! Instruction counts per push and per pop, for `valgrind --tool=callgrind`.
//!
//! One thread fills a queue with `ops` values and then drains it, twice: a warm-up
//! round through `warm_round` and a measured round through `measured_push` and
//! `measured_pop`. Run under callgrind with `--collect-atstart=no
//! --toggle-collect='*measured_push*'` (or `*measured_pop*`), the collected instruction
//! count divided by `ops` is the cost of one operation plus the loop around it (a few
//! instructions). Uncontended and single-threaded: this counts the code path, not cache
//! misses or contention. `scripts/callgrind-queues.sh` runs it for every candidate.

use std::hint::black_box;

use crate::dispatch::queues::Family;

#[inline(never)]
fn measured_push<F: Family<u64>>(tx: &mut F::Tx, ops: u64) -> u64 {
    let mut refused = 0;
    for i in 0..ops {
        refused += u64::from(F::send(tx, black_box(i)).is_err());
    }
    refused
}

#[inline(never)]
fn measured_pop<F: Family<u64>>(rx: &mut F::Rx, ops: u64) -> u64 {
    let mut sum = 0u64;
    for _ in 0..ops {
        sum = sum.wrapping_add(F::recv(rx).unwrap_or(u64::MAX));
    }
    sum
}

#[inline(never)]
fn warm_round<F: Family<u64>>(tx: &mut F::Tx, rx: &mut F::Rx, ops: u64) {
    for i in 0..ops {
        black_box(F::send(tx, i).is_ok());
    }
    for _ in 0..ops {
        black_box(F::recv(rx));
    }
}

/// Runs the warm-up and the measured round; returns (refused pushes, checksum).
pub fn run<F: Family<u64>>(ops: u64) -> anyhow::Result<(u64, u64)> {
    let capacity = usize::try_from(ops)?.next_power_of_two();
    let (mut txs, mut rx) = F::channel(1, capacity)?;
    let mut tx = txs.pop().ok_or_else(|| anyhow::anyhow!("no sender"))?;
    warm_round::<F>(&mut tx, &mut rx, ops);
    let refused = measured_push::<F>(&mut tx, ops);
    let sum = measured_pop::<F>(&mut rx, ops);
    Ok((refused, black_box(sum)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dispatch::queues::{RtrbSpsc, StdMpsc};

    #[test]
    fn every_push_accepted_and_popped() {
        let expected = (0..1000u64).sum::<u64>();
        assert_eq!(run::<RtrbSpsc>(1000).unwrap(), (0, expected));
        assert_eq!(run::<StdMpsc>(1000).unwrap(), (0, expected));
    }
}
