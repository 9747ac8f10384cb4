//! Each key's stats, at one scale for all of a table's values.

use std::hash::BuildHasher;

use compact_str::CompactString;
use hashbrown::HashTable;

use super::decimal::Decimal;
use super::key::{Key, Probe};
use super::CellError;
use crate::detail::Kept;
use crate::stats::{Stats, MAX_KEY_LEN, MAX_UNITS};

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
    pub(super) fn skip(&mut self, offset: usize) {
        self.skipped += 1;
        if self.first_skipped.len() < SKIPPED_SHOWN {
            self.first_skipped.push(offset);
        }
    }

    /// Adds a row of `key`: its value, or `None` for a missing one.
    #[inline]
    pub(super) fn add(&mut self, probe: Probe, value: Option<Decimal>) -> Result<(), Refused> {
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
    pub(super) fn add_usual<const COPY: u8>(&mut self, probe: &Probe, d: Decimal) -> bool {
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
pub(super) enum Refused {
    /// A value beyond 18 digits at this scale.
    Range(u32),
    /// A key's sum beyond 128 bits.
    Sum,
    /// An empty, long, non-UTF-8 or multi-line key.
    Key,
}

impl Refused {
    /// The error, for `key` and the `value` cell.
    pub(super) fn error(self, key: &[u8], value: &[u8]) -> CellError {
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
