//! The `brc` command line: a thin layer over the `brc` library.

mod generate;
mod merge;
mod progress;

use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use brc::output::Format;
use brc::{
    timings, Column, Columns, Dialect, Engine, Inputs, Options, Shard, Source, Statistics, Summary,
};
use clap::builder::PossibleValue;
use clap::{CommandFactory, Parser, Subcommand, ValueEnum};

/// Big blocks on huge pages: see [`brc::alloc`].
#[global_allocator]
static ALLOC: brc::alloc::HugeBlocks = brc::alloc::HugeBlocks;

const AFTER_HELP: &str = "\
Input: lines `<name>;<value>`, name 1..100 bytes of UTF-8 without `;`,
value -?d{1,2}.d (e.g. -12.3). The last line may lack its newline.
All FILEs make one summary, read in order by all threads. A directory
stands for the regular files directly inside it, by name (hidden ones
skipped); `-` is standard input (once). Each file's last line ends with
it, newline or not. A file or standard input may be gzip or zstd
compressed (told by its first bytes). A UTF-8 byte-order mark at the start
of a file is skipped. Standard input redirected from a file is read from
where it stands (`{ read -r header; brc -; } < file` skips a header).
Memory stays within about (threads + 2) x chunk size plus the stations,
whatever the number and size of the inputs. Errors name the file
(`<stdin>`) and its line; the first in the order of the FILEs wins. A file
that shrinks while read is an error.

Parquet: a FILE that starts and ends with Parquet's magic bytes (`PAR1`)
is read as Parquet, whatever its name, alone or among text files (and
standard input redirected from one; not a pipe, as the footer is at the
end). Names
come from the column `station`, values from `measure` (`--columns` picks
others): strings, and numbers that are each exactly a number of tenths
within ±99999999.9: doubles and floats nearest to one (12.3, not 12.34),
integers, decimals. A null, NaN, or any other value is an error naming the
row group and the row (both counted from 0), never rounded. A file's row
groups are shared out among the threads; `--shard` reads the row groups
whose first byte lies in its range.

Objects (a build with `--features remote`): a FILE may be a URL:
`s3://bucket/key`, `s3://bucket/prefix/` (every object under the prefix,
by key, hidden ones skipped) or `http(s)://host/path` (one object). Text
objects (gzip and zstd too) are streamed; Parquet objects are read by byte
ranges: the footer, then each row group's two column chunks, so a run
holds a few row groups at a time. S3 takes the usual variables:
AWS_ENDPOINT_URL, AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
AWS_SKIP_SIGNATURE=true for anonymous access. A missing bucket or key,
refused credentials or a server that cannot be reached is an error naming
the request.

Delimited files: with `--csv`, `--tsv` or `--delimiter C`, text FILEs are
read as delimited files with a header line (on every file, the same), the
key from `--key` (header names or 1-based positions; several joined by
`|`, a `|` or `\\` inside a cell escaped by `\\`) and the value from
`--value`. RFC 4180: quoted cells, `\"\"` for a quote, delimiters and line
breaks inside quotes, CRLF or LF, a byte-order mark. Values are decimals
of up to 18 significant digits and 9 after the point (`23.456`, `-0.5`,
`+7`, `.5`, `1.`, `1.5e3`), kept exact; they are printed with as many
decimals as the most precise value has (`--decimals N` picks). The mean
rounds half toward +inf at that scale (tenths: as the challenge's
reference does). Cells in `--null` (default: empty, NA, NaN, null) are
missing values: counted per key (`missing` in `--format csv` and `json`,
their total on stderr), not aggregated. Any other bad cell is an error
naming the file, its line and column; with `--on-error skip`, a row with a
bad value or key, or another number of cells than the header, is skipped
and counted instead (quoting faults still fail). Examples:
  brc --csv --key site --value reading readings.csv
  brc --csv --key site,sensor --value 4 --format csv readings.csv.gz

