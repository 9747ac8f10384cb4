//! Each key's stats, at one scale for all of a table's values, and the
//! rows of a stretch of bytes fed into them.

use std::hash::{BuildHasher, Hash, Hasher};

use compact_str::CompactString;
use hashbrown::HashTable;

use super::decimal::{self, Decimal};
use super::masks::Masks;
use super::scan::{unescape, Cell, Rows, Shape, Window};
use super::{CellError, CellFault, Layout, Slot, KEY_JOIN};
use crate::detail::Kept;
use crate::stats::{Stats, MAX_KEY_LEN, MAX_UNITS};

/// Bytes of a key held in its bucket, where a short key is compared
/// without a load from elsewhere.
const HEAD: usize = 16;

/// A key as a table holds it: its first [`HEAD`] bytes in two words,
/// zeros past its end, and all its bytes. A key of at most [`HEAD`] bytes
/// is hashed and compared by its words and length alone.
struct Key {
    head: [u64; 2],
    bytes: Box<[u8]>,
}

/// A row's key, looked up in a table as the [`Key`] of the same bytes.
struct Probe<'a> {
    head: [u64; 2],
    bytes: &'a [u8],
}

impl<'a> Probe<'a> {
    /// The key `within[start..end]`.
    #[inline(always)]
    fn new(within: &'a [u8], start: usize, end: usize) -> Probe<'a> {
        let rest = &within[start..];
        let bytes = &rest[..end - start];
        let word = match rest.first_chunk::<HEAD>() {
            // The key and the bytes after it, in one load.
            Some(head) => u128::from_le_bytes(*head),
            None => padded(bytes),
        };
        let head = word & KEEP[bytes.len().min(HEAD)];
        Probe {
            head: [head as u64, (head >> 64) as u64],
            bytes,
        }
    }

    /// The probe for a key the table holds.
    fn of(key: &'a Key) -> Probe<'a> {
        Probe {
            head: key.head,
            bytes: &key.bytes,
        }
    }

    /// Whether `key` holds the probe's bytes.
    #[inline(always)]
    fn equivalent(&self, key: &Key) -> bool {
        same((self.head, self.bytes), (key.head, &key.bytes))
    }
}

/// For each length up to [`HEAD`], the bits of a word that hold a key's
/// bytes: a load, where a shift by a variable count of a 128-bit word
/// takes several instructions.
const KEEP: [u128; HEAD + 1] = {
    let mut keep = [u128::MAX; HEAD + 1];
    let mut n = 0;
    while n < HEAD {
        keep[n] = (1u128 << (8 * n)) - 1;
        n += 1;
    }
    keep
};

/// The first [`HEAD`] bytes of `bytes`, zeros past its end, as a word.
fn padded(bytes: &[u8]) -> u128 {
    let mut head = [0u8; HEAD];
    let n = bytes.len().min(HEAD);
    head[..n].copy_from_slice(&bytes[..n]);
    u128::from_le_bytes(head)
}

impl Key {
    fn new(bytes: &[u8]) -> Key {
        let head = padded(bytes);
        Key {
            head: [head as u64, (head >> 64) as u64],
            bytes: bytes.into(),
        }
    }
}

/// Hashes a key: a short one by its words and length, one of up to
/// twice [`HEAD`] bytes by those and its last [`HEAD`] bytes, a longer one
/// by all its bytes. Every byte counts, so keys that share their first
/// bytes spread.
#[inline(always)]
fn hash_key<H: Hasher>(head: [u64; 2], bytes: &[u8], state: &mut H) {
    // One multiply for both words. The length goes in the top byte,
    // zero below 16 bytes, so that keys that differ only by trailing
    // NULs (`a`, `a\0`, ...) hash apart.
    let words = |n: usize| (u128::from(head[1]) ^ (n as u128) << 56) << 64 | u128::from(head[0]);
    match bytes.len() {
        n if n <= HEAD => state.write_u128(words(n)),
        n if n <= TAIL_MAX => {
            state.write_u128(words(n));
            state.write_u128(tail(bytes));
        }
        _ => state.write(bytes),
    }
}

/// The longest key compared and hashed by its head and [`tail`].
const TAIL_MAX: usize = 2 * HEAD;

/// The last [`HEAD`] bytes of `bytes`, which holds more, as a word: with
/// the head, all of a key of up to [`TAIL_MAX`] bytes.
#[inline(always)]
fn tail(bytes: &[u8]) -> u128 {
    let last = bytes.last_chunk::<HEAD>().expect("longer than HEAD");
    u128::from_le_bytes(*last)
}

/// Whether two keys, each given as its words and bytes, are the same: a
/// key of up to [`TAIL_MAX`] bytes by its words and [`tail`], where a
/// byte compare would be a call.
#[inline(always)]
fn same(a: ([u64; 2], &[u8]), b: ([u64; 2], &[u8])) -> bool {
    a.1.len() == b.1.len()
        && a.0 == b.0
        && match a.1.len() {
            n if n <= HEAD => true,
            n if n <= TAIL_MAX => tail(a.1) == tail(b.1),
            _ => a.1[HEAD..] == b.1[HEAD..],
        }
}

impl Hash for Key {
    fn hash<H: Hasher>(&self, state: &mut H) {
        hash_key(self.head, &self.bytes, state);
    }
}

impl Hash for Probe<'_> {
    #[inline(always)]
    fn hash<H: Hasher>(&self, state: &mut H) {
        hash_key(self.head, self.bytes, state);
    }
}

/// Keys and their stats, every value in units of 10^-`scale`.
#[derive(Default)]
pub(crate) struct Table {
    /// Each key with its stats. A table of its own, not a map, so that
    /// each lookup's probing is its own code, inlined into the row loop.
    map: HashTable<(Key, Stats)>,
    hasher: foldhash::fast::RandomState,
    scale: u32,
    /// What each key keeps beyond its basic stats.
    kept: Kept,
    /// Rows skipped as bad (`--on-error skip`), and the offsets of the
    /// first [`SKIPPED_SHOWN`] of them.
    pub(crate) skipped: u64,
    pub(crate) first_skipped: Vec<usize>,
}

/// How many skipped rows a run names.
pub(crate) const SKIPPED_SHOWN: usize = 5;

impl Table {
    /// An empty table whose keys keep what `kept` says.
    pub(crate) fn keeping(kept: Kept) -> Table {
        Table {
            kept,
            ..Table::default()
        }
    }

