//! The floor under any line-based reader of a file: a count of its `\n`
//! bytes, mapped as brc maps a file and counted by THREADS threads over
//! equal parts, with the widest vector compare the CPU has. A reader of
//! `name;value` lines must at least find every line's end, so brc's time
//! over this program's, on the same file and threads, says how far brc is
//! from what reading the bytes costs (docs/PERFORMANCE.md, *Where brc
//! stands*).
//!
//! Usage: `cargo run --release --example floor -- FILE [THREADS]` prints
//! the number of `\n` bytes in FILE; THREADS defaults to the CPUs.

use std::fs::File;

use memmap2::{Advice, Mmap};

/// Bytes compared per step, and per lane of the per-byte counters.
const WIDTH: usize = 64;

/// Steps before the 8-bit counters could wrap: they are summed after each
/// block of this many.
const STEPS: usize = 255;

/// The number of `\n` in `bytes`: per-byte counters a vector wide,
/// incremented by a compare, summed every [`STEPS`] steps. The compiler
/// vectorizes the loop at the width the caller's target features allow.
#[inline(always)]
fn count_portable(bytes: &[u8]) -> usize {
    let mut total = 0;
    let mut blocks = bytes.chunks_exact(WIDTH * STEPS);
    for block in &mut blocks {
        let mut counters = [0u8; WIDTH];
        for step in block.chunks_exact(WIDTH) {
            for (c, &b) in counters.iter_mut().zip(step) {
                *c += u8::from(b == b'\n');
            }
        }
        total += counters.iter().map(|&c| usize::from(c)).sum::<usize>();
    }
    total + blocks.remainder().iter().filter(|&&b| b == b'\n').count()
}

/// [`count_portable`] compiled for AVX-512BW: 64-byte compares into mask
/// registers.
///
/// # Safety
/// The CPU must have AVX-512F and AVX-512BW.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn count_avx512(bytes: &[u8]) -> usize {
    count_portable(bytes)
}

/// [`count_portable`] compiled for AVX2: 32-byte compares.
///
/// # Safety
/// The CPU must have AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn count_avx2(bytes: &[u8]) -> usize {
    count_portable(bytes)
}

/// The number of `\n` in `bytes`, by the widest kernel this CPU runs.
fn count(bytes: &[u8]) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        if is_x86_feature_detected!("avx512bw") && is_x86_feature_detected!("avx512f") {
            // SAFETY: both features were just detected.
            return unsafe { count_avx512(bytes) };
        }
        if is_x86_feature_detected!("avx2") {
            // SAFETY: the feature was just detected.
            return unsafe { count_avx2(bytes) };
        }
    }
    count_portable(bytes)
}

/// The number of `\n` in `bytes`, counted by `threads` threads over equal
/// parts.
fn count_parallel(bytes: &[u8], threads: usize) -> usize {
    let part = bytes.len().div_ceil(threads.max(1)).max(1);
    std::thread::scope(|s| {
        let counting: Vec<_> = (bytes.chunks(part))
            .map(|p| s.spawn(move || count(p)))
            .collect();
        counting.into_iter().map(|t| t.join().unwrap()).sum()
    })
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (path, threads) = match &args[..] {
        [path] => (path, None),
        [path, threads] => (path, threads.parse::<usize>().ok()),
        _ => (&String::new(), None),
    };
    if path.is_empty() || args.len() == 2 && threads.is_none() {
        eprintln!("usage: floor FILE [THREADS] (see examples/floor.rs)");
        std::process::exit(2);
    }
    let threads = threads.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    });
    let file = File::open(path).unwrap_or_else(|e| {
        eprintln!("floor: {path}: {e}");
        std::process::exit(1);
    });
    // As brc maps a file (src/input/mod.rs): read-only, sequential read
    // ahead, huge pages where the kernel has them.
    // SAFETY: a file the lab made and nothing else writes while it runs.
    let map = unsafe { Mmap::map(&file) }.unwrap_or_else(|e| {
        eprintln!("floor: {path}: {e}");
        std::process::exit(1);
    });
    let _ = map.advise(Advice::Sequential);
    let _ = map.advise(Advice::HugePage);
    println!("{}", count_parallel(&map, threads));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kernel, over lengths around the blocks' edges, at every
    /// alignment and thread count, counts what a plain filter counts.
    #[test]
    fn every_kernel_counts_the_newlines() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let bytes: Vec<u8> = (0..3 * WIDTH * STEPS + 100)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                if state.is_multiple_of(7) {
                    b'\n'
                } else {
                    b'a'
                }
            })
            .collect();
        for len in [
            0,
            1,
            WIDTH - 1,
            WIDTH * STEPS,
            WIDTH * STEPS + 1,
            bytes.len() - 1,
        ] {
            for start in [0, 1, 31] {
                let part = &bytes[start..len.max(start)];
                let want = part.iter().filter(|&&b| b == b'\n').count();
                assert_eq!(count_portable(part), want, "len {len}, start {start}");
                assert_eq!(count(part), want, "len {len}, start {start}");
                #[cfg(target_arch = "x86_64")]
                {
                    if is_x86_feature_detected!("avx512bw") && is_x86_feature_detected!("avx512f") {
                        // SAFETY: both features were just detected.
                        assert_eq!(unsafe { count_avx512(part) }, want);
                    }
                    if is_x86_feature_detected!("avx2") {
                        // SAFETY: the feature was just detected.
                        assert_eq!(unsafe { count_avx2(part) }, want);
                    }
                }
                for threads in 1..=3 {
                    assert_eq!(count_parallel(part, threads), want, "{threads} threads");
                }
            }
        }
        assert!(bytes.iter().filter(|&&b| b == b'\n').count() > 1000);
    }
}
