//! A delimited file brc reads, however malformed, gives a one-line error
//! or a summary, never a crash; and the same error or summary whatever
//! the thread count and chunk size, so the chunks' guessed row starts
//! (checked against where the chunk before ended) never change an answer.
//!
//! The input's first byte picks the delimiter (`,`, `;` or a tab), the
//! columns and the second run's chunk size (1 to 64 bytes); the rest is
//! the file. fuzz/delimited.dict holds the tokens that matter.
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use brc::{Column, Dialect, Engine, Inputs, Options, Source};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&knobs, file)) = data.split_first() else {
        return;
    };
    let delimiter = [b',', b';', b'\t'][usize::from(knobs % 3)];
    let key = match knobs & 4 {
        0 => vec![Column::Position(1)],
        _ => vec![Column::Position(1), Column::Position(3)],
    };
    let value = Column::Position(2);
    let dialect = Dialect::csv(key, value).delimiter(delimiter);
    let path = scratch();
    std::fs::write(&path, file).unwrap();
    let run = |threads, chunk_size| {
        let options = Options {
            threads,
            chunk_size,
        };
        let inputs = Inputs::new([Source::File(path.clone())]).delimited(dialect.clone());
        inputs.aggregate(Engine::default(), &options)
    };
    let whole = run(1, 4 << 20);
    let cut = run(2, 1 + usize::from(knobs >> 2) % 64);
    match (&whole, &cut) {
        (Ok(a), Ok(b)) => assert_eq!(a, b),
        (Err(a), Err(b)) => {
            let (a, b) = (a.to_string(), b.to_string());
            assert!(!a.contains('\n'), "a message of more than one line: {a}");
            assert_eq!(a, b);
        }
        _ => panic!("one run failed and the other did not: {whole:?} {cut:?}"),
    }
});

/// The file each input is written to, one per process.
fn scratch() -> PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let name = format!("brc-fuzz-delimited-{}", std::process::id());
        std::env::temp_dir().join(name)
    })
    .clone()
}
