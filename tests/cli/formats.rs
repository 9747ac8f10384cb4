//! The output formats: exact text on names that need escaping or quoting,
//! and, on every official sample, the same numbers as the official output.

use std::collections::BTreeMap;
use std::path::Path;

use crate::{brc, input, samples};

/// Names with `"`, `,`, `\`, a tab and a multi-byte character; means that
/// round a tie toward +∞ (12.25 → 12.3, -1.25 → -1.2); `-0.0`.
const INPUT: &str = "a,b;1.0\n\"q\";-0.0\nZürich;12.5\nback\\slash;99.9\n\
                     x;-1.5\ntab\tthere;-99.9\na,b;-0.2\nZürich;12.0\nx;-1.0";

fn run(bytes: &[u8], format: &str) -> String {
    let (_dir, path) = input("formats.txt", bytes);
    let output = brc()
        .args(["--format", format])
        .arg(&path)
        .assert()
        .success()
        .stderr("")
        .get_output()
        .stdout
        .clone();
    String::from_utf8(output).unwrap()
}

#[test]
fn official() {
    let expected = "{\"q\"=0.0/0.0/0.0, Zürich=12.0/12.3/12.5, a,b=-0.2/0.4/1.0, \
                    back\\slash=99.9/99.9/99.9, tab\tthere=-99.9/-99.9/-99.9, x=-1.5/-1.2/-1.0}\n";
    assert_eq!(run(INPUT.as_bytes(), "official"), expected);
    let (_dir, path) = input("default.txt", INPUT.as_bytes());
    brc().arg(&path).assert().success().stdout(expected);
}

#[test]
fn lines() {
    assert_eq!(
        run(INPUT.as_bytes(), "lines"),
        "{\n    \"q\"=0.0/0.0/0.0,\n    Zürich=12.0/12.3/12.5,\n    a,b=-0.2/0.4/1.0,\n    \
         back\\slash=99.9/99.9/99.9,\n    tab\tthere=-99.9/-99.9/-99.9,\n    x=-1.5/-1.2/-1.0\n}\n"
    );
}

