//! Every engine must give `naive`'s exact answer on arbitrary bytes: the
//! same summary for valid input, the same error (line and kind) otherwise,
//! and never a crash; and so must every engine keeping what the
//! statistics need (sums of squares, counts per value). The first bytes
//! choose the thread count, the chunk size and what is kept, so chunk
//! boundaries land everywhere.
#![no_main]

use brc::{aggregate_keeping, Engine, Kept, Options};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&knobs, input)) = data.split_first() else {
        return;
    };
    let options = Options {
        threads: 1 + usize::from(knobs & 3),
        chunk_size: 1 + usize::from(knobs >> 3) * 37,
    };
    let kept = match knobs & 4 {
        0 => Kept::Basic,
        _ => Kept::Counts,
    };
    let want = aggregate_keeping(input, kept, Engine::Naive, &options);
    for engine in Engine::ALL {
        let got = aggregate_keeping(input, kept, engine, &options);
        assert_eq!(got, want, "engine {engine:?}, {options:?}, {kept:?}");
    }
});
