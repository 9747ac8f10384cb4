//! Shards: the `K/N` of `--shard`, and the byte range each reads.

use std::fmt;
use std::ops::Range;
use std::str::FromStr;

/// Part `index` of `count` (`--shard K/N`): the lines whose first byte
/// lies in the `index`-th of `count` nearly equal ranges of the inputs'
/// bytes ([`Shard::range`]). The `count` shards of the same inputs read
/// every line exactly once between them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    index: u64,
    count: u64,
}

impl Shard {
    /// Shard `index` of `count`, counted from 1: `None` unless
    /// `1 <= index <= count`.
    pub fn new(index: u64, count: u64) -> Option<Shard> {
        (1 <= index && index <= count).then_some(Shard { index, count })
    }

    /// The shard's number, from 1.
    pub fn index(self) -> u64 {
        self.index
    }

    /// How many shards there are.
    pub fn count(self) -> u64 {
        self.count
    }

    /// The shard's range of `total` bytes: from `total × (index − 1) /
    /// count` to `total × index / count`, rounded down; the last shard's
    /// range is open-ended, so that it also holds whatever starts at the
    /// very end (a stream whose size is not known).
    pub fn range(self, total: u64) -> Range<u64> {
        let at = |k: u64| (u128::from(total) * u128::from(k) / u128::from(self.count)) as u64;
        let end = match self.index == self.count {
            true => u64::MAX,
            false => at(self.index),
        };
        at(self.index - 1)..end
    }
}

/// A shard that is not `K/N` with `1 <= K <= N`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("expected K/N with 1 <= K <= N, such as 2/4, found `{0}`")]
pub struct ShardError(String);

impl FromStr for Shard {
    type Err = ShardError;

    fn from_str(s: &str) -> Result<Shard, ShardError> {
        let parsed = s.split_once('/').and_then(|(k, n)| {
            let number = |t: &str| {
                t.bytes()
                    .all(|b| b.is_ascii_digit())
                    .then(|| t.parse().ok())?
            };
            Shard::new(number(k)?, number(n)?)
        });
        parsed.ok_or_else(|| ShardError(s.to_string()))
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}
