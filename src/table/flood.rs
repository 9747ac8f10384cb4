//! Names built to share one hash in the fast tables, as anyone reading
//! the source can build them: what the tables' defense against flooding
//! is tested and measured with (docs/PERFORMANCE.md, *The tables*).
//!
//! Each table's hash lets its first key word be solved for from the
//! others: from a random name, the rest of each next name is drawn at
//! random, its first 8 bytes solved for to give the first name's hash, and
//! the name kept if those bytes leave it valid (UTF-8 without `;` or
//! `\n`), about one draw in a hundred. Every name is then checked against
//! the table's own hash.
//!
//! Only the tests and builds with the `lab` feature (the benches and
//! examples/flood.rs, which `cargo` builds with it) hold the generator.

use std::collections::HashSet;

use super::long;
use super::short::{self, SHORT};
use crate::parse::MAX_NAME_LEN;

/// A small reproducible source of random bits (xorshift64*).
struct Bits(u64);

impl Bits {
    fn new(seed: u64) -> Bits {
        Bits(seed.wrapping_mul(2).wrapping_add(1))
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A printable ASCII character other than `;`.
    fn printable(&mut self) -> u8 {
        loop {
            let c = b' ' + (((self.next() >> 32) * 95) >> 32) as u8;
            if c != b';' {
                return c;
            }
        }
    }

    /// `len` printable ASCII characters other than `;`.
    fn name(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| self.printable()).collect()
    }
}

/// Whether `name` may be a station's name: UTF-8 without `;` or `\n`.
fn valid(name: &[u8]) -> bool {
    std::str::from_utf8(name).is_ok() && !name.iter().any(|&c| c == b';' || c == b'\n')
}

/// `count` distinct names of `len` bytes (12 to 100), valid UTF-8
/// without `;` or `\n`, that all share one hash in the table their length
/// sends them to: the full 64-bit hash, so that they share a home slot in
/// a table of any size. The same `seed` gives the same names. Their first
/// 8 bytes may be any valid characters, control characters and NUL
/// included.
///
/// # Panics
/// If `len` is outside 12..=100.
pub fn colliding(len: usize, count: usize, seed: u64) -> Vec<String> {
    clustered(len, 1, count, 64, seed)
}

/// `clusters` groups of `per_cluster` distinct names of `len` bytes (12
/// to 100), as [`colliding`] makes them, but the names of a group share
/// only the top `bits` bits of their hash (1 to 64), the rest drawn at
/// random: a home slot in every table of up to 2^`bits` slots, and no
/// more, so a table cannot tell them from chance collisions by their
/// whole hash. The groups' names follow one another, group by group.
///
/// # Panics
/// If `len` is outside 12..=100 or `bits` outside 1..=64.
pub fn clustered(
    len: usize,
    clusters: usize,
    per_cluster: usize,
    bits: u32,
    seed: u64,
) -> Vec<String> {
    assert!((12..=MAX_NAME_LEN).contains(&len), "{len} bytes");
    assert!((1..=64).contains(&bits), "{bits} bits");
    let mut rng = Bits::new(seed);
    let hash_of = |name: &[u8]| {
        if len <= SHORT {
            let (a, b) = short::key(name);
            short::fixed_hash(a, b)
        } else {
            long::hash(name)
        }
    };
    let top = u64::MAX << (64 - bits);
    let mut seen = HashSet::new();
    let mut names = Vec::with_capacity(clusters * per_cluster);
    for _ in 0..clusters {
        // A valid name's hash, so that the bits of the first word that the
        // other words decide are valid to begin with.
        let mut name = rng.name(len);
        let shared = hash_of(&name) & top;
        let mut made = 0;
        while made < per_cluster {
            let hash = shared | (rng.next() & !top);
            name[8..].iter_mut().for_each(|c| *c = rng.printable());
            let first = if len <= SHORT {
                short::solve(short::key(&name).1, hash)
            } else {
                long::solve(&name, hash)
            };
            name[..8].copy_from_slice(&first.to_le_bytes());
            if valid(&name) && seen.insert(name.clone()) {
                assert_eq!(hash_of(&name), hash, "{name:?}");
                names.push(String::from_utf8(name.clone()).expect("checked"));
                made += 1;
            }
        }
    }
    names
}

/// `count` distinct names of `len` bytes (1 to 100) of random printable
/// ASCII but `;`: the shape of [`colliding`]'s names, with random hashes.
///
/// # Panics
/// If `len` is outside 1..=100.
pub fn random(len: usize, count: usize, seed: u64) -> Vec<String> {
    assert!((1..=MAX_NAME_LEN).contains(&len), "{len} bytes");
    let mut bits = Bits::new(seed);
    let mut seen = HashSet::new();
    while seen.len() < count {
        seen.insert(String::from_utf8(bits.name(len)).expect("ASCII"));
    }
    let mut names: Vec<String> = seen.into_iter().collect();
    names.sort();
    names
}

/// An input of `rounds` rows of each name: every name in turn, `rounds`
/// times over, the values drawn from `-99.9..=99.9`.
pub fn rows(names: &[String], rounds: usize, seed: u64) -> Vec<u8> {
    let mut bits = Bits::new(seed);
    let mut out = Vec::new();
    for _ in 0..rounds {
        for name in names {
            let tenths = (bits.next() % 1999) as i64 - 999;
            let sign = if tenths < 0 { "-" } else { "" };
            let (int, frac) = (tenths.abs() / 10, tenths.abs() % 10);
            out.extend_from_slice(format!("{name};{sign}{int}.{frac}\n").as_bytes());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_of_every_length_collide_and_are_valid() {
        // `colliding` checks each name's hash itself; here their shape.
        for len in [12, 15, 16, 31, 32, 63, 64, 100] {
            let names = colliding(len, 20, len as u64);
            assert_eq!(names.len(), 20);
            assert!(names.iter().all(|n| n.len() == len && valid(n.as_bytes())));
            let distinct: HashSet<&String> = names.iter().collect();
            assert_eq!(distinct.len(), 20);
        }
        assert_eq!(colliding(15, 5, 7), colliding(15, 5, 7));
        assert_ne!(colliding(15, 5, 7), colliding(15, 5, 8));
    }

    #[test]
    fn clustered_names_share_the_top_bits_of_their_hash_and_no_more() {
        for len in [12, 15, 40] {
            let hash_of = |name: &[u8]| match len <= SHORT {
                true => {
                    let (a, b) = short::key(name);
                    short::fixed_hash(a, b)
                }
                false => long::hash(name),
            };
            let names = clustered(len, 3, 9, 20, 5);
            assert_eq!(names.len(), 27);
            let distinct: HashSet<&String> = names.iter().collect();
            assert_eq!(distinct.len(), 27);
            let hashes: Vec<u64> = names.iter().map(|n| hash_of(n.as_bytes())).collect();
            for group in hashes.chunks(9) {
                assert!(group.iter().all(|h| h >> 44 == group[0] >> 44));
                let whole: HashSet<&u64> = group.iter().collect();
                assert_eq!(whole.len(), 9, "only the top bits are shared");
            }
            assert_ne!(hashes[0] >> 44, hashes[9] >> 44);
        }
    }
}
