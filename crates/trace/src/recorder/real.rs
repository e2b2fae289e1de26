//! NPP's own function behind each interposed symbol: `dlsym(RTLD_NEXT, symbol)`, looked up at
//! the first call and kept.
//!
//! Where no library after the interposer defines the symbol (NPP not loaded yet, or a program
//! that found the interposer's symbol through `dlsym` before loading NPP), the call returns
//! `NPP_ERROR` (-2) and says so on stderr once per symbol; the lookup is tried again at the
//! next call, so an NPP loaded later is found. A program without the interposer would not have
//! reached a function at all; an error status is what its error path already handles.

use std::ffi::{CStr, c_void};
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};

use nppbench_npp_sys::{NppStatus, RawFn};

/// `NPP_ERROR`: what a call returns when NPP's function cannot be found.
pub const NPP_ERROR: NppStatus = -2;

/// One symbol's real function, looked up once.
pub struct RealFn {
    symbol: &'static CStr,
    found: AtomicPtr<c_void>,
    reported: AtomicBool,
}

impl RealFn {
    pub const fn new(symbol: &'static CStr) -> RealFn {
        RealFn {
            symbol,
            found: AtomicPtr::new(std::ptr::null_mut()),
            reported: AtomicBool::new(false),
        }
    }

    /// The real function, or `None` where no library after the interposer defines it.
    #[inline]
    pub fn get(&self) -> Option<RawFn> {
        let mut p = self.found.load(Ordering::Acquire);
        if p.is_null() {
            // SAFETY: `symbol` is a NUL-terminated name; RTLD_NEXT searches the objects loaded
            // after this one.
            p = unsafe { libc::dlsym(libc::RTLD_NEXT, self.symbol.as_ptr()) };
            if p.is_null() {
                return None;
            }
            self.found.store(p, Ordering::Release);
        }
        // SAFETY: `p` is the non-null address of a function dlsym found; the interposed caller
        // gives it its C signature before calling it.
        Some(unsafe { std::mem::transmute::<*mut c_void, RawFn>(p) })
    }

    /// What a call returns when [`RealFn::get`] found nothing: reports it once, then
    /// `NPP_ERROR`.
    #[cold]
    pub fn missing(&self) -> NppStatus {
        if !self.reported.swap(true, Ordering::Relaxed) {
            // A closed stderr is no reason to fail the call.
            let _ = writeln!(
                std::io::stderr(),
                "nppbench-trace: {}: no library loaded after the interposer defines it (is NPP loaded?); \
                 the call returns NPP_ERROR",
                self.symbol.to_string_lossy()
            );
        }
        NPP_ERROR
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_symbol_no_library_defines_returns_npp_error_and_is_looked_up_again() {
        let real = RealFn::new(c"nppiNoSuchFunction_8u_C1R_Ctx");
        assert!(real.get().is_none());
        assert_eq!(real.missing(), NPP_ERROR);
        assert_eq!(real.missing(), NPP_ERROR);
        assert!(real.get().is_none(), "not cached as missing");
        // One every object defines is found and kept.
        let getpid = RealFn::new(c"getpid");
        assert!(getpid.get().is_some());
        assert!(!getpid.found.load(Ordering::Acquire).is_null());
    }
}
