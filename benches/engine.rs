//! Criterion benchmarks of the pieces of the fast path, each next to the
//! simpler code it replaces. Throughput is in input bytes, so figures
//! compare directly with the whole-run GB/s of `brc --timings`.
//!
//! Run: `cargo bench` (or `cargo bench -- table` for one group).

use std::hash::BuildHasher;
use std::hint::black_box;

use brc::generate::{Generator, Keys};
use brc::internals::{
    flood, merge_runs, parse, scan, Accumulator, Chunked, Fast, SwarEngine, Table,
};
use brc::output::{self, Format};
use brc::{aggregate, Engine, Options, Stats, Summary};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use hashbrown::HashTable;

/// About 4 MiB of rows (the default chunk size) from the given key set.
fn rows(keys: Keys) -> Vec<u8> {
    let mut out = Vec::new();
    let generator = Generator::new(keys, 1).expect("valid key set");
    generator
        .write(300_000, 1, &mut out, &|_| {})
        .expect("writing to memory");
    out
}

fn data_sets() -> [(&'static str, Vec<u8>); 2] {
    [
        ("413", rows(Keys::Official)),
        ("10k", rows(Keys::Built(10_000))),
    ]
}

/// The value parser: the strict, readable one against the branch-free
/// word-at-a-time one, on the value field of every row.
fn value_parser(c: &mut Criterion) {
    let input = rows(Keys::Official);
    let values: Vec<&[u8]> = parse::lines(&input)
        .map(|(_, line)| &line[memchr::memchr(b';', line).unwrap() + 1..])
        .collect();
    let words: Vec<u64> = values
        .iter()
        .map(|v| {
            let mut w = [0u8; 8];
            w[..v.len()].copy_from_slice(v);
            w[v.len()] = b'\n';
            u64::from_le_bytes(w)
        })
        .collect();
    let bytes: usize = values.iter().map(|v| v.len() + 1).sum();
    let mut g = c.benchmark_group("value_parser");
    g.throughput(Throughput::Bytes(bytes as u64));
    g.bench_function("strict", |b| {
        b.iter(|| {
            values
                .iter()
                .map(|v| i64::from(parse::parse_value(v).unwrap()))
                .sum::<i64>()
        })
    });
    g.bench_function("swar", |b| {
        b.iter(|| {
            words
                .iter()
                .map(|&w| scan::parse_value(black_box(w)).unwrap().0)
                .sum::<i64>()
        })
    });
    g.finish();
}

/// Splitting a chunk into lines with `memchr` (what `chunked` does) and then
/// finding each `;` (the separator search the scanner replaces).
fn separator_search(c: &mut Criterion) {
    let mut g = c.benchmark_group("separator_search");
    for (name, input) in data_sets() {
        g.throughput(Throughput::Bytes(input.len() as u64));
        g.bench_with_input(
            BenchmarkId::new("memchr_lines_and_semicolons", name),
            &input,
            |b, input| {
                b.iter(|| {
                    parse::lines(input)
                        .map(|(_, line)| memchr::memchr(b';', line).unwrap())
                        .sum::<usize>()
                })
            },
        );
    }
    g.finish();
}

/// Walking lines only, one stream or several side by side: each line's
/// start depends on the end of the line before it (a `memchr` for `\n`),
/// so one stream is a chain the CPU cannot shorten, while independent
/// streams overlap. Why the scanner reads each chunk as three streams
/// (docs/PERFORMANCE.md, *The scanner*).
fn next_line_chain(c: &mut Criterion) {
    /// Counts the lines of `input` walked as `N` streams in lockstep.
    fn walk<const N: usize>(input: &[u8]) -> usize {
        let next = |p: usize| memchr::memchr(b'\n', &input[p..]).map_or(input.len(), |i| p + i + 1);
        let mut ends = [input.len(); N];
        for (k, end) in ends.iter_mut().enumerate().take(N - 1) {
            *end = next(input.len() / N * (k + 1));
        }
        let mut ps = [0; N];
        ps[1..].copy_from_slice(&ends[..N - 1]);
        let mut lines = 0;
        while (0..N).all(|k| ps[k] < ends[k]) {
            for p in &mut ps {
                *p = next(*p);
            }
            lines += N;
        }
        for k in 0..N {
            while ps[k] < ends[k] {
                ps[k] = next(ps[k]);
                lines += 1;
            }
        }
        lines
    }
    let input = rows(Keys::Official);
    let mut g = c.benchmark_group("next_line_chain");
    g.throughput(Throughput::Bytes(input.len() as u64));
    g.bench_function("1_stream", |b| b.iter(|| walk::<1>(black_box(&input))));
    g.bench_function("2_streams", |b| b.iter(|| walk::<2>(black_box(&input))));
    g.bench_function("3_streams", |b| b.iter(|| walk::<3>(black_box(&input))));
    g.finish();
}

/// Hash and table update per row: the hand-written table against the
/// foldhash + `hashbrown::HashTable` baseline, names already split off.
fn table(c: &mut Criterion) {
    let mut g = c.benchmark_group("table");
    for (name, input) in data_sets() {
        let rows: Vec<(&[u8], i16)> = parse::lines(&input)
            .map(|(_, line)| parse::parse_line(line).unwrap())
            .collect();
        g.throughput(Throughput::Bytes(input.len() as u64));
        g.bench_with_input(BenchmarkId::new("hand_written", name), &rows, |b, rows| {
            b.iter(|| {
                let mut t = Table::default();
                let mut adder = t.adder(input.len());
                for &(n, v) in rows {
                    adder.add(n, v);
                }
                t.len()
            })
        });
        g.bench_with_input(
            BenchmarkId::new("foldhash_hashbrown", name),
            &rows,
            |b, rows| {
                let state = foldhash::fast::FixedState::default();
                b.iter(|| {
                    let mut t: HashTable<(u64, &[u8], brc::Stats)> = HashTable::new();
                    for &(n, v) in rows {
                        let h = state.hash_one(n);
                        match t.find_mut(h, |e| e.0 == h && e.1 == n) {
                            Some(e) => e.2.add(v),
                            None => {
                                t.insert_unique(h, (h, n, brc::Stats::new(v)), |e| e.0);
                            }
                        }
                    }
                    t.len()
                })
            },
        );
    }
    g.finish();
}

/// One 4 MiB chunk end to end through each parallel engine's per-thread
/// state: parsing, hashing and updating together.
fn chunk(c: &mut Criterion) {
    fn feed<P: Accumulator>(input: &[u8]) -> usize {
        let mut p = P::default();
        p.feed(input, 0).unwrap();
        p.into_sorted().len()
    }
    let mut g = c.benchmark_group("chunk");
    for (name, input) in data_sets() {
        g.throughput(Throughput::Bytes(input.len() as u64));
        g.bench_with_input(BenchmarkId::new("chunked", name), &input, |b, i| {
            b.iter(|| feed::<Chunked>(i))
        });
        g.bench_with_input(BenchmarkId::new("swar", name), &input, |b, i| {
            b.iter(|| feed::<SwarEngine>(i))
        });
        g.bench_with_input(BenchmarkId::new("fast", name), &input, |b, i| {
            b.iter(|| feed::<Fast>(i))
        });
    }
    g.finish();
}

/// The end of a run: each thread's names sorted, then the two runs merged.
/// Its cost grows with the number of distinct names, not rows.
fn finish(c: &mut Criterion) {
    let mut g = c.benchmark_group("finish");
    for (name, input) in data_sets() {
        let (_, half) = parse::line_at(&input, input.len() / 2);
        let mut x = Fast::default();
        let mut y = Fast::default();
        x.feed(&input[..half], 0).unwrap();
        y.feed(&input[half..], half).unwrap();
        g.bench_function(BenchmarkId::new("sort_and_merge", name), |b| {
            b.iter_batched(
                || (x.clone(), y.clone()),
                |(x, y)| merge_runs(vec![x.into_sorted(), y.into_sorted()]),
                criterion::BatchSize::LargeInput,
            )
        });
    }
    g.finish();
}

/// Printing: 100,000 stations (their names `st0` … and spread-out stats)
/// rendered in the official format on one thread. Its cost grows with
/// the number of distinct names, as the end of a run's does.
fn output(c: &mut Criterion) {
    const STATIONS: i64 = 100_000;
    let value = |k: i64| i16::try_from(k % 1999 - 999).expect("within ±999");
    let summary: Summary = (0..STATIONS)
        .map(|k| {
            let mut stats = Stats::new(value(k * 7919));
            stats.add(value(k * 104_729));
            (format!("st{k}"), stats)
        })
        .collect();
    let mut g = c.benchmark_group("output");
    g.throughput(Throughput::Elements(STATIONS as u64));
    g.bench_function("official", |b| {
        b.iter(|| output::render(black_box(&summary), Format::Official))
    });
    g.finish();
}

/// Names built to share one hash against random names of the same
/// lengths and count: 100,000 names, 10 rows each, of 15 bytes (the short
/// table), 63 and 100 (the long table), aggregated by the default engine
/// on one thread. The ratio of each pair's times is the cost of a flood
/// (docs/PERFORMANCE.md, *The tables*). Slow: each input takes a second or
/// so to build and a tenth of one to aggregate.
///
/// Run: `cargo bench --bench engine -- flood`.
fn flood(c: &mut Criterion) {
    const NAMES: usize = 100_000;
    const ROUNDS: usize = 10;
    let options = Options {
        threads: 1,
        ..Options::default()
    };
    let mut g = c.benchmark_group("flood");
    g.sample_size(10);
    for len in [15, 63, 100] {
        for (kind, names) in [
            ("random", flood::random(len, NAMES, 1)),
            ("colliding", flood::colliding(len, NAMES, 1)),
        ] {
            let input = flood::rows(&names, ROUNDS, 2);
            g.throughput(Throughput::Bytes(input.len() as u64));
            g.bench_with_input(BenchmarkId::new(kind, len), &input, |b, input| {
                b.iter(|| aggregate(input, Engine::Fast, &options).expect("valid input"))
            });
        }
    }
    g.finish();
}

criterion_group!(
    benches,
    value_parser,
    separator_search,
    next_line_chain,
    table,
    chunk,
    finish,
    output,
    flood
);
criterion_main!(benches);
