//! A Parquet file brc reads, however malformed or cut short, gives a
//! one-line error or the rows the `parquet` crate's record reader finds in
//! it (as many as its footer counts), never a crash.
//!
//! An input starting with `PAR1` is the file itself (fuzz/seeds/parquet/
//! holds a few). Any other input edits one of a few small files that
//! `brc::parquet::write` makes: its first byte picks the file and the
//! thread count, each next four bytes an edit (a byte set, flipped or
//! added to, a range cut out or copied elsewhere, the file cut and its
//! last bytes put back), so that the fuzzer starts past the footer's
//! parsing and reaches pages, encodings and values.
//!
//! brc reads files by path (it maps them), so each input is written to a
//! file of this process's in the temporary directory. The `parquet` crate
//! panics on some malformed files, which brc catches and reports as errors
//! (`brc::parquet::reading`), so such a panic passes here; a panic raised
//! in brc's own code is a crash even when caught, since the error it
//! becomes hides a bug of brc's.
#![no_main]

use std::collections::BTreeMap;
use std::io::Write;
use std::panic::{self, PanicHookInfo};
use std::path::PathBuf;
use std::sync::{Once, OnceLock};

use brc::parquet::write::{write, Layout};
use brc::{Engine, Inputs, Options, Source, Stats};
use bytes::Bytes;
use libfuzzer_sys::fuzz_target;
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::Field;

fuzz_target!(|data: &[u8]| {
    static HOOK: Once = Once::new();
    HOOK.call_once(set_hook);
    let Some((&knobs, edits)) = data.split_first() else {
        return;
    };
    let file = match data.starts_with(b"PAR1") {
        true => data.to_vec(),
        false => edited(knobs, edits),
    };
    // A file without the magic at both ends is text to brc.
    if file.len() < 12 || !file.ends_with(b"PAR1") {
        return;
    }
    let path = scratch();
    std::fs::write(&path, &file).unwrap();
    let options = Options {
        threads: 1 + usize::from(knobs & 1),
        ..Options::default()
    };
    let got = Inputs::new([Source::File(path)]).aggregate(Engine::default(), &options);
    let summary = match got {
        Ok(summary) => summary,
        Err(e) => {
            let message = e.to_string();
            assert!(
                !message.contains('\n'),
                "a message of many lines: {message}"
            );
            return;
        }
    };
    let got: BTreeMap<&str, &Stats> = summary.iter().collect();
    let want = match decoded(&file) {
        Ok(want) => want,
        Err(e) => panic!("brc read a file the crate refuses ({e}): {got:?}"),
    };
    let rows: u64 = got.values().map(|s| s.count).sum();
    assert_eq!(rows, want.rows, "rows against the footer's");
    assert_eq!(got.len(), want.names.len(), "names: {got:?}");
    for (name, stats) in &got {
        let (count, values) = want.names.get(*name).unwrap_or_else(|| panic!("{name:?}"));
        assert_eq!(stats.count, *count, "{name:?}");
        if let Some(values) = values {
            assert_eq!(
                (stats.min, stats.max, i128::from(stats.sum)),
                *values,
                "{name:?}"
            );
        }
    }
});

/// A file of this process's own to write inputs to.
fn scratch() -> PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let name = format!("brc-fuzz-parquet-{}", std::process::id());
        std::env::temp_dir().join(name)
    })
    .clone()
}

