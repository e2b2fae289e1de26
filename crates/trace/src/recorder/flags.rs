//! A stream's real flags, known to every thread of the process without a lock: a fixed cache of
//! (handle, flags) slots that calls read with atomic loads. It is filled where a stream is
//! created outside a catalogued call (the creation's own arguments, from CUPTI's API callbacks:
//! `cupti.rs`; streams NPP creates inside a call are never the caller's), and otherwise on the
//! first call that passes a handle the cache lacks, by asking the driver
//! ([`cuStreamGetFlags`](https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__STREAM.html),
//! only of a driver the program has loaded: `driver.rs`). A stream's destruction forgets its
//! flags, since a handle may be given to a new stream.
//!
//! A new thread's first call with a stream it just created therefore asks nothing: knowing is
//! paid at creation, which CUPTI interrupts anyway.
//!
//! A handle's slot is one of [`PROBES`] from a first slot its bits choose. Where all are taken, a
//! new handle replaces one of them: a cache, not a map, so that streams a program never destroys
//! cannot fill it. Each slot is a sequence lock: one writer at a time (whoever holds
//! [`WRITING`], which the call path only tries once), and a reader that finds the slot's sequence
//! changed, or odd, while it read treats it as a miss, never as another stream's flags. Only the
//! program's threads write (a call, a stream's creation or destruction): the writer thread and
//! the exit path never wait here.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::recorder::driver;

/// Slots in the cache.
const SLOTS: usize = 4096;
/// Slots a handle may take, from its first.
const PROBES: usize = 8;

/// A slot's value: unknown (the stream was destroyed), known flags, or known to be unknowable
/// (the driver, loaded, could not say).
const UNKNOWN: u64 = 0;
const KNOWN: u64 = 1 << 32;
const UNKNOWABLE: u64 = 2 << 32;

struct Slot {
    /// Odd while being written; changed by every write.
    seq: AtomicU64,
    /// The handle + 1 (handles 0, 1 and 2 are the legacy, legacy-handle and per-thread default
    /// streams); 0: free.
    key: AtomicU64,
    value: AtomicU64,
}

static TABLE: [Slot; SLOTS] = [const {
    Slot {
        seq: AtomicU64::new(0),
        key: AtomicU64::new(0),
        value: AtomicU64::new(UNKNOWN),
    }
}; SLOTS];

/// Set by whoever writes a slot, for the few instructions of the write.
static WRITING: AtomicBool = AtomicBool::new(false);

/// The right to write a slot, given back when dropped.
struct Writing;

impl Writing {
    /// Takes the right, or `None` where another thread holds it.
    fn try_take() -> Option<Writing> {
        WRITING
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
            .then_some(Writing)
    }

    /// Takes the right, yielding while another program thread holds it (for a few instructions;
    /// only program threads take it).
    fn take() -> Writing {
        loop {
            if let Some(w) = Writing::try_take() {
                return w;
            }
            std::thread::yield_now();
        }
    }
}

impl Drop for Writing {
    fn drop(&mut self) {
        WRITING.store(false, Ordering::Release);
    }
}

fn first_slot(handle: u64) -> usize {
    // Handles are pointers, 8-aligned or better: mix the bits before taking the low ones.
    (handle.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 52) as usize % SLOTS
}

fn window(handle: u64) -> impl Iterator<Item = &'static Slot> {
    let first = first_slot(handle);
    (0..PROBES).map(move |i| &TABLE[(first + i) % SLOTS])
}

fn decode(value: u64) -> Option<Option<u32>> {
    match value & !u64::from(u32::MAX) {
        KNOWN => Some(Some(value as u32)),
        UNKNOWABLE => Some(None),
        _ => None,
    }
}

/// Starts loading the cache's lines for `handle` (at a call's start; [`look_up`] reads them a
/// little later, before NPP's call).
#[inline]
pub(crate) fn prefetch(handle: u64) {
    crate::recorder::prefetch::lines(
        (&raw const TABLE[first_slot(handle)]).cast(),
        std::mem::size_of::<Slot>() * 2,
    );
}

/// What the cache holds for `handle`: `Some(None)` where the driver could not say, `None` where
/// it holds nothing (never told, replaced, or the stream has gone; then [`ask`]). A call reads
/// the cache before NPP's call, and asks only after it.
#[cfg_attr(target_os = "linux", unsafe(link_section = "nppbench_hot"))]
pub(crate) fn look_up(handle: u64) -> Option<Option<u32>> {
    let key = handle.wrapping_add(1);
    for slot in window(handle) {
        let before = slot.seq.load(Ordering::SeqCst);
        let (k, value) = (slot.key.load(Ordering::SeqCst), slot.value.load(Ordering::SeqCst));
        if before % 2 == 1 || slot.seq.load(Ordering::SeqCst) != before {
            continue;
        }
        if k == key {
            return decode(value);
        }
    }
    None
}

/// Sets `handle`'s value: in its own slot where it has one, else in a free or forgotten one,
/// else in place of another handle. `wait`: wait for the right to write even if another thread
/// holds it (not on the call path, which leaves the handle untold instead).
fn store(handle: u64, value: u64, wait: bool) {
    let writing = if wait {
        Some(Writing::take())
    } else {
        Writing::try_take()
    };
    let Some(_writing) = writing else { return };
    let key = handle.wrapping_add(1);
    let slot = window(handle)
        .find(|s| s.key.load(Ordering::SeqCst) == key)
        .or_else(|| window(handle).find(|s| s.key.load(Ordering::SeqCst) == 0))
        .or_else(|| window(handle).find(|s| s.value.load(Ordering::SeqCst) == UNKNOWN))
        .unwrap_or_else(|| &TABLE[(first_slot(handle) + (handle >> 4) as usize % PROBES) % SLOTS]);
    slot.seq.fetch_add(1, Ordering::SeqCst);
    slot.key.store(key, Ordering::SeqCst);
    slot.value.store(value, Ordering::SeqCst);
    slot.seq.fetch_add(1, Ordering::SeqCst);
}

