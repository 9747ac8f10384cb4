//! `brc --csv`, `--tsv` and `--delimiter`: delimited files end to end,
//! their errors, shards and partials.

use std::io::Write;

use super::brc;

const READINGS: &str = "\u{feff}time,site,sensor,reading,unit\r
2026-01-01T00:00:00Z,\"Kraków, PL\",t1,23.456,C\r
2026-01-01T00:00:01Z,Oslo,t2,-0.5,C\r
2026-01-01T00:00:02Z,Oslo,t1,,C\r
2026-01-01T00:00:03Z,\"Say \"\"hi\"\"\",t1,1.5e1,C\r
2026-01-01T00:00:04Z,\"Kraków, PL\",t2,NA,\"deg\r
C\"\r
2026-01-01T00:00:05Z,Lima,t2,7,C\r
2026-01-01T00:00:06Z,Lima,t1,-2.0005,C\r
";

fn file(dir: &tempfile::TempDir, name: &str, text: &str) -> String {
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

fn stderr_of(args: &[&str], stdin: &[u8]) -> (Option<i32>, String, Vec<u8>) {
    let out = brc().args(args).write_stdin(stdin).output().unwrap();
    (
        out.status.code(),
        String::from_utf8(out.stderr).unwrap(),
        out.stdout,
    )
}

#[test]
fn a_csv_export_reads_exactly_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let path = file(&dir, "readings.csv", READINGS);
    let args = ["--csv", "--key", "site", "--value", "reading", "-q", &path];
    let (code, stderr, stdout) = stderr_of(&args, b"");
    assert_eq!(code, Some(0));
    assert_eq!(
        stderr,
        "brc: 2 missing values (empty or null cells) skipped\n"
    );
    // Four decimals, the most precise value's; Lima's mean -> 2.49975 ->
    // 2.4998 (half toward +inf).
    assert_eq!(
        String::from_utf8(stdout).unwrap(),
        "{Kraków, PL=23.4560/23.4560/23.4560, Lima=-2.0005/2.4998/7.0000, \
         Oslo=-0.5000/-0.5000/-0.5000, Say \"hi\"=15.0000/15.0000/15.0000}\n"
    );
    let composite = [
        "--csv",
        "--key",
        "site,sensor",
        "--value",
        "4",
        "-f",
        "csv",
        &path,
    ];
    let csv = brc().args(composite).output().unwrap();
    assert_eq!(
        String::from_utf8(csv.stdout).unwrap(),
        "station,min,mean,max,count,missing\n\
         \"Kraków, PL|t1\",23.4560,23.4560,23.4560,1,0\n\
         \"Kraków, PL|t2\",,,,0,1\n\
         Lima|t1,-2.0005,-2.0005,-2.0005,1,0\n\
         Lima|t2,7.0000,7.0000,7.0000,1,0\n\
         Oslo|t1,,,,0,1\n\
         Oslo|t2,-0.5000,-0.5000,-0.5000,1,0\n\
         \"Say \"\"hi\"\"|t1\",15.0000,15.0000,15.0000,1,0\n"
    );
    let json = brc()
        .args(args)
        .args(["-f", "json", "--decimals", "1"])
        .output()
        .unwrap();
    let json = String::from_utf8(json.stdout).unwrap();
    assert!(json.contains("{\"station\":\"Lima\",\"min\":-2.0,\"mean\":2.5,\"max\":7.0,\"count\":2,\"missing\":0}"), "{json}");
    // The same file as TSV, gzip-compressed, through standard input.
    let tsv = READINGS
        .replace(',', "\t")
        .replace("Kraków\t PL", "Kraków, PL");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(tsv.as_bytes()).unwrap();
    let gz = gz.finish().unwrap();
    let (code, _, piped) = stderr_of(
        &["--tsv", "--key", "site", "--value", "reading", "-q", "-"],
        &gz,
    );
    assert_eq!(code, Some(0));
    let plain = brc().args(args).output().unwrap().stdout;
    assert_eq!(piped, plain);
}

#[test]
fn shards_merge_into_the_whole_at_the_finest_scale() {
    let dir = tempfile::tempdir().unwrap();
    let path = file(&dir, "readings.csv", READINGS);
    let whole = brc()
        .args(["--csv", "--key", "site", "--value", "reading", &path])
        .output()
        .unwrap();
    // Up to more shards than rows: many lie inside one row and read none.
    let keyed = ["--csv", "--key", "site", "--value", "reading"];
    for n in [2, 3, 5, 16, 40] {
        let merged = shards_merged(&dir, &keyed, &[&path], n);
        assert_eq!(merged, whole.stdout, "{n} shards");
    }
}