std::thread_local! {
    /// Whether this thread is decoding a file with the crate's record
    /// reader, whose panics on malformed files are no finding.
    static DECODING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Lets panics caught where they are expected pass silently: the crate's,
/// under brc's guard or the oracle's. Any other ends the process as
/// libFuzzer's hook does, so that it is reported.
fn set_hook() {
    let fuzzer = panic::take_hook();
    panic::set_hook(Box::new(move |info| {
        let expected = DECODING.with(|d| d.get()) || (brc::parquet::reading() && from_crate(info));
        if !expected {
            fuzzer(info);
        }
    }));
}

/// Whether a panic comes from the `parquet` crate's code, not brc's: told
/// by where it was raised, or where that is in neither (the standard
/// library, `bytes`), by the innermost frame in either.
fn from_crate(info: &PanicHookInfo) -> bool {
    let file = info.location().map_or("", |l| l.file());
    if let Some(is_crate) = crate_of(file) {
        return is_crate;
    }
    let trace = std::backtrace::Backtrace::force_capture().to_string();
    (trace.lines())
        .filter_map(|line| line.trim_start().strip_prefix("at "))
        .find_map(crate_of)
        .unwrap_or(false)
}

/// Whether source `file` is the `parquet` crate's (`Some(true)`) or brc's
/// (`Some(false)`), or neither.
fn crate_of(file: &str) -> Option<bool> {
    static BRC: OnceLock<String> = OnceLock::new();
    let brc = BRC.get_or_init(|| {
        let fuzz = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        format!("{}/src/", fuzz.parent().unwrap().display())
    });
    if file.starts_with(brc.as_str()) {
        return Some(false);
    }
    let package = file.split('/').find(|p| p.starts_with("parquet-"))?;
    package["parquet-".len()..]
        .starts_with(|c: char| c.is_ascii_digit())
        .then_some(true)
}

/// What the crate's record reader finds in a file.
struct Decoded {
    /// The rows the footer counts.
    rows: u64,
    /// Each name's rows, and their values' (min, max, sum) in tenths
    /// where the values are doubles, floats or plain integers.
    names: BTreeMap<String, (u64, Option<Values>)>,
}

/// Values' (min, max, sum) in tenths.
type Values = (i64, i64, i128);

/// The `station` and `measure` columns of `file`, by the crate's record
/// reader (not the column readers brc uses).
fn decoded(file: &[u8]) -> Result<Decoded, String> {
    DECODING.with(|d| d.set(true));
    let result = panic::catch_unwind(|| decode(file));
    DECODING.with(|d| d.set(false));
    result.unwrap_or_else(|_| Err("a panic".into()))
}

fn decode(file: &[u8]) -> Result<Decoded, String> {
    let reader =
        SerializedFileReader::new(Bytes::copy_from_slice(file)).map_err(|e| e.to_string())?;
    let metadata = reader.metadata();
    let rows = (metadata.row_groups().iter())
        .map(|g| u64::try_from(g.num_rows()).unwrap())
        .sum();
    let schema = metadata.file_metadata().schema();
    let fields = (schema.get_fields().iter())
        .filter(|f| ["station", "measure"].contains(&f.name()))
        .cloned()
        .collect();
    let projection = parquet::schema::types::Type::group_type_builder(schema.name())
        .with_fields(fields)
        .build()
        .map_err(|e| e.to_string())?;
    let mut names = BTreeMap::new();
    for row in reader
        .get_row_iter(Some(projection))
        .map_err(|e| e.to_string())?
    {
        let row = row.map_err(|e| e.to_string())?;
        let (mut name, mut tenths) = (None, None);
        for (column, field) in row.get_column_iter() {
            match (column.as_str(), field) {
                (_, Field::Null) => return Err(format!("a null {column}")),
                ("station", Field::Str(s)) => name = Some(s.clone()),
                ("station", Field::Bytes(b)) => {
                    name = Some(String::from_utf8_lossy(b.data()).into())
                }
                ("measure", Field::Double(x)) => tenths = Some((x * 10.0).round() as i64),
                ("measure", Field::Float(x)) => {
                    tenths = Some((f64::from(*x) * 10.0).round() as i64)
                }
                ("measure", Field::Int(v)) => tenths = Some(i64::from(*v) * 10),
                ("measure", Field::Long(v)) => tenths = Some(v.saturating_mul(10)),
                _ => {}
            }
        }
        let name = name.ok_or("a row without a name")?;
        let (count, values) = names.entry(name).or_insert((0, tenths.map(|t| (t, t, 0))));
        *count += 1;
        if let (Some(t), Some((min, max, sum))) = (tenths, values) {
            *min = (*min).min(t);
            *max = (*max).max(t);
            *sum += i128::from(t);
        }
    }
    Ok(Decoded { rows, names })
}

/// The files edits start from: one or more row groups of a few names, in
/// each layout the writer makes, compressed only in one.
fn seeds() -> &'static [Vec<u8>] {
    static SEEDS: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    SEEDS.get_or_init(|| {
        let names: [&[u8]; 4] = [b"a", b"Abha", "S\u{e3}o Paulo".as_bytes(), b"x"];
        let rows: Vec<(&[u8], f64)> = (0..40)
            .map(|i| (names[i * 7 % 4], (i as f64 * 13.0 - 200.0) / 10.0))
            .collect();
        let mut seeds = Vec::new();
        for dictionary in [true, false] {
            for v2_pages in [false, true] {
                for optional in [true, false] {
                    let layout = Layout {
                        group_rows: 25,
                        page_rows: 10,
                        dictionary,
                        dictionary_bytes: 1 << 10,
                        v2_pages,
                        optional,
                        snappy: false,
                    };
                    let mut out = Vec::new();
                    write(&mut out, rows.iter().copied(), &layout).unwrap();
                    seeds.push(out);
                }
            }
        }
        let mut out = Vec::new();
        write(&mut out, rows.iter().copied(), &Layout::default()).unwrap();
        seeds.push(out);
        seeds
    })
}

/// Seed `knobs >> 1` edited by `edits`, four bytes an edit: what, and
/// where (counted from the end when `what`'s high bit is set, where the
/// footer is), and a byte.
fn edited(knobs: u8, edits: &[u8]) -> Vec<u8> {
    let seeds = seeds();
    let mut file = seeds[usize::from(knobs >> 1) % seeds.len()].clone();
    for edit in edits.chunks_exact(4) {
        let [what, hi, lo, byte] = [edit[0], edit[1], edit[2], edit[3]];
        if file.is_empty() {
            break;
        }
        let len = file.len();
        let off = usize::from(u16::from_be_bytes([hi, lo])) % len;
        let at = if what & 0x80 != 0 { len - 1 - off } else { off };
        let n = usize::from(byte);
        match what & 0x7 {
            0 => file[at] = byte,
            1 => file[at] ^= 1 << (byte & 7),
            2 => file[at] = file[at].wrapping_add(byte),
            3 => {
                file.drain(at..(at + 1 + n).min(len));
            }
            4 => {
                let from = n * 7 % len;
                let piece = file[from..(from + 1 + n % 16).min(len)].to_vec();
                file.splice(at..at, piece);
            }
            5 => {
                let copy = file[from_end(len, n)..].to_vec();
                file.truncate(at);
                file.write_all(&copy).unwrap();
            }
            6 => file.insert(at, byte),
            _ => {
                let value = [0u32, 1, 0x7f, 0xff, 0xffff, 0x7fff_ffff, u32::MAX, 8][n % 8];
                let end = (at + 4).min(len);
                file[at..end].copy_from_slice(&value.to_le_bytes()[..end - at]);
            }
        }
    }
    file
}

/// Where the last `8 + n % 32` bytes of a file of `len` bytes start: its
/// footer's length and magic, and some of the footer.
fn from_end(len: usize, n: usize) -> usize {
    len.saturating_sub(8 + n % 32)
}
