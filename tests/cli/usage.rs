//! Command-line usage: flags, usage errors and help (a closed stdout:
//! `closed_stdout.rs`).

use brc::output::Format;
use brc::Engine;

use crate::{brc, input};

/// Usage errors exit with status 2 and print nothing on stdout.
fn assert_usage_error(args: &[&str], complaint: &str) {
    let (_dir, path) = input("ok.txt", b"a;1.0\n");
    let output = brc().args(args).arg(&path).assert().code(2).stdout("");
    let stderr = String::from_utf8_lossy(&output.get_output().stderr).into_owned();
    assert!(stderr.contains(complaint), "{args:?}: {stderr}");
}

#[test]
fn bad_flags_are_usage_errors() {
    assert_usage_error(&["--threads", "0"], "--threads");
    assert_usage_error(&["--threads", "many"], "--threads");
    assert_usage_error(&["--engine", "quantum"], "--engine");
    assert_usage_error(&["--format", "xml"], "--format");
    assert_usage_error(&["--chunk-size", "0"], "--chunk-size");
    assert_usage_error(&["--chunk-size", "12X"], "--chunk-size");
    // A stream holds a few blocks of the chunk size: bounded, never an
    // allocation that aborts.
    assert_usage_error(&["--chunk-size", "64G"], "at most 1G");
    assert_usage_error(&["--chunk-size", "17179869183G"], "at most 1G");
    assert_usage_error(&["--frobnicate"], "--frobnicate");
    // Without FILE, brc reads standard input when it is not a terminal (a
    // terminal is a usage error, checked by hand: tests have no terminal).
    brc()
        .write_stdin("b;2.0\na;1.0\n")
        .assert()
        .success()
        .stdout("{a=1.0/1.0/1.0, b=2.0/2.0/2.0}\n");
}

#[test]
fn every_flag_is_accepted_in_long_and_short_form() {
    let (_dir, path) = input("ok.txt", b"b;2.0\na;1.0\n");
    for args in [
        ["--threads", "3", "--engine", "chunked", "--format", "csv"],
        ["-t", "3", "-e", "chunked", "-f", "csv"],
    ] {
        brc()
            .args(args)
            .args(["--chunk-size", "1K"])
            .arg(&path)
            .assert()
            .success()
            .stdout("station,min,mean,max,count\na,1.0,1.0,1.0,1\nb,2.0,2.0,2.0,1\n");
    }
}

#[test]
fn help_documents_exit_codes_engines_and_formats() {
    let output = brc().arg("--help").assert().success();
    let help = String::from_utf8(output.get_output().stdout.clone()).unwrap();
    for needle in ["Exit status", "  0  ", "  1  ", "  2  ", "line <N>"] {
        assert!(help.contains(needle), "--help lacks {needle:?}:\n{help}");
    }
    for engine in Engine::ALL {
        assert!(
            help.contains(engine.name()),
            "--help lacks {}",
            engine.name()
        );
    }
    for (name, _) in Format::ALL {
        assert!(help.contains(name), "--help lacks {name}");
    }
}