/// A stream was created with `flags` (its creation's arguments).
pub(crate) fn created(handle: u64, flags: u32) {
    store(handle, KNOWN | u64::from(flags), true);
}

/// A stream is being destroyed: its handle may name another stream next.
pub(crate) fn destroyed(handle: u64) {
    if look_up(handle).is_some() {
        store(handle, UNKNOWN, true);
    }
}

/// Asks the driver for the flags of the stream `handle` names, and tells the cache (out of line:
/// most calls find the flags cached).
#[cold]
#[inline(never)]
pub(crate) fn ask(handle: u64) -> Option<u32> {
    // Asked after NPP's call returned: a program whose driver is not loaded by then (NPP loads
    // it) never will have it for this handle.
    let flags = driver::stream_flags(handle);
    store(handle, flags.map_or(UNKNOWABLE, |f| KNOWN | u64::from(f)), false);
    flags
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Held by every test here: the cache and its right to write are the process's, and the call
    /// path only tries to take that right (a test writing beside one that asks would leave it
    /// untold).
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

    /// Where a call's flags came from.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Source {
        /// The cache: told at creation, or asked on an earlier call.
        Cache,
        /// The driver, asked on this call.
        Asked,
    }

    /// A call's flags, as the record path reads them: the cache, else the driver.
    fn real_flags(handle: u64) -> (Option<u32>, Source) {
        match look_up(handle) {
            Some(known) => (known, Source::Cache),
            None => (ask(handle), Source::Asked),
        }
    }

    fn serial() -> std::sync::MutexGuard<'static, ()> {
        SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// `n` handles from `start`, 8 apart, whose windows all begin where `start`'s does.
    fn sharing_a_window(start: u64, n: usize) -> Vec<u64> {
        let first = first_slot(start);
        (start..)
            .step_by(8)
            .filter(|h| first_slot(*h) == first)
            .take(n)
            .collect()
    }

    #[test]
    fn flags_told_at_creation_are_read_without_asking_until_the_stream_is_destroyed() {
        let _serial = serial();
        let h = 0x7f00_dead_1000;
        created(h, 1);
        assert_eq!(real_flags(h), (Some(1), Source::Cache));
        std::thread::spawn(move || assert_eq!(real_flags(h), (Some(1), Source::Cache)))
            .join()
            .unwrap();
        destroyed(h);
        assert_eq!(look_up(h), None, "a destroyed stream's flags are forgotten");
        created(h, 0);
        assert_eq!(
            real_flags(h),
            (Some(0), Source::Cache),
            "a new stream on the same handle"
        );
    }

    #[test]
    fn without_a_loaded_driver_flags_are_unknown_and_asked_once() {
        let _serial = serial();
        let _driver = crate::DRIVER_TESTS
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if driver::usable() {
            nppbench_model::say_skipped(
                "without_a_loaded_driver_flags_are_unknown_and_asked_once",
                "this process has the CUDA driver loaded",
            );
            return;
        }
        let h = 0x7f00_beef_2000;
        assert_eq!(real_flags(h), (None, Source::Asked));
        assert_eq!(real_flags(h), (None, Source::Cache));
    }

    #[test]
    fn handles_that_share_a_first_slot_each_keep_their_own() {
        let _serial = serial();
        let same = sharing_a_window(0x1000, 4);
        for (i, h) in same.iter().enumerate() {
            created(*h, i as u32);
        }
        for (i, h) in same.iter().enumerate() {
            assert_eq!(look_up(*h), Some(Some(i as u32)), "{h:#x}");
        }
    }

    #[test]
    fn a_full_window_replaces_an_entry_and_never_answers_for_another_handle() {
        let _serial = serial();
        let same = sharing_a_window(0x55_0000, PROBES + 1);
        for (i, h) in same.iter().enumerate() {
            created(*h, i as u32);
        }
        let held: Vec<Option<Option<u32>>> = same.iter().map(|h| look_up(*h)).collect();
        assert_eq!(held[PROBES], Some(Some(PROBES as u32)), "the newest is held");
        assert_eq!(
            held.iter().filter(|v| v.is_none()).count(),
            1,
            "one was replaced: {held:?}"
        );
        for (i, v) in held.iter().enumerate() {
            assert!(v.is_none() || *v == Some(Some(i as u32)), "{i}: {v:?}");
        }
    }

    #[test]
    fn readers_racing_a_writer_never_read_another_handles_flags() {
        let same = sharing_a_window(0x66_0000, PROBES * 2);
        let _serial = serial();
        let flags_of = |h: u64| (h >> 3) as u32;
        let done = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|s| {
            s.spawn(|| {
                for round in 0..20_000 {
                    let h = same[round % same.len()];
                    created(h, flags_of(h));
                }
                done.store(true, Ordering::SeqCst);
            });
            for _ in 0..2 {
                s.spawn(|| {
                    while !done.load(Ordering::SeqCst) {
                        for h in &same {
                            if let Some(f) = look_up(*h) {
                                assert_eq!(f, Some(flags_of(*h)), "{h:#x}");
                            }
                        }
                    }
                });
            }
        });
    }
}
