//! Many inputs and shards on random data: random rows dealt over 1 to 5
//! files (with and without a final newline, empty ones, a byte-order mark,
//! gzip and zstd members) read as one give `naive`'s answer on the same
//! files; for every N in 1..=8 the N shards' partials, merged in any order
//! or tree, are the whole's partial, every line counted once; a faulty
//! line is reported by exactly the shard holding it, as the whole run
//! reports it. Byte ranges of one file, and slices a caller holds, cut
//! anywhere, add up to the whole file the same way.

use std::io::Write;
use std::path::PathBuf;

use brc::input::{aggregate_file_range, aggregate_slice, InputError};
use brc::{DataError, Engine, Error, Inputs, Options, Partial, Shard, Source, Summary};
use proptest::prelude::*;
use proptest::sample::Index;
use support::{merge_tree, rows, text};

mod support;

/// How a file is stored.
#[derive(Clone, Copy, Debug)]
enum Stored {
    Plain,
    /// Plain, after a UTF-8 byte-order mark.
    Marked,
    Gzip,
    Zstd,
}

fn stored() -> impl Strategy<Value = Stored> {
    prop_oneof![
        4 => Just(Stored::Plain),
        1 => Just(Stored::Marked),
        1 => Just(Stored::Gzip),
        1 => Just(Stored::Zstd),
    ]
}

impl Stored {
    fn store(self, text: &[u8]) -> Vec<u8> {
        match self {
            Stored::Plain => text.to_vec(),
            Stored::Marked => [b"\xef\xbb\xbf", text].concat(),
            Stored::Gzip => {
                let mut out = Vec::new();
                let level = flate2::Compression::fast();
                let mut encoder = flate2::write::GzEncoder::new(&mut out, level);
                encoder.write_all(text).unwrap();
                encoder.finish().unwrap();
                out
            }
            Stored::Zstd => zstd::encode_all(text, 1).unwrap(),
        }
    }
}

/// One file of a random input: where the rows are cut before it, whether
/// it ends in a newline, how it is stored.
type FileShape = (Index, bool, Stored);

fn files() -> impl Strategy<Value = Vec<FileShape>> {
    prop::collection::vec((any::<Index>(), any::<bool>(), stored()), 1..=5)
}

/// The files' texts: `rows` cut at random points (some files empty), in
/// order.
fn texts(rows: &[(String, i16)], files: &[FileShape]) -> Vec<Vec<u8>> {
    let mut cuts: Vec<usize> = (files.iter())
        .map(|(cut, _, _)| cut.index(rows.len() + 1))
        .collect();
    cuts.sort_unstable();
    if let Some(last) = cuts.last_mut() {
        *last = rows.len();
    }
    let mut from = 0;
    (cuts.iter().zip(files))
        .map(|(&to, (_, newline, _))| {
            let text = text(&rows[from..to], *newline);
            from = to;
            text
        })
        .collect()
}

/// Writes the files into a new temporary directory.
fn write(texts: &[Vec<u8>], files: &[FileShape]) -> (tempfile::TempDir, Vec<PathBuf>) {
    let dir = tempfile::tempdir().unwrap();
    let paths = (texts.iter().zip(files).enumerate())
        .map(|(i, (text, (_, _, stored)))| {
            let path = dir.path().join(format!("{i}.txt"));
            std::fs::write(&path, stored.store(text)).unwrap();
            path
        })
        .collect();
    (dir, paths)
}

fn inputs(paths: &[PathBuf]) -> Inputs {
    Inputs::new(paths.iter().map(|p| Source::File(p.clone())))
}

fn options() -> impl Strategy<Value = Options> {
    (
        1usize..=3,
        prop::sample::select(vec![1usize, 7, 64, 4 << 20]),
    )
        .prop_map(|(threads, chunk_size)| Options {
            threads,
            chunk_size,
        })
}

fn engines() -> impl Strategy<Value = Vec<Engine>> {
    prop::collection::vec(prop::sample::select(Engine::ALL.to_vec()), 8)
}

/// A malformed line of each kind, some longer than any valid line.
const BAD: [&[u8]; 6] = [
    b"no semicolon",
    b"a;1.00",
    b"\xff;1.0",
    b"",
    b";1.0",
    b"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
];

