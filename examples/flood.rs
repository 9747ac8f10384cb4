//! Writes an input built to flood brc's tables, and its control: the same
//! number of names of the same length, in the same order, with random
//! hashes. The lab times the pair (scripts/flood.sh); the tests build
//! the same shapes smaller (`table::flood`, which needs the `lab` feature:
//! the library's dev-dependency on itself turns it on).
//!
//! Usage: `cargo run --release --example flood -- SHAPE LEN NAMES BYTES OUT`
//!
//! - SHAPE: `colliding` (every name shares the full 64-bit hash),
//!   `clusters:K:B` (groups of K names sharing the top B bits of the hash),
//!   or `clusters:K:B:R`, the same with R random names among them;
//! - LEN: the names' length in bytes (12 to 100; up to 15 goes to the short
//!   table, longer to the long one);
//! - NAMES: how many names; BYTES: about how many bytes of rows, every name
//!   in turn, round after round;
//! - OUT: the flooding file; `OUT.random` is written beside it.

use std::io::Write;

use brc::internals::flood;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [shape, len, names, bytes, out] = &args[..] else {
        eprintln!("usage: flood SHAPE LEN NAMES BYTES OUT (see examples/flood.rs)");
        std::process::exit(2);
    };
    let number = |s: &str| -> usize {
        let (digits, unit) = match s.strip_suffix('M') {
            Some(d) => (d, 1 << 20),
            None => (s, 1),
        };
        digits
            .parse::<usize>()
            .expect("a whole number (suffix M for MiB)")
            * unit
    };
    let (len, count, bytes) = (number(len), number(names), number(bytes));
    let built = match shape.split(':').collect::<Vec<_>>()[..] {
        ["colliding"] => flood::colliding(len, count, 1),
        ["clusters", k, b, ref random @ ..] => {
            let k: usize = k.parse().expect("a cluster size");
            let mut names =
                flood::clustered(len, count.div_ceil(k), k, b.parse().expect("bits"), 1);
            if let [random] = random {
                let random = flood::random(len, random.parse().expect("a name count"), 7);
                let held: std::collections::HashSet<String> = names.iter().cloned().collect();
                names.extend(random.into_iter().filter(|n| !held.contains(n)));
            }
            names
        }
        _ => panic!("unknown shape {shape}: colliding or clusters:K:B"),
    };
    let random = flood::random(len, built.len(), 1);
    for (names, path) in [(built, out.clone()), (random, format!("{out}.random"))] {
        let round = flood::rows(&names, 1, 2);
        let mut file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        let rounds = bytes.div_ceil(round.len());
        for r in 0..rounds {
            file.write_all(&flood::rows(&names, 1, r as u64)).unwrap();
        }
        file.flush().unwrap();
    }
}
