//! The binary Merkle tree over trade leaves, and inclusion proofs.

use crate::trade::TradeRecord;

/// Key of leaf hashes.
pub const LEAF_KEY: &[u8; 32] = b"peregrine commit v1 : trade leaf";
/// Key of inner-node hashes.
pub const NODE_KEY: &[u8; 32] = b"peregrine commit v1 : tree node.";

/// Hash of one trade leaf: `keyed_hash(LEAF_KEY, record)`.
pub fn leaf_hash(t: &TradeRecord) -> [u8; 32] {
    *blake3::keyed_hash(LEAF_KEY, &t.encode()).as_bytes()
}

/// Hash of an inner node: `keyed_hash(NODE_KEY, left | right)`, one 64-byte block.
pub fn node_hash(left: &[u8; 32], right: &[u8; 32]) -> [u8; 32] {
    let mut block = [0u8; 64];
    block[..32].copy_from_slice(left);
    block[32..].copy_from_slice(right);
    *blake3::keyed_hash(NODE_KEY, &block).as_bytes()
}

/// The root over `leaves` (odd levels duplicate their last hash; no leaves → zeros).
/// Works in place in `scratch`, which it resizes once to the number of leaves.
pub fn merkle_root(leaves: &[[u8; 32]], scratch: &mut Vec<[u8; 32]>) -> [u8; 32] {
    if leaves.is_empty() {
        return [0; 32];
    }
    scratch.clear();
    scratch.extend_from_slice(leaves);
    let mut n = scratch.len();
    while n > 1 {
        let mut w = 0;
        for r in (0..n).step_by(2) {
            let left = scratch[r];
            let right = if r + 1 < n { scratch[r + 1] } else { left };
            scratch[w] = node_hash(&left, &right);
            w += 1;
        }
        n = w;
    }
    scratch[0]
}

/// One step of a proof: the sibling hash and whether it sits on the left.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProofStep {
    /// The sibling's hash.
    pub sibling: [u8; 32],
    /// True when the sibling is the left input of the parent.
    pub sibling_is_left: bool,
}

/// An inclusion proof for the leaf at `index`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proof {
    /// Leaf position.
    pub index: usize,
    /// Steps from the leaf up to the root.
    pub steps: Vec<ProofStep>,
}

impl Proof {
    /// Builds the proof that `leaves[index]` is under `merkle_root(leaves)`.
    pub fn build(leaves: &[[u8; 32]], index: usize) -> Option<Proof> {
        if index >= leaves.len() {
            return None;
        }
        let mut level = leaves.to_vec();
        let mut i = index;
        let mut steps = Vec::new();
        while level.len() > 1 {
            let sibling = if i.is_multiple_of(2) {
                *level.get(i + 1).unwrap_or(&level[i])
            } else {
                level[i - 1]
            };
            steps.push(ProofStep {
                sibling,
                sibling_is_left: i % 2 == 1,
            });
            level = level
                .chunks(2)
                .map(|c| node_hash(&c[0], c.get(1).unwrap_or(&c[0])))
                .collect();
            i /= 2;
        }
        Some(Proof { index, steps })
    }
}

