//! Many inputs and shards, as a user runs them: files, directories,
//! standard input and compressed files read as one summary; each error
//! naming its file and line, the first in argument order winning;
//! `--shard K/N` of the official samples merged into their expected
//! outputs; empty shards; shard usage errors.

use std::ffi::OsStr;
use std::io::Write;
use std::path::{Path, PathBuf};

use assert_cmd::prelude::*;
use brc::Engine;

use crate::{brc, run, samples};

/// Asserts that `brc ARGS`, given `a;1.0` on standard input, is a usage
/// error: status 2, nothing on stdout, `complaint` on stderr.
fn assert_usage_error<S: AsRef<OsStr>>(args: &[S], complaint: &str) {
    let output = brc()
        .args(args)
        .write_stdin("a;1.0\n")
        .assert()
        .code(2)
        .stdout("");
    let stderr = String::from_utf8_lossy(&output.get_output().stderr).into_owned();
    assert!(stderr.contains(complaint), "{stderr}");
}

/// Asserts that `brc ARGS` fails with exactly `brc: <message>` on stderr,
/// status 1 and nothing on stdout, whatever the engine and threads.
fn assert_fails<S: AsRef<OsStr>>(args: &[S], message: &str) {
    for engine in Engine::ALL {
        for (threads, chunk_size) in [("1", "4M"), ("2", "1"), ("3", "16")] {
            brc()
                .args([
                    "-e",
                    engine.name(),
                    "-t",
                    threads,
                    "--chunk-size",
                    chunk_size,
                ])
                .args(args)
                .assert()
                .code(1)
                .stdout("")
                .stderr(format!("brc: {message}\n"));
        }
    }
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut encoder = flate2::write::GzEncoder::new(&mut out, flate2::Compression::fast());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap();
    out
}

/// Writes `files` (name, bytes) into `dir`; returns their paths.
fn write_all(dir: &Path, files: &[(&str, &[u8])]) -> Vec<PathBuf> {
    (files.iter())
        .map(|(name, bytes)| {
            let path = dir.join(name);
            std::fs::write(&path, bytes).unwrap();
            path
        })
        .collect()
}

const PIECES: [&[u8]; 4] = [b"b;2.0\na;1.0", b"a;-3.0", b"", b"c;9.9\nb;0.0\n"];
const ALL: &[u8] = b"b;2.0\na;1.0\na;-3.0\nc;9.9\nb;0.0\n";

#[test]
fn files_are_one_input_each_ending_its_last_line() {
    let dir = tempfile::tempdir().unwrap();
    let [whole] = &write_all(dir.path(), &[("all.txt", ALL)])[..] else {
        unreachable!()
    };
    let expected = run(&[whole], b"");
    // Plain, gzip, empty and zstd; the first two without a final newline.
    let zstd = zstd::encode_all(PIECES[3], 1).unwrap();
    let files = [
        ("0.txt", PIECES[0]),
        ("1.txt.gz", &gzip(PIECES[1])[..]),
        ("2.txt", PIECES[2]),
        ("3.txt.zst", &zstd[..]),
    ];
    let paths = write_all(dir.path(), &files);
    for engine in Engine::ALL {
        for (threads, chunk_size) in [("1", "4M"), ("2", "1"), ("3", "16")] {
            let mut args: Vec<&OsStr> = ["-e", engine.name(), "-t", threads, "--chunk-size"]
                .into_iter()
                .chain([chunk_size])
                .map(OsStr::new)
                .collect();
            args.extend(paths.iter().map(|p| p.as_os_str()));
            assert_eq!(run(&args, b""), expected, "{args:?}");
            // The second one on standard input, a pipe.
            let stdin = args.len() - 3;
            args[stdin] = OsStr::new("-");
            assert_eq!(run(&args, PIECES[1]), expected, "{args:?}");
        }
    }
    // Glued together, the first two would make a line `a;1.0a;-3.0`.
    let glued = [PIECES[0], PIECES[1]].concat();
    brc().arg("-").write_stdin(glued).assert().code(1);
}

