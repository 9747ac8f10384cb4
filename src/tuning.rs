//! Every tuning constant of the fast path, and every override a fuzzing
//! build (`cargo fuzz`, which sets `cfg(fuzzing)`) makes, in one place.
//!
//! Each value was chosen by measurement on the 413-name, 10K-name and
//! million-name sets (docs/PERFORMANCE.md, *How to measure*); what each
//! trades is said here, the figures are in the docs. The fuzzing
//! overrides shrink sizes so that the fuzzer's inputs, a few KB each,
//! reach the code paths that only big inputs reach otherwise; they change
//! how the work is cut, never its result.

/// The default chunk size a thread claims at a time: small enough that
/// two threads finish within a few milliseconds of each other, large
/// enough that claiming a chunk is negligible.
pub const DEFAULT_CHUNK_SIZE: usize = 4 << 20;

/// How many times the nominal chunk size the chunks before the last ones
/// are: the kernel's work to take back a done chunk's pages
/// (`MADV_DONTNEED`, a TLB flush on every core) is then done that much
/// less often (docs/PERFORMANCE.md, *Memory*).
pub(crate) const CHUNK_GROW: usize = 4;

/// Chunks of the nominal size at the end of an input, per thread, so that
/// the threads still finish together.
pub(crate) const CHUNK_TAIL: usize = 8;

/// Bytes of a chunk the fast engines parse side by side at a time. The
/// scanner picks how to feed the table by its size, and a million names'
/// tables outgrow the plain feed within a few MiB: a stretch much longer
/// than that was fed the slow way too long (docs/PERFORMANCE.md, *The
/// scanner*).
pub(crate) const STRETCH: usize = 4 << 20;

/// The longest stretch of a run keeping counts per value
/// ([`crate::engine::counted`]): its log of rows, about 8 bytes per 14
/// of input, stays in the L2 cache until it is taken in.
pub(crate) const COUNTED_STRETCH: usize = 256 << 10;

/// How many stretches of a chunk the scanner parses side by side: each
/// line's start depends on the line before, and independent stretches
/// give the CPU other work while it waits (docs/PERFORMANCE.md, *The
/// scanner*). The lockstep loops are written out for three, so that each
/// stream's position stays in a register.
pub(crate) const STREAMS: usize = 3;

/// How many stretches of a chunk the lanes feed parses side by side, a
/// line of each per round: the four values of one AVX2 vector
/// (docs/PERFORMANCE.md, *The scanner*).
pub(crate) const LANES: usize = 4;

/// The lanes' loop keeps its registers across its calls (the
/// `scan::x86_64::keep` module) while at most one name in this many is
/// long: each such call saves and restores twenty registers, which long
/// names' rows pay when they are common (docs/PERFORMANCE.md, *Registers
/// across calls*).
pub(crate) const KEEP_LONG_SHARE: usize = 16;

/// Bytes of each stream the plain feed takes between two looks at the
/// table's size: a few thousand rows, so that a table outgrowing the L2
/// cache is fed plainly for at most a few thousand rows more, while the
/// plain loop itself tests nothing but its streams' ends (a test of the
/// size every round cost instructions on every row; docs/PERFORMANCE.md,
/// *The scanner*). Under `cargo fuzz` a few lines, so that the fuzzer's
/// small inputs cross slices as big ones do.
pub(crate) const SLICE: usize = if cfg!(fuzzing) { 64 } else { 64 << 10 };

/// Whether a stretch is fed in batches whatever its table's size, when its
/// last stream ends at an odd offset: only under `cargo fuzz`, whose
/// inputs are far too small for a big table, so that about half the
/// stretches reach the batched feed.
pub(crate) const BATCH_ODD_STRETCHES: bool = cfg!(fuzzing);

/// How far ahead of each stream's line the scanner asks for the input:
/// the hardware's prefetchers keep the three streams' input coming, but a
/// window reaching into a cache line not yet in L1 still waited for it on
/// the chain from one line to the next, a long name's far windows more
/// often. Closer came too late, farther evicted lines still to be read
/// (docs/PERFORMANCE.md, *The scanner*).
pub(crate) const AHEAD: usize = 512;

