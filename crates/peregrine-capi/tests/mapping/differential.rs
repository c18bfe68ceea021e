//! Random challenge message streams through three books that must agree report for
//! report and query for query after every message: the shipped fast book, the
//! reference book (both through the adapter), and a model written from the
//! challenge's header alone.

use peregrine_capi::{challenge_spec, Adapter, CapiBook, Matcher, Report};
use proptest::prelude::*;

use super::util::*;

#[derive(Debug, Clone)]
enum Msg {
    New {
        side: u8,
        price: i64,
        qty: u32,
        ioc: bool,
    },
    Cancel {
        pick: u64,
    },
    Modify {
        pick: u64,
        side_flip: bool,
        price: i64,
        qty: u32,
    },
}

fn msg() -> impl Strategy<Value = Msg> {
    // Prices over a narrow range so that orders cross, rest at shared levels and
    // modifies reprice through the spread.
    prop_oneof![
        5 => (0u8..2, 95i64..106, 1u32..20, prop::bool::weighted(0.2))
            .prop_map(|(side, price, qty, ioc)| Msg::New { side, price, qty, ioc }),
        3 => any::<u64>().prop_map(|pick| Msg::Cancel { pick }),
        3 => (any::<u64>(), prop::bool::weighted(0.05), 95i64..106, 1u32..20)
            .prop_map(|(pick, side_flip, price, qty)| Msg::Modify { pick, side_flip, price, qty }),
    ]
}

/// Compares the three after one message.
fn agree<B: Matcher, C: Matcher>(
    fast: &Adapter<B>,
    reference: &Adapter<C>,
    model: &Model,
    step: usize,
) -> Result<(), TestCaseError> {
    for (name, q) in [
        (
            "best bid",
            [fast.best_bid(), reference.best_bid(), model.best_bid()],
        ),
        (
            "best ask",
            [fast.best_ask(), reference.best_ask(), model.best_ask()],
        ),
    ] {
        prop_assert!(q[0] == q[1] && q[1] == q[2], "step {step}: {name} {q:?}");
    }
    for price in 95..106 {
        for side in [BUY, SELL] {
            let d = [
                fast.depth_at(price, side),
                reference.depth_at(price, side),
                model.depth_at(price, side),
            ];
            prop_assert!(
                d[0] == d[1] && d[1] == d[2],
                "step {step}: depth {price}/{side} {d:?}"
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
    #[test]
    fn prop_fast_book_reference_book_and_model_agree(msgs in prop::collection::vec(msg(), 1..250)) {
        let book = CapiBook::new(challenge_spec(), 512);
        let mut fast = Adapter::with_book(book);
        let mut reference = Adapter::reference(512);
        let mut model = Model::default();
        let (mut a, mut b, mut c): (Vec<Report>, Vec<Report>, Vec<Report>) = Default::default();
        let mut next_id = 1u64;
        // Ids of orders sent so far (live or not): cancels and modifies pick among
        // them, or one never issued, so that stale and unknown ids are frequent.
        for (step, m) in msgs.iter().enumerate() {
            let seq = step as u64 + 1;
            let pick = |p: u64| p % (next_id + 1) + 1;
            // The wire id of the n-th order: sparse and unordered, as clients choose
            // them (a bijection of u64, so distinct orders keep distinct ids).
            let wire = |n: u64| n.wrapping_mul(0x9E37_79B9_7F4A_7C15);
            match *m {
                Msg::New { side, price, qty, ioc: i } => {
                    let id = wire(next_id);
                    let o = if i { ioc(id, seq, side, price, qty) } else { new(id, seq, side, price, qty) };
                    next_id += 1;
                    fast.on_new(&o, &mut a);
                    reference.on_new(&o, &mut b);
                    model.on_new(&o, &mut c);
                }
                Msg::Cancel { pick: p } => {
                    let o = cancel(wire(pick(p)), seq);
                    fast.on_cancel(&o, &mut a);
                    reference.on_cancel(&o, &mut b);
                    model.on_cancel(&o, &mut c);
                }
                Msg::Modify { pick: p, side_flip, price, qty } => {
                    // The side of the order, as the workload sends it (rarely the
                    // other one: the reinsert follows the message).
                    let n = pick(p);
                    let side = u8::from((n % 2 == 0) != side_flip);
                    let o = modify(wire(n), seq, side, price, qty);
                    fast.on_modify(&o, &mut a);
                    reference.on_modify(&o, &mut b);
                    model.on_modify(&o, &mut c);
                }
            }
            prop_assert_eq!(&a, &b, "step {}: fast vs reference book", step);
            prop_assert_eq!(&a, &c, "step {}: fast book vs model", step);
            agree(&fast, &reference, &model, step)?;
        }
        prop_assert_eq!(fast.stats().refused_new, 0);
    }
}