    /// The scale of the table's values.
    pub(crate) fn scale(&self) -> u32 {
        self.scale
    }

    /// The stats of the key `probe`, if the table holds it.
    ///
    /// `COPY` tells apart the places that look keys up: each gets its own
    /// copy of the table's probing, which the compiler then inlines into
    /// its one caller, where one copy shared by the row loops would be
    /// called from each.
    #[inline(always)]
    fn find<const COPY: u8>(&mut self, probe: &Probe) -> Option<&mut Stats> {
        let hash = self.hasher.hash_one(probe);
        (self.map.find_mut(hash, |(k, _)| probe.equivalent(k))).map(|(_, s)| s)
    }

    /// Adds `key`, which the table does not hold, with `stats`.
    fn insert(&mut self, key: Key, stats: Stats) {
        let hasher = &self.hasher;
        let hash = hasher.hash_one(&key);
        self.map
            .insert_unique(hash, (key, stats), |(k, _)| hasher.hash_one(k));
    }

    /// Brings every value to `scale`, at least the table's: `Err` with a
    /// key whose value then exceeds 18 digits.
    fn rescale(&mut self, scale: u32) -> Result<(), Vec<u8>> {
        let factor = 10i64.pow(scale - self.scale);
        if factor == 1 {
            return Ok(());
        }
        let up = |v: i64| v.checked_mul(factor).filter(|v| v.abs() <= MAX_UNITS);
        // Every key checked before any changes, so a refusal (a skipped
        // row) leaves the table as it was.
        let refused = (self.map.iter())
            .find(|(_, s)| s.count > 0 && (up(s.min).is_none() || up(s.max).is_none()));
        if let Some((key, _)) = refused {
            return Err(key.bytes.to_vec());
        }
        for (_, s) in self.map.iter_mut().filter(|(_, s)| s.count > 0) {
            (s.min, s.max) = (s.min * factor, s.max * factor);
            s.sum *= i128::from(factor);
            if let Some(d) = &mut s.detail {
                d.rescale(scale - self.scale);
            }
        }
        self.scale = scale;
        Ok(())
    }

