//! A row group whose key and value columns are both dictionary-encoded,
//! aggregated by index: each row adds its value, looked up by the value's
//! index in a table of the dictionary's values as tenths, to the stats of
//! its name's index; each distinct name is looked at once, after the last
//! row.
//!
//! A general reader decodes every row's name and value, and hashes the
//! name; here a row costs two unpacked indices, a lookup and an add, in
//! tables small enough for the L1 cache. (Counting rows per (name, value)
//! pair instead, then folding the counts, was slower: 1TRC's pairs take
//! 1.8 MiB of counts, out of L1.)
//!
//! A row group with a row brc refuses (a null, a value or a name its rules
//! refuse), or whose values' dictionary holds a value it refuses, used or
//! not, is left to [`super::plain`], which reads rows in order and so names
//! the first of them.

use bytes::Bytes;
use parquet::basic::Encoding;
use parquet::column::page::{Page, PageReader};
use parquet::file::reader::RowGroupReader;

use super::hybrid::Hybrid;
use super::value::{byte_arrays, plain};
use super::{valid_name, File, Refused, Stations};
use crate::stats::Stats;

/// Rows decoded at a time from each column.
const BATCH: usize = 2048;

/// Aggregates a row group into `into` by its dictionary indices; `None`,
/// having added nothing, if either column is not dictionary-encoded
/// throughout, for the caller to read the row group another way.
pub(super) fn aggregate(
    group: &dyn RowGroupReader,
    file: &File,
    into: &mut Stations,
) -> Result<Option<()>, Refused> {
    let rows = u64::try_from(group.metadata().num_rows())
        .map_err(|_| Refused::File(malformed("a negative row count")))?;
    let Some((mut keys, key_dict, names_len)) = Indices::open(group, file.key)? else {
        return Ok(None);
    };
    let Some((mut values, value_dict, values_len)) = Indices::open(group, file.value)? else {
        return Ok(None);
    };
    let names = byte_arrays(&key_dict, names_len)
        .ok_or_else(|| malformed("the names' dictionary page is cut short"))?;
    let column = group.metadata().column(file.value).column_descr_ptr();
    let raws = plain(
        &value_dict,
        values_len,
        column.physical_type(),
        usize::try_from(column.type_length()).unwrap_or(0),
        file.kind,
    )
    .ok_or_else(|| malformed("the values' dictionary page is cut short"))?;
    // A value refused, used or not, leaves the row group to `plain`,
    // which names the first row holding it, if any.
    let Some(tenths) = raws
        .iter()
        .map(|r| r.tenths(file.kind))
        .collect::<Option<Vec<i64>>>()
    else {
        return Ok(None);
    };
    let Some(stats) = by_names(&mut keys, &mut values, names.len(), &tenths, rows)? else {
        return Ok(None);
    };
    let mut found = Vec::with_capacity(stats.len());
    for (k, stats) in stats.into_iter().enumerate() {
        let Some(stats) = stats else { continue };
        let name = &key_dict[names[k].clone()];
        if !valid_name(name) {
            return Ok(None);
        }
        found.push((name, stats));
    }
    for (name, stats) in found {
        into.add(name, stats)?;
    }
    Ok(Some(()))
}

/// The value of the slots of a value table past its dictionary, which an
/// index of a malformed page may reach: below every packed value (see
/// [`Packing`]), so a name whose range starts there has such a row, and,
/// like them, odd, so that the row is counted.
const PAST: i64 = i64::MIN + 1;

/// A name's rows so far in a row group: their packed values' sum (see
/// [`Packing`]), and the range `lo..=lo + span` of those values, kept as a
/// start and a width so that a row inside it, nearly every row once a
/// name has a few, costs one compare and no store.
#[derive(Clone, Copy)]
struct Acc {
    sum: i64,
    lo: i64,
    span: u64,
}

/// An `Acc` of no rows: its range holds only `i64::MAX`, which no packed
/// value is, so that its first row widens it.
const EMPTY: Acc = Acc {
    sum: 0,
    lo: i64::MAX,
    span: 0,
};

