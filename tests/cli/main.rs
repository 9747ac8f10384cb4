//! The `brc` binary, run as a user runs it: official samples, bad input,
//! output formats, command-line usage and a closed stdout.

mod closed_stdout;
mod conformance;
mod delimited;
mod errors;
mod formats;
mod inputs;
mod many;
mod merge;
mod parquet;
mod statistics;
mod usage;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use tempfile::TempDir;

/// A command running the `brc` binary built for these tests.
fn brc() -> Command {
    Command::new(env!("CARGO_BIN_EXE_brc"))
}

/// Runs `brc` with `args` (and `stdin`), expecting success and nothing on
/// stderr; returns stdout.
fn run<S: AsRef<OsStr>>(args: &[S], stdin: &[u8]) -> Vec<u8> {
    let output = brc()
        .args(args)
        .write_stdin(stdin)
        .assert()
        .success()
        .stderr("");
    output.get_output().stdout.clone()
}

/// The official samples, `tests/data/1brc/*.txt`, sorted; each has its
/// expected output next to it as `*.out`.
fn samples() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/1brc");
    let mut samples: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "txt"))
        .collect();
    samples.sort();
    assert!(
        samples.len() >= 12,
        "samples missing from {}",
        dir.display()
    );
    samples
}

/// Writes `bytes` to a file named `name` in a fresh temporary directory,
/// which lives as long as the returned guard.
fn input(name: &str, bytes: &[u8]) -> (TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).unwrap();
    (dir, path)
}