    /// Counts the bad row at `offset` as skipped.
    fn skip(&mut self, offset: usize) {
        self.skipped += 1;
        if self.first_skipped.len() < SKIPPED_SHOWN {
            self.first_skipped.push(offset);
        }
    }

    /// Adds a row of `key`: its value, or `None` for a missing one.
    #[inline]
    fn add(&mut self, probe: Probe, value: Option<Decimal>) -> Result<(), Refused> {
        let key = probe.bytes;
        let units = match value {
            None => None,
            // A value refused at this table's scale, which depends on the
            // rows it has seen, yields to a bad key, which does not: so a
            // row is refused alike however the rows are dealt to tables.
            Some(d) => Some(self.units(d).map_err(|r| match bad_key(key) {
                true => Refused::Key,
                false => r,
            })?),
        };
        match self.find::<0>(&probe) {
            Some(s) => match units {
                Some(v) => {
                    s.sum.checked_add(v.into()).ok_or(Refused::Sum)?;
                    s.add(v);
                }
                None => s.missing += 1,
            },
            None => {
                if bad_key(key) {
                    return Err(Refused::Key);
                }
                let stats = match units {
                    Some(v) => Stats::keeping(self.kept, v),
                    None => Stats::missing_keeping(self.kept),
                };
                self.insert(Key::new(key), stats);
            }
        }
        Ok(())
    }

    /// Adds the usual row: a value at the table's scale to a key it holds,
    /// the sum staying in range. Anything else is left to [`Table::add`]:
    /// `false`, and the table as it was.
    #[inline(always)]
    fn add_usual<const COPY: u8>(&mut self, probe: &Probe, d: Decimal) -> bool {
        if d.scale != self.scale {
            return false;
        }
        match self.find::<COPY>(probe) {
            Some(s) if s.sum.checked_add(d.units.into()).is_some() => {
                s.add(d.units);
                true
            }
            _ => false,
        }
    }

    /// `d` in the table's units, the table first brought to `d`'s scale if
    /// finer.
    #[inline]
    fn units(&mut self, d: Decimal) -> Result<i64, Refused> {
        // The usual row: its scale is the table's, and the parser keeps
        // its units within the range.
        if d.scale == self.scale {
            debug_assert!(d.units.abs() <= MAX_UNITS);
            return Ok(d.units);
        }
        self.units_rescaled(d)
    }

    /// [`Table::units`] for a scale other than the table's.
    #[cold]
    fn units_rescaled(&mut self, d: Decimal) -> Result<i64, Refused> {
        if d.scale > self.scale {
            self.rescale(d.scale).map_err(|_| Refused::Range(d.scale))?;
        }
        let units = match d.scale == self.scale {
            // The table was brought to `d`'s scale.
            true => Some(d.units),
            false => d.units.checked_mul(10i64.pow(self.scale - d.scale)),
        };
        units
            .filter(|v| v.abs() <= MAX_UNITS)
            .ok_or(Refused::Range(self.scale))
    }

    /// Folds `other` in, at the larger of the two scales.
    pub(crate) fn merge(&mut self, mut other: Table) -> Result<(), CellError> {
        let scale = self.scale.max(other.scale);
        let refused = |key| CellError::Range { scale, found: key };
        self.rescale(scale).map_err(refused)?;
        other.rescale(scale).map_err(refused)?;
        self.skipped += other.skipped;
        self.first_skipped.append(&mut other.first_skipped);
        self.first_skipped.sort_unstable();
        self.first_skipped.truncate(SKIPPED_SHOWN);
        if self.map.len() < other.map.len() {
            std::mem::swap(&mut self.map, &mut other.map);
            std::mem::swap(&mut self.hasher, &mut other.hasher);
        }
        for (key, stats) in other.map {
            let probe = Probe::of(&key);
            match self.find::<1>(&probe) {
                Some(s) => {
                    let sum = s.sum.checked_add(stats.sum);
                    sum.ok_or_else(|| CellError::Sum {
                        key: key.bytes.to_vec(),
                    })?;
                    s.merge(&stats);
                }
                None => self.insert(key, stats),
            }
        }
        Ok(())
    }

