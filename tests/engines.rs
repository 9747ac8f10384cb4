//! Every engine against `naive`, and `naive` against a model, on random
//! valid and invalid inputs.
//!
//! Engines come from [`Engine::ALL`], so an engine is covered as soon as it
//! is listed there. Thread counts and chunk sizes are random too, including
//! chunks of a few bytes, so chunk boundaries land everywhere: inside names,
//! inside multi-byte characters, inside values, on `\n`. Whole results are
//! compared: the summary, or the error with its line, offset and kind.

use std::collections::{BTreeMap, HashSet};
use std::sync::LazyLock;

use brc::internals::parse::MAX_NAME_LEN;
use brc::internals::{flood, set_hand_off_names, Accumulator, Chunked, DEFAULT_CHUNK_SIZE};
use brc::{aggregate, DataError, Engine, ErrorKind, Options, Summary};
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::strategy::ValueTree;
use proptest::test_runner::{RngAlgorithm, TestRng, TestRunner};

/// A character of a name: ASCII letters, the characters the output formats
/// must escape or quote, NUL, 2-, 3- and 4-byte UTF-8, or anything at all
/// but `;` and `\n`.
fn name_char() -> impl Strategy<Value = char> {
    prop_oneof![
        4 => prop::char::range('a', 'z'),
        3 => prop::sample::select(vec![
            '=', ',', '{', '}', '"', '\'', '\\', '\t', '\r', ' ', '\0', '/', 'é', 'ß', 'ā', '€',
            '中', 'ぁ', '😀', '𝄞',
        ]),
        1 => any::<char>().prop_filter("`;` and `\\n` end a name", |&c| c != ';' && c != '\n'),
    ]
}

/// A valid name: 1..=100 bytes of UTF-8 without `;` or `\n`. One in five
/// is padded to exactly 100 bytes, the limit.
fn name() -> impl Strategy<Value = String> {
    (
        prop::collection::vec(name_char(), 1..=MAX_NAME_LEN),
        prop::bool::weighted(0.2),
    )
        .prop_map(|(chars, fill)| {
            let mut name = String::new();
            for c in chars {
                if name.len() + c.len_utf8() > MAX_NAME_LEN {
                    break;
                }
                name.push(c);
            }
            if fill {
                name.extend(std::iter::repeat_n('x', MAX_NAME_LEN - name.len()));
            }
            name
        })
}

/// A valid value as text, with its tenths: any of -99.9..=99.9, with the
/// extremes and zero more often, written as `-0.0` or with a leading zero
/// (`05.3`) now and then, as the grammar allows.
fn value() -> impl Strategy<Value = (String, i16)> {
    let tenths = prop_oneof![
        3 => -999i16..=999,
        1 => prop::sample::select(vec![-999i16, -990, -1, 0, 1, 990, 999]),
    ];
    (tenths, 0u8..4).prop_map(|(t, form)| {
        let (int, frac) = (t.unsigned_abs() / 10, t.unsigned_abs() % 10);
        let sign = if t < 0 || (t == 0 && form == 1) {
            "-"
        } else {
            ""
        };
        let text = if form == 2 && int < 10 {
            format!("{sign}0{int}.{frac}")
        } else {
            format!("{sign}{int}.{frac}")
        };
        (text, t)
    })
}

/// A valid input and the rows it holds.
#[derive(Clone, Debug)]
struct Valid {
    /// `(name, value text, tenths)` per line.
    rows: Vec<(String, String, i16)>,
    trailing_newline: bool,
}

impl Valid {
    fn lines(&self) -> Vec<Vec<u8>> {
        self.rows
            .iter()
            .map(|(name, text, _)| format!("{name};{text}").into_bytes())
            .collect()
    }
}

/// Joins lines with `\n`, adding a final one if asked to, or if the last
/// line is empty (without it, an empty last line would not be a line).
fn join(lines: &[Vec<u8>], trailing_newline: bool) -> Vec<u8> {
    let mut text = lines.join(&b'\n');
    if !lines.is_empty() && (trailing_newline || lines.last().is_some_and(|l| l.is_empty())) {
        text.push(b'\n');
    }
    text
}

