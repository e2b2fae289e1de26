//! Naming the NPP code on a stack (`backtrace` and `dladdr`), and finding NPP's libraries among
//! those the process has mapped (`/proc/self/maps`).

use std::ffi::{CStr, c_void};
use std::path::Path;

/// Frames looked at when a stream is created outside a catalogued call.
const DEPTH: usize = 64;

/// Whether a library's file name is one of NPP's (`libnppc.so.13`, `libnppidei.so.12`, …), not
/// nppbench's own interposer or stand-in.
pub(crate) fn is_npp_library(file_name: &str) -> bool {
    file_name.starts_with("libnpp") && !file_name.starts_with("libnppbench")
}

fn file_name(path: &str) -> &str {
    Path::new(path).file_name().and_then(|n| n.to_str()).unwrap_or(path)
}

/// Where an address is: the file of the object holding it and the nearest exported symbol.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Frame {
    pub(crate) library: String,
    pub(crate) symbol: Option<String>,
}

/// `dladdr` of `addr`.
pub(crate) fn symbolise(addr: *const c_void) -> Option<Frame> {
    // SAFETY: Dl_info is plain data; all-zero is a valid value for dladdr to overwrite.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr reads the loader's tables for any address and writes `info`.
    if unsafe { libc::dladdr(addr, &mut info) } == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: dladdr's strings are NUL-terminated and live as long as the object is loaded
    // (copied at once).
    let text = |p: *const libc::c_char| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned();
    Some(Frame {
        library: text(info.dli_fname),
        symbol: (!info.dli_sname.is_null()).then(|| text(info.dli_sname)),
    })
}

/// The return addresses on the calling thread's stack, innermost first.
pub(crate) fn stack() -> Vec<*mut c_void> {
    let mut frames = vec![std::ptr::null_mut(); DEPTH];
    // SAFETY: the buffer holds DEPTH entries, the size passed.
    let n = unsafe { libc::backtrace(frames.as_mut_ptr(), DEPTH as libc::c_int) };
    frames.truncate(n.max(0) as usize);
    frames
}

/// Walks a stack once, so that the unwinder's own libraries are loaded before a callback needs
/// them.
pub(crate) fn prime() {
    let _ = stack();
}

/// The NPP function a stack is in, and its library's file name: the outermost frame of the
/// innermost run of frames in NPP's libraries (the entry point the program called, whose name is
/// exported; inner frames of NPP's own code have no exported names of their own).
pub(crate) fn npp_entry(frames: impl IntoIterator<Item = Option<Frame>>) -> Option<(String, String)> {
    let mut run: Vec<Frame> = Vec::new();
    for f in frames {
        match f {
            Some(f) if is_npp_library(file_name(&f.library)) => run.push(f),
            _ if !run.is_empty() => break,
            _ => {}
        }
    }
    let entry = run
        .iter()
        .rev()
        .find(|f| f.symbol.as_deref().is_some_and(|s| s.starts_with("npp")))
        .or(run.last())?;
    Some((entry.symbol.clone()?, file_name(&entry.library).to_owned()))
}

/// The NPP function on the calling thread's stack, by [`npp_entry`].
pub(crate) fn npp_on_stack() -> Option<(String, String)> {
    npp_entry(stack().into_iter().map(|a| symbolise(a.cast_const())))
}

/// The paths of NPP's libraries mapped in the process, each once, in map order.
pub(crate) fn npp_libraries() -> Vec<String> {
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
    npp_libraries_in(&maps)
}

fn npp_libraries_in(maps: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in maps.lines() {
        // address perms offset dev inode path: the path is all from the first '/' (it may hold
        // spaces).
        let Some(path) = line.find('/').map(|i| &line[i..]) else {
            continue;
        };
        if is_npp_library(file_name(path)) && !out.iter().any(|p| p == path) {
            out.push(path.to_owned());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(library: &str, symbol: Option<&str>) -> Option<Frame> {
        Some(Frame {
            library: library.into(),
            symbol: symbol.map(str::to_owned),
        })
    }

    #[test]
    fn npps_libraries_are_told_from_nppbenchs_own() {
        assert!(is_npp_library("libnppidei.so.13"));
        assert!(is_npp_library("libnppc.so.12"));
        assert!(!is_npp_library("libnppbench_trace.so"));
        assert!(!is_npp_library("libnppbench_trace_standin.so"));
        assert!(!is_npp_library("libcuda.so.1"));
    }

    #[test]
    fn the_entry_is_the_outermost_named_npp_frame_of_the_innermost_run() {
        let stack = [
            frame("/usr/lib/libcupti.so.13", Some("cuptiX")),
            frame("/usr/lib/libcuda.so.1", None),
            frame("/cuda/lib64/libnppidei.so.13", Some("nppGetLibVersion")),
            frame("/cuda/lib64/libnppidei.so.13", Some("nppiResize_8u_C1R_Ctx")),
            frame("/cuda/lib64/libnppidei.so.13", None),
            frame("/app/server", Some("main")),
            frame("/cuda/lib64/libnppif.so.13", Some("nppiFilter_Ctx")),
        ];
        assert_eq!(
            npp_entry(stack),
            Some(("nppiResize_8u_C1R_Ctx".into(), "libnppidei.so.13".into()))
        );
        assert_eq!(npp_entry([frame("/app/server", Some("main")), None]), None);
    }

    #[test]
    fn dladdr_names_a_library_function() {
        let f = symbolise(libc::getpid as *const c_void).expect("getpid is in a loaded object");
        assert!(file_name(&f.library).starts_with("libc"), "{f:?}");
        assert!(!stack().is_empty());
    }

    #[test]
    fn maps_give_each_npp_library_once() {
        let maps = "\
7f00-7f10 r--p 00000000 08:01 1 /cuda/lib64/libnppc.so.13.0.1
7f10-7f20 r-xp 00001000 08:01 1 /cuda/lib64/libnppc.so.13.0.1
7f20-7f30 r-xp 00001000 08:01 2 /opt/nppbench/libnppbench_trace.so
7f30-7f40 rw-p 00000000 00:00 0 [heap]
7f40-7f50 r-xp 00001000 08:01 3 /cuda/lib64/libnppidei.so.13.0.1";
        assert_eq!(
            npp_libraries_in(maps),
            ["/cuda/lib64/libnppc.so.13.0.1", "/cuda/lib64/libnppidei.so.13.0.1"]
        );
    }
}