/// `brc merge` of the partials of `--shard k/n` runs, each with `args`
/// over `files`, each run checked to succeed.
fn shards_merged(dir: &tempfile::TempDir, args: &[&str], files: &[&str], n: usize) -> Vec<u8> {
    let mut merge = vec!["merge".to_string()];
    for k in 1..=n {
        let shard = format!("{k}/{n}");
        let out = brc()
            .args(args)
            .args(["--shard", &shard, "-f", "partial"])
            .args(files)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{shard}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).unwrap();
        merge.push(file(dir, &format!("part{k}"), &text));
    }
    brc().args(&merge).output().unwrap().stdout
}

#[test]
fn every_shard_checks_every_inputs_header() {
    let dir = tempfile::tempdir().unwrap();
    let first = file(&dir, "1.csv", "site,reading\na,1\nb,2\n");
    let same = file(&dir, "2.csv", "site,reading\nc,3.5\nd,4\n");
    let other = file(&dir, "3.csv", "site,temp\nc,3.5\nd,4\n");
    let gzipped = dir.path().join("1.csv.gz");
    let mut gz = flate2::write::GzEncoder::new(
        std::fs::File::create(&gzipped).unwrap(),
        flate2::Compression::default(),
    );
    gz.write_all(b"\"site\",\"reading\"\na,1\nb,2\n").unwrap();
    gz.finish().unwrap();
    let gzipped = gzipped.to_str().unwrap();
    let args = |shard: &str, files: &[&str]| {
        let mut args = vec!["--csv", "--key", "site", "--value", "2"];
        if !shard.is_empty() {
            args.extend(["--shard", shard, "-f", "partial"]);
        }
        args.extend(files);
        args.iter().map(|a| a.to_string()).collect::<Vec<_>>()
    };
    // Whichever shard reads no row of a file still reads its header: the
    // first file's, which the others must repeat, or the one that differs.
    let mismatch =
        format!("brc: {other}: line 1: expected the header of the first file, found another one\n");
    for firsts in [first.as_str(), gzipped] {
        let files = [firsts, &same, &other];
        let whole = brc().args(args("", &files)).output().unwrap();
        assert_eq!(String::from_utf8_lossy(&whole.stderr), mismatch);
        for n in [2, 3, 7] {
            for k in 1..=n {
                let out = brc()
                    .args(args(&format!("{k}/{n}"), &files))
                    .output()
                    .unwrap();
                assert_eq!(out.status.code(), Some(1), "{k}/{n}");
                assert_eq!(String::from_utf8_lossy(&out.stderr), mismatch, "{k}/{n}");
                assert!(out.stdout.is_empty());
            }
        }
        // Headers that agree (a quoted cell is the same cell): the shards
        // merge into the whole.
        let files = [firsts, &same];
        let whole = brc().args(args("", &files)).output().unwrap();
        assert!(whole.status.success());
        let keyed = ["--csv", "--key", "site", "--value", "2"];
        for n in [2, 3, 7] {
            let merged = shards_merged(&dir, &keyed, &files, n);
            assert_eq!(merged, whole.stdout, "{n} shards");
        }
    }
}

#[test]
fn a_shard_leaves_standard_input_to_the_shard_that_reads_it() {
    // Another shard's pipe is not read for its header: its bytes would be
    // taken from the shard that reads it, and a shard could wait on it.
    let dir = tempfile::tempdir().unwrap();
    let path = file(&dir, "a.csv", "site,reading\na,1\nb,2\nc,3\n");
    let args = [
        "--csv", "--key", "site", "--value", "2", "--shard", "1/2", "-f", "partial",
    ];
    let out = brc()
        .args(args)
        .args([&path, "-"])
        .write_stdin("other,header\nd,4\n")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let whole = brc()
        .args(["--csv", "--key", "site", "--value", "2", &path, "-"])
        .write_stdin("other,header\nd,4\n")
        .output()
        .unwrap();
    assert_eq!(whole.status.code(), Some(1));
}

