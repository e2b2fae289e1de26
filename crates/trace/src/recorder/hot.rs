//! What every recorded call reads of the process's state, in one cache line: a cold call (a
//! thread's first, after the program's own work swept the caches) pays for each line it reads,
//! and these were in three places (the fork flag, the first-call flag, the clock's state), beside
//! the thread-local lookup this offset replaces (`reports/trace/cold-path/steps/` in git at c433f41).

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize};

#[repr(C, align(64))]
pub(crate) struct Hot {
    /// Set in a forked child (`work::on_fork_child`): it records nothing more.
    pub(crate) forked: AtomicBool,
    /// Set by the process's first recorded call (`work::on_call`).
    pub(crate) calls_began: AtomicBool,
    /// Set at start where the process shields without tracing (`nppbench shield`): calls are
    /// not recorded (`work::recording`).
    pub(crate) not_recording: AtomicBool,
    /// Set once the shield's plan is installed (`shield::install`): a traced call reads this
    /// line anyway, so the shield off costs it no other.
    pub(crate) shielding: AtomicBool,
    /// Where a thread's state is from its thread pointer, in bytes, once two threads agreed
    /// (`feed::local`); 0 until then.
    pub(crate) local_offset: AtomicUsize,
    /// The processor's counter at the start, and its nanoseconds per 2^32 counts where quanta
    /// reads that counter (0 until then, or where it reads another clock): `clock.rs`.
    pub(crate) tsc_start: AtomicU64,
    pub(crate) tsc_per_2_32_ticks: AtomicU64,
}

pub(crate) static HOT: Hot = Hot {
    forked: AtomicBool::new(false),
    calls_began: AtomicBool::new(false),
    not_recording: AtomicBool::new(false),
    shielding: AtomicBool::new(false),
    local_offset: AtomicUsize::new(0),
    tsc_start: AtomicU64::new(0),
    tsc_per_2_32_ticks: AtomicU64::new(0),
};

/// The calling thread's pointer (x86-64: `fs:0`, where glibc keeps the thread control block's
/// own address).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn thread_pointer() -> usize {
    let tp: usize;
    // SAFETY: reads the first word of the calling thread's control block, which the x86-64 TLS
    // ABI requires to hold its own address; no memory is written.
    unsafe { std::arch::asm!("mov {}, qword ptr fs:[0]", out(reg) tp, options(nostack, readonly, preserves_flags)) };
    tp
}

const _: () = assert!(size_of::<Hot>() == 64);
