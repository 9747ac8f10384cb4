//! `--format partial` and `brc merge`: the partials of pieces of every
//! official sample merge into its expected output, in any order and merge
//! tree; a malformed partial is refused with its file and line.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use brc::output::Format;

use crate::{brc, input, run, samples};

/// Cuts `text` at line ends into `n` pieces holding nearly the same
/// number of lines (empty pieces when there are fewer lines than `n`).
fn pieces(text: &[u8], n: usize) -> Vec<&[u8]> {
    let mut ends: Vec<usize> = (memchr::memchr_iter(b'\n', text).map(|i| i + 1)).collect();
    if ends.last().copied().unwrap_or(0) < text.len() {
        ends.push(text.len());
    }
    let end = |k: usize| match k * ends.len() / n {
        0 => 0,
        lines => ends[lines - 1],
    };
    (0..n).map(|k| &text[end(k)..end(k + 1)]).collect()
}

#[test]
fn pieces_cover_the_text_at_line_ends() {
    let text = b"a;1.0\nb;2.0\nc;3.0";
    assert_eq!(pieces(text, 1), [&text[..]]);
    let two: [&[u8]; 2] = [b"a;1.0\n", b"b;2.0\nc;3.0"];
    assert_eq!(pieces(text, 2), two);
    let five: [&[u8]; 5] = [b"", b"a;1.0\n", b"", b"b;2.0\n", b"c;3.0"];
    assert_eq!(pieces(text, 5), five);
}

/// Writes the partial of each of `n` pieces of `sample` into `dir`;
/// returns their paths.
fn partials(sample: &Path, n: usize, dir: &Path) -> Vec<PathBuf> {
    let text = std::fs::read(sample).unwrap();
    (pieces(&text, n).into_iter().enumerate())
        .map(|(k, piece)| {
            let txt = dir.join(format!("piece{k}.txt"));
            std::fs::write(&txt, piece).unwrap();
            let partial = dir.join(format!("piece{k}.partial"));
            let args = [OsStr::new("--format"), "partial".as_ref(), txt.as_os_str()];
            std::fs::write(&partial, run(&args, b"")).unwrap();
            partial
        })
        .collect()
}

/// `brc merge` with `args` before `partials`.
fn merge(args: &[&str], partials: &[&PathBuf], stdin: &[u8]) -> Vec<u8> {
    let mut all: Vec<&OsStr> = ["merge"].iter().chain(args).map(OsStr::new).collect();
    all.extend(partials.iter().map(|p| p.as_os_str()));
    run(&all, stdin)
}

#[test]
fn partials_of_pieces_of_every_sample_merge_into_its_expected_output() {
    for sample in samples() {
        let expected = std::fs::read(sample.with_extension("out")).unwrap();
        let whole = run(&[OsStr::new("--format=partial"), sample.as_os_str()], b"");
        for n in 1..=5 {
            let dir = tempfile::tempdir().unwrap();
            let parts = partials(&sample, n, dir.path());
            let forward: Vec<&PathBuf> = parts.iter().collect();
            let backward: Vec<&PathBuf> = parts.iter().rev().collect();
            let context = format!("{} in {n} pieces", sample.display());
            assert_eq!(merge(&[], &forward, b""), expected, "{context}");
            assert_eq!(merge(&["-t", "1"], &backward, b""), expected, "{context}");
            // The first piece on standard input, after the others.
            let stdin = std::fs::read(&parts[0]).unwrap();
            let dash = PathBuf::from("-");
            let rest = backward[..n - 1].iter().copied().chain([&dash]);
            let rest: Vec<&PathBuf> = rest.collect();
            assert_eq!(merge(&[], &rest, &stdin), expected, "{context}");
            // A tree: merges of the even and the odd pieces (none: the
            // empty partial), merged.
            let even: Vec<&PathBuf> = parts.iter().step_by(2).collect();
            let odd: Vec<&PathBuf> = parts.iter().skip(1).step_by(2).collect();
            let left = dir.path().join("even.partial");
            let right = dir.path().join("odd.partial");
            std::fs::write(&left, merge(&["-f", "partial"], &even, b"")).unwrap();
            std::fs::write(
                &right,
                match odd.is_empty() {
                    true => brc::Partial::default().to_bytes(),
                    false => merge(&["-f", "partial"], &odd, b""),
                },
            )
            .unwrap();
            assert_eq!(merge(&[], &[&right, &left], b""), expected, "{context}");
            // Merged partials are the whole's partial, to the byte.
            assert_eq!(merge(&["--format", "partial"], &backward, b""), whole);
            // Concatenated into one file.
            let concatenated: Vec<u8> = parts
                .iter()
                .flat_map(|p| std::fs::read(p).unwrap())
                .collect();
            let one = dir.path().join("all.partial");
            std::fs::write(&one, concatenated).unwrap();
            assert_eq!(merge(&[], &[&one], b""), expected, "{context}");
        }
    }
}