/// Up to `max` names, and as many again that differ from one of them only
/// a little: a character more or less at the end, the last one changed, a
/// NUL appended. Hash tables that key on a name's first bytes, its length
/// or zero padding meet their near-collisions here.
fn names(max: usize) -> impl Strategy<Value = Vec<String>> {
    (
        prop::collection::vec(name(), 1..=max),
        prop::collection::vec((any::<Index>(), 0u8..4, name_char()), 0..=max),
    )
        .prop_map(|(mut names, variants)| {
            for (i, how, c) in variants {
                let mut name = i.get(&names).clone();
                match how {
                    0 => name.push('\0'),
                    1 => name.push(c),
                    2 => {
                        name.pop();
                        name.push(c);
                    }
                    _ => {
                        name.pop();
                    }
                }
                if !name.is_empty() && name.len() <= MAX_NAME_LEN {
                    names.push(name);
                }
            }
            names
        })
}

/// A valid input on up to `max_names` names (and their near-collisions)
/// with up to `max_rows` rows.
fn valid(max_names: usize, max_rows: usize) -> impl Strategy<Value = Valid> {
    (
        names(max_names),
        prop::collection::vec((any::<Index>(), value()), 0..=max_rows),
        any::<bool>(),
    )
        .prop_map(|(names, rows, trailing_newline)| Valid {
            rows: rows
                .into_iter()
                .map(|(i, (text, t))| (i.get(&names).clone(), text, t))
                .collect(),
            trailing_newline,
        })
}

/// Options with 1..=8 threads and chunks from 1 byte to the default size.
fn options() -> impl Strategy<Value = Options> {
    let chunk_size = prop_oneof![
        2 => 1usize..=64,
        2 => 65usize..=4096,
        1 => Just(DEFAULT_CHUNK_SIZE),
    ];
    (1usize..=8, chunk_size).prop_map(|(threads, chunk_size)| Options {
        threads,
        chunk_size,
    })
}

/// How many names a thread's table of the fast engines holds before it
/// hands them to the run's partitions: a few, so that the small inputs
/// here hand names over again and again, or now and then the default, far
/// above them.
fn hand_off() -> impl Strategy<Value = usize> {
    prop_oneof![1 => Just(0), 3 => 1usize..=40]
}

/// What `naive` returns, independently computed from the rows: names
/// sorted by bytes with exact min, max, sum and count.
fn model(rows: &[(String, String, i16)]) -> Vec<(String, (i64, i64, i64, u64))> {
    let mut stations: BTreeMap<&str, (i64, i64, i64, u64)> = BTreeMap::new();
    for (name, _, t) in rows {
        let t = i64::from(*t);
        let s = stations.entry(name).or_insert((t, t, 0, 0));
        s.0 = s.0.min(t);
        s.1 = s.1.max(t);
        s.2 += t;
        s.3 += 1;
    }
    stations
        .into_iter()
        .map(|(name, s)| (name.to_string(), s))
        .collect()
}

fn fields(summary: &Summary) -> Vec<(String, (i64, i64, i64, u64))> {
    summary
        .iter()
        .map(|(name, s)| (name.to_string(), (s.min, s.max, s.sum as i64, s.count)))
        .collect()
}

/// Asserts that every engine returns exactly what `naive` returns.
fn assert_engines_agree(input: &[u8], options: &Options) -> Result<Summary, DataError> {
    let expected = aggregate(input, Engine::Naive, options);
    for engine in Engine::ALL {
        let got = aggregate(input, engine, options);
        assert_eq!(got, expected, "engine {} with {options:?}", engine.name());
    }
    expected
}

/// Bytes that are never valid UTF-8 wherever they appear in a name.
fn invalid_utf8() -> impl Strategy<Value = Vec<u8>> {
    prop::sample::select(vec![
        vec![0xff],
        vec![0xfe],
        vec![0x80],                   // a continuation byte alone
        vec![0xc0, 0x80],             // overlong NUL
        vec![0xc3],                   // 2-byte sequence cut short
        vec![0xe2, 0x82],             // 3-byte sequence cut short
        vec![0xf0, 0x9f, 0x98],       // 4-byte sequence cut short
        vec![0xed, 0xa0, 0x80],       // a UTF-16 surrogate
        vec![0xf4, 0x90, 0x80, 0x80], // above U+10FFFF
    ])
}

