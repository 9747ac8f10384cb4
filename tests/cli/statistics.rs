//! `--stats`: every format with the statistics asked, in order; the
//! default unchanged on every official sample; unknown names a usage error;
//! partials that keep too little for a statistic an error naming it.

use crate::{brc, input, samples};

/// Values of one station that tie its sample standard deviation and its
/// mean exactly; a station of one value; a station of two.
const INPUT: &str = "a;1.0\na;2.0\na;3.0\na;4.0\nb;-5.5\nc;1.2\nc;1.3\n";

const ALL: &str = "count,sum,min,max,mean,stddev,stddev_pop,median,p25,p99.9";

/// `brc --stats ALL` in `format` on [`INPUT`].
fn shown(format: &str) -> String {
    let (_dir, path) = input("stats.txt", INPUT.as_bytes());
    let output = brc()
        .args(["--stats", ALL, "--format", format])
        .arg(&path)
        .assert()
        .success()
        .stderr("");
    String::from_utf8(output.get_output().stdout.clone()).unwrap()
}

#[test]
fn every_format_shows_the_statistics_in_the_order_asked() {
    // a: 1..4, sample stddev √(5/3) = 1.29, population √1.25 = 1.12,
    // median the lower middle 2.0, p25 the first value, p99.9 the last.
    let official = "{a=4/10.0/1.0/4.0/2.5/1.3/1.1/2.0/1.0/4.0, \
                    b=1/-5.5/-5.5/-5.5/-5.5/-/0.0/-5.5/-5.5/-5.5, \
                    c=2/2.5/1.2/1.3/1.3/0.1/0.1/1.2/1.2/1.3}\n";
    assert_eq!(shown("official"), official);
    let lines = "{\n    a=4/10.0/1.0/4.0/2.5/1.3/1.1/2.0/1.0/4.0,\n    \
                 b=1/-5.5/-5.5/-5.5/-5.5/-/0.0/-5.5/-5.5/-5.5,\n    \
                 c=2/2.5/1.2/1.3/1.3/0.1/0.1/1.2/1.2/1.3\n}\n";
    assert_eq!(shown("lines"), lines);
    let csv = "station,count,sum,min,max,mean,stddev,stddev_pop,median,p25,p99.9\n\
               a,4,10.0,1.0,4.0,2.5,1.3,1.1,2.0,1.0,4.0\n\
               b,1,-5.5,-5.5,-5.5,-5.5,,0.0,-5.5,-5.5,-5.5\n\
               c,2,2.5,1.2,1.3,1.3,0.1,0.1,1.2,1.2,1.3\n";
    assert_eq!(shown("csv"), csv);
    let json = shown("json");
    assert!(json.contains(
        "{\"station\":\"b\",\"count\":1,\"sum\":-5.5,\"min\":-5.5,\"max\":-5.5,\"mean\":-5.5,\
         \"stddev\":null,\"stddev_pop\":0.0,\"median\":-5.5,\"p25\":-5.5,\"p99.9\":-5.5}"
    ));
    assert_eq!(json.lines().count(), 5, "{json}");
}

#[test]
fn min_mean_max_asked_print_the_official_output_of_every_sample() {
    for sample in samples() {
        let plain = brc().arg(&sample).assert().success();
        let asked = brc()
            .args(["--stats", "min,mean,max", "-t", "2"])
            .arg(&sample)
            .assert()
            .success();
        assert_eq!(
            asked.get_output().stdout,
            plain.get_output().stdout,
            "{}",
            sample.display()
        );
    }
}

#[test]
fn an_unknown_statistic_is_a_usage_error() {
    let (_dir, path) = input("stats.txt", INPUT.as_bytes());
    let out = brc()
        .args(["--stats", "min,avg"])
        .arg(&path)
        .assert()
        .code(2)
        .stdout("");
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(stderr.contains("unknown statistic \"avg\""), "{stderr}");
    for sub in [
        &["--stats", "min,median,min"][..],
        &["merge", "--stats", "p99,p99"],
    ] {
        let out = brc().args(sub).arg(&path).assert().code(2).stdout("");
        let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
        assert!(
            stderr.contains("asked twice: expected each statistic once"),
            "{stderr}"
        );
    }
}

#[test]
fn a_merge_of_partials_that_kept_no_counts_refuses_a_median() {
    let (dir, path) = input("stats.txt", INPUT.as_bytes());
    let partial = |args: &[&str], name: &str| {
        let out = brc()
            .args(args)
            .arg("-f")
            .arg("partial")
            .arg(&path)
            .assert()
            .success();
        let file = dir.path().join(name);
        std::fs::write(&file, &out.get_output().stdout).unwrap();
        file
    };
    let counts = partial(&["--stats", "median", "--shard", "1/2"], "counts");
    let rest = partial(&["--stats", "median", "--shard", "2/2"], "rest");
    let basic = partial(&["--shard", "2/2"], "basic");
    brc()
        .args(["merge", "--stats", "count,median,p99.9"])
        .args([&counts, &rest])
        .assert()
        .success()
        .stdout("{a=4/2.0/4.0, b=1/-5.5/-5.5, c=2/1.2/1.3}\n");
    brc()
        .args(["merge", "--stats", "min,median"])
        .args([&counts, &basic])
        .assert()
        .code(1)
        .stdout("")
        .stderr(
            "brc: median needs each key's counts per value, which this summary does not keep \
             (aggregate, or make the partials, with it asked)\n",
        );
}