#[test]
fn merged_results_print_in_every_format_as_one_run_does() {
    let sample = samples()
        .into_iter()
        .find(|s| s.ends_with("measurements-complex-utf8.txt"))
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let parts = partials(&sample, 3, dir.path());
    let parts: Vec<&PathBuf> = parts.iter().collect();
    for (name, _) in Format::ALL {
        let one_run = run(
            &[OsStr::new("--format"), name.as_ref(), sample.as_os_str()],
            b"",
        );
        assert_eq!(merge(&["--format", name], &parts, b""), one_run, "{name}");
    }
}

/// A partial of `rows`, its first line announcing as many stations as
/// `rows` has lines.
fn partial(rows: &str) -> String {
    let stations = rows.lines().count();
    format!("brc-partial v1 stations={stations}\nstation,count,sum,min,max\n{rows}")
}

/// Asserts that `brc merge GOOD BAD` fails on the bad one with exactly
/// `brc: BAD: <message>`, exit status 1 and nothing on stdout.
fn assert_refused(bad: &[u8], message: &str) {
    let (_dir, good) = input("good.partial", partial("a,1,5,5,5\n").as_bytes());
    let (_dir, path) = input("bad.partial", bad);
    brc()
        .arg("merge")
        .args([&good, &path])
        .assert()
        .code(1)
        .stdout("")
        .stderr(format!("brc: {}: {message}\n", path.display()));
}

#[test]
fn malformed_partials_are_refused_with_their_line() {
    let first_line = "expected a first line `brc-partial v1 stations=<N>` or \
                      `brc-partial v2 keys=<N> scale=<S>` (`v3` likewise), found";
    let long_name = "x".repeat(101);
    let long_line = format!("{},1,5,5,5\n", "x".repeat(4100));
    let cases: Vec<(String, String)> = vec![
        (
            String::new(),
            format!("line 1: {first_line} the end of the input"),
        ),
        (
            "station,count,sum,min,max\na,1,5,5,5\n".into(),
            format!("line 1: {first_line} `station,count,sum,min,max`"),
        ),
        (
            partial("a,1,5,5,5\n").replace("v1", "v4"),
            "line 1: expected format version `v1`, `v2` or `v3`, found `v4`".into(),
        ),
        (
            "brc-partial v1 stations=x\n".into(),
            "line 1: expected ` stations=<N>` after `v1`, ` keys=<N> scale=<S>` after `v2` or `v3`, found ` stations=x`".into(),
        ),
        (
            "brc-partial v1 stations=1\nstation,min,max\n".into(),
            "line 2: expected the column names `station,count,sum,min,max`, found \
             `station,min,max`"
                .into(),
        ),
        (
            partial("a,1,5,5,5\n").replace("=1", "=3"),
            "line 4: expected 2 more station rows of the 3 the first line announces, \
             found the end of the input"
                .into(),
        ),
        (
            partial("a,1,5,5,5\nb,1,5,5,5\n").replace("=2", "=1"),
            "line 4: expected the end of the input or another partial's first line after \
             1 station rows, found `b,1,5,5,5`"
                .into(),
        ),
        (
            partial("a,1,5,5,5\n").trim_end().into(),
            "line 3: expected a line break at the end of the line, found the end of the input"
                .into(),
        ),
        (
            partial(&long_line),
            "line 3: expected a line of at most 4096 bytes, found a longer one".into(),
        ),
        (
            partial("a,1,5,5\n"),
            "line 3: expected 5 fields, found 4".into(),
        ),
        (
            partial("\"a,1,5,5,5\n"),
            "line 3: expected a `\"` closing the quoted field, found the end of the line".into(),
        ),
        (
            partial("\"a\"b,1,5,5,5\n"),
            "line 3: expected `,` or the end of the line after a closing `\"`, found \
             `b,1,5,5,5`"
                .into(),
        ),
        (
            partial("a\"b,1,5,5,5\n"),
            "line 3: expected `\"` only in a quoted field, found `a\\\"b`".into(),
        ),
        (
            partial("a,1.5,5,5,5\n"),
            "line 3: expected count as an integer (an optional `-`, digits, no leading zero), \
             found `1.5`"
                .into(),
        ),
        (
            partial("a,0,5,5,5\n"),
            "line 3: expected count in 1..=18446744073709551615, found `0`".into(),
        ),
        (
            partial("a,1,1000000000,1000000000,1000000000\n"),
            "line 3: expected min in -999999999..=999999999, found `1000000000`".into(),
        ),
        (
            partial("a,2,15,10,5\n"),
            "line 3: expected min <= max, found min 10 and max 5".into(),
        ),
        (
            partial("a,1,5,0,5\n"),
            "line 3: expected min = max for a count of 1, found min 0 and max 5".into(),
        ),
        (
            partial("a,2,100,-10,50\n"),
            "line 3: expected a sum in 40..=40 for count 2, min -10 and max 50, found 100".into(),
        ),
        (
            partial(",1,5,5,5\n"),
            "line 3: expected a station name of 1 to 100 bytes, found an empty one".into(),
        ),
        (
            partial(&format!("{long_name},1,5,5,5\n")),
            "line 3: expected a station name of 1 to 100 bytes, found one of 101 bytes".into(),
        ),
        (
            partial("a;b,1,5,5,5\n"),
            "line 3: expected a station name without `;`, found `a;b`".into(),
        ),
        (
            partial("b,1,5,5,5\na,1,5,5,5\n"),
            "line 4: expected stations sorted by name bytes, found `a` after `b`".into(),
        ),
        (
            partial("a,1,5,5,5\na,1,6,6,6\n"),
            "line 4: expected each station once in a partial, found `a` again".into(),
        ),
    ];
    for (bad, message) in cases {
        assert_refused(bad.as_bytes(), &message);
    }
    let mut bad = partial("ab,1,5,5,5\n").into_bytes();
    let b = bad.len() - 10;
    bad[b] = 0xff;
    assert_refused(
        &bad,
        "line 3: expected a UTF-8 station name, found invalid UTF-8 in `a\\xff`",
    );
}

