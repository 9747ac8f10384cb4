//! Peak memory of `brc merge`: merging partials takes no more memory than
//! aggregating the rows they came from, whether the partials are shards
//! of the input (each holding part of its names) or copies of one
//! partial (each holding all of them).
//!
//! Alone in its own test binary, because it reads the peak resident set
//! size of this process's reaped children, which must be `brc` runs only,
//! the aggregation first.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::process::Command;

use nix::sys::resource::{getrusage, UsageWho};

const STATIONS: usize = 200_000;
const ROWS: usize = 3 * STATIONS;

/// The largest peak RSS of any child reaped so far, in KiB.
fn peak_child_kib() -> i64 {
    getrusage(UsageWho::RUSAGE_CHILDREN).unwrap().max_rss()
}

/// `ROWS` rows over `STATIONS` names of 5 to 60 bytes, every name met
/// again only after all the others (so that a thread's table hands its
/// names to the shared partitions, as with millions of names).
fn write_input(path: &Path) {
    let mut out = BufWriter::new(File::create(path).unwrap());
    for row in 0..ROWS {
        let k = row * 7919 % STATIONS;
        let pad = "x".repeat(k % 56);
        let t = (row * 37 % 1999) as i64 - 999;
        let sign = if t < 0 { "-" } else { "" };
        let t = t.abs();
        writeln!(out, "s{k:05}{pad};{sign}{}.{}", t / 10, t % 10).unwrap();
    }
    out.flush().unwrap();
}

/// Runs brc with `args`, its stdout to `out`.
fn brc(args: &[&str], out: &Path) {
    let status = Command::new(env!("CARGO_BIN_EXE_brc"))
        .args(args)
        .stdout(File::create(out).unwrap())
        .status()
        .unwrap();
    assert!(status.success(), "brc {args:?}");
}

#[test]
fn merging_partials_takes_no_more_memory_than_aggregating_their_rows() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name);
    write_input(&path("input.txt"));
    let input = path("input.txt");
    let input = input.to_str().unwrap();
    brc(
        &["-t", "2", "--format", "partial", input],
        &path("whole.part"),
    );
    let aggregating = peak_child_kib();
    let mut shards = Vec::new();
    for k in 1..=4 {
        let shard = path(&format!("shard{k}.part"));
        brc(
            &[
                "-t",
                "2",
                "--shard",
                &format!("{k}/4"),
                "--format",
                "partial",
                input,
            ],
            &shard,
        );
        shards.push(shard.to_str().unwrap().to_string());
    }
    assert_eq!(
        peak_child_kib(),
        aggregating,
        "a shard took more than the whole"
    );
    let whole = path("whole.part");
    let whole = whole.to_str().unwrap();
    let copies = [whole, whole, whole];
    for partials in [
        &shards.iter().map(String::as_str).collect::<Vec<_>>()[..],
        &copies,
    ] {
        let mut args = vec!["merge", "--format", "partial"];
        args.extend_from_slice(partials);
        brc(&args, &path("merged.part"));
        let peak = peak_child_kib();
        assert!(
            peak <= aggregating,
            "merging {} partials peaked at {peak} KiB, aggregating at {aggregating} KiB",
            partials.len()
        );
        let merged = std::fs::read(path("merged.part")).unwrap();
        if partials.len() == shards.len() {
            assert_eq!(merged, std::fs::read(whole).unwrap());
        }
    }
}
