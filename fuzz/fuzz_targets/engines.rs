//! Every engine must give `naive`'s exact answer on arbitrary bytes: the
//! same summary for valid input, the same error (line and kind) otherwise,
//! and never a crash; and so must every engine keeping what the
//! statistics need (sums of squares, counts per value). The first bytes
//! choose the thread count, the chunk size and what is kept, so chunk
//! boundaries land everywhere.
//!
//! A `#` and the byte after it stand for one of 256 names built to collide
//! in the tables (whole hashes or their top bits shared, short names and
//! long), so that the tables flood, fold while flooded and grow while
//! flooded, their rows among any others.
#![no_main]

use std::sync::LazyLock;

use brc::internals::flood;
use brc::{aggregate_keeping, Engine, Kept, Options};
use libfuzzer_sys::fuzz_target;

/// The names `#` and a byte stand for: the byte is the index.
static COLLIDING: LazyLock<Vec<String>> = LazyLock::new(|| {
    let mut names = flood::colliding(15, 96, 1);
    names.extend(flood::clustered(15, 20, 4, 20, 2));
    names.extend(flood::colliding(14, 40, 3));
    names.extend(flood::colliding(40, 40, 4));
    assert_eq!(names.len(), 256);
    names
});

/// `input` with every `#` and the byte after it replaced by that byte's
/// name of [`COLLIDING`].
fn with_colliding_names(input: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(input.len());
    let mut i = 0;
    while i < input.len() {
        match (input[i], input.get(i + 1)) {
            (b'#', Some(&k)) => {
                out.extend(COLLIDING[usize::from(k)].bytes());
                i += 2;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let Some((&knobs, input)) = data.split_first() else {
        return;
    };
    let input = &with_colliding_names(input)[..];
    let options = Options {
        threads: 1 + usize::from(knobs & 3),
        chunk_size: 1 + usize::from(knobs >> 3) * 37,
    };
    // Bit 3 is also the chunk size's lowest.
    let kept = match (knobs & 4, knobs & 8) {
        (0, _) => Kept::Basic,
        (_, 0) => Kept::Counts,
        _ => Kept::Squares,
    };
    let want = aggregate_keeping(input, kept, Engine::Naive, &options);
    for engine in Engine::ALL {
        let got = aggregate_keeping(input, kept, engine, &options);
        assert_eq!(got, want, "engine {engine:?}, {options:?}, {kept:?}");
    }
});
