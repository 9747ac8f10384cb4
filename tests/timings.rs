//! Smoke test of `brc --timings`: the output is unchanged and the phase
//! report goes to stderr, on the file path and on a pipe.

use assert_cmd::Command;

const SAMPLE: &str = "tests/data/1brc/measurements-20.txt";

fn stdout_of(args: &[&str], stdin: Option<Vec<u8>>) -> (Vec<u8>, String) {
    let mut cmd = Command::cargo_bin("brc").unwrap();
    cmd.args(args);
    if let Some(bytes) = stdin {
        cmd.write_stdin(bytes);
    }
    let out = cmd.assert().success().get_output().clone();
    (out.stdout, String::from_utf8(out.stderr).unwrap())
}

#[test]
fn timings_report_goes_to_stderr_and_leaves_stdout_alone() {
    let expected = std::fs::read("tests/data/1brc/measurements-20.out").unwrap();
    let (plain, quiet) = stdout_of(&[SAMPLE], None);
    assert_eq!(plain, expected);
    assert!(quiet.is_empty());
    let piped = std::fs::read(SAMPLE).unwrap();
    for (args, stdin, threads) in [
        (vec!["--timings", "-t", "2", SAMPLE], None, 2),
        (vec!["--timings", "-t", "1", "-"], Some(piped), 1),
    ] {
        let (out, report) = stdout_of(&args, stdin);
        assert_eq!(out, expected, "{args:?}");
        // The report's layout is unit-tested in the library; here: it is
        // fed by the real run (its rows, and one line per worker thread).
        let workers = report.lines().filter(|l| l.contains(" busy ")).count();
        assert_eq!(workers, threads, "{report}");
        assert!(report.contains("20 rows"), "{report}");
        let threads = match threads {
            1 => "1 thread)".to_string(),
            n => format!("{n} threads)"),
        };
        assert!(report.contains(&threads), "{report}");
    }
}
