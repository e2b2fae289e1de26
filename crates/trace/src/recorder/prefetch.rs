//! Hints that start loading lines the recording will touch after NPP's call returns, issued
//! before the call: the loads then run while NPP works, and the recording finds its lines in
//! cache. A program's call is usually cold (between two calls the program and CUDA ran code of
//! their own), so this is what the recording's time is mostly made of. A hint never faults,
//! whatever the address: a stale pointer costs nothing but the hint.

/// Hints the lines of `bytes` bytes from `p`, to be written: `PREFETCHW` asks for them owned,
/// as a write needs them (a line another core last wrote, as the writer thread wrote a spare's,
/// would otherwise be fetched shared and then taken over). A processor without the
/// instruction runs it as a no-op (it is in the hint space).
#[inline]
pub(crate) fn lines_to_write(p: *const u8, bytes: usize) {
    #[cfg(target_arch = "x86_64")]
    each_line(p, bytes, |line| {
        // SAFETY: PREFETCHW is a hint: it reads nothing the program sees, writes nothing and
        // never faults; it touches no register but its address operand.
        unsafe { std::arch::asm!("prefetchw [{}]", in(reg) line, options(nostack, preserves_flags, readonly)) };
    });
    #[cfg(not(target_arch = "x86_64"))]
    lines(p, bytes);
}

/// Hints the lines of `bytes` bytes from `p`, to be read.
#[inline]
pub(crate) fn lines(p: *const u8, bytes: usize) {
    #[cfg(target_arch = "x86_64")]
    each_line(p, bytes, |line| {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        // SAFETY: PREFETCHT0 is a hint; it reads nothing the program sees and never faults.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(line.cast()) };
    });
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (p, bytes);
}

/// Calls `hint` with an address in each 64-byte line of the `bytes` bytes from `p`.
#[cfg(target_arch = "x86_64")]
#[inline]
fn each_line(p: *const u8, bytes: usize, hint: impl Fn(*const u8)) {
    (0..bytes).step_by(64).for_each(|offset| hint(p.wrapping_add(offset)));
}
