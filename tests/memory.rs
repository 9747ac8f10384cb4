//! Peak memory: `brc` stays within its budget on an input several times
//! that size, 10,000 stations, read from a file and from a pipe; and on a
//! single line several times that size, which must be judged, not held.
//!
//! Alone in its own test binary, because it reads the peak resident set
//! size of this process's reaped children, which must be `brc` runs only.
//! That peak is over every child reaped so far, so the tests take turns:
//! a run over the budget fails the test that made it.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::{Mutex, MutexGuard, PoisonError};

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

/// Waits for the other tests' `brc` runs to be over.
fn take_turn() -> MutexGuard<'static, ()> {
    static TURN: Mutex<()> = Mutex::new(());
    TURN.lock().unwrap_or_else(PoisonError::into_inner)
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
    let _turn = take_turn();
    let peak = peak_child_kib();
    assert!(peak < BUDGET_KIB, "an earlier run: peak RSS {peak} KiB");

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

/// Writes two valid lines, then a line of `len` NUL bytes without `;` or
/// `\n`, as `head -c` of `/dev/zero` after them gives.
fn write_overlong(out: &mut impl Write, len: usize) -> io::Result<()> {
    out.write_all(b"Hamburg;12.0\nBulawayo;8.9\n")?;
    let zeros = vec![0; 1 << 20];
    for _ in 0..len / zeros.len() {
        out.write_all(&zeros)?;
    }
    out.flush()
}

/// A 200 MB line with no `;` or `\n`: before, the stream path held it
/// whole and the file path paged it all in.
#[test]
fn an_overlong_line_is_judged_within_the_budget_from_a_file_and_a_pipe() {
    const LEN: usize = 200 << 20;
    assert!(LEN > 3 * ((BUDGET_KIB as usize) << 10));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("overlong.txt");
    write_overlong(&mut BufWriter::new(File::create(&path).unwrap()), LEN).unwrap();
    let message = |name: &str| {
        format!(
            "brc: {name}: line 3: expected `;` between name and value, found none in `{}…`\n",
            "\\0".repeat(40)
        )
    };
    let _turn = take_turn();
    for engine in ["fast", "naive"] {
        let output = brc()
            .args(["--engine", engine])
            .arg(&path)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(1), "{output:?}");
        assert!(output.stdout.is_empty());
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert_eq!(stderr, message(&path.display().to_string()));
        let peak = peak_child_kib();
        assert!(peak < BUDGET_KIB, "{engine}, file: peak RSS {peak} KiB");

        let mut child = brc()
            .args(["--engine", engine, "-"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        // brc reads to the end: a `;` could still come.
        let feeder = std::thread::spawn(move || write_overlong(&mut stdin, LEN));
        let output = child.wait_with_output().unwrap();
        feeder.join().unwrap().unwrap();
        assert_eq!(output.status.code(), Some(1), "{output:?}");
        assert!(output.stdout.is_empty());
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert_eq!(stderr, message("<stdin>"));
        let peak = peak_child_kib();
        assert!(peak < BUDGET_KIB, "{engine}, pipe: peak RSS {peak} KiB");
    }
}
