//! `brc generate`: write a reproducible measurements file.

use std::fmt;
use std::fs::{self, File};
use std::io::{self, IsTerminal};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use brc::generate::{Generator, Keys, Progress, MAX_KEYS};
use indicatif::{ProgressBar, ProgressState};

use crate::progress::rows_frame;

const AFTER_HELP: &str = "\
The output is a pure function of --rows, --keys and --seed: the same bytes
for any --threads and on any machine, and the first N rows of a longer file
are the N-row file. Counts accept 1000000, 1_000_000, 1e6, 1M, 1.5k;
suffixes k (10^3), M (10^6), B or G (10^9), T (10^12).

Keys:
  413  the official 413 stations; values with standard deviation 10,
       rounded to a tenth, clamped to -99.9..99.9 (the default)
  10k  10,000 names of 1..100 bytes built from world city names, as the
       official 10K-key generator builds them; standard deviation 7
  K    K names (1..10M): the first 100k built the same way, the others
       random, 1..100 bytes of UTF-8

Formats:
  text     `<station>;<value>` lines (the default), written by all threads
  parquet  the same rows as a Parquet file laid out as the One Trillion Row
           Challenge's files are (pandas and pyarrow's defaults): columns
           `station` (string) and `measure` (double), both
           dictionary-encoded, snappy pages, row groups of 1,048,576 rows;
           written by one thread
  csv      a data logger's export: the header `time,site,sensor,reading,unit`,
           then per row an ISO 8601 UTC time (2024-01-01T00:00:00Z, a
           second a row), the station as `site` (`, <country code>` added
           to every fifth station; names with a comma or quote quoted as
           RFC 4180 says), a sensor t1..t4, the value with three decimals
           (uniform within the text format's tenth) or, in 1% of rows, an
           empty cell, and the unit `C`; written by all threads";

/// Write a measurements file (`<station>;<value>` lines, Parquet or CSV),
/// reproducibly.
#[derive(clap::Args, Debug)]
#[command(after_help = AFTER_HELP)]
pub struct Args {
    /// Rows to write (e.g. 1B, 1e9, 1_000_000_000, 100M).
    #[arg(short = 'n', long, value_name = "N", value_parser = parse_count)]
    rows: u64,

    /// Station set: 413 (official), 10k, or a key count.
    #[arg(short = 'k', long, value_name = "KEYS", value_parser = parse_keys, default_value = "413")]
    keys: Keys,

    /// Seed of the random numbers.
    #[arg(short = 's', long, value_name = "S", default_value_t = 0)]
    seed: u64,

    /// Worker threads [default: all available cores].
    #[arg(short = 't', long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=brc::MAX_THREADS as i64))]
    threads: Option<u32>,

    /// Output format: text, parquet or csv.
    #[arg(short = 'f', long, value_name = "FORMAT", default_value = "text")]
    format: OutputFormat,

    /// Output file (`-` or none: stdout). Written to a new temporary file
    /// beside it, renamed to FILE at the end.
    #[arg(short = 'o', long, value_name = "FILE")]
    output: Option<PathBuf>,

    /// No progress bar (there is none anyway when stderr is not a terminal).
    #[arg(short = 'q', long)]
    quiet: bool,
}

/// What `brc generate` writes.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum OutputFormat {
    /// `<station>;<value>` lines.
    Text,
    /// A Parquet file.
    Parquet,
    /// `time,site,sensor,reading,unit` CSV.
    Csv,
}

