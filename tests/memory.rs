//! Peak memory: `brc` stays within its budget on an input several times
//! that size, 10,000 stations, read from a file and from a pipe.
//!
//! Alone in its own test binary, because it reads the peak resident set
//! size of this process's reaped children, which must be `brc` runs only.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::process::{Command, Output, Stdio};

use nix::sys::resource::{getrusage, UsageWho};

/// The budget of the issue: 64 MiB of peak RSS, with two threads.
const BUDGET_KIB: i64 = 64 << 10;
const ROWS: usize = 20_000_000;
const STATIONS: usize = 10_000;

/// Writes `ROWS` rows over `STATIONS` names: one block of rows, written
/// again and again (repetition changes nothing for memory, and keeps the
/// test quick in a debug build). Returns the file's size.
fn write_input(path: &Path) -> u64 {
    const BLOCK_ROWS: usize = 100_000;
    let mut block = Vec::new();
    let mut state = 1u64;
    for row in 0..BLOCK_ROWS {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let tenths = (state >> 40) % 1999;
        let sign = if tenths < 999 { "-" } else { "" };
        let t = tenths.abs_diff(999);
        let station = row % STATIONS;
        writeln!(block, "Ö{station};{sign}{}.{}", t / 10, t % 10).unwrap();
    }
    let mut out = BufWriter::new(File::create(path).unwrap());
    for _ in 0..ROWS / BLOCK_ROWS {
        out.write_all(&block).unwrap();
    }
    out.flush().unwrap();
    std::fs::metadata(path).unwrap().len()
}

/// The largest peak RSS of any child reaped so far, in KiB.
fn peak_child_kib() -> i64 {
    getrusage(UsageWho::RUSAGE_CHILDREN).unwrap().max_rss()
}

/// Checks a CSV summary: every station, every row counted.
fn check_summary(output: &Output) {
    assert!(output.status.success(), "{output:?}");
    let csv = String::from_utf8(output.stdout.clone()).unwrap();
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some("station,min,mean,max,count"));
    let counts: Vec<usize> = lines
        .map(|l| l.rsplit(',').next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(counts.len(), STATIONS);
    assert_eq!(counts.iter().sum::<usize>(), ROWS);
}

fn brc() -> Command {
    let mut brc = Command::new(env!("CARGO_BIN_EXE_brc"));
    brc.args(["--threads", "2", "--format", "csv"]);
    brc
}

#[test]
fn peak_memory_stays_within_the_budget_from_a_file_and_a_pipe() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("measurements.txt");
    let size = write_input(&path);
    assert!(size > 3 * ((BUDGET_KIB as u64) << 10), "{size} bytes");
    assert_eq!(peak_child_kib(), 0, "no child may run before brc");

    check_summary(&brc().arg(&path).output().unwrap());
    let peak = peak_child_kib();
    assert!(peak < BUDGET_KIB, "file: peak RSS {peak} KiB");

    let mut child = brc()
        .arg("-")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let feeder = std::thread::spawn(move || {
        std::io::copy(&mut File::open(&path).unwrap(), &mut stdin).unwrap();
    });
    let output = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    check_summary(&output);
    let peak = peak_child_kib();
    assert!(peak < BUDGET_KIB, "pipe: peak RSS {peak} KiB");
}
