//! Parquet files from the command line: told by their bytes, alone or
//! among text files, sharded, and refused with the row group and row.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use parquet::data_type::{ByteArray, ByteArrayType, DoubleType};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;

use assert_cmd::assert::OutputAssertExt;

use super::{brc, run};

/// `brc generate` of `rows` rows of the 10K set into `dir`, as text and as
/// Parquet: the same rows.
fn generated(dir: &Path, rows: &str, seed: &str) -> (PathBuf, PathBuf) {
    let text = dir.join(format!("rows-{seed}.txt"));
    let parquet = dir.join(format!("rows-{seed}.data"));
    for (path, format) in [(&text, "text"), (&parquet, "parquet")] {
        let args = [
            "generate", "-n", rows, "-k", "10k", "-s", seed, "-f", format, "-o",
        ];
        run(&[&args[..], &[path.to_str().unwrap()]].concat(), b"");
    }
    (text, parquet)
}

#[test]
fn a_parquet_file_gives_what_its_rows_as_text_give_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    // Several row groups of 1,048,576 rows, and a name set that dictionary
    // pages hold.
    let (text, parquet) = generated(dir.path(), "2.5M", "1");
    for format in ["official", "json", "csv", "partial"] {
        for threads in ["1", "2"] {
            let args =
                |p: &Path| ["-f", format, "-t", threads, p.to_str().unwrap()].map(String::from);
            assert_eq!(
                run(&args(&parquet), b""),
                run(&args(&text), b""),
                "{format} {threads}"
            );
        }
    }
}

#[test]
fn parquet_and_text_files_read_as_one_input_and_shard() {
    let dir = tempfile::tempdir().unwrap();
    let (text_a, parquet_a) = generated(dir.path(), "300k", "2");
    let (text_b, parquet_b) = generated(dir.path(), "1.2M", "3");
    let path = |p: &PathBuf| p.to_str().unwrap().to_string();
    let all_text = run(&[path(&text_a), path(&text_b)], b"");
    let mixed = [path(&text_a), path(&parquet_b)];
    assert_eq!(run(&mixed, b""), all_text);
    assert_eq!(run(&[path(&parquet_a), path(&text_b)], b""), all_text);
    // Shards of the mixed inputs merge into the whole: Parquet by row
    // group (the big file has two), text by line.
    let mut partials = Vec::new();
    for k in 1..=4 {
        let out = dir.path().join(format!("p{k}"));
        let shard = format!("{k}/4");
        let partial = run(
            &[
                &["--shard", &shard, "-f", "partial"],
                &mixed.each_ref().map(|s| s.as_str())[..],
            ]
            .concat(),
            b"",
        );
        std::fs::write(&out, partial).unwrap();
        partials.push(path(&out));
    }
    assert_eq!(
        run(&[&["merge".to_string()][..], &partials].concat(), b""),
        all_text
    );
}

/// A Parquet file of `station` and `measure` doubles, one row group.
fn doubles(dir: &Path, rows: &[(&str, f64)]) -> PathBuf {
    let schema = "message m { optional binary station (STRING); optional double measure; }";
    let path = dir.join("bad.parquet");
    let file = std::fs::File::create(&path).unwrap();
    let schema = Arc::new(parse_message_type(schema).unwrap());
    let props = Arc::new(WriterProperties::builder().build());
    let mut writer = SerializedFileWriter::new(file, schema, props).unwrap();
    let mut group = writer.next_row_group().unwrap();
    let levels = vec![1; rows.len()];
    let names: Vec<ByteArray> = rows.iter().map(|(n, _)| ByteArray::from(*n)).collect();
    let values: Vec<f64> = rows.iter().map(|(_, v)| *v).collect();
    let mut c = group.next_column().unwrap().unwrap();
    c.typed::<ByteArrayType>()
        .write_batch(&names, Some(&levels), None)
        .unwrap();
    c.close().unwrap();
    let mut c = group.next_column().unwrap().unwrap();
    c.typed::<DoubleType>()
        .write_batch(&values, Some(&levels), None)
        .unwrap();
    c.close().unwrap();
    group.close().unwrap();
    writer.close().unwrap();
    path
}

#[test]
fn refused_values_and_columns_are_one_line_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let bad = doubles(
        dir.path(),
        &[("a", 1.5), ("b", -3.0), ("a", 12.34), ("b", f64::NAN)],
    );
    let name = bad.display();
    brc()
        .arg(&bad)
        .assert()
        .code(1)
        .stdout("")
        .stderr(format!(
            "brc: {name}: row group 0, row 2: expected a number of tenths within ±99999999.9 in column `measure`, found 12.34\n"
        ));
    brc()
        .args(["--columns", "station,temp"])
        .arg(&bad)
        .assert()
        .code(1)
        .stdout("")
        .stderr(format!(
            "brc: {name}: expected a column named `temp`, found columns `station`, `measure`\n"
        ));
    let good = doubles(dir.path(), &[("a", 1.5), ("b", -3.0), ("a", 65.5)]);
    run(
        &["--columns", "station,measure", good.to_str().unwrap()],
        b"",
    );
    brc()
        .args(["--columns", "station"])
        .arg(&good)
        .assert()
        .code(2);
}

#[test]
fn a_damaged_parquet_file_is_an_error_without_a_panic_message() {
    let dir = tempfile::tempdir().unwrap();
    let (_, parquet) = generated(dir.path(), "100k", "4");
    let mut bytes = std::fs::read(&parquet).unwrap();
    // Zeros over the middle of the pages: the footer still reads.
    let mid = bytes.len() / 3;
    bytes[mid..mid + 4096].fill(0);
    std::fs::write(&parquet, &bytes).unwrap();
    let out = brc().arg(&parquet).assert().code(1).stdout("");
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with(&format!("brc: {}: ", parquet.display())),
        "{stderr}"
    );
}

#[test]
fn parquet_on_standard_input_is_read_from_a_file_and_refused_from_a_pipe() {
    let dir = tempfile::tempdir().unwrap();
    let (text, parquet) = generated(dir.path(), "20k", "3");
    let expected = run(&[&text], b"");
    // Redirected from the file: mapped and read by row group, as the file.
    let redirected = std::process::Command::new(env!("CARGO_BIN_EXE_brc"))
        .arg("-")
        .stdin(std::fs::File::open(&parquet).unwrap())
        .assert()
        .success()
        .stderr("");
    assert_eq!(redirected.get_output().stdout, expected);
    // Through a pipe: no footer to seek to.
    let bytes = std::fs::read(&parquet).unwrap();
    brc().arg("-").write_stdin(bytes).assert().code(1).stdout("").stderr(
        "brc: <stdin>: Parquet on a stream: its footer, at its end, is read first; give the file or its URL\n",
    );
}