/// Runs `brc generate`.
pub fn run(args: &Args) -> anyhow::Result<()> {
    let generator = Generator::new(args.keys, args.seed)?;
    let threads = match args.threads {
        Some(t) => t as usize,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let bytes = Arc::new(AtomicU64::new(0));
    let bar = progress_bar(args.rows, Arc::clone(&bytes), args.quiet);
    let progress = |p: Progress| {
        bytes.store(p.bytes, Ordering::Relaxed);
        bar.set_position(p.rows);
    };
    let write = |out: &mut (dyn io::Write + Send)| match args.format {
        OutputFormat::Text => generator.write(args.rows, threads, out, &progress),
        OutputFormat::Parquet => generator.write_parquet(args.rows, out, &progress),
        OutputFormat::Csv => generator.write_csv(args.rows, threads, out, &progress),
    };
    match args.output.as_deref().filter(|p| *p != Path::new("-")) {
        None => {
            write(&mut io::stdout()).context("stdout")?;
        }
        Some(path) => write_file(path, |mut file| write(&mut file))?,
    }
    bar.finish();
    Ok(())
}

/// Writes `path` through `write`. A regular file is written as a new
/// temporary file in the same directory and renamed at the end, so a failed
/// run never leaves a partial file under the real name; the temporary file
/// is removed on failure. It is created with a random name that must not
/// exist yet (`O_EXCL`), so no link or FIFO planted beside `path` is
/// followed or opened. Anything else that exists at `path` (`/dev/null`, a
/// pipe) is written in place: there is nothing to protect, and a rename
/// would replace it.
fn write_file(
    path: &Path,
    write: impl FnOnce(&File) -> io::Result<Progress>,
) -> anyhow::Result<()> {
    let name = path.display();
    if fs::metadata(path).is_ok_and(|m| !m.is_file()) {
        let file = File::create(path).with_context(|| name.to_string())?;
        write(&file).with_context(|| name.to_string())?;
        return Ok(());
    }
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let mut prefix = std::ffi::OsString::from(".");
    prefix.push(path.file_name().unwrap_or_default());
    prefix.push(".");
    let tmp = tempfile::Builder::new()
        .prefix(&prefix)
        .suffix(".tmp")
        // Subject to the umask, as a file created the usual way.
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666))
        .tempfile_in(dir)
        .with_context(|| name.to_string())?;
    write(tmp.as_file()).with_context(|| name.to_string())?;
    // Dropping `tmp` on an error above removes it; persisting renames it.
    tmp.persist(path)
        .map_err(|e| e.error)
        .with_context(|| name.to_string())?;
    Ok(())
}