#[test]
fn a_directory_stands_for_its_regular_files_in_byte_order_of_names() {
    let dir = tempfile::tempdir().unwrap();
    let logs = dir.path().join("logs");
    std::fs::create_dir_all(logs.join("sub")).unwrap();
    // In byte order: `10.txt`, `9.txt`, `Z.txt`, `b.txt`; hidden files and
    // subdirectories are left out (each would fail the run if read).
    let files = [
        ("b.txt", &b"b;1.0\n"[..]),
        ("10.txt", b"a;1.0\n"),
        ("Z.txt", b"z;1.0\n"),
        ("9.txt", b"n;1.0"),
        (".hidden.txt", b"bad\n"),
        ("sub/x.txt", b"bad\n"),
    ];
    write_all(&logs, &files);
    let expected = "{a=1.0/1.0/1.0, b=1.0/1.0/1.0, n=1.0/1.0/1.0, z=1.0/1.0/1.0}\n";
    brc().arg(&logs).assert().success().stdout(expected);
    // With a bad line in two of them, the first in byte order is named,
    // with the path as given plus the name.
    std::fs::write(logs.join("Z.txt"), b"z;1.0\nz;x\n").unwrap();
    std::fs::write(logs.join("b.txt"), b"b;\n").unwrap();
    let slash = format!("{}/", logs.display());
    let message = "Z.txt: line 2: expected a value like `-12.3` (-?d{1,2}.d), found `x`";
    assert_fails(&[&slash], &format!("{slash}{message}"));
    assert_fails(&[&logs], &format!("{}/{message}", logs.display()));
    // A subdirectory given is read; an empty one holds nothing.
    brc().arg(logs.join("sub")).assert().code(1);
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    brc().arg(&empty).assert().success().stdout("{}\n");
}

#[test]
fn files_are_opened_a_few_at_a_time() {
    // 2,000 files, every other one gzip (read as a stream, its file open
    // until read), and at most 16 open at once allowed (`ulimit -n`): they
    // are opened and closed in turn.
    let dir = tempfile::tempdir().unwrap();
    for i in 0..2000 {
        let line = format!("s{};{}.0\n", i % 3, i % 10);
        let (name, bytes) = match i % 2 {
            0 => (format!("{i:04}.txt"), line.into_bytes()),
            _ => (format!("{i:04}.txt.gz"), gzip(line.as_bytes())),
        };
        std::fs::write(dir.path().join(name), bytes).unwrap();
    }
    let dir = dir.path().display().to_string();
    for engine in Engine::ALL {
        let script = format!(
            "ulimit -n 16 && exec \"$0\" -t 3 -e {} \"$1\"",
            engine.name()
        );
        std::process::Command::new("sh")
            .args(["-c", &script, env!("CARGO_BIN_EXE_brc"), &dir])
            .assert()
            .success()
            .stdout("{s0=0.0/4.5/9.0, s1=0.0/4.5/9.0, s2=0.0/4.5/9.0}\n");
    }
}

#[test]
fn the_first_error_in_argument_order_wins() {
    let dir = tempfile::tempdir().unwrap();
    let files = [
        ("good.txt", &b"a;1.0\nb;2.0\n"[..]),
        ("late.txt", b"a;1.0\nb;2.0\nc;3.0.\nd;;\n"),
        ("early.txt", b";1.0\n"),
    ];
    let [good, late, early] = &write_all(dir.path(), &files)[..] else {
        unreachable!()
    };
    let missing = dir.path().join("missing.txt");
    let value = "line 3: expected a value like `-12.3` (-?d{1,2}.d), found `3.0.`";
    let name = "line 1: expected a station name before `;`, found an empty name";
    let gone = "No such file or directory (os error 2)";
    let d = |p: &PathBuf| p.display().to_string();
    assert_fails(&[good, late, early], &format!("{}: {value}", d(late)));
    assert_fails(&[good, early, late], &format!("{}: {name}", d(early)));
    assert_fails(&[good, &missing, late], &format!("{}: {gone}", d(&missing)));
    assert_fails(&[good, late, &missing], &format!("{}: {value}", d(late)));
}

#[test]
fn standard_input_may_be_given_once() {
    let dir = tempfile::tempdir().unwrap();
    let [good] = &write_all(dir.path(), &[("good.txt", b"a;1.0\n")])[..] else {
        unreachable!()
    };
    let args = [OsStr::new("-"), good.as_os_str(), "-".as_ref()];
    assert_usage_error(&args, "`-` (standard input) may be given only once");
    let output = run(&[OsStr::new("-"), good.as_os_str()], b"b;2.0\n");
    assert_eq!(output, b"{a=1.0/1.0/1.0, b=2.0/2.0/2.0}\n");
}

/// Writes the partials of `n` shards of `inputs` into `dir`, each run with
/// another engine and thread count; returns their paths.
fn shards(inputs: &[&Path], n: usize, dir: &Path) -> Vec<PathBuf> {
    (1..=n)
        .map(|k| {
            let engine = Engine::ALL[k % Engine::ALL.len()].name();
            let threads = (1 + k % 3).to_string();
            let shard = format!("{k}/{n}");
            let mut args: Vec<&OsStr> = ["--shard", &shard, "-f", "partial", "-e", engine, "-t"]
                .into_iter()
                .chain([threads.as_str()])
                .map(OsStr::new)
                .collect();
            args.extend(inputs.iter().map(|p| p.as_os_str()));
            let path = dir.join(format!("p{k}"));
            std::fs::write(&path, run(&args, b"")).unwrap();
            path
        })
        .collect()
}

