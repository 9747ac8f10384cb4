//! Calls out of the lanes' loop that keep its registers
//! (docs/PERFORMANCE.md, *Registers across calls*).
//!
//! The System V ABI leaves nine general registers and every vector
//! register to the caller to save, so one call anywhere in a loop, even on
//! a path it seldom takes, leaves the loop six registers for its pointers
//! and none for its vector constants: the compiler spills the rest and
//! loads them at every use, on the load ports the loop is short of. The
//! lanes' loop can make its calls (a short name past its home slots, a
//! long name's row, with the round's parsed value for a name its window
//! holds) through [`keeping_registers`] instead, which saves and restores
//! the caller's registers but `rax`, `r11` and `ymm0`–`ymm3` around the
//! callee; `asm!` tells the compiler so, and it keeps the
//! loop's values in them. Each call then saves and restores twenty
//! registers, so the loop calls this way only where long names are rare
//! ([`crate::tuning::KEEP_LONG_SHARE`]).

use super::avx2::Avx2;
use crate::scan::kernel::Kernel;
use crate::scan::Log;
use crate::table::ChunkAdder;

/// Calls the function whose address is in `r11`, its System V arguments in
/// `rdi`, `rsi`, `rdx` and `rcx`, and keeps every register the callee may
/// change but `rax` (its result), `r11` and `ymm0`–`ymm3`. Only [`call!`]
/// calls it.
///
/// The callee is compiled for any x86-64 CPU, and so is what it calls
/// (`hashbrown`'s SSE2 groups, `memcpy`): legacy SSE code. Run while the
/// upper halves of the loop's vectors are live, every such instruction
/// pays for the mixed state on Intel CPUs, so a flooded table, whose rows
/// all come here, ran many times slower there than on AMD's. With those
/// halves saved, `vzeroupper` clears them before the call.
///
/// On entry the stack pointer is 8 bytes past a 16-byte boundary (a call
/// pushed the return address); seven 8-byte pushes put it back on one,
/// and twelve 32-byte registers and 16 bytes of padding keep it there, as
/// the callee expects.
#[unsafe(naked)]
unsafe extern "sysv64" fn keeping_registers() {
    std::arch::naked_asm!(
        "push rdi",
        "push rsi",
        "push rdx",
        "push rcx",
        "push r8",
        "push r9",
        "push r10",
        "sub rsp, 400",
        "vmovdqu ymmword ptr [rsp], ymm4",
        "vmovdqu ymmword ptr [rsp + 32], ymm5",
        "vmovdqu ymmword ptr [rsp + 64], ymm6",
        "vmovdqu ymmword ptr [rsp + 96], ymm7",
        "vmovdqu ymmword ptr [rsp + 128], ymm8",
        "vmovdqu ymmword ptr [rsp + 160], ymm9",
        "vmovdqu ymmword ptr [rsp + 192], ymm10",
        "vmovdqu ymmword ptr [rsp + 224], ymm11",
        "vmovdqu ymmword ptr [rsp + 256], ymm12",
        "vmovdqu ymmword ptr [rsp + 288], ymm13",
        "vmovdqu ymmword ptr [rsp + 320], ymm14",
        "vmovdqu ymmword ptr [rsp + 352], ymm15",
        "vzeroupper",
        "call r11",
        "vmovdqu ymm4, ymmword ptr [rsp]",
        "vmovdqu ymm5, ymmword ptr [rsp + 32]",
        "vmovdqu ymm6, ymmword ptr [rsp + 64]",
        "vmovdqu ymm7, ymmword ptr [rsp + 96]",
        "vmovdqu ymm8, ymmword ptr [rsp + 128]",
        "vmovdqu ymm9, ymmword ptr [rsp + 160]",
        "vmovdqu ymm10, ymmword ptr [rsp + 192]",
        "vmovdqu ymm11, ymmword ptr [rsp + 224]",
        "vmovdqu ymm12, ymmword ptr [rsp + 256]",
        "vmovdqu ymm13, ymmword ptr [rsp + 288]",
        "vmovdqu ymm14, ymmword ptr [rsp + 320]",
        "vmovdqu ymm15, ymmword ptr [rsp + 352]",
        "add rsp, 400",
        "pop r10",
        "pop r9",
        "pop r8",
        "pop rcx",
        "pop rdx",
        "pop rsi",
        "pop rdi",
        "ret",
    );
}