    /// The keys with their stats, sorted by their bytes.
    pub(crate) fn into_sorted(self) -> Vec<(CompactString, Stats)> {
        let mut keys: Vec<(CompactString, Stats)> = (self.map.into_iter())
            .map(|(k, s)| {
                // Every key was checked as UTF-8 when it was added.
                let k = std::str::from_utf8(&k.bytes).unwrap_or_default();
                (CompactString::from(k), s)
            })
            .collect();
        keys.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        keys
    }
}

/// Whether `key` cannot be a key: empty, too long, not UTF-8, or holding
/// a line break.
fn bad_key(key: &[u8]) -> bool {
    key.is_empty()
        || key.len() > MAX_KEY_LEN
        || std::str::from_utf8(key).is_err()
        || key.contains(&b'\n')
        || key.contains(&b'\r')
}

/// Why [`Table::add`] refused a row: the [`CellError`] is built from it
/// and the row only then, off the hot path.
#[derive(Clone, Copy, Debug)]
enum Refused {
    /// A value beyond 18 digits at this scale.
    Range(u32),
    /// A key's sum beyond 128 bits.
    Sum,
    /// An empty, long, non-UTF-8 or multi-line key.
    Key,
}

impl Refused {
    /// The error, for `key` and the `value` cell.
    fn error(self, key: &[u8], value: &[u8]) -> CellError {
        match self {
            Refused::Range(scale) => CellError::Range {
                scale,
                found: value.to_vec(),
            },
            Refused::Sum => CellError::Sum { key: key.to_vec() },
            Refused::Key if key.is_empty() => CellError::EmptyKey,
            Refused::Key if key.len() > MAX_KEY_LEN => CellError::KeyTooLong { len: key.len() },
            Refused::Key => CellError::Key {
                found: key.to_vec(),
            },
        }
    }
}

/// The cells of the row being read that the aggregation uses.
struct Picked {
    /// The key's first part: a field of its own, as the usual row's only
    /// part, stored without a bounds check.
    first: Cell,
    /// The key's parts after the first.
    rest: Vec<Cell>,
    value: Cell,
    /// Cells past the header's count that were not empty.
    extra: bool,
}

impl Picked {
    /// The key's `k`th part.
    fn part(&mut self, k: usize) -> &mut Cell {
        match k {
            0 => &mut self.first,
            _ => &mut self.rest[k - 1],
        }
    }
}

/// Feeds into `table` the rows of `bytes` that start at `from` (a row
/// start outside quotes) and before `until`; returns where the next row
/// starts and the first fault, after which nothing more is read.
pub(crate) fn feed(
    bytes: &[u8],
    from: usize,
    until: usize,
    layout: &Layout,
    table: &mut Table,
    masks: Masks,
) -> (usize, Option<CellFault>) {
    let mut rows = Rows::new(bytes, from, layout.delimiter, masks);
    let mut picked = Picked {
        first: Cell::default(),
        rest: vec![Cell::default(); layout.keys.saturating_sub(1)],
        value: Cell::default(),
        extra: false,
    };
    let mut scratch = Vec::new();
    let mut values = Vec::new();
    let mut joined = Vec::new();
    let mut at = from;
    // Rows to go to `rows` straight away, and how many the next miss of
    // the one-window path sends there: none after one miss, then twice as
    // many after each miss in a row, up to `WINDOW_MISSES`; a row the
    // window reads starts over. So a file of long rows does not pay a
    // window's masks twice over, and a few long rows among short ones
    // take only themselves off the window path.
    let (mut misses, mut backoff) = (0u32, 0u32);
    // The cells the aggregation reads; a row of more than 64 cells never
    // fits a window.
    let wanted = match layout.columns {
        ..=64 => layout
            .slots
            .iter()
            .enumerate()
            .fold(0, |w, (n, slot)| match slot {
                Slot::None => w,
                _ => w | 1 << n,
            }),
        _ => 0,
    };
    // The columns (from 0) of the value alone and of the key's first part
    // alone, if any (`usize::MAX` if not): a column that is both takes the
    // slots' path. Unlike `column_of`'s, for messages.
    let only = |slot: Slot| (layout.slots.iter().position(|&s| s == slot)).unwrap_or(usize::MAX);
    let (value_column, key_column) = (only(Slot::Value), only(Slot::Key(0)));
    let usual = Usual::of(layout);
    while at < until {
        if let (Some(usual), 0) = (usual, misses) {
            let start = at;
            at = usual_rows(bytes, at, until, usual, table, masks);
            if at > start {
                backoff = 0;
            }
            if at >= until {
                break;
            }
        }
        let row = at;
        picked.extra = false;
        let pick = |picked: &mut Picked, n: usize, cell: Cell| match n {
            // The usual two cells, told apart without a look at the slots.
            _ if n == value_column => picked.value = cell,
            _ if n == key_column => picked.first = cell,
            _ => match layout.slots.get(n) {
                Some(Slot::None) => {}
                Some(&Slot::Key(k)) => *picked.part(k) = cell,
                Some(Slot::Value) => picked.value = cell,
                Some(&Slot::Both(k)) => (*picked.part(k), picked.value) = (cell, cell),
                None => picked.extra |= cell.end > cell.start || cell.quoted,
            },
        };
        let tried = misses == 0 && wanted != 0;
        let quick = match tried {
            true => Window::at(bytes, at, layout.delimiter, masks, layout.columns).map(|w| {
                w.cells(wanted, |n, cell| pick(&mut picked, n, cell));
                w.next()
            }),
            false => {
                misses = misses.saturating_sub(1);
                None
            }
        };
        let fault = |column: Option<usize>, kind| {
            let offset = row;
            (
                rows_at_fault(),
                Some(CellFault {
                    offset,
                    column,
                    kind,
                }),
            )
        };
        match quick {
            // A window's row has its columns and nothing past them.
            Some(next) => {
                at = next;
                backoff = 0;
            }
            None => {
                if tried {
                    misses = backoff;
                    backoff = (2 * backoff).clamp(1, WINDOW_MISSES);
                }
                if rows.at() != at {
                    rows = Rows::new(bytes, at, layout.delimiter, masks);
                }
                let got = rows.next(|n, cell| pick(&mut picked, n, cell));
                at = rows.at();
                let cells = match got {
                    None => break,
                    Some(Ok(cells)) => cells,
                    Some(Err(f)) => {
                        let kind = match f.shape {
                            Shape::StrayQuote => CellError::StrayQuote,
                            Shape::AfterQuote => CellError::AfterQuote,
                            Shape::Unclosed => CellError::Unclosed,
                        };
                        return fault(Some(f.cell + 1), kind);
                    }
                };
                if cells == 1 && layout.columns > 1 && picked_empty_line(bytes, row) {
                    // A blank line.
                    continue;
                }
                if cells < layout.columns || picked.extra {
                    if layout.skip {
                        table.skip(row);
                        continue;
                    }
                    let kind = CellError::Cells {
                        expected: layout.columns,
                        found: cells,
                    };
                    return fault(None, kind);
                }
            }
        }
        let value_cell = picked.value.text(bytes, &mut values);
        let trimmed = value_cell.trim_ascii();
        let value = if layout.is_null(trimmed) {
            None
        } else {
            match decimal::parse(trimmed) {
                Ok(d) => Some(d),
                Err(_) if layout.skip => {
                    table.skip(row);
                    continue;
                }
                Err(refusal) => {
                    let kind = CellError::Value {
                        expected: refusal.expected(),
                        found: value_cell.to_vec(),
                    };
                    return fault(column_of(layout, Slot::Value), kind);
                }
            }
        };
        let probe = if layout.keys == 1 && !picked.first.escaped {
            Probe::new(bytes, picked.first.start, picked.first.end)
        } else {
            joined.clear();
            for (k, cell) in std::iter::once(&picked.first)
                .chain(&picked.rest)
                .enumerate()
            {
                let raw = &bytes[cell.start..cell.end];
                if layout.keys == 1 {
                    unescape(raw, &mut joined);
                    break;
                }
                if k > 0 {
                    joined.push(KEY_JOIN as u8);
                }
                scratch.clear();
                let text = if cell.escaped {
                    unescape(raw, &mut scratch);
                    &scratch[..]
                } else {
                    raw
                };
                for &b in text {
                    if b == KEY_JOIN as u8 || b == b'\\' {
                        joined.push(b'\\');
                    }
                    joined.push(b);
                }
            }
            Probe::new(&joined, 0, joined.len())
        };
        let key = probe.bytes;
        if let Err(refused) = table.add(probe, value) {
            if layout.skip && !matches!(refused, Refused::Sum) {
                table.skip(row);
                continue;
            }
            let column = match refused {
                Refused::Range(_) => column_of(layout, Slot::Value),
                _ => column_of(layout, Slot::Key(0)),
            };
            let key = key.to_vec();
            let kind = refused.error(&key, picked.value.text(bytes, &mut values));
            return fault(column, kind);
        }
    }
    (at, None)
}

/// The usual row's layout: a key of one column and a value column, each
/// its own, among at most 64 columns, and no null that reads as a number.
#[derive(Clone, Copy, Debug)]
struct Usual {
    key: usize,
    value: usize,
    columns: usize,
    delimiter: u8,
}

impl Usual {
    /// The layout's usual row, if it has one.
    fn of(layout: &Layout) -> Option<Usual> {
        let only = |slot: Slot| layout.slots.iter().position(|&s| s == slot);
        let numeric_null = layout.nulls.iter().any(|n| decimal::quick(n).is_some());
        let (key, value) = (only(Slot::Key(0))?, only(Slot::Value)?);
        (layout.keys == 1 && layout.columns <= 64 && !numeric_null).then_some(Usual {
            key,
            value,
            columns: layout.columns,
            delimiter: layout.delimiter,
        })
    }
}

/// Adds the rows from `at` on while each is a usual one: read from the
/// 64 bytes at its start ([`Window`]), its value of the quick
/// grammar ([`decimal::quick`]), at the table's scale, and its key, with
/// no doubled quotes, already in the table. Returns the start of the
/// first row that is not, which [`feed`]'s general path then reads and
/// adds or refuses, or `until` or past it.
///
/// The AVX2 and AVX-512 tiers run a copy compiled for their CPUs: their
/// masks are then built inline, and bit scans, counts and shifts take
/// one instruction each. The loop is kept small so that the compiler
/// inlines all of it into each copy.
fn usual_rows(
    bytes: &[u8],
    at: usize,
    until: usize,
    usual: Usual,
    table: &mut Table,
    masks: Masks,
) -> usize {
    match masks {
        // SAFETY: `Avx512` is only chosen where the CPU has the features
        // `usual_rows_avx512` is compiled for (`Masks::best` and
        // `Masks::all` check them at run time).
        #[cfg(target_arch = "x86_64")]
        Masks::Avx512 => unsafe { usual_rows_avx512(bytes, at, until, usual, table) },
        // SAFETY: likewise for `Avx2` and `usual_rows_avx2`.
        #[cfg(target_arch = "x86_64")]
        Masks::Avx2 => unsafe { usual_rows_avx2(bytes, at, until, usual, table) },
        _ => usual_rows_with::<2>(bytes, at, until, usual, table, masks),
    }
}

/// Defines `$name`, [`usual_rows`] compiled for the CPU features
/// `$features`, which the tier `$masks` needs.
macro_rules! usual_rows_for {
    ($(#[$doc:meta])* $name:ident, $features:literal, $masks:expr, $copy:literal) => {
        $(#[$doc])*
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = $features)]
        fn $name(bytes: &[u8], at: usize, until: usize, usual: Usual, table: &mut Table) -> usize {
            usual_rows_with::<$copy>(bytes, at, until, usual, table, $masks)
        }
    };
}

usual_rows_for!(
    /// [`usual_rows`] for CPUs with AVX-512 BW (and what
    /// [`Masks::Avx512`] needs).
    usual_rows_avx512,
    "avx512bw,avx512f,avx2,bmi1,bmi2,lzcnt,popcnt,pclmulqdq",
    Masks::Avx512,
    3
);

usual_rows_for!(
    /// [`usual_rows`] for CPUs with AVX2 (and what [`Masks::Avx2`] needs).
    usual_rows_avx2,
    "avx2,bmi1,bmi2,lzcnt,popcnt,pclmulqdq",
    Masks::Avx2,
    4
);

/// [`usual_rows`]' loop, inlined into each tier's copy with `masks` a
/// constant; `COPY` is that copy's own for [`Table::find`].
#[inline(always)]
fn usual_rows_with<const COPY: u8>(
    bytes: &[u8],
    mut at: usize,
    until: usize,
    usual: Usual,
    table: &mut Table,
    masks: Masks,
) -> usize {
    while at < until {
        let Some(row) = Window::at(bytes, at, usual.delimiter, masks, usual.columns) else {
            break;
        };
        let value = row.nth(usual.value, masks);
        // The quick grammar has no spaces: a cell with spaces around it
        // is left to the general path, which trims it.
        let Some(d) = decimal::quick(&bytes[value.start..value.end]) else {
            break;
        };
        let key = row.nth(usual.key, masks);
        if !table.add_usual::<COPY>(&Probe::new(bytes, key.start, key.end), d) {
            break;
        }
        at = row.next();
    }
    at
}

/// The most rows that go to [`Rows`] after one the one-window path left to
/// it.
const WINDOW_MISSES: u32 = 16;

/// Where a chunk stops after a fault: nothing after it is read.
fn rows_at_fault() -> usize {
    usize::MAX
}

/// Whether the row at `row` is a line holding nothing (`\r` aside).
fn picked_empty_line(bytes: &[u8], row: usize) -> bool {
    matches!(
        &bytes[row..],
        [b'\n', ..] | [b'\r', b'\n', ..] | [] | [b'\r']
    )
}

/// The 1-based column of the value (`Slot::Value`) or the key's first
/// part (`Slot::Key(0)`).
fn column_of(layout: &Layout, slot: Slot) -> Option<usize> {
    let at = layout.slots.iter().position(|&s| match slot {
        Slot::Value => matches!(s, Slot::Value | Slot::Both(_)),
        _ => matches!(s, Slot::Key(0) | Slot::Both(0)),
    });
    at.map(|i| i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Short keys that differ only by trailing NULs, whose words are the
    /// same, hash apart: a file of them does not pile into one bucket.
    #[test]
    fn keys_that_differ_by_trailing_nuls_hash_apart() {
        use std::hash::BuildHasher;
        let hasher = foldhash::fast::RandomState::default();
        let keys: Vec<Vec<u8>> = (0..=15)
            .map(|n| [&b"a"[..], &vec![0; n]].concat())
            .collect();
        let hashes: std::collections::HashSet<u64> = (keys.iter())
            .map(|k| hasher.hash_one(Probe::new(k, 0, k.len())))
            .collect();
        assert_eq!(hashes.len(), keys.len());
    }

    proptest::proptest! {
        /// Keys of every length to past 16 bytes, equal or one byte or
        /// length apart, probed from amid other bytes and from the end of
        /// a buffer: a probe matches a key, and hashes as it does, exactly
        /// when their bytes are the same.
        #[test]
        fn a_probe_is_its_key_exactly_when_their_bytes_are(
            a in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..40),
            after in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..20),
            at in proptest::prelude::any::<proptest::sample::Index>(),
            edit in 0u8..3,
        ) {
            let mut b = a.clone();
            match (edit, a.is_empty()) {
                (0, false) => b[at.index(a.len())] ^= 1,
                (1, false) => { b.pop(); }
                (2, _) => b.push(0),
                _ => {}
            }
            use std::hash::BuildHasher;
            let hasher = foldhash::fast::RandomState::default();
            for (x, y) in [(&a, &b), (&b, &a), (&a, &a)] {
                let within = [&b"pad"[..], x, &after].concat();
                let probe = Probe::new(&within, 3, 3 + x.len());
                let key = Key::new(y);
                proptest::prop_assert_eq!(probe.equivalent(&key), x == y);
                proptest::prop_assert_eq!(Probe::of(&Key::new(x)).equivalent(&key), x == y);
                if x == y {
                    proptest::prop_assert_eq!(hasher.hash_one(&probe), hasher.hash_one(&key));
                }
            }
        }
    }
}