impl Acc {
    /// Adds the packed value `p`.
    #[inline(always)]
    fn add(&mut self, p: i64) {
        // Wrapping only for `PAST`: packed sums of real values fit.
        self.sum = self.sum.wrapping_add(p);
        // `widen` takes `p`'s distance from `lo`, not `p`, so that the
        // subtraction may overwrite `p`, no copy kept for it.
        let d = p.wrapping_sub(self.lo);
        if d as u64 > self.span {
            self.widen(d);
        }
    }

    /// Widens the range to hold the value `d` from its start.
    #[cold]
    #[inline(never)]
    fn widen(&mut self, d: i64) {
        let p = self.lo.wrapping_add(d);
        let (lo, hi) = match (self.lo, self.span) {
            (i64::MAX, 0) => (p, p),
            (lo, span) => (lo.min(p), lo.wrapping_add(span as i64).max(p)),
        };
        self.lo = lo;
        self.span = hi.wrapping_sub(lo) as u64;
    }
}

/// How a row's value and its count of one are packed into one `i64`, so
/// that one add counts the row and sums its value: the value in tenths
/// shifted up `shift` bits, plus one. Exact while no name has `1 <<
/// shift` rows and the shifted sum fits, so the rows are taken in chunks
/// of at most `chunk` rows, whose sums are then unpacked.
struct Packing {
    shift: u32,
    chunk: u64,
}

impl Packing {
    /// The packing for `rows` rows of values at most `max` in magnitude:
    /// the whole row group one chunk if its sums fit, as they do unless
    /// both are large.
    fn new(max: u64, rows: u64) -> Packing {
        // A chunk's sum is below `2^shift * max * 2^shift`, kept below
        // 2^62.
        let widest = (62 - (u64::BITS - max.leading_zeros())) / 2;
        let shift = (u64::BITS - rows.leading_zeros()).min(widest);
        Packing {
            shift,
            chunk: rows.min((1 << shift) - 1),
        }
    }

    /// The packed value of `t` tenths, a row's count with it.
    fn pack(&self, t: i64) -> i64 {
        (t << self.shift) + 1
    }

    /// The value in tenths of the packed `p`.
    fn tenths(&self, p: i64) -> i64 {
        p >> self.shift
    }

    /// Moves the sums of a chunk into `totals`' sums and counts.
    fn flush(&self, accs: &mut [Acc], totals: &mut [(i64, u64)]) {
        let ones = (1 << self.shift) - 1;
        for (a, (sum, count)) in accs.iter_mut().zip(totals) {
            *sum = sum.wrapping_add(a.sum >> self.shift);
            *count += (a.sum & ones) as u64;
            a.sum = 0;
        }
    }
}

/// Adds every row to its name's stats, its value looked up by index in
/// `tenths` (which holds no refused value); `None` if a page is not
/// dictionary-encoded or its indices are wider than its dictionary's.
///
/// The tables have a slot for every index as wide as the dictionary's,
/// those past it [`EMPTY`] or [`PAST`], so that rows are added unchecked
/// and an index past its dictionary is found once, after the last row.
fn by_names(
    keys: &mut Indices,
    values: &mut Indices,
    names: usize,
    tenths: &[i64],
    rows: u64,
) -> Result<Option<Vec<Option<Stats>>>, Refused> {
    keys.entries(names);
    values.entries(tenths.len());
    let max = tenths.iter().map(|t| t.unsigned_abs()).max().unwrap_or(0);
    let packing = Packing::new(max, rows);
    let mut accs = vec![EMPTY; keys.slots()];
    let mut totals = vec![(0i64, 0u64); keys.slots()];
    let mut table = vec![PAST; values.slots()];
    for (p, &t) in table.iter_mut().zip(tenths) {
        *p = packing.pack(t);
    }
    let (mut k, mut v) = ([0u32; BATCH], [0u32; BATCH]);
    let (mut seen, mut in_chunk) = (0u64, 0u64);
    while seen < rows {
        let want = (rows - seen)
            .min(packing.chunk - in_chunk)
            .min(BATCH as u64) as usize;
        let Some(n) = keys.read(&mut k[..want])? else {
            return Ok(None);
        };
        let Some(m) = values.read(&mut v[..want])? else {
            return Ok(None);
        };
        if n != want || m != want {
            return Err(Refused::File(malformed(
                "a column holds fewer rows than its row group",
            )));
        }
        // SAFETY: `Indices::read` gives indices below its `slots()`, the
        // tables' lengths.
        unsafe { add_rows(&mut accs, &table, &k[..n], &v[..n]) };
        seen += n as u64;
        in_chunk += n as u64;
        if in_chunk == packing.chunk || seen == rows {
            packing.flush(&mut accs, &mut totals);
            in_chunk = 0;
        }
    }
    // Pages past the row group's rows make the chunk malformed, as the
    // crate's readers (and so the other path) find it.
    let mut beyond = [0u32; 1];
    if keys.read(&mut beyond)? != Some(0) || values.read(&mut beyond)? != Some(0) {
        return Err(Refused::File(malformed(
            "a column holds more rows than its row group",
        )));
    }
    let used = |&(_, count): &(i64, u64)| count > 0;
    let past = accs
        .iter()
        .zip(&totals)
        .any(|(a, t)| used(t) && a.lo == PAST);
    if totals[names..].iter().any(used) || past {
        return Err(Refused::File(malformed(
            "a dictionary index past its dictionary",
        )));
    }
    let stats = accs.iter().zip(&totals[..names]).map(|(a, &(sum, count))| {
        (count > 0).then(|| {
            let (min, max) = (
                packing.tenths(a.lo),
                packing.tenths(a.lo.wrapping_add(a.span as i64)),
            );
            Stats::of(min, max, sum.into(), count)
        })
    });
    Ok(Some(stats.collect()))
}

