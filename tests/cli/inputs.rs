//! Inputs as users hand them over: standard input left past a header by
//! the shell, a byte-order mark, files that cannot be mapped, gzip data
//! padded with zeros, and stderr that cannot be written.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::process::{Command, Stdio};

use assert_cmd::prelude::*;
use brc::Engine;

use crate::{brc, input};

const HEADER: &[u8] = b"station;value\n";
const BODY: &[u8] = b"b;2.0\na;1.0\nb;-3.0\n";
const ANSWER: &str = "{a=1.0/1.0/1.0, b=-3.0/-0.5/2.0}\n";

/// The binary as a plain `std::process::Command`, for handing it files as
/// standard streams.
fn plain() -> Command {
    Command::new(env!("CARGO_BIN_EXE_brc"))
}

/// `brc ARGS -` with standard input the file at `path`, read up to `at`
/// by whoever ran brc (as `{ read -r header; brc -; } < file` leaves it).
fn from_stdin_at(path: &std::path::Path, at: u64, args: &[&str]) -> assert_cmd::assert::Assert {
    let mut file = File::open(path).unwrap();
    file.seek(SeekFrom::Start(at)).unwrap();
    plain().args(args).arg("-").stdin(file).assert()
}

#[test]
fn standard_input_past_a_header_is_read_from_where_it_stands() {
    let (_dir, path) = input("h.txt", &[HEADER, BODY].concat());
    for engine in Engine::ALL {
        for threads in ["1", "2"] {
            let args = ["-e", engine.name(), "-t", threads, "--chunk-size", "4"];
            from_stdin_at(&path, HEADER.len() as u64, &args)
                .success()
                .stdout(ANSWER)
                .stderr("");
            // A fault's line number counts from where the input starts.
            let (_dir, bad) = input("bad.txt", &[HEADER, b"a;1.0\nb;x\n"].concat());
            from_stdin_at(&bad, HEADER.len() as u64, &args)
                .code(1)
                .stdout("")
                .stderr(predicates::str::starts_with("brc: <stdin>: line 2: "));
        }
    }
    // Past the end: nothing left, nothing to report.
    let len = std::fs::metadata(&path).unwrap().len();
    from_stdin_at(&path, len, &[]).success().stdout("{}\n");
}

#[test]
fn a_byte_order_mark_at_the_start_is_skipped() {
    let with_mark = [b"\xef\xbb\xbf", BODY].concat();
    let (_dir, path) = input("bom.txt", &with_mark);
    let mut gzip = Vec::new();
    let mut encoder = flate2::write::GzEncoder::new(&mut gzip, flate2::Compression::fast());
    encoder.write_all(&with_mark).unwrap();
    encoder.finish().unwrap();
    let (_gz_dir, gz) = input("bom.txt.gz", &gzip);
    for engine in Engine::ALL {
        for file in [&path, &gz] {
            brc()
                .args(["-e", engine.name()])
                .arg(file)
                .assert()
                .success()
                .stdout(ANSWER);
        }
        brc()
            .args(["-e", engine.name(), "-"])
            .write_stdin(with_mark.clone())
            .assert()
            .success()
            .stdout(ANSWER);
    }
    // Anywhere else it is part of a name, as any other character.
    let (_dir2, later) = input("later.txt", &[BODY, b"\xef\xbb\xbfa;4.0\n"].concat());
    brc()
        .arg(&later)
        .assert()
        .success()
        .stdout("{a=1.0/1.0/1.0, b=-3.0/-0.5/2.0, \u{feff}a=4.0/4.0/4.0}\n");
}

#[cfg(target_os = "linux")]
#[test]
fn a_file_that_cannot_be_mapped_is_read_as_a_stream() {
    // `/proc` files say they are empty and refuse to be mapped; read, this
    // one is not measurements, so brc judges its first line.
    brc()
        .arg("/proc/self/status")
        .assert()
        .code(1)
        .stdout("")
        .stderr(predicates::str::starts_with(
            "brc: /proc/self/status: line 1: expected `;` between name and value",
        ));
}

#[test]
fn zero_bytes_after_gzip_data_are_ignored_as_gzip_does() {
    let member = |text: &[u8]| {
        let mut out = Vec::new();
        let mut encoder = flate2::write::GzEncoder::new(&mut out, flate2::Compression::fast());
        encoder.write_all(text).unwrap();
        encoder.finish().unwrap();
        out
    };
    let two = [member(b"b;2.0\na;1.0\n"), member(b"b;-3.0\n")].concat();
    for (padding, ok) in [
        (&b""[..], true),
        (&[0; 1][..], true),
        (&[0; 100_000][..], true),
        (&b"\0\0x"[..], false),
    ] {
        let (_dir, path) = input("padded.gz", &[&two[..], padding].concat());
        let run = brc().arg(&path).assert();
        if ok {
            run.success().stdout(ANSWER);
        } else {
            run.code(1).stdout("").stderr(
                "brc: padded.gz: gzip data followed by zero bytes, then other bytes\n"
                    .replace("padded.gz", &path.display().to_string()),
            );
        }
    }
}

#[cfg(target_os = "linux")]
#[test]
fn an_unwritable_stderr_still_exits_1() {
    let (_dir, path) = input("bad.txt", b"a;1.x\n");
    let out = plain()
        .arg(&path)
        .stderr(File::create("/dev/full").unwrap())
        .stdout(Stdio::piped())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    // And a usage error still exits 2.
    let out = plain()
        .arg("--frobnicate")
        .stderr(File::create("/dev/full").unwrap())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn completions_and_the_man_page_come_from_the_command_line_definition() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = brc().args(["completions", shell]).output().unwrap();
        assert!(out.status.success(), "{shell}");
        let text = String::from_utf8(out.stdout).unwrap();
        // Every flag and subcommand is offered.
        for word in ["chunk-size", "engine", "format", "generate", "completions"] {
            assert!(text.contains(word), "{shell}: {word}");
        }
    }
    let out = brc().arg("man").output().unwrap();
    assert!(out.status.success());
    let mut page = String::new();
    out.stdout.as_slice().read_to_string(&mut page).unwrap();
    assert!(page.starts_with(".ie \\n(.g"), "{page}");
    assert!(page.contains(".TH brc 1"), "{page}");
    assert!(page.contains("chunk\\-size"), "{page}");
    brc().args(["completions", "tcsh"]).assert().code(2);
}
