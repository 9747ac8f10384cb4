//! The x86-64 kernel ([`avx2`]), the lanes feed ([`lanes`]) and its calls
//! that keep its registers ([`keep`]), and the scanner's entry points
//! compiled for them, which [`super`] calls once it has seen the CPU has
//! AVX2.

mod avx2;
mod keep;
mod lanes;

pub(super) use self::lanes::lanes as lanes_avx2;

use self::avx2::Avx2;
use super::feed::batched;
use super::line::lines;
use crate::table::Adder;
use crate::tuning::STREAMS;

#[target_feature(enable = "avx2,bmi1,bmi2")]
pub(super) unsafe fn lines_avx2(
    adder: &mut Adder,
    buf: &[u8],
    start: usize,
    limit: usize,
) -> Result<usize, usize> {
    // SAFETY: forwarded from the caller (bounds; AVX2 and BMI present).
    unsafe { lines::<Avx2>(adder, buf, start, limit) }
}

#[target_feature(enable = "avx2,bmi1,bmi2")]
pub(super) unsafe fn batched_avx2(
    adder: &mut Adder,
    buf: &[u8],
    ps: &mut [usize; STREAMS],
    ends: &[usize; STREAMS],
) {
    // SAFETY: forwarded from the caller (bounds; AVX2 and BMI present).
    unsafe { batched::<Avx2>(adder, buf, ps, ends) }
}

/// Adds the long rows the AVX2 kernel deferred, if any (one per queue: see
/// [`Adder::add_long_deferred_avx2`] and [`Adder::add_long_head_avx2`]),
/// and returns where in `buf` the first line whose name the table refused
/// starts, if any. Every AVX2 scan ends here,
/// while the rows it deferred are still in `buf`; the caller moves that
/// line's stream back to it.
///
/// A deferred row's stream has moved on by the time it is added, so rows
/// after a refused one are added too (the scan stops at the next long row,
/// in whichever stream and queue). They are moot: every name the table
/// refuses is a fault of the input, which the strict parser then reports
/// at that line, the first of its stream (the streams are finished in
/// input order, so the first fault reported is the input's first).
pub(super) fn settle(adder: &mut Adder, buf: &[u8]) -> Option<usize> {
    // SAFETY: only the AVX2 kernel defers rows, and the callers only run it
    // where the CPU has AVX2; every row deferred since the last call is in
    // `buf`, which the caller still borrows.
    let at = unsafe { adder.settle_long_avx2() }?;
    Some(at as usize - buf.as_ptr() as usize)
}

/// Whether this CPU has AVX2, and BMI1 and BMI2 (which every AVX2 CPU
/// has) for shifts that need no `cl` register: what the entry points here
/// are compiled for.
pub(super) fn available() -> bool {
    std::arch::is_x86_feature_detected!("avx2")
        && std::arch::is_x86_feature_detected!("bmi1")
        && std::arch::is_x86_feature_detected!("bmi2")
}
