//! Standard input, pipes and compressed input, run as a user runs them:
//! the same output and the same errors as the plain file path.

use std::io::Write;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use brc::Engine;

fn brc() -> Command {
    Command::new(env!("CARGO_BIN_EXE_brc"))
}

fn data(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(path)
}

/// Deterministic measurements: names of 1 to 4 bytes per character, so
/// that small blocks and pipe reads split multi-byte names, and values
/// over the whole range.
fn measurements(rows: usize, seed: u64, last_newline: bool) -> Vec<u8> {
    const NAMES: [&str; 5] = ["Abha", "Zürich", "Ōsaka", "東京", "🌋 Etna"];
    let mut state = seed;
    let mut out = Vec::new();
    for _ in 0..rows {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let name = NAMES[(state >> 33) as usize % NAMES.len()];
        let tenths = (state >> 40) as i64 % 1999 - 999;
        let sign = if tenths < 0 { "-" } else { "" };
        let t = tenths.unsigned_abs();
        writeln!(out, "{name};{sign}{}.{}", t / 10, t % 10).unwrap();
    }
    if !last_newline {
        out.pop();
    }
    out
}

/// What `brc FILE` prints for `bytes`, with `args`.
fn from_file(bytes: &[u8], args: &[&str]) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("measurements.txt");
    std::fs::write(&path, bytes).unwrap();
    let out = brc().args(args).arg(&path).assert().success().stderr("");
    out.get_output().stdout.clone()
}

#[test]
fn stdin_gives_what_the_file_gives() {
    for (rows, seed, last_newline) in [
        (0, 1, true),
        (1, 2, false),
        (3000, 3, true),
        (20_000, 4, false),
    ] {
        let input = measurements(rows, seed, last_newline);
        for engine in Engine::ALL {
            // 1K blocks put block boundaries all over the input.
            let args = [
                "--engine",
                engine.name(),
                "--chunk-size",
                "1K",
                "--threads",
                "3",
            ];
            let expected = from_file(&input, &args);
            assert!(expected.starts_with(b"{"));
            for stdin_args in [&["-"][..], &[]] {
                brc()
                    .args(args)
                    .args(stdin_args)
                    .write_stdin(input.clone())
                    .assert()
                    .success()
                    .stdout(expected.clone())
                    .stderr("");
            }
        }
    }
}

#[test]
fn compressed_files_and_streams_are_decompressed() {
    for (fixture, sample) in [
        (
            "compressed/complex-utf8.txt.gz",
            "1brc/measurements-complex-utf8",
        ),
        (
            "compressed/complex-utf8.txt.zst",
            "1brc/measurements-complex-utf8",
        ),
        (
            "compressed/10000-unique-keys.txt.gz",
            "1brc/measurements-10000-unique-keys",
        ),
        (
            "compressed/10000-unique-keys.txt.zst",
            "1brc/measurements-10000-unique-keys",
        ),
    ] {
        let expected = std::fs::read(data(&format!("{sample}.out"))).unwrap();
        let compressed = std::fs::read(data(fixture)).unwrap();
        // Told by the magic bytes, not by the name.
        let dir = tempfile::tempdir().unwrap();
        let misnamed = dir.path().join("measurements.txt");
        std::fs::write(&misnamed, &compressed).unwrap();
        for engine in Engine::ALL {
            for file in [data(fixture), misnamed.clone()] {
                brc()
                    .args(["--engine", engine.name(), "--chunk-size", "1K"])
                    .arg(file)
                    .assert()
                    .success()
                    .stdout(expected.clone())
                    .stderr("");
            }
            brc()
                .args(["--engine", engine.name(), "-"])
                .write_stdin(compressed.clone())
                .assert()
                .success()
                .stdout(expected.clone())
                .stderr("");
        }
    }
}

#[test]
fn errors_in_piped_input_give_the_line_and_name_stdin() {
    let mut input = measurements(5000, 7, true);
    input.extend_from_slice("Zürich;12.3\nZ\u{fc}rich;1e3\n".as_bytes());
    input.extend_from_slice(&measurements(5000, 8, true));
    let message = "line 5002: expected a value like `-12.3` (-?d{1,2}.d), found `1e3`\n";
    let mut gzipped = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gzipped.write_all(&input).unwrap();
    let gzipped = gzipped.finish().unwrap();
    for engine in Engine::ALL {
        for stdin in [&input, &gzipped] {
            brc()
                .args(["--engine", engine.name(), "--chunk-size", "1K", "-"])
                .write_stdin(stdin.clone())
                .assert()
                .code(1)
                .stdout("")
                .stderr(format!("brc: <stdin>: {message}"));
        }
    }
    // An invalid UTF-8 name, which the parallel engines meet only once per
    // distinct name, is found at its first line too.
    let mut input = measurements(3000, 9, true);
    input.extend_from_slice(b"Z\xfcrich;1.0\n");
    input.extend_from_slice(&measurements(3000, 10, true));
    input.extend_from_slice(b"Z\xfcrich;2.0\n");
    for engine in Engine::ALL {
        brc()
            .args(["--engine", engine.name(), "--chunk-size", "1K"])
            .write_stdin(input.clone())
            .assert()
            .code(1)
            .stdout("")
            .stderr(
                "brc: <stdin>: line 3001: expected a UTF-8 station name, \
                 found invalid UTF-8 in `Z\\xfcrich`\n",
            );
    }
}

/// A line longer than the blocks it is read in, and than any valid line:
/// the reader judges it without holding it, and says what the file path
/// says (tests/cli/errors.rs has the same lines in files).
#[test]
fn an_overlong_line_in_piped_input_is_reported_as_in_a_file() {
    let long = "x".repeat(100_000);
    let quoted = format!("`{}…`", "x".repeat(40));
    for (input, message) in [
        (
            format!("a;1.0\n{long}\nb;2.0\n"),
            format!("expected `;` between name and value, found none in {quoted}"),
        ),
        // The last line, without its newline.
        (
            format!("a;1.0\n{long}"),
            format!("expected `;` between name and value, found none in {quoted}"),
        ),
        (
            format!("a;1.0\n{long};1.0\n"),
            "expected a station name of at most 100 bytes, found one of 100000 bytes".into(),
        ),
        (
            format!("a;1.0\nb;{long}\n"),
            format!("expected a value like `-12.3` (-?d{{1,2}}.d), found {quoted}"),
        ),
        (
            format!("a;1.0\n;{long}\n"),
            "expected a station name before `;`, found an empty name".into(),
        ),
    ] {
        let mut gzipped = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gzipped.write_all(input.as_bytes()).unwrap();
        let gzipped = gzipped.finish().unwrap();
        for engine in Engine::ALL {
            for stdin in [input.as_bytes(), &gzipped] {
                brc()
                    .args(["--engine", engine.name(), "--chunk-size", "1K", "-"])
                    .write_stdin(stdin)
                    .assert()
                    .code(1)
                    .stdout("")
                    .stderr(format!("brc: <stdin>: line 2: {message}\n"));
            }
        }
    }
}

#[test]
fn a_corrupt_compressed_stream_is_a_read_error() {
    let compressed = std::fs::read(data("compressed/10000-unique-keys.txt.gz")).unwrap();
    let truncated = &compressed[..compressed.len() / 2];
    for engine in Engine::ALL {
        let out = brc()
            .args(["--engine", engine.name(), "-"])
            .write_stdin(truncated)
            .assert()
            .code(1)
            .stdout("");
        let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
        assert!(stderr.starts_with("brc: <stdin>: "), "{stderr}");
        assert!(!stderr.contains("line"), "{stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
    }
}