/// `$f($a, $b, $c, $d)` through [`keeping_registers`], `$f` an
/// `extern "sysv64"` function of four `usize` arguments returning one,
/// which does not unwind (a panic in it aborts). `rax`, `r11` and
/// `ymm0`–`ymm3` are clobbered, the flags too (no `preserves_flags`). No
/// `nostack`: the call pushes, and the compiler then keeps the stack
/// pointer aligned for a call and nothing below it.
macro_rules! call {
    ($f:path, $a:expr, $b:expr, $c:expr, $d:expr) => {{
        let ret: usize;
        std::arch::asm!(
            "lea r11, [rip + {f}]",
            "call {keep}",
            f = sym $f,
            keep = sym keeping_registers,
            in("rdi") $a,
            in("rsi") $b,
            in("rdx") $c,
            in("rcx") $d,
            out("rax") ret,
            out("r11") _,
            out("xmm0") _,
            out("xmm1") _,
            out("xmm2") _,
            out("xmm3") _,
        );
        ret
    }};
}

/// [`Adder::add_short_past`](crate::table::Adder::add_short_past) for the
/// lanes' loop.
///
/// # Safety
/// The CPU has AVX (the callee's saves use it).
#[inline(always)]
pub(super) unsafe fn add_short_past(
    adder: &mut ChunkAdder,
    a: u64,
    b: u64,
    total: i64,
) -> Option<u32> {
    /// The callee, its arguments as the loop's `asm!` passes them; the
    /// name's number with bit 32 set for `Some`, `0` for `None`.
    extern "sysv64" fn past(adder: usize, a: usize, b: usize, total: usize) -> usize {
        // SAFETY: `adder` is the `&mut ChunkAdder` passed below, borrowed
        // for the call.
        let adder = unsafe { &mut *(adder as *mut ChunkAdder) };
        let added = adder.add_short_past(a as u64, b as u64, total as i64);
        added.map_or(0, |id| 1 << 32 | id as usize)
    }
    let adder = adder as *mut ChunkAdder as usize;
    // SAFETY: `past` is an `extern "sysv64"` function of four `usize`
    // arguments; `keeping_registers` keeps what `call!` does not clobber, on
    // a CPU with AVX (forwarded from the caller).
    let got = unsafe { call!(past, adder, a as usize, b as usize, total as usize) };
    (got != 0).then_some(got as u32)
}

/// [`Kernel::add_head`] for the lanes' loop, the row's value parsed.
///
/// # Safety
/// As for [`Kernel::add_head`] with the AVX2 kernel.
#[inline(always)]
pub(super) unsafe fn add_head<L: Log>(
    adder: &mut ChunkAdder,
    p: *const u8,
    len: usize,
    value: i16,
) -> bool {
    /// The callee, its arguments as the loop's `asm!` passes them.
    #[target_feature(enable = "avx2,bmi1,bmi2")]
    unsafe extern "sysv64" fn head<L: Log>(
        adder: usize,
        p: usize,
        len: usize,
        value: usize,
    ) -> usize {
        // SAFETY: `adder` is the `&mut ChunkAdder` passed below, borrowed
        // for the call; the rest is forwarded from the caller.
        let added = unsafe {
            Avx2::add_head::<L>(
                &mut *(adder as *mut ChunkAdder),
                p as *const u8,
                len,
                value as i16,
            )
        };
        usize::from(added)
    }
    let adder = adder as *mut ChunkAdder as usize;
    // SAFETY: as in `add_short_past`; `head`'s contract is the caller's.
    unsafe { call!(head::<L>, adder, p as usize, len, value as usize) != 0 }
}