/// Values the grammar `-?\d{1,2}\.\d` rejects.
fn invalid_value() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "", "-", ".", "a", "abc", "1", "1.", ".5", "-.5", "12.34", "100.0", "-100.0", "+1.0",
            "1.0 ", " 1.0", "1,0", "--1.0", "1..0", "1.0\r", "1.0;2.0", "1e1", "99.99", "NaN",
            "−1.0", "١.٠",
        ])
        .prop_map(str::to_string),
        "[a-z]{1,6}",
    ]
}

/// A malformed line, with the error it must produce.
fn fault() -> impl Strategy<Value = (Vec<u8>, ErrorKind)> {
    prop_oneof![
        (name(), value()).prop_map(|(name, (text, _))| {
            let line = format!("{name}{text}").into_bytes();
            let quoted = brc::internals::quoted(&line);
            (line, ErrorKind::MissingSemicolon { line: quoted })
        }),
        value().prop_map(|(text, _)| (format!(";{text}").into_bytes(), ErrorKind::EmptyName)),
        Just((Vec::new(), ErrorKind::EmptyLine)),
        (name(), invalid_value()).prop_map(|(name, value)| (
            format!("{name};{value}").into_bytes(),
            ErrorKind::InvalidValue {
                value: brc::internals::quoted(value.as_bytes())
            }
        )),
        (name(), invalid_utf8(), name(), value()).prop_map(|(before, bad, after, (text, _))| {
            // Trim valid bytes from both ends, never the invalid ones, down
            // to the limit.
            let mut name = [before.as_bytes(), &bad, after.as_bytes()].concat();
            let excess = name.len().saturating_sub(MAX_NAME_LEN);
            name.drain(..excess.min(before.len()));
            name.truncate(MAX_NAME_LEN);
            let line = [&name[..], b";", text.as_bytes()].concat();
            (line, ErrorKind::InvalidUtf8 { name })
        }),
        // Lines longer than engines read of a line (`parse::HEAD_LEN`): no
        // `;` at all, and a value far too long.
        prop::collection::vec(name(), 2..=6).prop_map(|parts| {
            let line = parts.concat().into_bytes();
            let quoted = brc::internals::quoted(&line);
            (line, ErrorKind::MissingSemicolon { line: quoted })
        }),
        (name(), value(), prop::collection::vec(name(), 1..=4)).prop_map(
            |(name, (text, _), more)| {
                // Anything after a valid value makes it invalid.
                let value = format!("{text}{}", more.concat());
                (
                    format!("{name};{value}").into_bytes(),
                    ErrorKind::InvalidValue {
                        value: brc::internals::quoted(value.as_bytes()),
                    },
                )
            }
        ),
        (prop::collection::vec(name(), 2..=4), value()).prop_map(|(parts, (text, _))| {
            let name = parts.concat();
            let name = if name.len() > MAX_NAME_LEN {
                name
            } else {
                format!("{name}{}", "z".repeat(MAX_NAME_LEN + 1 - name.len()))
            };
            let len = name.len();
            (
                format!("{name};{text}").into_bytes(),
                ErrorKind::NameTooLong { len },
            )
        }),
    ]
}

/// One value of `strategy`, drawn with `runner`'s random numbers.
fn draw<S: Strategy>(strategy: &S, runner: &mut TestRunner) -> S::Value {
    strategy.new_tree(runner).unwrap().current()
}

/// The byte offset of line `index` (0-based) of `lines` joined with `\n`.
fn offset_of(lines: &[Vec<u8>], index: usize) -> u64 {
    lines[..index].iter().map(|l| l.len() as u64 + 1).sum()
}

