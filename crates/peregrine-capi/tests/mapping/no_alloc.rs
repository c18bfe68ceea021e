//! The shipped book allocates nothing per message, through the id table's growth
//! included: from an empty book, a stream shaped like the challenge's (client ids
//! shuffled over a wide range, a moving mid, cancels, modifies, IOCs) runs one
//! message per call and then as batches with the counting allocator watching.

use peregrine_capi::{challenge_spec, Adapter, CapiBook, Msg, Report, ReportSink};
use peregrine_testkit::allocations_during;

use super::util::*;

#[derive(Default)]
struct Count(u64);

impl ReportSink for Count {
    fn push(&mut self, _report: &Report) {
        self.0 += 1;
    }
}

enum Owned {
    New(peregrine_capi::NewOrderMsg),
    Cancel(peregrine_capi::CancelMsg),
    Modify(peregrine_capi::ModifyMsg),
}

impl Owned {
    fn msg(&self) -> Msg<'_> {
        match self {
            Owned::New(m) => Msg::New(m),
            Owned::Cancel(m) => Msg::Cancel(m),
            Owned::Modify(m) => Msg::Modify(m),
        }
    }
}

/// `n` messages; new orders rest far enough from the mid that the book grows to
/// thousands of live orders (past the id table's first sizes).
fn stream(seed: u64, n: usize) -> Vec<Owned> {
    let mut x = seed;
    let mut rnd = move |m: u64| {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (x >> 33) % m
    };
    let mut out = Vec::with_capacity(n);
    let mut sent: Vec<(u64, u8, i64)> = Vec::with_capacity(n);
    let mut mid = 33_504i64;
    for i in 0..n as u64 {
        let seq = i + 1;
        mid += rnd(3) as i64 - 1;
        match rnd(10) {
            0..=5 => {
                // Shuffled, sparse: a bijection of the message number.
                let id = (i + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 8;
                let side = rnd(2) as u8;
                let off = rnd(200) as i64 - 20;
                let price = if side == BUY { mid - off } else { mid + off };
                let qty = 1 + rnd(100) as u32;
                if rnd(7) == 0 {
                    out.push(Owned::New(ioc(id, seq, side, price, qty)));
                } else {
                    out.push(Owned::New(new(id, seq, side, price, qty)));
                    sent.push((id, side, price));
                }
            }
            6..=8 if !sent.is_empty() => {
                let (id, _, _) = sent[rnd(sent.len() as u64) as usize];
                out.push(Owned::Cancel(cancel(id, seq)));
            }
            _ if !sent.is_empty() => {
                let (id, side, price) = sent[rnd(sent.len() as u64) as usize];
                let step = if side == BUY { 1 } else { -1 };
                out.push(Owned::Modify(modify(id, seq, side, price + step, 50)));
            }
            _ => {}
        }
    }
    out
}

#[test]
fn the_shipped_book_allocates_nothing_per_message_while_its_id_table_grows() {
    let msgs = stream(7, 60_000);
    let mut adapter = Adapter::with_book(CapiBook::new(challenge_spec(), 1 << 15));
    let mut reports = Count::default();
    let half = msgs.len() / 2;
    let mut peak = 0;
    let n = allocations_during(|| {
        for m in &msgs[..half] {
            adapter.on_msg(m.msg(), &mut reports);
            peak = peak.max(adapter.book().len());
        }
        adapter.on_batch(half, |i| Some(msgs[half + i].msg()), &mut reports);
    });
    assert!(
        peak > 4_096,
        "the book grew past the id table's first sizes (peak {peak} live orders)"
    );
    assert!(
        reports.0 > 60_000,
        "the stream did real work ({} reports)",
        reports.0
    );
    assert_eq!(n, 0, "allocations on the message path");
}
