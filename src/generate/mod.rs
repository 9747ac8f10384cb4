//! Generating measurement files: reproducible, parallel, fast.
//!
//! Row `r` of the output is a pure function of the seed, the station set
//! and `r` (see the `rng` module): it picks a station uniformly and draws
//! its value from a normal distribution around the station's mean, rounded
//! to a tenth and clamped to `-99.9..=99.9` (see the `normal` module). Rows
//! are formatted in blocks of [`BLOCK_ROWS`]; threads claim blocks in order,
//! format them into their own buffers and hand them to the output in order,
//! so the bytes are the same for any number of threads, and the first `n`
//! rows of a longer file are exactly the `n`-row file.
//!
//! The same rows can be written as Parquet ([`Generator::write_parquet`]) or
//! as a data logger's CSV export ([`Generator::write_csv`], the `csv`
//! module: a timestamp, the site, a sensor, the value with three decimals
//! or an empty cell, a unit), block by block as the text.

mod csv;
mod normal;
mod rng;
mod stations;

use std::io::{self, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};

pub use self::csv::{CsvRow, CSV_HEADER};
use self::normal::TenthsNormal;
use self::rng::{below, Stream};
#[cfg(test)]
pub(crate) use self::stations::official;
pub use self::stations::{Station, CITY_KEYS, MAX_KEYS};
use crate::parquet::write::Layout;

/// Rows per block: a block is one `write` and one unit of parallel work.
pub const BLOCK_ROWS: u64 = 1 << 15;

/// The largest value, in tenths.
const MAX_TENTHS: i32 = 999;

/// Which stations rows are drawn from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Keys {
    /// The official 413 stations, values with standard deviation 10.
    Official,
    /// That many names (1..=[`MAX_KEYS`]), values with standard deviation
    /// 7: the first [`CITY_KEYS`] built from world city names, as the
    /// official 10K-key generator makes them, the others random.
    Built(usize),
}

/// A key count out of range.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("expected a key count from 1 to {MAX_KEYS}, found {0}")]
pub struct KeyCountError(pub usize);

/// How far generation has got: rows and bytes written so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    /// Rows written.
    pub rows: u64,
    /// Bytes written.
    pub bytes: u64,
}

/// What the hot loop needs of a station, packed next to each other.
#[derive(Clone, Copy, Debug)]
struct Key {
    /// `floor(10 * mean) - half`: the value in tenths is this plus the
    /// drawn slot (see [`TenthsNormal::half`]).
    base: i32,
    /// Index of the offset table for this station's fractional tenth.
    table: u32,
    /// Length of `name;` in bytes.
    len: usize,
}

/// A measurement generator for one station set and seed.
#[derive(Clone, Debug)]
pub struct Generator {
    seed: u64,
    stations: Vec<Station>,
    keys: Vec<Key>,
    /// `name;` of each station, zero-padded to `stride` bytes, so short
    /// names are copied with one fixed-size move.
    names: Vec<u8>,
    stride: usize,
    offsets: TenthsNormal,
}

impl Generator {
    /// A generator of rows from `keys`, drawn with `seed`.
    pub fn new(keys: Keys, seed: u64) -> Result<Generator, KeyCountError> {
        let (stations, sd) = match keys {
            Keys::Official => (stations::official(), 10.0),
            Keys::Built(count) if (1..=MAX_KEYS).contains(&count) => (stations::built(count), 7.0),
            Keys::Built(count) => return Err(KeyCountError(count)),
        };
        let longest = stations.iter().map(|s| s.name().len()).max().unwrap_or(0);
        let stride = (longest + 1).next_multiple_of(COPY);
        let mut names = vec![0; stations.len() * stride];
        // One offset table per distinct fractional tenth among the means.
        let mut shifts: Vec<i32> = Vec::new();
        let mut keys = Vec::with_capacity(stations.len());
        for (station, slot) in stations.iter().zip(names.chunks_exact_mut(stride)) {
            let name = station.name().as_bytes();
            slot[..name.len()].copy_from_slice(name);
            slot[name.len()] = b';';
            let hundredths = station.mean_hundredths();
            let shift = hundredths.rem_euclid(10);
            let table = match shifts.iter().position(|&s| s == shift) {
                Some(i) => i,
                None => {
                    shifts.push(shift);
                    shifts.len() - 1
                }
            };
            keys.push(Key {
                base: hundredths.div_euclid(10),
                table: table as u32,
                len: name.len() + 1,
            });
        }
        let shifts: Vec<f64> = shifts.iter().map(|&s| f64::from(s) / 10.0).collect();
        let offsets = TenthsNormal::new(sd, &shifts);
        for key in &mut keys {
            key.base -= offsets.half();
        }
        Ok(Generator {
            seed,
            stations,
            keys,
            names,
            stride,
            offsets,
        })
    }

