//! Which engine runs, and how: the [`Engine`] names a command line picks
//! from, and the [`Options`] every driver takes.

/// An aggregation engine, selectable by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Engine {
    /// The reference: simple, single-threaded, obviously correct.
    Naive,
    /// Byte-oriented, foldhash + hashbrown, multi-threaded.
    Chunked,
    /// Hand-written scanner (portable SWAR kernel) and table, multi-threaded.
    Swar,
    /// The default: hand-written parser and table, multi-threaded.
    #[default]
    Fast,
}

impl Engine {
    /// Every engine, from the simplest to the fastest.
    pub const ALL: [Engine; 4] = [Engine::Naive, Engine::Chunked, Engine::Swar, Engine::Fast];

    /// The engine's command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Engine::Naive => "naive",
            Engine::Chunked => "chunked",
            Engine::Swar => "swar",
            Engine::Fast => "fast",
        }
    }

    /// A one-line description for `--help`.
    pub fn about(self) -> &'static str {
        match self {
            Engine::Naive => "reference: HashMap<String, _>, strict parser, one thread",
            Engine::Chunked => "bytes, memchr, foldhash + hashbrown table, parallel chunks",
            Engine::Swar => "hand-written SWAR scanner and hash table, parallel chunks",
            Engine::Fast => "like swar, with AVX2 when the CPU has it (default)",
        }
    }
}

/// The most worker threads a run may ask for: the command line's bound on
/// `--threads` and the Python package's, so that a count the system cannot
/// spawn (a million) is refused before any thread is spawned.
pub const MAX_THREADS: usize = 1024;

/// How an engine runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// Worker threads (at least 1). `naive` always uses one.
    pub threads: usize,
    /// Nominal chunk size in bytes handed to a thread at a time; chunk
    /// boundaries move forward to the next line start, and all but the
    /// last few chunks per thread are 4 times as big.
    pub chunk_size: usize,
}

use crate::tuning::DEFAULT_CHUNK_SIZE;

impl Default for Options {
    fn default() -> Options {
        Options {
            threads: std::thread::available_parallelism().map_or(1, |n| n.get().min(MAX_THREADS)),
            chunk_size: DEFAULT_CHUNK_SIZE,
        }
    }
}