/// `brc merge` of `partials`, last first.
fn merge(partials: &[PathBuf]) -> Vec<u8> {
    let args = std::iter::once(OsStr::new("merge"));
    let args: Vec<&OsStr> = args
        .chain(partials.iter().rev().map(|p| p.as_os_str()))
        .collect();
    run(&args, b"")
}

#[test]
fn shards_of_every_sample_merge_into_its_expected_output() {
    let samples = samples();
    for sample in &samples {
        let expected = std::fs::read(sample.with_extension("out")).unwrap();
        for n in [1, 2, 3, 5, 8] {
            let dir = tempfile::tempdir().unwrap();
            let partials = shards(&[sample], n, dir.path());
            assert_eq!(
                merge(&partials),
                expected,
                "{} in {n} shards",
                sample.display()
            );
        }
    }
    // All the samples as one input: shards cut across files.
    let all: Vec<&Path> = samples.iter().map(PathBuf::as_path).collect();
    let expected = run(&all, b"");
    for n in [2, 7] {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(merge(&shards(&all, n, dir.path())), expected, "{n} shards");
    }
}

#[test]
fn an_empty_shard_is_an_empty_result() {
    let dir = tempfile::tempdir().unwrap();
    let [one] = &write_all(dir.path(), &[("one.txt", b"a;1.0\n")])[..] else {
        unreachable!()
    };
    let empty = b"brc-partial v1 stations=0\nstation,count,sum,min,max\n";
    let mut held = 0;
    for k in 1..=8 {
        let shard = format!("{k}/8");
        let partial = run(
            &[
                OsStr::new("--shard"),
                shard.as_ref(),
                "-f=partial".as_ref(),
                one.as_ref(),
            ],
            b"",
        );
        let official = run(&[OsStr::new("--shard"), shard.as_ref(), one.as_ref()], b"");
        if partial == empty {
            assert_eq!(official, b"{}\n");
        } else {
            held += 1;
            assert_eq!(official, b"{a=1.0/1.0/1.0}\n");
        }
    }
    assert_eq!(held, 1, "one shard holds the line's first byte");
}

#[test]
fn a_shard_counts_a_faulty_lines_number_from_the_files_start() {
    // 2,000 lines, a bad one at line 1,500: in the second half.
    let mut text = Vec::new();
    for i in 1..=2000 {
        let line = match i {
            1500 => "Hamburg;1.00\n".to_string(),
            i => format!("s{};{}.0\n", i % 7, i % 50),
        };
        text.extend_from_slice(line.as_bytes());
    }
    let dir = tempfile::tempdir().unwrap();
    let files = [("m.txt", &text[..]), ("m.txt.gz", &gzip(&text)[..])];
    let [plain, gz] = &write_all(dir.path(), &files)[..] else {
        unreachable!()
    };
    let message = "line 1500: expected a value like `-12.3` (-?d{1,2}.d), found `1.00`";
    let shard = |k: &str, file: &Path| {
        let args = [OsStr::new("--shard"), k.as_ref(), file.as_os_str()];
        brc().args(args).assert()
    };
    shard("1/2", plain).success();
    let args = [OsStr::new("--shard"), "2/2".as_ref(), plain.as_os_str()];
    assert_fails(&args, &format!("{}: {message}", plain.display()));
    // A compressed file is read whole by the shard holding its first byte.
    shard("1/2", gz)
        .code(1)
        .stderr(format!("brc: {}: {message}\n", gz.display()));
    shard("2/2", gz).success().stdout("{}\n");
}

#[test]
fn shards_must_be_k_of_n() {
    for bad in [
        "0/3", "4/3", "1/0", "x", "1/", "/3", "-1/3", "1/3/5", " 1/3", "+1/3",
    ] {
        let arg = format!("--shard={bad}");
        assert_usage_error(&[&arg, "-"], "--shard");
        assert_usage_error(&[&arg, "-"], "expected K/N with 1 <= K <= N");
    }
}

#[test]
fn help_explains_many_inputs_and_shards() {
    let output = brc().arg("--help").assert().success();
    let help = String::from_utf8(output.get_output().stdout.clone()).unwrap();
    for needle in [
        "[FILE]...",
        "directory",
        "hidden",
        "(once)",
        "--shard <K/N>",
        "(a text object's by ranged requests)",
        "Compressed files and streams",
        "`s3://bucket/prefix/`",
        "AWS_ENDPOINT_URL",
        "for k in 1 2 3 4; do brc --shard $k/4 --format partial big.txt > p$k & done; wait",
        "brc merge p1 p2 p3 p4",
    ] {
        assert!(help.contains(needle), "--help lacks {needle:?}:\n{help}");
    }
}