Shards: `--shard K/N` reads the lines whose first byte lies in the K-th
of N equal byte ranges of all the FILEs (sizes as stored), so N runs read
each line once between them; each reads only its range and the end of its
last line (a text object's by ranged requests). Compressed files and streams
cannot be cut: each is read whole by the shard holding its first byte. Line
numbers still count from the file's start. With --csv, --tsv or --delimiter
every shard reads the header of every file and object (standard input and
pipes: the shard that reads them), which must agree as in one run.
One job as 4 processes, merged (see `brc merge --help`):
  for k in 1 2 3 4; do brc --shard $k/4 --format partial big.txt > p$k & done; wait
  brc merge p1 p2 p3 p4   # the same bytes as `brc big.txt`

Statistics: `--stats LIST` shows, per key and in the order given, any of
count, sum, min, max, mean, stddev (sample, n-1), stddev_pop (n), median
and pN for N in (0, 100) with up to 6 decimals (p1, p90, p99.9); the
default is min,mean,max. All are exact: sums and counts as integers, the
mean as above, the standard deviations from the integer sums of values
and squares, rounded half up (never through a float); median and pN are
discrete quantiles (SQL's PERCENTILE_DISC, DuckDB's quantile_disc): the
smallest value with at least N% of the values at or below it, a value that
occurs (median = p50, the lower middle of an even count). Quantiles keep a
count per distinct value and key (memory grows with those, never with the
rows); every stat beyond count, sum, min, max and mean takes a slower loop
of its own (docs/PERFORMANCE.md, Statistics). A stat a key lacks (no values; one value for stddev) is
`-` (official, lines), an empty cell (csv) or null (json). Partials
(`--format partial`) carry what the stats need, so merges give them too:
  brc --stats min,median,p99,max measurements.txt
  brc --stats count,mean,stddev --format csv --csv --key site --value t r.csv

Exit status:
  0  success (also when stdout is a closed pipe)
  1  malformed input or an I/O error: one line on stderr,
     `brc: <file>: line <N>: <expected ..., found ...>` (Parquet:
     `row group <G>, row <R>: ...`), nothing on stdout
  2  usage error (bad flags or values)

`--format partial` writes the exact, mergeable state instead of rounded
results; `brc merge` merges such partials of pieces of the input into the
result of the whole (docs/PARTIAL-FORMAT.md).";

/// Exact per-station min/mean/max of `<name>;<value>` measurement files,
/// fast (the One Billion Row Challenge as a tool).
#[derive(Parser, Debug)]
#[command(name = "brc", version, after_help = AFTER_HELP)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,

    /// Measurements files, directories or URLs (s3://, http(s)://), read
    /// as one input; `-` or none for standard input.
    #[arg(value_name = "FILE")]
    files: Vec<PathBuf>,

    /// Parquet files' name and value columns (see below).
    #[arg(long, value_name = "NAME,VALUE", value_parser = parse_columns, default_value = "station,measure")]
    columns: Columns,

    /// Read text FILEs as CSV (see "Delimited files" below).
    #[arg(long, conflicts_with_all = ["tsv", "delimiter"], help_heading = "Delimited files")]
    csv: bool,

    /// Read text FILEs as TSV (tab-separated).
    #[arg(long, conflicts_with = "delimiter", help_heading = "Delimited files")]
    tsv: bool,

    /// Read text FILEs as delimited by this one-byte character.
    #[arg(long, value_name = "C", value_parser = parse_delimiter, help_heading = "Delimited files")]
    delimiter: Option<u8>,

    /// The key's column(s), by header name or 1-based position, comma-separated;
    /// each column once.
    #[arg(
        long,
        value_name = "COLS",
        default_value = "1",
        help_heading = "Delimited files"
    )]
    key: String,

    /// The value's column, by header name or 1-based position.
    #[arg(
        long,
        value_name = "COL",
        default_value = "2",
        help_heading = "Delimited files"
    )]
    value: String,

    /// Value cells that mean "missing", comma-separated.
    #[arg(
        long,
        value_name = "LIST",
        default_value = ",NA,NaN,null",
        help_heading = "Delimited files"
    )]
    null: String,

    /// What a bad row does: `fail` the run, or be `skip`ped and counted
    /// (its line named on stderr, the first 5).
    #[arg(long, value_name = "WHAT", default_value = "fail", value_parser = ["fail", "skip"], help_heading = "Delimited files")]
    on_error: String,

    /// Decimals printed [default: as many as the most precise value has].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(0..=brc::MAX_SCALE as i64), help_heading = "Delimited files")]
    decimals: Option<u32>,

    /// Statistics shown per key, in order, each once: count, sum, min, max,
    /// mean, stddev, stddev_pop, median, pN (e.g. p99.9) [default:
    /// min,mean,max; see below].
    #[arg(long, value_name = "LIST", value_parser = parse_statistics)]
    stats: Option<Statistics>,

    /// Read only part K of N of the input (1 <= K <= N; see below).
    #[arg(long, value_name = "K/N", value_parser = parse_shard)]
    shard: Option<Shard>,

    /// Worker threads, for aggregating and for printing 65,536 stations or
    /// more [default: all available cores].
    #[arg(short = 't', long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=brc::MAX_THREADS as i64))]
    threads: Option<u32>,

    /// Aggregation engine.
    #[arg(short = 'e', long, value_name = "NAME", default_value = "fast")]
    engine: EngineArg,

    /// Output format.
    #[arg(short = 'f', long, value_name = "FORMAT", default_value = "official")]
    format: FormatArg,

    /// Bytes handed to a thread at a time (suffixes K, M, G; at most 1G); a
    /// file's chunks are 4 times as big but for the last 8 per thread.
    #[arg(long, value_name = "BYTES", value_parser = parse_size, default_value = "4M")]
    chunk_size: usize,

    /// After the output, print where the time went to stderr: opening,
    /// each thread's scanning and sorting, merging, checking names,
    /// printing, throughput.
    #[arg(long)]
    timings: bool,

    /// Never show the progress bar (shown on a terminal for runs over a
    /// second).
    #[arg(short = 'q', long)]
    quiet: bool,
}

