//! The x86-64 kernel ([`avx2`]), the lanes feed ([`lanes`]) and its calls
//! that keep its registers ([`keep`]), and the scanner's entry points
//! compiled for them, which [`super`] calls once it has seen the CPU has
//! AVX2.

mod avx2;
mod keep;
mod lanes;

pub(super) use self::lanes::lanes as lanes_avx2;

use self::avx2::Avx2;
use super::feed::{batched, lockstep};
use super::line::lines;
use super::Log;
use crate::table::ChunkAdder;
use crate::tuning::STREAMS;

#[target_feature(enable = "avx2,bmi1,bmi2")]
pub(super) unsafe fn lines_avx2<L: Log>(
    adder: &mut ChunkAdder,
    log: &mut L,
    start: usize,
    limit: usize,
) -> Result<usize, usize> {
    // SAFETY: forwarded from the caller (bounds; AVX2 and BMI present).
    unsafe { lines::<Avx2, L>(adder, log, start, limit) }
}

#[target_feature(enable = "avx2,bmi1,bmi2")]
pub(super) unsafe fn lockstep_avx2<L: Log>(
    adder: &mut ChunkAdder,
    log: &mut L,
    ps: &mut [usize; STREAMS],
    ends: &[usize; STREAMS],
) {
    // SAFETY: forwarded from the caller (bounds; AVX2 and BMI present).
    unsafe { lockstep::<Avx2, L>(adder, log, ps, ends) }
}

#[target_feature(enable = "avx2,bmi1,bmi2")]
pub(super) unsafe fn batched_avx2<L: Log>(
    adder: &mut ChunkAdder,
    log: &mut L,
    ps: &mut [usize; STREAMS],
    ends: &[usize; STREAMS],
) {
    // SAFETY: forwarded from the caller (bounds; AVX2 and BMI present).
    unsafe { batched::<Avx2, L>(adder, log, ps, ends) }
}

/// Whether this CPU has AVX2, and BMI1 and BMI2 (which every AVX2 CPU
/// has) for shifts that need no `cl` register: what the entry points here
/// are compiled for.
pub(super) fn available() -> bool {
    std::arch::is_x86_feature_detected!("avx2")
        && std::arch::is_x86_feature_detected!("bmi1")
        && std::arch::is_x86_feature_detected!("bmi2")
}