/// Checks that `leaf` is the leaf at `proof.index` of a window of `count` leaves (the
/// commitment's `trade_count`, which the verifier takes from the published commitment,
/// never from the prover) whose root is `root`.
///
/// The position is bound, not only the hashes: `index` must be below `count`, the
/// proof must have exactly the steps a tree of `count` leaves has, each sibling on the
/// side the index says, and where a level has an odd number of nodes the last one's
/// sibling must be itself (the duplicated hash). Without this, in a 3-trade window the
/// third trade also "proved" at a fourth position that does not exist, since odd
/// levels repeat their last hash (the CVE-2012-2459 class; issue 27, defect 6).
pub fn verify_proof(leaf: &[u8; 32], proof: &Proof, root: &[u8; 32], count: usize) -> bool {
    if proof.index >= count {
        return false;
    }
    let mut h = *leaf;
    let mut i = proof.index;
    let mut n = count;
    let mut steps = proof.steps.iter();
    while n > 1 {
        let Some(s) = steps.next() else {
            return false;
        };
        let left = i % 2 == 1;
        if s.sibling_is_left != left || (!left && i + 1 == n && s.sibling != h) {
            return false;
        }
        h = if left {
            node_hash(&s.sibling, &h)
        } else {
            node_hash(&h, &s.sibling)
        };
        i /= 2;
        n = n.div_ceil(2);
    }
    steps.next().is_none() && &h == root
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn leaves(n: usize) -> Vec<[u8; 32]> {
        (0..n as u8)
            .map(|i| *blake3::hash(&[i]).as_bytes())
            .collect()
    }

    #[test]
    fn small_trees_by_hand() {
        let l = leaves(3);
        let mut s = Vec::new();
        assert_eq!(merkle_root(&[], &mut s), [0; 32]);
        assert_eq!(merkle_root(&l[..1], &mut s), l[0]);
        let ab = node_hash(&l[0], &l[1]);
        assert_eq!(merkle_root(&l[..2], &mut s), ab);
        let cc = node_hash(&l[2], &l[2]);
        assert_eq!(merkle_root(&l, &mut s), node_hash(&ab, &cc));
    }

    fn tree_height(n: usize) -> usize {
        let (mut h, mut n) = (0, n);
        while n > 1 {
            n = n.div_ceil(2);
            h += 1;
        }
        h
    }

    /// Issue 27, defect 6: in a 3-trade window the third trade "proved" at a fourth
    /// position that does not exist (odd levels repeat their last hash).
    #[test]
    fn a_phantom_fourth_position_does_not_prove() {
        let l = leaves(3);
        let root = merkle_root(&l, &mut Vec::new());
        let real = Proof::build(&l, 2).unwrap();
        assert!(verify_proof(&l[2], &real, &root, 3));
        // The phantom: leaf 2 at index 3, its duplicate as a left sibling; the hashes
        // alone reach the root.
        let phantom = Proof {
            index: 3,
            steps: vec![
                ProofStep {
                    sibling: l[2],
                    sibling_is_left: true,
                },
                real.steps[1],
            ],
        };
        let hashes_only = phantom.steps.iter().fold(l[2], |h, s| {
            if s.sibling_is_left {
                node_hash(&s.sibling, &h)
            } else {
                node_hash(&h, &s.sibling)
            }
        });
        assert_eq!(
            hashes_only, root,
            "the phantom reaches the root by hashes alone"
        );
        assert!(!verify_proof(&l[2], &phantom, &root, 3));
        // Nor with the index kept and the side of a step flipped, nor with a step too
        // many or too few. (The count is the commitment's `trade_count`, never the
        // prover's: with 4 the phantom's tree would be a real one, of the same root.)
        let mut flipped = real.clone();
        flipped.steps[0].sibling_is_left = true;
        assert!(!verify_proof(&l[2], &flipped, &root, 3));
        let mut short = real.clone();
        short.steps.pop();
        assert!(!verify_proof(&l[2], &short, &root, 3));
        let mut long = real.clone();
        long.steps.push(real.steps[1]);
        assert!(!verify_proof(&l[2], &long, &root, 3));
        // A last node of an odd level whose "sibling" is not its duplicate.
        let mut other = real.clone();
        other.steps[0].sibling = l[0];
        assert!(!verify_proof(&l[2], &other, &root, 3));
    }

    proptest! {
        #[test]
        fn prop_every_leaf_proves_and_tampering_fails(n in 1usize..70, pick in any::<usize>(), flip in any::<u8>()) {
            let l = leaves(n);
            let root = merkle_root(&l, &mut Vec::new());
            let i = pick % n;
            let proof = Proof::build(&l, i).unwrap();
            prop_assert!(verify_proof(&l[i], &proof, &root, n));
            let mut bad = l[i];
            bad[(flip % 32) as usize] ^= 1;
            prop_assert!(!verify_proof(&bad, &proof, &root, n));
            if n > 1 {
                let other = (i + 1) % n;
                prop_assert!(l[other] == l[i] || !verify_proof(&l[other], &proof, &root, n));
            }
            // The same proof at any other position, or for another count, fails.
            let moved = Proof { index: (i + 1 + pick % 7) % (n + 3), ..proof.clone() };
            prop_assert!(moved.index == i || !verify_proof(&l[i], &moved, &root, n));
            // A count with another tree height fails.
            let m = n * 2 + 1;
            prop_assert!(tree_height(m) == tree_height(n) || !verify_proof(&l[i], &proof, &root, m));
        }
    }
}