#[derive(Subcommand, Debug)]
enum Command {
    Generate(generate::Args),
    /// Print a shell completion script to stdout (e.g. `brc completions bash
    /// > /etc/bash_completion.d/brc`).
    Completions {
        /// The shell to complete for.
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff) to stdout (e.g. `brc man > brc.1`).
    Man,
    Merge(merge::Args),
}

#[derive(Clone, Copy, Debug)]
struct EngineArg(Engine);

impl ValueEnum for EngineArg {
    fn value_variants<'a>() -> &'a [Self] {
        const ALL: [EngineArg; Engine::ALL.len()] = {
            let mut all = [EngineArg(Engine::Naive); Engine::ALL.len()];
            let mut i = 0;
            while i < all.len() {
                all[i] = EngineArg(Engine::ALL[i]);
                i += 1;
            }
            all
        };
        &ALL
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.0.name()).help(self.0.about()))
    }
}

#[derive(Clone, Copy, Debug)]
struct FormatArg(Format);

impl ValueEnum for FormatArg {
    fn value_variants<'a>() -> &'a [Self] {
        const ALL: [FormatArg; 5] = [
            FormatArg(Format::ALL[0].1),
            FormatArg(Format::ALL[1].1),
            FormatArg(Format::ALL[2].1),
            FormatArg(Format::ALL[3].1),
            FormatArg(Format::ALL[4].1),
        ];
        &ALL
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        let (name, _) = Format::ALL.iter().find(|(_, f)| *f == self.0)?;
        Some(PossibleValue::new(*name).help(self.0.summary()))
    }
}

/// The largest `--chunk-size`: a stream holds `threads + 2` blocks of it.
const MAX_CHUNK_SIZE: usize = 1 << 30;