fn data_error(result: Result<Summary, InputError>) -> (Source, DataError) {
    match result {
        Err(InputError {
            input,
            error: Error::Data(e),
        }) => (input, e),
        other => panic!("expected a malformed line, got {other:?}"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn shards_merge_into_the_whole_which_is_naives(
        rows in rows(),
        files in files(),
        engines in engines(),
        options in options(),
        picks in prop::collection::vec((any::<Index>(), any::<Index>()), 1..=8),
        order in Just((0..8).collect::<Vec<usize>>()).prop_shuffle(),
    ) {
        let texts = texts(&rows, &files);
        let (_dir, paths) = write(&texts, &files);
        let naive = inputs(&paths).aggregate(Engine::Naive, &options).unwrap();
        let whole = inputs(&paths).aggregate(engines[0], &options).unwrap();
        prop_assert_eq!(&whole, &naive);
        let counted: u64 = whole.iter().map(|(_, s)| s.count).sum();
        prop_assert_eq!(counted, rows.len() as u64);
        let whole = Partial::from(whole);
        for n in 1..=8u64 {
            let shards: Vec<Partial> = (1..=n)
                .map(|k| {
                    let shard = inputs(&paths).shard(Shard::new(k, n).unwrap());
                    let engine = engines[k as usize % engines.len()];
                    let partial = Partial::from(shard.aggregate(engine, &options).unwrap());
                    Partial::parse(&partial.to_bytes()).unwrap()
                })
                .collect();
            prop_assert_eq!(&merge_tree(shards.clone(), &picks), &whole, "{} shards", n);
            let shuffled = order.iter().filter_map(|&i| shards.get(i).cloned());
            let merged = Partial::merge_all(shuffled).unwrap();
            prop_assert_eq!(merged.to_bytes(), whole.to_bytes(), "{} shards", n);
        }
    }

    #[test]
    fn exactly_the_shard_holding_a_faulty_line_reports_it_as_the_whole_run_does(
        rows in rows(),
        files in files(),
        bad in 0..BAD.len(),
        at in any::<Index>(),
        engines in engines(),
        options in options(),
    ) {
        let mut texts = texts(&rows, &files);
        // The bad line goes before a random line of a random file (or at
        // the end of one, with a newline before it if it lacks one).
        let file = at.index(texts.len());
        let text = &mut texts[file];
        let starts: Vec<usize> = std::iter::once(0)
            .chain(memchr::memchr_iter(b'\n', text).map(|i| i + 1))
            .collect();
        let mut start = starts[at.index(starts.len())];
        if start == text.len() && text.last().is_some_and(|&b| b != b'\n') {
            text.push(b'\n');
            start += 1;
        }
        text.splice(start..start, [BAD[bad], b"\n"].concat());
        let (_dir, paths) = write(&texts, &files);
        let naive = data_error(inputs(&paths).aggregate(Engine::Naive, &options));
        prop_assert_eq!(&naive.0, &Source::File(paths[file].clone()));
        let whole = data_error(inputs(&paths).aggregate(engines[0], &options));
        prop_assert_eq!(&whole, &naive);
        for n in 1..=8u64 {
            let mut failed = Vec::new();
            for k in 1..=n {
                let shard = inputs(&paths).shard(Shard::new(k, n).unwrap());
                let engine = engines[k as usize % engines.len()];
                if let Err(e) = shard.aggregate(engine, &options) {
                    failed.push(data_error(Err(e)));
                }
            }
            prop_assert_eq!(&failed, std::slice::from_ref(&naive), "{} shards", n);
        }
    }

    /// `aggregate_file_range` over ranges cut anywhere, and
    /// `aggregate_slice` over the same ranges held in memory (each
    /// extended through the end of its last line, as its contract asks),
    /// add up to the whole file.
    #[test]
    fn ranges_and_slices_cut_anywhere_add_up_to_the_whole(
        rows in rows(),
        newline in any::<bool>(),
        cuts in prop::collection::vec(any::<Index>(), 0..6),
        engines in engines(),
        options in options(),
        bad in prop::option::of((0..BAD.len(), any::<Index>())),
    ) {
        let mut bytes = text(&rows, newline);
        if let Some((bad, at)) = bad {
            let starts: Vec<usize> = std::iter::once(0)
                .chain(memchr::memchr_iter(b'\n', &bytes).map(|i| i + 1))
                .filter(|&s| s < bytes.len())
                .collect();
            let start = starts.get(at.index(starts.len().max(1))).copied().unwrap_or(0);
            bytes.splice(start..start, [BAD[bad], b"\n"].concat());
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.txt");
        std::fs::write(&path, &bytes).unwrap();
        let mut cuts: Vec<u64> = cuts.iter().map(|c| c.index(bytes.len() + 2) as u64).collect();
        cuts.sort_unstable();
        let bounds: Vec<u64> = [0].into_iter().chain(cuts).chain([u64::MAX]).collect();
        let whole = aggregate_slice(&bytes, true, Engine::Naive, &options);
        let mut merged = Vec::new();
        let mut first_error = None;
        for (i, range) in bounds.windows(2).enumerate() {
            let engine = engines[i % engines.len()];
            let (a, b) = (range[0], range[1]);
            let from_file = aggregate_file_range(&path, a..b, engine, &options);
            // The same range, held in memory.
            let len = bytes.len();
            let (a, b) = (len.min(a as usize), len.min(b as usize));
            let end = match b {
                0 => 0,
                b => memchr::memchr(b'\n', &bytes[b - 1..]).map_or(len, |i| b + i),
            };
            let slice = &bytes[a..end.max(a)];
            let whole_first = a == 0 || bytes[a - 1] == b'\n';
            let from_slice = aggregate_slice(slice, whole_first, engine, &options);
            match (from_file, from_slice) {
                (Ok(f), Ok(s)) => {
                    prop_assert_eq!(&f, &s);
                    merged.push(Partial::from(f));
                }
                (Err(f), Err(s)) => {
                    let (_, f) = data_error(Err(f));
                    // The slice counts from its own start.
                    let before = memchr::memchr_iter(b'\n', &bytes[..a]).count() as u64;
                    prop_assert_eq!(s.offset + a as u64, f.offset);
                    prop_assert_eq!(s.line + before, f.line);
                    first_error = first_error.or(Some(f));
                }
                other => prop_assert!(false, "file and slice disagree: {:?}", other),
            }
        }
        match whole {
            Ok(whole) => {
                prop_assert_eq!(first_error, None);
                prop_assert_eq!(Partial::merge_all(merged).unwrap(), Partial::from(whole));
            }
            Err(e) => prop_assert_eq!(first_error, Some(e)),
        }
    }
}