/// Merging per-thread runs sums each name's stats and, for an engine that
/// leaves checking names to `Summary::from_entries`, keeps the earliest
/// line it was seen on, whichever thread saw it: that line is where an
/// invalid name is reported. (Which thread sees which chunk is up to the
/// scheduler, so the property tests alone catch a slip here only now and
/// then.) Engines that refuse invalid names in `feed` keep no offsets.
fn merge_keeps_the_earliest_sighting<P: Accumulator>() {
    let input = b"x;1.0\ny;2.0\nx;3.0\n";
    let (early, late) = (&input[..12], &input[12..]);
    let run = |first: &[u8], first_at, second: &[u8], second_at| {
        let (mut a, mut b) = (P::default(), P::default());
        a.feed(first, first_at).unwrap();
        b.feed(second, second_at).unwrap();
        brc::internals::merge_runs(vec![a.into_sorted(), b.into_sorted()])
            .into_iter()
            .map(|e| {
                let s = e.stats;
                (e.name.into_vec(), (s.min, s.max, s.sum, s.count), e.first)
            })
            .collect::<Vec<_>>()
    };
    let (x, y) = if P::CHECKS_UTF8 { (0, 0) } else { (0, 6) };
    let expected = vec![
        (b"x".to_vec(), (10, 30, 40, 2), x),
        (b"y".to_vec(), (20, 20, 20, 1), y),
    ];
    assert_eq!(run(late, 12, early, 0), expected, "later chunk's run first");
    assert_eq!(
        run(early, 0, late, 12),
        expected,
        "earlier chunk's run first"
    );
}

#[test]
fn chunked_merge_keeps_the_earliest_sighting() {
    merge_keeps_the_earliest_sighting::<Chunked>();
}

#[test]
fn swar_merge_keeps_the_earliest_sighting() {
    merge_keeps_the_earliest_sighting::<brc::internals::SwarEngine>();
}

#[test]
fn fast_merge_keeps_the_earliest_sighting() {
    merge_keeps_the_earliest_sighting::<brc::internals::Fast>();
}

/// One chunk is parsed as several streams side by side, so a later stream
/// can meet a name before an earlier one does. A bad name (not UTF-8, or
/// a line without `;` read together with the next) must still be reported
/// at its first line, not where a later stream first met it.
#[test]
fn a_bad_name_is_reported_at_its_first_line_whichever_stream_meets_it() {
    let bad: [(&[u8], &[u8]); 4] = [
        (b"\xffbad;1.0", b"\xffbad;2.0"),
        (b"no semicolon", b"no semicolon"),
        (
            b"long name, not UTF-8 \xc3(;1.0",
            b"long name, not UTF-8 \xc3(;2.0",
        ),
        (
            b"long line with no semicolon at all",
            b"long line with no semicolon at all",
        ),
    ];
    for (early, late) in bad {
        for (at, again) in [(300, 690), (320, 340), (10, 11)] {
            let mut lines: Vec<Vec<u8>> = (0..1000)
                .map(|i| format!("station {};{}.{}", i % 37, i % 90, i % 10).into_bytes())
                .collect();
            lines[again] = late.to_vec();
            lines[at] = early.to_vec();
            let input = join(&lines, true);
            for threads in [1, 2] {
                let options = Options {
                    threads,
                    chunk_size: input.len(),
                };
                let got = assert_engines_agree(&input, &options).unwrap_err();
                assert_eq!(
                    got.line,
                    at as u64 + 1,
                    "{:?}",
                    String::from_utf8_lossy(early)
                );
            }
        }
    }
}

