//! Peak memory with many names: past a thread's bound, names are kept once
//! for all threads, not once per thread (docs/PERFORMANCE.md, *Memory*).
//!
//! Alone in its own test binary, as `tests/memory.rs` is: it reads the
//! peak resident set size of this process's reaped children.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::process::Command;

use nix::sys::resource::{getrusage, UsageWho};

const NAMES: usize = 200_000;
const ROUNDS: usize = 5;

/// Peak RSS allowed with 8 threads. Every thread keeping each name it
/// meets in its own table takes several times this: 200,000 names of 30
/// to 60 bytes fill 64 MiB of long slots per thread.
const BUDGET_KIB: i64 = 192 << 10;

#[test]
fn many_names_are_kept_once_not_once_per_thread() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("names.txt");
    let mut out = BufWriter::new(File::create(&path).unwrap());
    // Every name in each round, in an order of its own: each thread's
    // chunks meet most of the names.
    for round in 0..ROUNDS {
        for k in 0..NAMES {
            let k = (k * 7919 + round * 104_729) % NAMES;
            let pad = "é".repeat(k % 16);
            writeln!(out, "station number {k:07} {pad};{}.{}", k % 100, round).unwrap();
        }
    }
    out.flush().unwrap();
    drop(out);
    let output = Command::new(env!("CARGO_BIN_EXE_brc"))
        .args(["--threads", "8", "--chunk-size", "1M", "--format", "csv"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let csv = String::from_utf8(output.stdout).unwrap();
    let counts: Vec<usize> = (csv.lines().skip(1))
        .map(|l| l.rsplit(',').next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(counts.len(), NAMES);
    assert!(counts.iter().all(|&c| c == ROUNDS));
    let peak = getrusage(UsageWho::RUSAGE_CHILDREN).unwrap().max_rss();
    assert!(
        peak <= BUDGET_KIB,
        "peak RSS {peak} KiB over {BUDGET_KIB} KiB"
    );
}