/// Rows per stream the batched feed parses, prefetching their slots,
/// before it adds them: enough misses in flight to cover a big table's
/// latency; more gained nothing (docs/PERFORMANCE.md, *The tables*).
pub(crate) const BATCH: usize = 32;

/// Short-table size in bytes beyond which rows are parsed a batch ahead
/// of their updates: from 4 MiB tables on, which outgrow the L2 cache
/// (1 MiB a core on the machines measured). A 2 MiB table, as the 10K
/// set's, stays below: its slots mostly fit in L2, and batches cost it
/// more than they saved (docs/PERFORMANCE.md, *The tables*).
pub(crate) const BIG_TABLE: usize = 2 << 20;

/// Short slots a table starts with: 4,096 (128 KiB), for small inputs.
/// Under `cargo fuzz` 64, so that the fuzzer's inputs of a few KB, with
/// far fewer than the 1,024 names that grow 4,096 slots, reach the
/// growths, twofold and fourfold, as a big input's tables do.
pub(crate) const SHORT_SLOTS: usize = if cfg!(fuzzing) { 1 << 6 } else { 1 << 12 };

/// Short slots a table has once it has been given [`SPREAD_BYTES`] of
/// input: 32,768 (1 MiB), in which next to none of the 413 official names
/// sit past their home slot, where in 4,096 one in twenty did, and every
/// row of such a name mispredicted the key's compare (docs/PERFORMANCE.md,
/// *The tables*). Only the slots written take memory. Small inputs keep the
/// small table: walking 1 MiB of slots to sort them costs a few hundred
/// page faults, which slowed the fuzz target, whose inputs are a few KB,
/// several times over.
pub(crate) const SPREAD_SLOTS: usize = 1 << 15;

/// Input after which a table spreads its short names ([`SPREAD_SLOTS`]).
pub(crate) const SPREAD_BYTES: u64 = 1 << 20;

/// How full a table under [`FULL_TABLE_BYTES`] may be: at most one slot in
/// this many. Half full, a second probe on a good share of rows
/// mispredicted a branch each (docs/PERFORMANCE.md, *The tables*).
pub(crate) const SPARSE: usize = 4;

/// How full a table of [`FULL_TABLE_BYTES`] or more may be: at most one
/// slot in this many. Such a table no longer fits in L2 whatever its load,
/// and half full halves the memory a million names take, and the pages
/// the kernel must fault in.
pub(crate) const DENSE: usize = 2;

/// The table size in bytes from which a table is kept [`DENSE`] rather
/// than [`SPARSE`]: the L2 cache's size, and then some.
pub(crate) const FULL_TABLE_BYTES: usize = 2 << 20;

/// Buckets a long-name table starts with: 256 (32 KiB), where the 413
/// official names hold ten long ones. With 64, two of them shared a home
/// bucket, and every row of the one further on left the lanes' loop for the
/// long table's walk (docs/PERFORMANCE.md, *The tables*).
pub(crate) const LONG_BUCKETS: usize = 256;

/// How many names a short table's sample must hold before its growth is
/// judged fourfold or twofold (too few say nothing). Under `cargo fuzz`,
/// whose inputs hold a few dozen names, fewer suffice, so that the
/// fuzzer reaches fourfold growth.
pub(crate) const FOURFOLD_SAMPLE: u64 = if cfg!(fuzzing) { 8 } else { 64 };

/// How many old slots ahead of the one it moves a growing short table
/// prefetches: the slots are visited from the top down, which the
/// hardware's prefetchers follow too late (docs/PERFORMANCE.md, *The
/// tables*).
pub(crate) const GROW_AHEAD: usize = 16;

/// Buckets of at most this many slots are sorted by comparison, where a
/// radix pass would cost more in its 256 counters than it saves.
pub(crate) const RADIX_SMALL: usize = 48;

