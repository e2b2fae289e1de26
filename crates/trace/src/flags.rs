//! A stream's real flags (`cuStreamGetFlags`, through cudarc), asked once per thread and
//! handle after NPP's call returns (the thread's context is current then), and only of a driver
//! the process has already loaded: the interposer never loads CUDA into a program. See
//! [`cuStreamGetFlags`](https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__STREAM.html).
//!
//! Whether the driver can be asked is known once per process ([`driver::usable`]); a thread's
//! cache is a fixed array: a new thread allocates nothing and registers no destructor for it.

use std::cell::RefCell;

use crate::driver;
use crate::streams;

/// Handles a thread remembers; past it the cache starts over.
const CACHED: usize = 16;

struct Cache {
    /// [`streams::destroyed`] when filled: a destroyed handle may be reused for another stream.
    generation: u64,
    len: usize,
    entries: [(u64, Option<u32>); CACHED],
}

impl Cache {
    const EMPTY: Cache = Cache {
        generation: 0,
        len: 0,
        entries: [(0, None); CACHED],
    };

    fn get(&self, handle: u64) -> Option<Option<u32>> {
        self.entries[..self.len]
            .iter()
            .find(|(h, _)| *h == handle)
            .map(|(_, f)| *f)
    }
}

thread_local! {
    static CACHE: RefCell<Cache> = const { RefCell::new(Cache::EMPTY) };
}

/// The flags of the stream `handle` names, or `None` where the driver could not say.
pub(crate) fn real_flags(handle: u64) -> Option<u32> {
    let cached = CACHE.try_with(|c| {
        let mut c = c.borrow_mut();
        let generation = streams::destroyed();
        if c.generation != generation || c.len >= CACHED {
            c.len = 0;
            c.generation = generation;
        }
        if let Some(f) = c.get(handle) {
            return f;
        }
        let f = query(handle);
        let i = c.len;
        c.entries[i] = (handle, f);
        c.len += 1;
        f
    });
    cached.unwrap_or_else(|_| query(handle))
}

fn query(handle: u64) -> Option<u32> {
    driver::stream_flags(handle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_loaded_driver_flags_are_unknown_and_cached() {
        if driver::usable() {
            eprintln!("skipped: this process has the CUDA driver loaded");
            return;
        }
        assert_eq!(real_flags(0x1234), None);
        assert_eq!(real_flags(0x1234), None);
        CACHE.with(|c| {
            let c = c.borrow();
            assert_eq!(&c.entries[..c.len], [(0x1234, None)]);
        });
    }

    #[test]
    fn a_full_cache_starts_over() {
        std::thread::spawn(|| {
            for h in 0..(CACHED as u64 + 3) {
                real_flags(0x10_0000 + h);
            }
            CACHE.with(|c| assert_eq!(c.borrow().len, 3));
        })
        .join()
        .unwrap();
    }
}