proptest! {
    #[test]
    fn naive_matches_a_model_of_the_rows(file in valid(40, 300)) {
        let input = join(&file.lines(), file.trailing_newline);
        let summary = aggregate(&input, Engine::Naive, &Options::default()).unwrap();
        prop_assert_eq!(fields(&summary), model(&file.rows));
    }

    #[test]
    fn every_engine_agrees_with_naive_on_valid_files(
        file in valid(40, 300),
        options in options(),
        hand_off in hand_off(),
    ) {
        set_hand_off_names(hand_off);
        let input = join(&file.lines(), file.trailing_newline);
        prop_assert!(assert_engines_agree(&input, &options).is_ok());
    }

    #[test]
    fn every_engine_reports_the_first_fault_like_naive(
        file in valid(20, 200),
        faults in prop::collection::vec(
            (fault(), any::<Index>(), prop::collection::vec(any::<Index>(), 0..=3)),
            1..=3,
        ),
        options in options(),
        hand_off in hand_off(),
    ) {
        set_hand_off_names(hand_off);
        let mut lines = file.lines();
        // Insert the faults in order, each after the previous one, so the
        // first of them is the first fault in the file. Copies of a fault
        // further on must not move the report: a repeated invalid name is
        // seen by several threads, and the earliest sighting must win when
        // they merge.
        let mut at = 0;
        let mut first = None;
        for ((line, kind), place, copies) in faults {
            at += place.index(lines.len() - at + 1);
            for copy in copies {
                let after = at + copy.index(lines.len() - at + 1);
                lines.insert(after, line.clone());
            }
            lines.insert(at, line);
            first.get_or_insert((at, kind));
            at += 1;
        }
        let (index, kind) = first.unwrap();
        let input = join(&lines, file.trailing_newline);
        let expected = DataError {
            line: index as u64 + 1,
            offset: offset_of(&lines, index),
            kind,
        };
        prop_assert_eq!(assert_engines_agree(&input, &options), Err(expected));
    }
}

proptest! {
    /// Valid files with a few bytes overwritten, inserted or deleted: faults
    /// no generator above thought of, in every position, including ones
    /// that make a line valid again or join two lines. Every engine must
    /// give naive's answer and never panic.
    #[test]
    fn every_engine_agrees_with_naive_on_damaged_files(
        file in valid(10, 60),
        edits in prop::collection::vec(
            (any::<Index>(), 0u8..3, prop::sample::select(b";\n-.019a \xc3\xa9\xff".to_vec())),
            1..=4,
        ),
        options in options(),
        hand_off in hand_off(),
    ) {
        set_hand_off_names(hand_off);
        let mut input = join(&file.lines(), file.trailing_newline);
        for (at, edit, byte) in edits {
            let at = at.index(input.len() + 1);
            match edit {
                0 if at < input.len() => input[at] = byte,
                1 if at < input.len() => {
                    input.remove(at);
                }
                _ => input.insert(at, byte),
            }
        }
        let _ = assert_engines_agree(&input, &options);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(8))]

    /// Up to 20,000 distinct names, generated from a seed so that a failure
    /// shrinks by the number of names rather than by each name: tables
    /// handing their names to the partitions every few dozen, or past the
    /// 10K set's 10,000 by default, and a name lost or counted twice on the
    /// way fails the comparison.
    #[test]
    fn every_engine_agrees_with_naive_on_many_names(
        distinct in 1usize..=20_000,
        seed in any::<[u8; 16]>(),
        trailing_newline in any::<bool>(),
        options in options(),
        hand_off in hand_off(),
    ) {
        set_hand_off_names(hand_off);
        let mut runner = TestRunner::new_with_rng(
            ProptestConfig::default(),
            TestRng::from_seed(RngAlgorithm::XorShift, &seed),
        );
        let (name, value) = (name(), value());
        let mut seen = HashSet::new();
        let mut names = Vec::with_capacity(distinct);
        while names.len() < distinct {
            let name = draw(&name, &mut runner);
            if seen.insert(name.clone()) {
                names.push(name);
            }
        }
        // Every name once, then as many rows again on random names.
        let mut rows = Vec::with_capacity(2 * distinct);
        for name in &names {
            let (text, t) = draw(&value, &mut runner);
            rows.push((name.clone(), text, t));
        }
        for _ in 0..distinct {
            let (i, (text, t)) = draw(&(any::<Index>(), &value), &mut runner);
            rows.push((i.get(&names).clone(), text, t));
        }
        let file = Valid { rows, trailing_newline };
        let input = join(&file.lines(), file.trailing_newline);
        let summary = assert_engines_agree(&input, &options).unwrap();
        prop_assert_eq!(summary.len(), distinct);
        prop_assert_eq!(fields(&summary), model(&file.rows));
    }
}