#[test]
fn values_stay_within_18_digits_when_shown_with_more_decimals_or_merged() {
    let dir = tempfile::tempdir().unwrap();
    let path = file(&dir, "big.csv", "k,v\na,100000000000000000\n");
    let (code, stderr, _) = stderr_of(&["--csv", "--decimals", "1", &path], b"");
    assert_eq!(code, Some(1));
    assert_eq!(
        stderr,
        "brc: a: 100000000000000000 does not fit 18 digits with 1 decimals\n"
    );
    // One run refuses the finer value; its shards merged refuse it too.
    let both = file(&dir, "both.csv", "k,v\na,100000000000000000\nb,0.5\n");
    let (code, _, _) = stderr_of(&["--csv", &both], b"");
    assert_eq!(code, Some(1));
    let mut parts = vec!["merge".to_string()];
    for k in 1..=2 {
        let shard = format!("{k}/2");
        let out = brc()
            .args(["--csv", "--shard", &shard, "-f", "partial", &both])
            .output()
            .unwrap();
        assert!(out.status.success());
        parts.push(file(
            &dir,
            &format!("q{k}"),
            &String::from_utf8(out.stdout).unwrap(),
        ));
    }
    let (code, stderr, _) = stderr_of(&parts.iter().map(String::as_str).collect::<Vec<_>>(), b"");
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.ends_with("station `a`: its values do not fit 18 digits with 1 decimals\n"),
        "{stderr}"
    );
}

#[test]
fn bad_cells_are_one_line_errors_with_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    for (text, want) in [
        ("a,b\nx,1\ny,1,5\n", "line 3: expected 2 cells as in the header, found 3"),
        ("a,b\nx,1\n\"y\nz\",abc\n", "line 3, column 2: expected a decimal number like `-12.345`, found `abc`"),
        ("a,b\nx,\"1\n", "line 2, column 2: expected a `\"` closing the quoted cell, found the end of the input"),
        ("a,b\nx,12345678901234567890\n", "line 2, column 2: expected a number of at most 18 significant digits, found `12345678901234567890`"),
    ] {
        let path = file(&dir, "bad.csv", text);
        let (code, stderr, stdout) = stderr_of(&["--csv", &path], b"");
        assert_eq!(code, Some(1), "{text:?}");
        assert_eq!(stderr, format!("brc: {path}: {want}\n"));
        assert!(stdout.is_empty());
    }
    let path = file(&dir, "ok.csv", "a,b\nx,1\n");
    let (code, stderr, _) = stderr_of(&["--csv", "--value", "c", &path], b"");
    assert_eq!(code, Some(1));
    assert_eq!(
        stderr,
        format!("brc: {path}: line 1: expected a column `c`, found columns a, b\n")
    );
    let (code, stderr, stdout) = stderr_of(&["--csv", "--key", "a,1", "--value", "b", &path], b"");
    assert_eq!(code, Some(1));
    assert_eq!(
        stderr,
        format!("brc: {path}: line 1: expected each key column once, found column 1 (`a`) twice\n")
    );
    assert!(stdout.is_empty());
    let (code, stderr, _) = stderr_of(&["--delimiter", "ab", &path], b"");
    assert_eq!(code, Some(2), "{stderr}");
    // What brc says of a line break names it escaped, on one line.
    for (delimiter, said) in [
        ("\n", "`\\n` cannot be a delimiter"),
        ("\r\n", "found `\\r\\n`"),
    ] {
        let (code, stderr, _) = stderr_of(&["--delimiter", delimiter, &path], b"");
        assert_eq!(code, Some(2), "{stderr}");
        assert!(stderr.contains(said), "{stderr}");
    }
}

#[test]
fn bad_rows_are_skipped_and_named_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let path = file(
        &dir,
        "s.csv",
        "k,v\na,1.5\nb,x\nc,2,3\n\"d\ne\",4\n,5\na,2.5\n",
    );
    let (code, stderr, stdout) = stderr_of(&["--csv", "--on-error", "skip", &path], b"");
    assert_eq!(code, Some(0));
    assert_eq!(stdout, b"{a=1.5/2.0/2.5}\n");
    assert_eq!(
        stderr,
        format!("brc: 4 bad rows skipped, the first at {path}: line 3; {path}: line 4; {path}: line 5; {path}: line 7\n")
    );
    // Quoting faults still fail the run.
    let path = file(&dir, "q.csv", "k,v\na,1\"\n");
    let (code, _, _) = stderr_of(&["--csv", "--on-error", "skip", &path], b"");
    assert_eq!(code, Some(1));
}