    /// The stations rows are drawn from; [`row`](Generator::row) returns
    /// indexes into this slice.
    pub fn stations(&self) -> &[Station] {
        &self.stations
    }

    /// Row `index` of the output: the station's index and the value in
    /// tenths.
    pub fn row(&self, index: u64) -> (usize, i32) {
        self.draw(&mut Stream::at(self.seed, 2 * index))
    }

    /// Draws one row from the stream's next two numbers.
    #[inline(always)]
    fn draw(&self, stream: &mut Stream) -> (usize, i32) {
        let station = below(stream.next_u64(), self.keys.len() as u32) as usize;
        let key = self.keys[station];
        let slot = self.offsets.slot(key.table as usize, stream.next_u64());
        (
            station,
            (key.base + slot as i32).clamp(-MAX_TENTHS, MAX_TENTHS),
        )
    }

    /// Writes `rows` rows to `out` as a Parquet file laid out as the One
    /// Trillion Row Challenge's files are ([`Layout::default`]): the same
    /// rows as [`Generator::write`], in one thread, `progress` called after
    /// each row group.
    pub fn write_parquet<W: Write + Send>(
        &self,
        rows: u64,
        out: W,
        progress: &(dyn Fn(Progress) + Sync),
    ) -> io::Result<Progress> {
        let layout = Layout::default();
        let stations = self.stations();
        let row = |i: u64| {
            if (i + 1).is_multiple_of(layout.group_rows as u64) || i + 1 == rows {
                progress(Progress {
                    rows: i + 1,
                    bytes: 0,
                });
            }
            let (station, tenths) = self.row(i);
            (
                stations[station].name().as_bytes(),
                f64::from(tenths) / 10.0,
            )
        };
        crate::parquet::write::write(out, (0..rows).map(row), &layout).map_err(io::Error::other)?;
        Ok(Progress { rows, bytes: 0 })
    }

    /// Writes `rows` rows to `out` using `threads` threads, calling
    /// `progress` after each block (in output order). Stops at the first
    /// write error.
    pub fn write<W: Write + Send>(
        &self,
        rows: u64,
        threads: usize,
        out: W,
        progress: &(dyn Fn(Progress) + Sync),
    ) -> io::Result<Progress> {
        write_blocks(rows, threads, out, b"", progress, |first, count, buf| {
            self.format(first, count, buf)
        })
    }

    /// Formats rows `first..first + count` into `buf`, returning their
    /// length in bytes.
    fn format(&self, first: u64, count: usize, buf: &mut Vec<u8>) -> usize {
        // Every copy writes a fixed number of bytes and then advances by the
        // real length, so leave room for the widest copies past the end.
        let longest_line = self.stride + VALUE_COPY;
        let needed = count * longest_line + COPY + VALUE_COPY;
        if buf.len() < needed {
            buf.resize(needed, 0);
        }
        let mut stream = Stream::at(self.seed, 2 * first);
        let mut pos = 0;
        for _ in 0..count {
            let (station, tenths) = self.draw(&mut stream);
            let len = self.keys[station].len;
            let name = &self.names[station * self.stride..][..self.stride];
            buf[pos..pos + COPY].copy_from_slice(&name[..COPY]);
            if len > COPY {
                buf[pos + COPY..pos + len].copy_from_slice(&name[COPY..len]);
            }
            pos += len;
            let text = VALUE_TEXT[(tenths + MAX_TENTHS) as usize];
            buf[pos..pos + VALUE_COPY].copy_from_slice(&text.to_le_bytes());
            pos += (text >> 56) as usize;
        }
        pos
    }
}

