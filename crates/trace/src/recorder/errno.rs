//! The caller's `errno`, kept across what the recorder does on a slow path (asking the driver,
//! allocating a chunk): a traced call leaves `errno` as NPP's call left it. The fast path calls
//! nothing that may set it, and does not read it (`__errno_location` is a call into libc and a
//! line of its code that a cold call would miss).

/// Runs `f`, then sets `errno` back to what it was before.
#[inline(always)]
pub(crate) fn keeping_errno<T>(f: impl FnOnce() -> T) -> T {
    // SAFETY: __errno_location returns the calling thread's errno, always valid.
    let errno = unsafe { *libc::__errno_location() };
    let out = f();
    // SAFETY: as above.
    unsafe { *libc::__errno_location() = errno };
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errno_set_inside_is_set_back() {
        // SAFETY: the calling thread's errno.
        let set = |v| unsafe { *libc::__errno_location() = v };
        set(7);
        let inside = keeping_errno(|| {
            set(99);
            // SAFETY: as above.
            unsafe { *libc::__errno_location() }
        });
        assert_eq!(inside, 99);
        // SAFETY: as above.
        assert_eq!(unsafe { *libc::__errno_location() }, 7);
    }
}