/// Adds row `i`, the value of `table[v[i]]`, to `accs[k[i]]`, four rows
/// at a time; not inlined, so that its loop has the registers to itself.
///
/// # Safety
/// Every index in `k` is below `accs.len()`, every one in `v` below
/// `table.len()`, and `k` and `v` are as long.
#[inline(never)]
unsafe fn add_rows(accs: &mut [Acc], table: &[i64], k: &[u32], v: &[u32]) {
    let mut add = |k: u32, v: u32| {
        // SAFETY: the caller's guarantee on the indices.
        let (p, acc) = unsafe {
            (
                *table.get_unchecked(v as usize),
                accs.get_unchecked_mut(k as usize),
            )
        };
        acc.add(p);
    };
    let (k4, v4) = (k.chunks_exact(4), v.chunks_exact(4));
    let (k1, v1) = (k4.remainder(), v4.remainder());
    for (k, v) in k4.zip(v4) {
        for j in 0..4 {
            add(k[j], v[j]);
        }
    }
    for (&k, &v) in k1.iter().zip(v1) {
        add(k, v);
    }
}

fn malformed(what: &str) -> super::ParquetError {
    super::ParquetError::Malformed(what.into())
}

/// A column chunk's dictionary indices, page after page.
struct Indices {
    pages: Box<dyn PageReader>,
    /// Whether pages carry definition levels (the column is optional).
    optional: bool,
    /// The current page's indices.
    page: Option<Hybrid>,
    /// Indices left in the current page.
    left: usize,
    /// The width of its dictionary's indices, the widest its pages are
    /// read with: set by [`Indices::entries`] once the dictionary is read.
    width: u32,
}

impl Indices {
    /// Opens column `col` of `group`, reading its dictionary page; `None`
    /// if its first page is not one.
    fn open(
        group: &dyn RowGroupReader,
        col: usize,
    ) -> Result<Option<(Indices, Bytes, usize)>, Refused> {
        let mut pages = group.get_column_page_reader(col)?;
        let optional = group.metadata().column(col).column_descr().max_def_level() > 0;
        let Some(Page::DictionaryPage {
            buf,
            num_values,
            encoding,
            ..
        }) = pages.get_next_page()?
        else {
            return Ok(None);
        };
        if !matches!(encoding, Encoding::PLAIN | Encoding::PLAIN_DICTIONARY) {
            return Ok(None);
        }
        let column = Indices {
            pages,
            optional,
            page: None,
            left: 0,
            width: 0,
        };
        Ok(Some((column, buf, num_values as usize)))
    }

