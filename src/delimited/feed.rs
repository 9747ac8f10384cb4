//! The rows of a stretch of bytes fed into a [`Table`]: the usual row in
//! a loop of its own, compiled for each tier's CPUs, and every other row
//! by the general path, which reads, adds, skips or refuses it.

use super::decimal;
use super::key::Probe;
use super::masks::Masks;
use super::scan::{unescape, Cell, Rows, Shape, Window};
use super::table::{Refused, Table};
use super::{CellError, CellFault, Layout, Slot, KEY_JOIN};

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
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `Avx512` is only chosen where the CPU has the features
        // `usual_rows_avx512` is compiled for (`Masks::best` and
        // `Masks::all` check them at run time).
        Masks::Avx512 => unsafe { usual_rows_avx512(bytes, at, until, usual, table) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: likewise for `Avx2` and `usual_rows_avx2`.
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