/// Writes `header`, then rows `0..rows` in blocks of [`BLOCK_ROWS`] to
/// `out` using `threads` threads: `format(first, count, buf)` formats rows
/// `first..first + count` into the start of `buf` (grown as it needs) and
/// returns their length. Threads claim blocks in order and write them in
/// order, so the bytes do not depend on `threads`; `progress` is called
/// after each block (in output order), its bytes counting the header.
/// Stops at the first write error.
fn write_blocks<W, F>(
    rows: u64,
    threads: usize,
    mut out: W,
    header: &[u8],
    progress: &(dyn Fn(Progress) + Sync),
    format: F,
) -> io::Result<Progress>
where
    W: Write + Send,
    F: Fn(u64, usize, &mut Vec<u8>) -> usize + Sync,
{
    out.write_all(header)?;
    let blocks = rows.div_ceil(BLOCK_ROWS);
    let next_block = AtomicU64::new(0);
    let turn = Mutex::new(Turn {
        block: 0,
        out,
        done: Progress {
            rows: 0,
            bytes: header.len() as u64,
        },
        error: None,
    });
    let turn_changed = Condvar::new();
    let work = || {
        let _wake = WakeOnPanic {
            turn: &turn,
            turn_changed: &turn_changed,
        };
        let mut buf = Vec::new();
        loop {
            let block = next_block.fetch_add(1, Ordering::Relaxed);
            if block >= blocks {
                return;
            }
            let first = block * BLOCK_ROWS;
            let count = BLOCK_ROWS.min(rows - first);
            let len = format(first, count as usize, &mut buf);
            let mut turn = turn.lock().unwrap_or_else(|e| e.into_inner());
            while turn.block != block && turn.error.is_none() {
                turn = turn_changed.wait(turn).unwrap_or_else(|e| e.into_inner());
            }
            if turn.error.is_some() {
                return;
            }
            if let Err(e) = turn.out.write_all(&buf[..len]) {
                turn.error = Some(e);
                turn_changed.notify_all();
                return;
            }
            turn.block += 1;
            turn.done.rows += count;
            turn.done.bytes += len as u64;
            progress(turn.done);
            turn_changed.notify_all();
        }
    };
    let threads = threads.clamp(1, blocks.max(1) as usize);
    if threads == 1 {
        work();
    } else {
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(work);
            }
        });
    }
    let turn = turn.into_inner().unwrap_or_else(|e| e.into_inner());
    let mut out = turn.out;
    match turn.error {
        Some(e) => Err(e),
        None => out.flush().map(|()| turn.done),
    }
}

/// Whose turn it is to write, and where the writing stands.
struct Turn<W> {
    /// The next block to write.
    block: u64,
    out: W,
    done: Progress,
    /// The first write error; every thread stops when it is set.
    error: Option<io::Error>,
}

/// Stops the other threads if this one panics: they would otherwise wait
/// forever for the turn of a block it will never write.
struct WakeOnPanic<'a, W> {
    turn: &'a Mutex<Turn<W>>,
    turn_changed: &'a Condvar,
}

impl<W> Drop for WakeOnPanic<'_, W> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let mut turn = self.turn.lock().unwrap_or_else(|e| e.into_inner());
            turn.error
                .get_or_insert_with(|| io::Error::other("a generating thread panicked"));
            self.turn_changed.notify_all();
        }
    }
}

/// Bytes of a name copied unconditionally: every official name fits.
const COPY: usize = 32;
/// Bytes of a value copied unconditionally: one `u64`.
const VALUE_COPY: usize = 8;

/// Each value `-99.9..=99.9` as its text and a `\n` (at most 6 bytes) in the
/// low bytes of a little-endian `u64`, with the text's length in the top
/// byte; indexed by tenths + 999.
static VALUE_TEXT: [u64; 2 * MAX_TENTHS as usize + 1] = value_texts();

