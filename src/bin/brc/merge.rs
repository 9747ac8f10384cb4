//! `brc merge`: merge partial results into the result of the whole input.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use brc::partial::Merger;
use brc::{Options, Statistics};

use crate::FormatArg;

const AFTER_HELP: &str = "\
A partial (`brc --format partial`) holds each station's count, and its sum,
min and max in integer tenths: exact, so that partials of pieces of the
input merge into exactly the result of the whole, whatever the pieces and
the order of the partials. Its format, `brc-partial v1` (a first line
`brc-partial v1 stations=<N>`, then CSV `station,count,sum,min,max` sorted
by name), is specified in docs/PARTIAL-FORMAT.md; a file may hold several
partials one after the other. A truncated or corrupted partial is refused
like bad input: `brc: <file>: line <N>: expected ..., found ...`, exit 1.
Partials made with `--stats` asking for stddev, the median or a percentile
carry each key's sum of squares and counts per value (`brc-partial v3`),
so `brc merge --stats ...` gives those exactly too.

One job as several processes, by hand: one brc per shard of the input
(in parallel, or on other machines sharing the files), then merge:
  for k in 1 2 3 4; do brc --shard $k/4 --format partial big.txt > p$k & done; wait
  brc merge p1 p2 p3 p4           # the same bytes as `brc big.txt`
Merges form trees: `--format partial` writes the merged partial again.
  brc merge --format partial p1 p2 > half.p
  brc merge half.p p3 p4
  brc --stats median,p99 --format partial --shard 1/2 big.txt > s1   # (and 2/2)
  brc merge --stats min,median,p99,max s1 s2

Exit status: 0 success, 1 a malformed partial, a total beyond 64 bits or
an I/O error (one line on stderr, nothing on stdout), 2 usage error.";

/// Merge partial results (`brc --format partial`) and print the result.
#[derive(clap::Args, Debug)]
#[command(after_help = AFTER_HELP)]
pub struct Args {
    /// Partial results: files, or `-` for standard input (at most once).
    #[arg(value_name = "PARTIAL", required = true)]
    partials: Vec<PathBuf>,

    /// Output format; `partial` writes the merged partial, to merge again.
    #[arg(short = 'f', long, value_name = "FORMAT", default_value = "official")]
    format: FormatArg,

    /// Statistics shown per key, as `brc --stats` (the partials must carry
    /// what they need: made with such `--stats`) [default: min,mean,max].
    #[arg(long, value_name = "LIST", value_parser = crate::parse_statistics)]
    stats: Option<Statistics>,

    /// Threads printing an output of 65,536 stations or more [default: all
    /// available cores].
    #[arg(short = 't', long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=brc::MAX_THREADS as i64))]
    threads: Option<u32>,
}

/// Runs `brc merge`.
pub fn run(args: &Args) -> anyhow::Result<()> {
    crate::stdin_at_most_once(&args.partials);
    let stdin = Path::new("-");
    let inputs = args
        .partials
        .iter()
        .map(|path| -> io::Result<Box<dyn Read>> {
            match path == stdin {
                true => Ok(Box::new(io::stdin().lock())),
                false => Ok(Box::new(File::open(path)?)),
            }
        });
    let mut merger = Merger::new();
    merger.read_all(inputs).map_err(|(k, e)| {
        let path = &args.partials[k];
        let name = if path == stdin {
            "<stdin>".into()
        } else {
            path.display().to_string()
        };
        anyhow::Error::new(e).context(name)
    })?;
    let summary = merger.finish()?.finish();
    let summary = match &args.stats {
        Some(stats) => summary.with_statistics(stats.clone())?,
        None => summary,
    };
    let threads = args
        .threads
        .map_or_else(|| Options::default().threads, |t| t as usize);
    crate::print(&summary, args.format.0, threads)?;
    Ok(())
}