#[test]
fn totals_beyond_64_bits_are_refused() {
    let full = partial(&format!("a,{},0,0,0\n", u64::MAX));
    let (_dir, path) = input("full.partial", full.as_bytes());
    brc()
        .args(["merge", "-"])
        .arg(&path)
        .write_stdin(partial("a,1,0,0,0\n"))
        .assert()
        .code(1)
        .stdout("")
        .stderr(
            "brc: station `a`: expected a total count of at most 18446744073709551615, \
             found 18446744073709551616\n",
        );
    // The largest count of 99.9s whose sum fits, then one more; and one
    // less again, in any order, fits.
    let n = i64::MAX / 999;
    let big = partial(&format!("a,{n},{},999,999\n", 999 * n));
    let (up, down) = (
        partial("a,1,999,999,999\n"),
        partial("a,1,-999,-999,-999\n"),
    );
    let (_dir, big_path) = input("big.partial", big.as_bytes());
    brc()
        .args(["merge", "-"])
        .arg(&big_path)
        .write_stdin(up.clone())
        .assert()
        .code(1)
        .stdout("")
        .stderr(format!(
            "brc: station `a`: expected a total sum in \
             -9223372036854775808..=9223372036854775807 tenths, found {}\n",
            i128::from(999 * n) + 999
        ));
    let both = format!("{up}{down}");
    let merged = run(
        &[OsStr::new("merge"), "-".as_ref(), big_path.as_os_str()],
        both.as_bytes(),
    );
    assert_eq!(merged, b"{a=-99.9/99.9/99.9}\n");
}

#[test]
fn usage_errors_and_missing_files() {
    let (_dir, path) = input("ok.partial", partial("a,1,5,5,5\n").as_bytes());
    for (args, complaint) in [
        (
            &["merge", "-", "-"][..],
            "`-` (standard input) may be given only once",
        ),
        (&["merge", "--format", "xml"], "--format"),
        (&["merge", "--threads", "0"], "--threads"),
    ] {
        let output = brc().args(args).arg(&path).assert().code(2).stdout("");
        let stderr = String::from_utf8_lossy(&output.get_output().stderr).into_owned();
        assert!(stderr.contains(complaint), "{args:?}: {stderr}");
    }
    // At least one partial.
    let output = brc().arg("merge").assert().code(2).stdout("");
    let stderr = String::from_utf8_lossy(&output.get_output().stderr).into_owned();
    assert!(stderr.contains("<PARTIAL>..."), "{stderr}");
    let missing = path.with_file_name("missing.partial");
    let output = brc()
        .arg("merge")
        .args([&path, &missing])
        .assert()
        .code(1)
        .stdout("");
    let stderr = String::from_utf8(output.get_output().stderr.clone()).unwrap();
    assert!(
        stderr.starts_with(&format!("brc: {}: ", missing.display())) && stderr.lines().count() == 1,
        "{stderr}"
    );
}

#[test]
fn help_says_what_a_partial_is_and_how_to_run_pieces() {
    let output = brc().args(["merge", "--help"]).assert().success();
    let help = String::from_utf8(output.get_output().stdout.clone()).unwrap();
    for needle in [
        "docs/PARTIAL-FORMAT.md",
        "brc-partial v1 stations=<N>",
        "station,count,sum,min,max",
        "brc --shard $k/4 --format partial big.txt",
        "brc merge p1 p2 p3 p4",
        "--format partial",
        "Exit status",
    ] {
        assert!(
            help.contains(needle),
            "merge --help lacks {needle:?}:\n{help}"
        );
    }
    let output = brc().arg("--help").assert().success();
    let help = String::from_utf8(output.get_output().stdout.clone()).unwrap();
    for needle in [
        "brc merge p1 p2 p3 p4",
        "--shard $k/4",
        "docs/PARTIAL-FORMAT.md",
    ] {
        assert!(help.contains(needle), "--help lacks {needle:?}:\n{help}");
    }
}