/// Parses a byte count such as `4096`, `64K`, `4M` or `1G`, at most
/// [`MAX_CHUNK_SIZE`].
fn parse_size(s: &str) -> Result<usize, String> {
    let (digits, unit) = match s.as_bytes().last() {
        Some(b'k' | b'K') => (&s[..s.len() - 1], 1 << 10),
        Some(b'm' | b'M') => (&s[..s.len() - 1], 1 << 20),
        Some(b'g' | b'G') => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    let n: usize = digits
        .parse()
        .map_err(|_| format!("expected a byte count like 4096, 64K or 4M, found `{s}`"))?;
    match n.checked_mul(unit) {
        Some(0) => Err("the chunk size must be at least 1 byte".to_string()),
        Some(n) if n <= MAX_CHUNK_SIZE => Ok(n),
        _ => Err(format!("`{s}` is too large: the chunk size is at most 1G")),
    }
}

/// Parses `--delimiter C`: one ASCII character, not a quote or a line
/// break (`\t` for a tab).
fn parse_delimiter(s: &str) -> Result<u8, String> {
    match s.as_bytes() {
        b"\\t" => Ok(b'\t'),
        [b'"' | b'\n' | b'\r'] => Err(format!("`{}` cannot be a delimiter", s.escape_debug())),
        [c] if c.is_ascii() => Ok(*c),
        _ => Err(format!(
            "expected one ASCII character (or \\t), found `{}`",
            s.escape_debug()
        )),
    }
}

impl Cli {
    /// The dialect of delimited FILEs, if they are.
    fn dialect(&self) -> Option<Dialect> {
        let delimiter = match (self.csv, self.tsv, self.delimiter) {
            (true, _, _) => b',',
            (_, true, _) => b'\t',
            (_, _, Some(d)) => d,
            _ => return None,
        };
        let key = self.key.split(',').map(Column::parse).collect();
        let mut dialect = Dialect::csv(key, Column::parse(&self.value)).delimiter(delimiter);
        dialect.nulls = self.null.split(',').map(str::to_string).collect();
        dialect.skip_bad_rows = self.on_error == "skip";
        Some(dialect)
    }
}

/// Parses `--columns NAME,VALUE`.
fn parse_columns(s: &str) -> Result<Columns, String> {
    match s.split_once(',') {
        Some((key, value)) if !key.is_empty() && !value.is_empty() && !value.contains(',') => {
            Ok(Columns {
                key: key.into(),
                value: value.into(),
            })
        }
        _ => Err(format!(
            "expected two column names as NAME,VALUE, found `{s}`"
        )),
    }
}

/// Parses `--shard K/N`.
pub(crate) fn parse_statistics(s: &str) -> Result<Statistics, String> {
    Statistics::parse(s).map_err(|e| e.to_string())
}

fn parse_shard(s: &str) -> Result<Shard, String> {
    s.parse().map_err(|e: brc::input::ShardError| e.to_string())
}

/// Exits with a usage error if `paths` name standard input (`-`) more
/// than once: it can be read only once.
fn stdin_at_most_once(paths: &[PathBuf]) {
    if paths.iter().filter(|p| p.as_os_str() == "-").count() > 1 {
        let message = "`-` (standard input) may be given only once\n";
        clap::Error::raw(clap::error::ErrorKind::ArgumentConflict, message).exit();
    }
}

fn run(cli: &Cli) -> anyhow::Result<()> {
    match &cli.command {
        Some(Command::Generate(args)) => return generate::run(args),
        Some(Command::Completions { shell }) => {
            // Rendered in memory: `clap_complete` panics when a write fails.
            let mut script = Vec::new();
            clap_complete::generate(*shell, &mut Cli::command(), "brc", &mut script);
            return Ok(write_stdout(&script)?);
        }
        Some(Command::Man) => {
            let mut page = Vec::new();
            clap_mangen::Man::new(Cli::command()).render(&mut page)?;
            return Ok(write_stdout(&page)?);
        }
        Some(Command::Merge(args)) => return merge::run(args),
        None => {}
    }
    if cli.timings {
        timings::enable();
    }
    let inputs = timings::phase("open", || {
        let inputs = match cli.files.is_empty() {
            true => Inputs::new([Source::Stdin]),
            false => Inputs::new(cli.files.iter().map(Source::from_arg)),
        };
        let inputs = inputs.columns(cli.columns.clone());
        let inputs = match &cli.stats {
            Some(stats) => inputs.keeping(stats.kept()),
            None => inputs,
        };
        let inputs = match cli.dialect() {
            Some(dialect) => inputs.delimited(dialect),
            None => inputs,
        };
        match cli.shard {
            Some(shard) => inputs.shard(shard),
            None => inputs,
        }
    });
    let consumed = inputs.consumed();
    let sources: Vec<Source> = inputs.sources().cloned().collect();
    let mut options = Options {
        chunk_size: cli.chunk_size,
        ..Options::default()
    };
    if let Some(t) = cli.threads {
        options.threads = t as usize;
    }
    let bar = if !cli.quiet && io::stderr().is_terminal() {
        progress::Bar::start(inputs.consumed(), inputs.size())
    } else {
        progress::Bar::hidden()
    };
    let summary = timings::phase("aggregate", || inputs.aggregate(cli.engine.0, &options))?;
    drop(bar);
    let summary = match cli.decimals {
        Some(n) => summary.with_decimals(n)?,
        None => summary,
    };
    let summary = match &cli.stats {
        Some(stats) => summary.with_statistics(stats.clone())?,
        None => summary,
    };
    let (skipped, first) = summary.skipped();
    if skipped > 0 {
        let lines: Vec<String> = (first.iter())
            .map(|&(input, line)| format!("{}: line {line}", sources[input]))
            .collect();
        let _ = writeln!(
            io::stderr(),
            "brc: {skipped} bad rows skipped, the first at {}",
            lines.join("; ")
        );
    }
    if summary.counts_missing() {
        let missing: u64 = summary.iter().map(|(_, s)| s.missing).sum();
        if missing > 0 {
            let _ = writeln!(
                io::stderr(),
                "brc: {missing} missing values (empty or null cells) skipped"
            );
        }
    }
    timings::phase("print", || print(&summary, cli.format.0, options.threads))?;
    if cli.timings {
        let rows = summary.iter().map(|(_, s)| s.count).sum();
        let bytes = consumed.load(std::sync::atomic::Ordering::Relaxed);
        let threads = match cli.engine.0 {
            Engine::Naive => 1,
            _ => options.threads,
        };
        // A report that cannot be written is not worth failing the run.
        let _ = write!(
            io::stderr(),
            "{}",
            timings::take().report(bytes, rows, threads)
        );
    }
    Ok(())
}

/// Writes `bytes`, a whole output rendered in memory, to stdout. A write
/// that fails returns its error like every other write to stdout, so a
/// closed stdout ends the run as [`reader_gone`] tells.
fn write_stdout(bytes: &[u8]) -> io::Result<()> {
    let mut out = io::stdout().lock();
    out.write_all(bytes)?;
    out.flush()
}

/// Whether `e` comes from a write to a pipe whose reader has gone away
/// (`brc big.txt | head`, or a FIFO given to `generate -o`): the reader has
/// all it wanted, so the run ends with status 0 and no message. The whole
/// chain is searched, as the write's error may sit under context or the
/// library's own errors.
fn reader_gone(e: &anyhow::Error) -> bool {
    e.chain().any(|cause| {
        cause
            .downcast_ref::<io::Error>()
            .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
    })
}

/// Prints `summary` to stdout, rendered by up to `threads` threads.
fn print(summary: &Summary, format: Format, threads: usize) -> io::Result<()> {
    brc::output::write_parts(summary, format, threads, io::stdout().lock())
}

fn main() -> ExitCode {
    // An engine that saw a file's bytes turn to zeros under it may panic,
    // and so may the Parquet reader on a malformed file; the library turns
    // either into an error, so say nothing meanwhile.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !brc::shrink::seen() && !brc::parquet::reading() {
            default_hook(info);
        }
    }));
    let cli = Cli::parse();
    stdin_at_most_once(&cli.files);
    if cli.command.is_none() && cli.files.is_empty() && io::stdin().is_terminal() {
        Cli::command()
            .error(
                clap::error::ErrorKind::MissingRequiredArgument,
                "no input: give a FILE, or pipe data in (`-` reads standard input)",
            )
            .exit();
    }
    match run(&cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            if reader_gone(&e) {
                return ExitCode::SUCCESS;
            }
            // Nothing more to do if stderr is gone too: the status says it.
            let _ = writeln!(io::stderr(), "brc: {e:#}");
            ExitCode::from(1)
        }
    }
}
