//! The sort of the short table's slots by their 16-byte sort keys: a
//! most-significant-byte-first radix sort, with the table's free slots as
//! its scratch space.
//!
//! Why not `sort_unstable`: with a million names per thread, a comparison
//! sort of the 32-byte slots streams the whole array through the cache at
//! each of its first dozen levels; a radix pass puts every slot in its
//! bucket by one byte, so a few passes leave buckets small enough to sort
//! within L1. The radix sorts on crates.io (`rdst`, `voracious_radix_sort`),
//! run single-threaded in its place (each thread sorts its own table),
//! were slower (docs/steps.md, *Tried and dropped*).

use super::Slot;
use crate::tuning::RADIX_SMALL;

/// Sorts `slots` by their key `(a, b)`, using `spare` (at least as long)
/// as scratch space. Keys must be distinct, as a table's are.
pub(super) fn sort(slots: &mut [Slot], spare: &mut [Slot]) {
    let Some(&first) = slots.first() else {
        return;
    };
    // The bytes all keys share are skipped in one pass, not a pass each.
    let (mut a, mut b) = (0, 0);
    for s in slots.iter() {
        a |= s.a ^ first.a;
        b |= s.b ^ first.b;
    }
    let shared = if a != 0 {
        a.leading_zeros() / 8
    } else {
        8 + b.leading_zeros() / 8
    };
    let n = slots.len();
    msd(slots, &mut spare[..n], shared as usize, false);
}

/// Byte `i` of the big-endian key `(a, b)`.
#[inline(always)]
fn byte(s: &Slot, i: usize) -> usize {
    let word = if i < 8 { s.a } else { s.b };
    (word >> (56 - 8 * (i % 8))) as usize & 0xff
}

/// Sorts `src`, whose keys agree on their bytes before `i`, leaving the
/// result in `dst` if `into_dst`, else in `src`; the other is scratch.
/// Each level scatters from one buffer into the other, so the buffers
/// swap roles level by level and only the small buckets' sorted slots
/// are copied when they end in the wrong one.
fn msd(src: &mut [Slot], dst: &mut [Slot], mut i: usize, into_dst: bool) {
    let mut counts = [0usize; 256];
    loop {
        if src.len() <= RADIX_SMALL || i == 16 {
            src.sort_unstable_by_key(|s| (s.a, s.b));
            if into_dst {
                dst.copy_from_slice(src);
            }
            return;
        }
        counts.fill(0);
        for s in src.iter() {
            counts[byte(s, i)] += 1;
        }
        // A byte all keys share (a common prefix) sorts nothing.
        if !counts.contains(&src.len()) {
            break;
        }
        i += 1;
    }
    let mut next = [0usize; 256];
    let mut start = 0;
    for (next, &count) in next.iter_mut().zip(&counts) {
        *next = start;
        start += count;
    }
    for s in src.iter() {
        let b = byte(s, i);
        dst[next[b]] = *s;
        next[b] += 1;
    }
    let mut start = 0;
    for &count in counts.iter().filter(|&&c| c > 0) {
        let bucket = start..start + count;
        msd(&mut dst[bucket.clone()], &mut src[bucket], i + 1, !into_dst);
        start += count;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytemuck::Zeroable;
    use proptest::prelude::*;

    /// A slot whose sort key is `key`'s 16 bytes, carrying `total` as its
    /// stats.
    fn slot(key: &[u8], total: i64) -> Slot {
        let word = |w: &[u8]| u64::from_be_bytes(w.try_into().unwrap());
        let mut s = Slot::zeroed();
        (s.a, s.b, s.total) = (word(&key[..8]), word(&key[8..16]), total);
        s
    }

    /// The slots' keys and stats as `sort` leaves them, and as
    /// `sort_unstable` does.
    fn both_ways(mut slots: Vec<Slot>) -> [Vec<(u64, u64, i64)>; 2] {
        let mut want = slots.clone();
        want.sort_unstable_by_key(|s| (s.a, s.b));
        let mut spare = vec![Slot::zeroed(); slots.len()];
        sort(&mut slots, &mut spare);
        [slots, want].map(|v| v.iter().map(|s| (s.a, s.b, s.total)).collect())
    }

    proptest! {
        /// Keys drawn from a few values per byte, so that they share
        /// prefixes, whole words and buckets of every size; each slot's
        /// stats travel with its key.
        #[test]
        fn sorts_like_sort_unstable(
            keys in prop::collection::hash_set(
                prop::collection::vec(prop::sample::select(vec![0u8, 1, 0x41, 0x80, 0xff]), 16),
                0..600,
            ),
        ) {
            let slots = (keys.iter().enumerate()).map(|(k, key)| slot(key, k as i64)).collect();
            let [got, want] = both_ways(slots);
            prop_assert_eq!(got, want);
        }
    }

    #[test]
    fn many_keys_sharing_a_prefix_pass_through_several_levels() {
        // `st0` … `st99999` as the short table's sort keys would read.
        let slots = (0..100_000u64)
            .map(|k| {
                let mut key = [0u8; 16];
                let name = format!("st{}", k * 7919 % 100_000);
                key[..name.len()].copy_from_slice(name.as_bytes());
                key[15] = name.len() as u8;
                slot(&key, k as i64)
            })
            .collect();
        let [got, want] = both_ways(slots);
        assert!(got == want);
    }
}
