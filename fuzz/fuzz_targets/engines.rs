//! Every engine must give `naive`'s exact answer on arbitrary bytes: the
//! same summary for valid input, the same error (line and kind) otherwise,
//! and never a crash. The first bytes choose the thread count and chunk
//! size so chunk boundaries land everywhere.
#![no_main]

use brc::{aggregate, Engine, Options};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&knobs, input)) = data.split_first() else {
        return;
    };
    let options = Options {
        threads: 1 + usize::from(knobs & 3),
        chunk_size: 1 + usize::from(knobs >> 2) * 37,
    };
    let want = aggregate(input, Engine::Naive, &options);
    for engine in Engine::ALL {
        let got = aggregate(input, engine, &options);
        assert_eq!(got, want, "engine {engine:?}, {options:?}");
    }
});