const fn value_texts() -> [u64; 2 * MAX_TENTHS as usize + 1] {
    let mut table = [0u64; 2 * MAX_TENTHS as usize + 1];
    let mut i = 0;
    while i < table.len() {
        let tenths = i as i32 - MAX_TENTHS;
        let abs = tenths.unsigned_abs() as u64;
        let mut bytes = [0u8; 8];
        let mut len = 0;
        if tenths < 0 {
            bytes[len] = b'-';
            len += 1;
        }
        if abs >= 100 {
            bytes[len] = b'0' + (abs / 100) as u8;
            len += 1;
        }
        bytes[len] = b'0' + (abs / 10 % 10) as u8;
        bytes[len + 1] = b'.';
        bytes[len + 2] = b'0' + (abs % 10) as u8;
        bytes[len + 3] = b'\n';
        len += 4;
        bytes[7] = len as u8;
        table[i] = u64::from_le_bytes(bytes);
        i += 1;
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(tenths: i32) -> String {
        let v = VALUE_TEXT[(tenths + MAX_TENTHS) as usize].to_le_bytes();
        String::from_utf8(v[..usize::from(v[7])].to_vec()).unwrap()
    }

    #[test]
    fn values_are_formatted_like_the_official_generator() {
        assert_eq!(text(0), "0.0\n");
        assert_eq!(text(-1), "-0.1\n");
        assert_eq!(text(5), "0.5\n");
        assert_eq!(text(123), "12.3\n");
        assert_eq!(text(-999), "-99.9\n");
        assert_eq!(text(999), "99.9\n");
        for tenths in -MAX_TENTHS..=MAX_TENTHS {
            let t = text(tenths);
            let parsed = crate::parse::parse_value(t.trim_end().as_bytes());
            assert_eq!(parsed, Some(tenths as i16), "{t:?}");
        }
    }

    #[test]
    fn blocks_format_the_rows_they_stand_for() {
        let g = Generator::new(Keys::Official, 9).unwrap();
        let mut buf = Vec::new();
        let len = g.format(1000, 500, &mut buf);
        let lines: Vec<&str> = std::str::from_utf8(&buf[..len]).unwrap().lines().collect();
        assert_eq!(lines.len(), 500);
        for (i, line) in lines.iter().enumerate() {
            let (station, tenths) = g.row(1000 + i as u64);
            let expected = format!("{};{}", g.stations()[station].name(), text(tenths));
            assert_eq!(format!("{line}\n"), expected);
        }
    }

    #[test]
    fn long_names_are_copied_whole() {
        let g = Generator::new(Keys::Built(2_000), 1).unwrap();
        assert!(g.stations().iter().any(|s| s.name().len() > COPY));
        let mut buf = Vec::new();
        let len = g.format(0, 20_000, &mut buf);
        let text = std::str::from_utf8(&buf[..len]).unwrap();
        for (i, line) in text.lines().enumerate() {
            let (station, _) = g.row(i as u64);
            let (name, _) = line.split_once(';').unwrap();
            assert_eq!(name, g.stations()[station].name());
        }
    }

    #[test]
    fn a_panicking_thread_stops_the_others() {
        let g = Generator::new(Keys::Official, 0).unwrap();
        // Without the wake-up the other threads would wait for this block's
        // turn forever and the call would hang instead of panicking.
        let result = std::panic::catch_unwind(|| {
            g.write(20 * BLOCK_ROWS, 3, io::sink(), &|p| {
                assert!(p.rows < 2 * BLOCK_ROWS, "progress gave up");
            })
        });
        assert!(result.is_err());
    }

    #[test]
    fn key_counts_are_checked() {
        assert_eq!(
            Generator::new(Keys::Built(0), 0).unwrap_err(),
            KeyCountError(0)
        );
        assert!(Generator::new(Keys::Built(MAX_KEYS + 1), 0).is_err());
        assert_eq!(
            Generator::new(Keys::Built(7), 0).unwrap().stations().len(),
            7
        );
    }
}