#[test]
fn json() {
    let text = run(INPUT.as_bytes(), "json");
    assert_eq!(
        text,
        "[\n  {\"station\":\"\\\"q\\\"\",\"min\":0.0,\"mean\":0.0,\"max\":0.0,\"count\":1},\n  \
         {\"station\":\"Zürich\",\"min\":12.0,\"mean\":12.3,\"max\":12.5,\"count\":2},\n  \
         {\"station\":\"a,b\",\"min\":-0.2,\"mean\":0.4,\"max\":1.0,\"count\":2},\n  \
         {\"station\":\"back\\\\slash\",\"min\":99.9,\"mean\":99.9,\"max\":99.9,\"count\":1},\n  \
         {\"station\":\"tab\\u0009there\",\"min\":-99.9,\"mean\":-99.9,\"max\":-99.9,\"count\":1},\n  \
         {\"station\":\"x\",\"min\":-1.5,\"mean\":-1.2,\"max\":-1.0,\"count\":2}\n]\n"
    );
    // A JSON parser reads back the exact names and numbers.
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let stations = json.as_array().unwrap();
    let names: Vec<&str> = stations
        .iter()
        .map(|s| s["station"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["\"q\"", "Zürich", "a,b", "back\\slash", "tab\tthere", "x"]
    );
    let x = &stations[5];
    assert_eq!(
        [&x["min"], &x["mean"], &x["max"], &x["count"]].map(|v| v.as_f64().unwrap()),
        [-1.5, -1.2, -1.0, 2.0]
    );
}

#[test]
fn csv() {
    let text = run(INPUT.as_bytes(), "csv");
    assert_eq!(
        text,
        "station,min,mean,max,count\n\"\"\"q\"\"\",0.0,0.0,0.0,1\nZürich,12.0,12.3,12.5,2\n\
         \"a,b\",-0.2,0.4,1.0,2\nback\\slash,99.9,99.9,99.9,1\ntab\tthere,-99.9,-99.9,-99.9,1\n\
         x,-1.5,-1.2,-1.0,2\n"
    );
    // A CSV parser reads back the exact names.
    let names: Vec<String> = csv::Reader::from_reader(text.as_bytes())
        .records()
        .map(|r| r.unwrap()[0].to_string())
        .collect();
    assert_eq!(
        names,
        ["\"q\"", "Zürich", "a,b", "back\\slash", "tab\tthere", "x"]
    );
}

#[test]
fn empty_input_in_every_format() {
    for (format, expected) in [
        ("official", "{}\n"),
        ("lines", "{\n}\n"),
        ("json", "[]\n"),
        ("csv", "station,min,mean,max,count\n"),
    ] {
        assert_eq!(run(b"", format), expected, "{format}");
    }
}

/// One station's output fields, as text.
struct Row {
    name: String,
    min_mean_max: [String; 3],
    count: u64,
}

/// Rebuilds the official one-line output from rows.
fn official_from(rows: &[Row]) -> String {
    let stations: Vec<String> = rows
        .iter()
        .map(|r| format!("{}={}", r.name, r.min_mean_max.join("/")))
        .collect();
    format!("{{{}}}\n", stations.join(", "))
}

/// Rows per station, counted straight from the input text.
fn counts(sample: &Path) -> BTreeMap<String, u64> {
    let text = std::fs::read_to_string(sample).unwrap();
    let mut counts = BTreeMap::new();
    for line in text.lines() {
        let (name, _) = line.rsplit_once(';').unwrap();
        *counts.entry(name.to_string()).or_insert(0) += 1;
    }
    counts
}

fn json_rows(text: &str) -> Vec<Row> {
    let json: serde_json::Value = serde_json::from_str(text).unwrap();
    let tenths = |v: &serde_json::Value| format!("{:.1}", v.as_f64().unwrap());
    json.as_array()
        .unwrap()
        .iter()
        .map(|s| Row {
            name: s["station"].as_str().unwrap().to_string(),
            min_mean_max: [tenths(&s["min"]), tenths(&s["mean"]), tenths(&s["max"])],
            count: s["count"].as_u64().unwrap(),
        })
        .collect()
}

fn csv_rows(text: &str) -> Vec<Row> {
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    assert_eq!(
        reader.headers().unwrap(),
        vec!["station", "min", "mean", "max", "count"]
    );
    reader
        .records()
        .map(|r| {
            let r = r.unwrap();
            Row {
                name: r[0].to_string(),
                min_mean_max: [1, 2, 3].map(|i| r[i].to_string()),
                count: r[4].parse().unwrap(),
            }
        })
        .collect()
}

#[test]
fn every_format_carries_the_official_numbers_on_every_sample() {
    for sample in samples() {
        let expected = std::fs::read_to_string(sample.with_extension("out")).unwrap();
        let bytes = std::fs::read(&sample).unwrap();
        let counts = counts(&sample);

        let lines = run(&bytes, "lines");
        let body = lines
            .strip_prefix("{\n")
            .unwrap()
            .strip_suffix("}\n")
            .unwrap();
        let stations: Vec<&str> = body
            .lines()
            .map(|l| l.strip_prefix("    ").unwrap())
            .map(|l| l.strip_suffix(',').unwrap_or(l))
            .collect();
        assert_eq!(format!("{{{}}}\n", stations.join(", ")), expected);

        for (format, rows) in [
            ("json", json_rows(&run(&bytes, "json"))),
            ("csv", csv_rows(&run(&bytes, "csv"))),
        ] {
            let context = format!("{format} of {}", sample.display());
            assert_eq!(official_from(&rows), expected, "{context}");
            let got: BTreeMap<String, u64> = rows.into_iter().map(|r| (r.name, r.count)).collect();
            assert_eq!(got, counts, "{context}");
        }
    }
}