/// [`Avx2::long_line`] for the lanes' loop.
///
/// # Safety
/// As for [`Avx2::long_line`].
#[inline(always)]
pub(super) unsafe fn long_line<L: Log>(
    adder: &mut ChunkAdder,
    p: *const u8,
    win_len: usize,
) -> Option<usize> {
    /// The callee, its arguments as the loop's `asm!` passes them; `0` for
    /// `None` (a line is never empty).
    #[target_feature(enable = "avx2,bmi1,bmi2")]
    unsafe extern "sysv64" fn line<L: Log>(
        adder: usize,
        p: usize,
        win_len: usize,
        _: usize,
    ) -> usize {
        // SAFETY: `adder` is the `&mut ChunkAdder` passed below, borrowed
        // for the call; the rest is forwarded from the caller.
        let adder = unsafe { &mut *(adder as *mut ChunkAdder) };
        // SAFETY: forwarded from the caller.
        unsafe { Avx2::long_line::<L>(adder, p as *const u8, win_len) }.unwrap_or(0)
    }
    let adder = adder as *mut ChunkAdder as usize;
    // SAFETY: as in `add_short_past`; `line`'s contract is the caller's.
    let n = unsafe { call!(line::<L>, adder, p as usize, win_len, 0usize) };
    (n != 0).then_some(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::arch::x86_64::*;

    /// Overwrites every register a System V callee may, but the stack
    /// pointer, and returns the sum of its arguments.
    extern "sysv64" fn clobber(a: usize, b: usize, c: usize, d: usize) -> usize {
        // SAFETY: writes only registers declared clobbered; the CPU has AVX
        // (the test checks).
        unsafe {
            std::arch::asm!(
                "xor edi, edi",
                "xor esi, esi",
                "xor edx, edx",
                "xor ecx, ecx",
                "xor r8d, r8d",
                "xor r9d, r9d",
                "xor r10d, r10d",
                "xor r11d, r11d",
                "vpxor xmm0, xmm0, xmm0",
                "vpxor xmm1, xmm1, xmm1",
                "vpxor xmm2, xmm2, xmm2",
                "vpxor xmm3, xmm3, xmm3",
                "vpxor xmm4, xmm4, xmm4",
                "vpxor xmm5, xmm5, xmm5",
                "vpxor xmm6, xmm6, xmm6",
                "vpxor xmm7, xmm7, xmm7",
                "vpxor xmm8, xmm8, xmm8",
                "vpxor xmm9, xmm9, xmm9",
                "vpxor xmm10, xmm10, xmm10",
                "vpxor xmm11, xmm11, xmm11",
                "vpxor xmm12, xmm12, xmm12",
                "vpxor xmm13, xmm13, xmm13",
                "vpxor xmm14, xmm14, xmm14",
                "vpxor xmm15, xmm15, xmm15",
                clobber_abi("sysv64"),
                options(nostack),
            );
        }
        a + b + c + d
    }

    /// Calls [`clobber`] through [`keeping_registers`] with a pattern in
    /// every register the call keeps; returns the result and what those
    /// registers held after it.
    #[target_feature(enable = "avx")]
    fn call_clobber() -> (usize, [u64; 7], [[u64; 4]; 12]) {
        let pattern = |i: u64| [i, i << 8, i << 16, !i];
        let mut v: [__m256i; 12] = std::array::from_fn(|i| {
            let [a, b, c, d] = pattern(i as u64 + 4);
            _mm256_set_epi64x(d as i64, c as i64, b as i64, a as i64)
        });
        let mut g: [u64; 7] = std::array::from_fn(|i| 100 + i as u64);
        let ret: usize;
        // SAFETY: `clobber` is an `extern "sysv64"` function of four
        // `usize` arguments that does not unwind; the CPU has AVX.
        unsafe {
            std::arch::asm!(
                "lea r11, [rip + {f}]",
                "call {keep}",
                f = sym clobber,
                keep = sym keeping_registers,
                inout("rdi") g[0], inout("rsi") g[1], inout("rdx") g[2], inout("rcx") g[3],
                inout("r8") g[4], inout("r9") g[5], inout("r10") g[6],
                inout("ymm4") v[0], inout("ymm5") v[1], inout("ymm6") v[2], inout("ymm7") v[3],
                inout("ymm8") v[4], inout("ymm9") v[5], inout("ymm10") v[6], inout("ymm11") v[7],
                inout("ymm12") v[8], inout("ymm13") v[9], inout("ymm14") v[10], inout("ymm15") v[11],
                out("rax") ret, out("r11") _,
                out("xmm0") _, out("xmm1") _, out("xmm2") _, out("xmm3") _,
            );
        }
        let words = v.map(|x| {
            let mut w = [0u64; 4];
            // SAFETY: `w` holds 32 bytes.
            unsafe { _mm256_storeu_si256(w.as_mut_ptr().cast(), x) };
            w
        });
        (ret, g, words)
    }

    /// Where a 16-byte-aligned local of the callee lands, modulo 16: the
    /// compiler places it by the stack pointer the ABI promises on entry.
    extern "sysv64" fn misalignment(_: usize, _: usize, _: usize, _: usize) -> usize {
        #[repr(align(16))]
        struct Aligned([u8; 16]);
        let local = std::hint::black_box(Aligned([0; 16]));
        std::hint::black_box(&local.0) as *const [u8; 16] as usize % 16
    }

    #[test]
    fn the_callee_finds_the_stack_aligned() {
        if !std::arch::is_x86_feature_detected!("avx") {
            return;
        }
        // SAFETY: `misalignment` is an `extern "sysv64"` function of four
        // `usize` arguments that does not unwind; the CPU has AVX.
        let off = unsafe { call!(misalignment, 0usize, 0usize, 0usize, 0usize) };
        assert_eq!(off, 0);
    }

    #[test]
    fn a_call_keeps_the_registers_it_promises() {
        if !std::arch::is_x86_feature_detected!("avx") {
            return;
        }
        // SAFETY: the CPU has AVX (checked above).
        let (ret, g, v) = unsafe { call_clobber() };
        assert_eq!(ret, 100 + 101 + 102 + 103);
        assert_eq!(g, std::array::from_fn(|i| 100 + i as u64));
        for (i, w) in v.iter().enumerate() {
            let i = i as u64 + 4;
            assert_eq!(*w, [i, i << 8, i << 16, !i], "ymm{i}");
        }
    }
}
