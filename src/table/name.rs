//! A name as the keeping loop's stations and a numbered table's list of
//! names hold it ([`Name`]), and the numbering of names ([`number`]).

use crate::summary::RawName;

/// A name: a short one only as its key words, so that a million of them
/// take 8 bytes fewer each.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Name {
    /// A name of at most 15 bytes (the short table's): its bytes, its `;`
    /// and zeros.
    Short((u64, u64)),
    /// A longer name's bytes.
    Long(Box<[u8]>),
}

impl Name {
    /// The key words of a short name.
    #[inline(always)]
    pub(crate) fn key(&self) -> Option<(u64, u64)> {
        match *self {
            Name::Short(key) => Some(key),
            Name::Long(_) => None,
        }
    }

    /// Calls `f` with the name's bytes.
    #[inline]
    pub(crate) fn with<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        match self {
            Name::Long(name) => f(name),
            Name::Short((a, b)) => {
                let mut bytes = [0u8; 16];
                bytes[..8].copy_from_slice(&a.to_le_bytes());
                bytes[8..].copy_from_slice(&b.to_le_bytes());
                let len = bytes.iter().position(|&b| b == b';').unwrap_or(16);
                f(&bytes[..len])
            }
        }
    }

    /// The name as an entry holds it.
    pub(crate) fn into_raw(self) -> RawName {
        match self {
            Name::Long(name) => RawName::from_vec(name.into_vec()),
            short => short.with(RawName::from_slice),
        }
    }
}

/// The number of a new name, `name`, in a table that numbers its names
/// (`named`, [`super::Table::numbered`]): the next one; 0 in one that does
/// not.
pub(super) fn number(named: &mut Option<Vec<Name>>, name: impl FnOnce() -> Name) -> u32 {
    let Some(named) = named else {
        return 0;
    };
    named.push(name());
    u32::try_from(named.len() - 1).expect("fewer than 2^32 names")
}