    /// Sets how many entries the dictionary has, which bounds its indices.
    fn entries(&mut self, n: usize) {
        self.width = usize::BITS - n.saturating_sub(1).leading_zeros();
    }

    /// How many indices there are of its dictionary's width: every index
    /// [`Indices::read`] gives is below.
    fn slots(&self) -> usize {
        1 << self.width
    }

    /// Fills `out` with the next rows' indices, fewer only at the end of
    /// the chunk; `None` at a page that is not dictionary-encoded, holds a
    /// null, or has indices wider than its dictionary's.
    fn read(&mut self, out: &mut [u32]) -> Result<Option<usize>, Refused> {
        let mut done = 0;
        while done < out.len() {
            if self.left == 0 {
                match self.next_page()? {
                    Some(true) => continue,
                    Some(false) => break,
                    None => return Ok(None),
                }
            }
            let want = self.left.min(out.len() - done);
            let page = self.page.as_mut().expect("a page with indices left");
            let got = page.read(&mut out[done..done + want])?;
            if got < want {
                return Err(Refused::File(malformed(
                    "a page holds fewer indices than values",
                )));
            }
            self.left -= got;
            done += got;
        }
        Ok(Some(done))
    }

    /// Starts the next data page: `Some(true)` if there is one, `Some(false)`
    /// at the chunk's end, `None` if it is not dictionary-encoded, holds a
    /// null, or has indices wider than its dictionary's.
    fn next_page(&mut self) -> Result<Option<bool>, Refused> {
        let Some(page) = self.pages.get_next_page()? else {
            return Ok(Some(false));
        };
        let (buf, values, encoding, levels) = match page {
            Page::DataPage {
                buf,
                num_values,
                encoding,
                def_level_encoding,
                ..
            } => {
                if self.optional && def_level_encoding != Encoding::RLE {
                    return Ok(None);
                }
                let (levels, at) = if self.optional {
                    let len = buf
                        .get(..4)
                        .map(|b| u32::from_le_bytes(b.try_into().unwrap()) as usize)
                        .ok_or_else(|| malformed("a page's levels are cut short"))?;
                    let end = 4usize.saturating_add(len);
                    let levels = buf
                        .get(4..end)
                        .map(|_| buf.slice(4..end))
                        .ok_or_else(|| malformed("a page's levels are cut short"))?;
                    (Some(levels), end)
                } else {
                    (None, 0)
                };
                (buf.slice(at..), num_values as usize, encoding, levels)
            }
            Page::DataPageV2 {
                buf,
                num_values,
                encoding,
                num_nulls,
                def_levels_byte_len,
                rep_levels_byte_len,
                ..
            } => {
                let start = rep_levels_byte_len as usize;
                let end = start.saturating_add(def_levels_byte_len as usize);
                if end > buf.len() {
                    return Err(Refused::File(malformed("a page's levels are cut short")));
                }
                // A page with nulls, or a `num_nulls` the levels belie, is
                // the crate's to read; levels are checked even when
                // `num_nulls` says none, as other readers check them.
                if num_nulls > 0 {
                    return Ok(None);
                }
                let levels = self.optional.then(|| buf.slice(start..end));
                (buf.slice(end..), num_values as usize, encoding, levels)
            }
            Page::DictionaryPage { .. } => {
                return Err(Refused::File(malformed(
                    "a second dictionary page in a column chunk",
                )))
            }
        };
        if !matches!(
            encoding,
            Encoding::RLE_DICTIONARY | Encoding::PLAIN_DICTIONARY
        ) {
            return Ok(None);
        }
        if let Some(levels) = levels {
            if !Self::no_nulls(levels, values)? {
                return Ok(None);
            }
        }
        let &width = buf
            .first()
            .ok_or_else(|| malformed("a data page without its indices' width"))?;
        if u32::from(width) > self.width {
            return Ok(None);
        }
        self.page = Some(Hybrid::new(buf.slice(1..), u32::from(width))?);
        self.left = values;
        Ok(Some(true))
    }

    /// Whether the page's definition levels say no value is null.
    fn no_nulls(levels: Bytes, values: usize) -> Result<bool, Refused> {
        Ok(Hybrid::new(levels, 1)?.all_equal(values, 1)?)
    }
}