/// Names built to share one hash in the fast tables: short ones, ones of
/// 16–31 bytes (the AVX2 kernel's one-window names) and long ones, 400 of
/// each, far more than a table's first probe steps allow; and as many in
/// clusters of 9 sharing only the top 20 bits of their hash, each cluster
/// a home slot in tables of up to a million slots.
static COLLIDING: LazyLock<Vec<String>> = LazyLock::new(|| {
    [15, 24, 70]
        .into_iter()
        .flat_map(|len| {
            let mut names = flood::colliding(len, 400, len as u64);
            names.extend(flood::clustered(len, 45, 9, 20, len as u64));
            names
        })
        .collect()
});

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// A valid file with rows of names built to collide among its rows,
    /// and now and then a few bytes damaged: the threads' tables flood or
    /// not, by the rows each meets, and every engine must still give
    /// naive's answer, its keyed tables refusing the names the strict
    /// parser refuses, and flooded tables folded with the others.
    #[test]
    fn every_engine_agrees_with_naive_on_names_built_to_collide(
        file in valid(10, 100),
        rows in prop::collection::vec((any::<Index>(), any::<Index>(), value()), 300..=2000),
        edits in prop::collection::vec(
            (any::<Index>(), prop::sample::select(b";\n.a\xc3\xff".to_vec())),
            0..=2,
        ),
        options in options(),
    ) {
        // Tables that hold their names, so that they flood.
        set_hand_off_names(0);
        let mut lines = file.lines();
        for (name, at, (text, _)) in rows {
            let at = at.index(lines.len() + 1);
            lines.insert(at, format!("{};{text}", name.get(&COLLIDING)).into_bytes());
        }
        let mut input = join(&lines, file.trailing_newline);
        for (at, byte) in edits {
            let at = at.index(input.len());
            input[at] = byte;
        }
        let _ = assert_engines_agree(&input, &options);
    }
}

/// A table flooded by its first names, and then given thousands of new
/// ones, some of which its slots take, grows while flooded, in the middle
/// of a chunk: every engine must still give naive's answer.
#[test]
fn a_flooded_table_grows_within_a_chunk() {
    set_hand_off_names(0);
    let mut names = flood::colliding(15, 400, 5);
    names.extend((0..20_000).map(|i| format!("n{i}")));
    names.extend(flood::clustered(15, 300, 5, 20, 5));
    let mut input = Vec::new();
    for round in 0..2 {
        for (i, name) in names.iter().enumerate() {
            let (t, sign) = ((i * 7 + round) % 1000, ["", "-"][i % 2]);
            input.extend(format!("{name};{sign}{}.{}\n", t / 10, t % 10).bytes());
        }
    }
    let options = Options {
        threads: 1,
        chunk_size: DEFAULT_CHUNK_SIZE,
    };
    let summary = assert_engines_agree(&input, &options).unwrap();
    assert_eq!(summary.len(), names.len());
}

/// A chunk of many MiB is parsed a stretch at a time, each stretch fed as
/// the table's size at its start says: one 17 MB chunk of 600,000 names
/// (every seventh of them long) takes the short table past every feed's
/// threshold, and a malformed line in a late stretch is still the fault
/// every engine reports.
#[test]
fn a_chunk_of_many_stretches_agrees_with_naive_as_its_table_grows() {
    use std::io::Write;
    let mut input = Vec::new();
    for k in 0..600_000u32 {
        let (whole, tenth) = (k % 100, k % 10);
        if k % 7 == 0 {
            writeln!(input, "a long station name, number {k};-{whole}.{tenth}").unwrap();
        } else {
            writeln!(input, "n{k};{whole}.{tenth}").unwrap();
        }
    }
    let options = Options {
        threads: 1,
        chunk_size: 64 << 20,
    };
    let summary = assert_engines_agree(&input, &options).unwrap();
    assert_eq!(summary.len(), 600_000);
    let late = input.len() - 1000;
    let line_start = late + input[late..].iter().position(|&c| c == b'\n').unwrap() + 1;
    input.splice(line_start..line_start, b"no semicolon\n".iter().copied());
    assert!(assert_engines_agree(&input, &options).is_err());
}
