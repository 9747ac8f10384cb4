//! A key as a table holds it and as a row looks it up: its first bytes in
//! words, where short keys are hashed and compared without a load from
//! elsewhere or a call.

use std::hash::{Hash, Hasher};

/// Bytes of a key held in its bucket, where a short key is compared
/// without a load from elsewhere.
const HEAD: usize = 16;

/// A key as a table holds it: its first [`HEAD`] bytes in two words,
/// zeros past its end, and all its bytes. A key of at most [`HEAD`] bytes
/// is hashed and compared by its words and length alone.
pub(super) struct Key {
    head: [u64; 2],
    pub(super) bytes: Box<[u8]>,
}

/// A row's key, looked up in a table as the [`Key`] of the same bytes.
pub(super) struct Probe<'a> {
    head: [u64; 2],
    pub(super) bytes: &'a [u8],
}

impl<'a> Probe<'a> {
    /// The key `within[start..end]`.
    #[inline(always)]
    pub(super) fn new(within: &'a [u8], start: usize, end: usize) -> Probe<'a> {
        let rest = &within[start..];
        let bytes = &rest[..end - start];
        let word = match rest.first_chunk::<HEAD>() {
            // The key and the bytes after it, in one load.
            Some(head) => u128::from_le_bytes(*head),
            None => padded(bytes),
        };
        let head = word & KEEP[bytes.len().min(HEAD)];
        Probe {
            head: [head as u64, (head >> 64) as u64],
            bytes,
        }
    }

    /// The probe for a key the table holds.
    pub(super) fn of(key: &'a Key) -> Probe<'a> {
        Probe {
            head: key.head,
            bytes: &key.bytes,
        }
    }

    /// Whether `key` holds the probe's bytes.
    #[inline(always)]
    pub(super) fn equivalent(&self, key: &Key) -> bool {
        same((self.head, self.bytes), (key.head, &key.bytes))
    }
}

/// For each length up to [`HEAD`], the bits of a word that hold a key's
/// bytes: a load, where a shift by a variable count of a 128-bit word
/// takes several instructions.
const KEEP: [u128; HEAD + 1] = {
    let mut keep = [u128::MAX; HEAD + 1];
    let mut n = 0;
    while n < HEAD {
        keep[n] = (1u128 << (8 * n)) - 1;
        n += 1;
    }
    keep
};

/// The first [`HEAD`] bytes of `bytes`, zeros past its end, as a word.
fn padded(bytes: &[u8]) -> u128 {
    let mut head = [0u8; HEAD];
    let n = bytes.len().min(HEAD);
    head[..n].copy_from_slice(&bytes[..n]);
    u128::from_le_bytes(head)
}

impl Key {
    /// The key of `bytes`.
    pub(super) fn new(bytes: &[u8]) -> Key {
        let head = padded(bytes);
        Key {
            head: [head as u64, (head >> 64) as u64],
            bytes: bytes.into(),
        }
    }
}

/// Hashes a key: a short one by its words and length, one of up to
/// twice [`HEAD`] bytes by those and its last [`HEAD`] bytes, a longer one
/// by all its bytes. Every byte counts, so keys that share their first
/// bytes spread.
#[inline(always)]
fn hash_key<H: Hasher>(head: [u64; 2], bytes: &[u8], state: &mut H) {
    // One multiply for both words. The length goes in the top byte,
    // zero below 16 bytes, so that keys that differ only by trailing
    // NULs (`a`, `a\0`, ...) hash apart.
    let words = |n: usize| (u128::from(head[1]) ^ (n as u128) << 56) << 64 | u128::from(head[0]);
    match bytes.len() {
        n if n <= HEAD => state.write_u128(words(n)),
        n if n <= TAIL_MAX => {
            state.write_u128(words(n));
            state.write_u128(tail(bytes));
        }
        _ => state.write(bytes),
    }
}

/// The longest key compared and hashed by its head and [`tail`].
const TAIL_MAX: usize = 2 * HEAD;

/// The last [`HEAD`] bytes of `bytes`, which holds more, as a word: with
/// the head, all of a key of up to [`TAIL_MAX`] bytes.
#[inline(always)]
fn tail(bytes: &[u8]) -> u128 {
    let last = bytes.last_chunk::<HEAD>().expect("longer than HEAD");
    u128::from_le_bytes(*last)
}

/// Whether two keys, each given as its words and bytes, are the same: a
/// key of up to [`TAIL_MAX`] bytes by its words and [`tail`], where a
/// byte compare would be a call.
#[inline(always)]
fn same(a: ([u64; 2], &[u8]), b: ([u64; 2], &[u8])) -> bool {
    a.1.len() == b.1.len()
        && a.0 == b.0
        && match a.1.len() {
            n if n <= HEAD => true,
            n if n <= TAIL_MAX => tail(a.1) == tail(b.1),
            _ => a.1[HEAD..] == b.1[HEAD..],
        }
}

impl Hash for Key {
    fn hash<H: Hasher>(&self, state: &mut H) {
        hash_key(self.head, &self.bytes, state);
    }
}

impl Hash for Probe<'_> {
    #[inline(always)]
    fn hash<H: Hasher>(&self, state: &mut H) {
        hash_key(self.head, self.bytes, state);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Short keys that differ only by trailing NULs, whose words are the
    /// same, hash apart: a file of them does not pile into one bucket.
    #[test]
    fn keys_that_differ_by_trailing_nuls_hash_apart() {
        use std::hash::BuildHasher;
        let hasher = foldhash::fast::RandomState::default();
        let keys: Vec<Vec<u8>> = (0..=15)
            .map(|n| [&b"a"[..], &vec![0; n]].concat())
            .collect();
        let hashes: std::collections::HashSet<u64> = (keys.iter())
            .map(|k| hasher.hash_one(Probe::new(k, 0, k.len())))
            .collect();
        assert_eq!(hashes.len(), keys.len());
    }

    proptest::proptest! {
        /// Keys of every length to past 16 bytes, equal or one byte or
        /// length apart, probed from amid other bytes and from the end of
        /// a buffer: a probe matches a key, and hashes as it does, exactly
        /// when their bytes are the same.
        #[test]
        fn a_probe_is_its_key_exactly_when_their_bytes_are(
            a in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..40),
            after in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..20),
            at in proptest::prelude::any::<proptest::sample::Index>(),
            edit in 0u8..3,
        ) {
            let mut b = a.clone();
            match (edit, a.is_empty()) {
                (0, false) => b[at.index(a.len())] ^= 1,
                (1, false) => { b.pop(); }
                (2, _) => b.push(0),
                _ => {}
            }
            use std::hash::BuildHasher;
            let hasher = foldhash::fast::RandomState::default();
            for (x, y) in [(&a, &b), (&b, &a), (&a, &a)] {
                let within = [&b"pad"[..], x, &after].concat();
                let probe = Probe::new(&within, 3, 3 + x.len());
                let key = Key::new(y);
                proptest::prop_assert_eq!(probe.equivalent(&key), x == y);
                proptest::prop_assert_eq!(Probe::of(&Key::new(x)).equivalent(&key), x == y);
                if x == y {
                    proptest::prop_assert_eq!(hasher.hash_one(&probe), hasher.hash_one(&key));
                }
            }
        }
    }
}