/// Bytes of input that earn the short table one probe step past a name's
/// home slot: each [`Adder`](crate::table::Adder) credits its table a
/// step per this many of the bytes it is made for, and a table that has
/// spent its steps moves its names to a keyed table (docs/PERFORMANCE.md,
/// *The tables*). Random names at the densest load take under two steps a
/// new name and fewer a row, and a row is at least 5 bytes; more steps per
/// byte would let names built to collide cost more before the switch.
/// Under `cargo fuzz` a step per 32 bytes: the fuzzer's inputs, a few
/// dozen bytes, get a step or two.
pub(crate) const SHORT_PROBE_BYTES: u64 = if cfg!(fuzzing) { 32 } else { 4 };

/// Probe steps a row of a name held past the slot after its home pays,
/// beside the steps of its walk ([`SHORT_PROBE_BYTES`]): such a row leaves
/// the scanner's loop, a call and, where such rows come at random, a
/// mispredicted branch, where a step is a compare in a line already
/// fetched. Names built to share part of a hash, in clusters of three or
/// more or mixed with others, then flood a table before their rows cost
/// more than a flooded table's (docs/PERFORMANCE.md, *The tables*); random
/// names, a table at most a quarter full, walk on a few rows in a hundred.
pub(crate) const ROW_STEPS: u64 = 24;

/// [`SHORT_PROBE_BYTES`] for the long table, whose steps compare 128-byte
/// slots and cost twice as much, and whose rows are at least 17 bytes.
pub(crate) const LONG_PROBE_BYTES: u64 = if cfg!(fuzzing) { 32 } else { 8 };

/// Probe steps past home slots a table may take before it is credited
/// any ([`SHORT_PROBE_BYTES`]): enough for small inputs' chance clusters.
/// Under `cargo fuzz` none, so that two of a fuzzer's few names sharing a
/// home slot flood a table, and its folds meet flooded tables.
pub(crate) const PROBE_ALLOWANCE: u64 = if cfg!(fuzzing) { 0 } else { 1 << 12 };

/// Names a thread's table may hold before it hands them to the run's
/// partitions and starts again empty: more than the 10K set's 10,000, so
/// that inputs of up to that many names never leave the per-thread
/// tables, and few enough that a table of them stays a few MiB, so that
/// threads add little to the partitions' memory (docs/PERFORMANCE.md,
/// *Memory*). Under `cargo fuzz` a dozen, so that the fuzzer's inputs hand
/// names over many times; tests set their own ([`set_hand_off_names`]).
pub(crate) const HAND_OFF_NAMES: usize = if cfg!(fuzzing) { 12 } else { 1 << 14 };

/// The partitions a run's names are handed to: enough that each holds a
/// small share of a million names, so that folding a thread's names into
/// one partition after another touches a small table at a time. Under
/// `cargo fuzz` three, so that the fuzzer's few names spread over all.
pub(crate) const PARTITIONS: usize = if cfg!(fuzzing) { 3 } else { 256 };

/// Bytes of input per new name a thread assumes before it has measured
/// any: its first stretch is this many times [`HAND_OFF_NAMES`] long, so
/// that no table outgrows that bound by much before it first looks.
pub(crate) const FIRST_PACE: usize = 16;

/// [`HAND_OFF_NAMES`] unless a test set another bound for the runs its
/// thread starts ([`set_hand_off_names`]): read once per run.
pub(crate) fn hand_off_names() -> usize {
    match HAND_OFF_OVERRIDE.get() {
        0 => HAND_OFF_NAMES,
        n => n,
    }
}

thread_local! {
    static HAND_OFF_OVERRIDE: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Makes the runs this thread starts from now on hand a thread's names to
/// the partitions once its table holds `names`, or [`HAND_OFF_NAMES`] if
/// `names` is 0: for tests, whose inputs are too small to reach that
/// bound. It changes how the work is cut, never its result.
pub fn set_hand_off_names(names: usize) {
    HAND_OFF_OVERRIDE.set(names);
}