/// A progress bar on stderr, hidden unless stderr is a terminal: rows
/// written out of `rows`, and `bytes`, which the writer keeps up to date.
fn progress_bar(rows: u64, bytes: Arc<AtomicU64>, quiet: bool) -> ProgressBar {
    if quiet || !io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let start = Instant::now();
    let frame = move |state: &ProgressState, w: &mut dyn fmt::Write| {
        let bytes = bytes.load(Ordering::Relaxed);
        let _ = w.write_str(&rows_frame(start.elapsed(), state.pos(), bytes, rows));
    };
    let style = crate::progress::style("[{wide_bar}] {frame}").with_key("frame", frame);
    let bar = ProgressBar::new(rows).with_style(style);
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

/// Parses `--keys`: `413` is the official set, anything else a count of
/// built names.
fn parse_keys(s: &str) -> Result<Keys, String> {
    match parse_count(s)? {
        413 => Ok(Keys::Official),
        n if (1..=MAX_KEYS as u64).contains(&n) => Ok(Keys::Built(n as usize)),
        _ => Err(format!(
            "expected 413, 10k or a key count from 1 to {MAX_KEYS}, found `{s}`"
        )),
    }
}

/// Parses a count: digits with optional `_` separators, an optional
/// fraction and exponent, and an optional suffix k, M, B/G or T (powers of
/// ten). The result must be a whole number.
fn parse_count(s: &str) -> Result<u64, String> {
    let bad = || format!("expected a count like 1000000, 1_000_000, 1e6 or 1M, found `{s}`");
    let digits: String = s.chars().filter(|&c| c != '_').collect();
    let (number, suffix) = match digits.as_bytes().last() {
        Some(b'k' | b'K') => (&digits[..digits.len() - 1], 3),
        Some(b'm' | b'M') => (&digits[..digits.len() - 1], 6),
        Some(b'b' | b'B' | b'g' | b'G') => (&digits[..digits.len() - 1], 9),
        Some(b't' | b'T') => (&digits[..digits.len() - 1], 12),
        _ => (&digits[..], 0),
    };
    let (mantissa, exponent) = match number.split_once(['e', 'E']) {
        Some((m, e)) => (m, e.parse::<u32>().map_err(|_| bad())?),
        None => (number, 0),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let all_digits = |t: &str| t.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() || !all_digits(whole) || !all_digits(fraction) {
        return Err(bad());
    }
    // value = whole.fraction * 10^(exponent + suffix), which must be whole:
    // the fraction digits beyond the exponent must all be zeros.
    let shift = exponent.saturating_add(suffix);
    let (kept, dropped) = fraction.split_at(fraction.len().min(shift as usize));
    if dropped.bytes().any(|b| b != b'0') {
        return Err(format!("`{s}` is not a whole number"));
    }
    let too_large = || format!("`{s}` is too large");
    let scale = 10u64
        .checked_pow(shift - kept.len() as u32)
        .ok_or_else(too_large)?;
    format!("{whole}{kept}")
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(scale))
        .ok_or_else(too_large)
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    #[test]
    fn a_failed_write_leaves_no_file_behind() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.txt");
        let result = write_file(&path, |mut file| {
            file.write_all(b"a;1.0\n")?;
            Err(io::Error::other("disk on fire"))
        });
        let message = format!("{:#}", result.unwrap_err());
        assert_eq!(message, format!("{}: disk on fire", path.display()));
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_successful_write_replaces_the_file_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.txt");
        fs::write(&path, "old contents, longer than the new").unwrap();
        write_file(&path, |mut file| {
            file.write_all(b"a;1.0\n")?;
            Ok(Progress { rows: 1, bytes: 6 })
        })
        .unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"a;1.0\n");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[cfg(unix)]
    #[test]
    fn devices_are_written_in_place() {
        let null = Path::new("/dev/null");
        write_file(null, |mut file| {
            file.write_all(b"a;1.0\n")?;
            Ok(Progress::default())
        })
        .unwrap();
        assert!(!fs::metadata(null).unwrap().is_file());
        assert!(!Path::new("/dev/null.tmp").exists());
    }

    #[test]
    fn counts_accept_the_usual_spellings() {
        for (text, n) in [
            ("0", 0),
            ("1000000000", 1_000_000_000),
            ("1_000_000_000", 1_000_000_000),
            ("1e9", 1_000_000_000),
            ("1E9", 1_000_000_000),
            ("1B", 1_000_000_000),
            ("1G", 1_000_000_000),
            ("100M", 100_000_000),
            ("10k", 10_000),
            ("10K", 10_000),
            ("1.5k", 1_500),
            ("2.5e6", 2_500_000),
            ("1.50M", 1_500_000),
            ("1e0", 1),
            ("2T", 2_000_000_000_000),
            ("18446744073709551615", u64::MAX),
        ] {
            assert_eq!(parse_count(text), Ok(n), "{text}");
        }
    }

    #[test]
    fn counts_reject_garbage() {
        for text in [
            "",
            "k",
            "-1",
            "1.5",
            "1.0005k",
            "1e",
            "e9",
            "1x",
            "abc",
            "1e-3",
            ".5M",
            "1..5",
            " 1",
            "18446744073709551616",
            "1e20",
            "99999999T",
        ] {
            assert!(parse_count(text).is_err(), "{text:?}");
        }
    }

    #[test]
    fn keys_name_the_official_set_or_a_count() {
        assert_eq!(parse_keys("413"), Ok(Keys::Official));
        assert_eq!(parse_keys("10k"), Ok(Keys::Built(10_000)));
        assert_eq!(parse_keys("10000"), Ok(Keys::Built(10_000)));
        assert_eq!(parse_keys("1"), Ok(Keys::Built(1)));
        assert!(parse_keys("0").is_err());
        assert_eq!(parse_keys("2M"), Ok(Keys::Built(2_000_000)));
        assert!(parse_keys("10000001").is_err());
        assert_eq!(parse_keys("100k"), Ok(Keys::Built(100_000)));
        assert!(parse_keys("ten").is_err());
    }
}
