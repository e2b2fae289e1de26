//! A stream's real flags (`cuStreamGetFlags`, through cudarc), asked once per thread and
//! handle after NPP's call returns (the thread's context is current then), and only of a driver
//! the process has already loaded: the interposer never loads CUDA into a program. See
//! [`cuStreamGetFlags`](https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__STREAM.html).

use std::cell::RefCell;

use cudarc::driver::sys;

use crate::streams;

/// Handles a thread remembers; past it the cache starts over.
const CACHED: usize = 64;

#[derive(Default)]
struct Cache {
    /// [`streams::destroyed`] when filled: a destroyed handle may be reused for another stream.
    generation: u64,
    entries: Vec<(u64, Option<u32>)>,
}

thread_local! {
    static CACHE: RefCell<Cache> = RefCell::new(Cache::default());
}

/// The flags of the stream `handle` names, or `None` where the driver could not say.
pub(crate) fn real_flags(handle: u64) -> Option<u32> {
    let cached = CACHE.try_with(|c| {
        let mut c = c.borrow_mut();
        let generation = streams::destroyed();
        if c.generation != generation || c.entries.len() >= CACHED {
            c.entries.clear();
            c.generation = generation;
        }
        if let Some(&(_, f)) = c.entries.iter().find(|(h, _)| *h == handle) {
            return f;
        }
        let f = query(handle);
        c.entries.push((handle, f));
        f
    });
    cached.unwrap_or_else(|_| query(handle))
}

/// Whether the process has loaded the CUDA driver (without loading it).
fn driver_loaded() -> bool {
    // SAFETY: RTLD_NOLOAD only looks the library up among those loaded; the handle it returns
    // (one more reference) is closed at once.
    unsafe {
        let h = libc::dlopen(c"libcuda.so.1".as_ptr(), libc::RTLD_NOW | libc::RTLD_NOLOAD);
        if h.is_null() {
            return false;
        }
        libc::dlclose(h);
        // cudarc panics where it finds no library: ask it first.
        sys::is_culib_present()
    }
}

fn query(handle: u64) -> Option<u32> {
    if !driver_loaded() {
        return None;
    }
    let mut flags = 0;
    // SAFETY: the driver is loaded; `handle` is the stream the program just passed to NPP,
    // alive for that call, and the flags are written through a valid pointer. A handle the
    // driver does not know gives an error, not a fault.
    let r = unsafe { sys::cuStreamGetFlags(handle as sys::CUstream, &mut flags) };
    (r == sys::CUresult::CUDA_SUCCESS).then_some(flags)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_loaded_driver_flags_are_unknown_and_cached() {
        if driver_loaded() {
            eprintln!("skipped: this process has the CUDA driver loaded");
            return;
        }
        assert_eq!(real_flags(0x1234), None);
        assert_eq!(real_flags(0x1234), None);
        CACHE.with(|c| assert_eq!(c.borrow().entries, [(0x1234, None)]));
    }
}
