//! Naming the NPP code on a stack (`backtrace`, then `dladdr1`), and finding NPP's libraries among
//! those the process has mapped (`/proc/self/maps`).
//!
//! The creating thread only takes its stack's return addresses (`recorder/stack.rs`); the writer names them
//! later ([`NppStack::of`]), each address once ([`Names`]), so a stream created outside a
//! catalogued call costs the program an unwind, not a symbol lookup per frame.
//!
//! NPP's exported `nppi…_Ctx` functions call its internal ones, whose code has no exported name:
//! `dladdr` alone would name such an address after the nearest exported symbol before it, another
//! function. A frame is named only where the symbol's extent (`st_size`) holds the address; else
//! it is written as its offset in the library.

use std::collections::HashMap;
use std::ffi::{CStr, c_void};
use std::path::Path;

/// `RTLD_DL_SYMENT`: `dladdr1` also returns the symbol's ELF entry.
const RTLD_DL_SYMENT: libc::c_int = 1;

/// Whether a library's file name is one of NPP's (`libnppc.so.13`, `libnppidei.so.12`, …), not
/// nppbench's own interposer or stand-in.
pub(crate) fn is_npp_library(file_name: &str) -> bool {
    file_name.starts_with("libnpp") && !file_name.starts_with("libnppbench")
}

fn file_name(path: &str) -> &str {
    Path::new(path).file_name().and_then(|n| n.to_str()).unwrap_or(path)
}

/// Where an address is: the file of the object holding it, the exported symbol holding it (none
/// where the address is past the nearest symbol's extent) and its offset in that symbol, or in
/// the object where no symbol holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Frame {
    pub(crate) library: String,
    pub(crate) symbol: Option<String>,
    pub(crate) offset: usize,
}

impl Frame {
    /// `libnppidei.so.13: nppiConvert_8u32f_AC4R_Ctx+0x4f`, or `libnppc.so.13: +0x1a2b30`.
    fn text(&self) -> String {
        format!(
            "{}: {}+{:#x}",
            file_name(&self.library),
            self.symbol.as_deref().unwrap_or(""),
            self.offset
        )
    }
}

/// `dladdr1` of `addr`.
pub(crate) fn symbolise(addr: *const c_void) -> Option<Frame> {
    // SAFETY: Dl_info is plain data; all-zero is a valid value for dladdr1 to overwrite.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    let mut sym: *mut c_void = std::ptr::null_mut();
    // SAFETY: dladdr1 reads the loader's tables for any address and writes `info` and, with
    // RTLD_DL_SYMENT, a pointer to the symbol's ELF entry (or null) into `sym`.
    if unsafe { libc::dladdr1(addr, &mut info, &mut sym, RTLD_DL_SYMENT) } == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: dladdr's strings are NUL-terminated and live as long as the object is loaded
    // (copied at once).
    let text = |p: *const libc::c_char| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned();
    // SAFETY: a non-null entry points into the object's symbol table.
    let size = (!sym.is_null()).then(|| unsafe { (*sym.cast::<libc::Elf64_Sym>()).st_size } as usize);
    let (start, end) = (info.dli_saddr as usize, info.dli_saddr as usize + size.unwrap_or(0));
    let held = !info.dli_sname.is_null() && !info.dli_saddr.is_null() && (start..end).contains(&(addr as usize));
    Some(Frame {
        library: text(info.dli_fname),
        symbol: held.then(|| text(info.dli_sname)),
        offset: addr as usize - if held { start } else { info.dli_fbase as usize },
    })
}

/// Each address named once (the writer's, across snapshots).
#[derive(Debug, Default)]
pub(crate) struct Names(HashMap<usize, Option<Frame>>);

impl Names {
    /// The frame of a return address: the call is the instruction before it.
    fn frame(&mut self, addr: usize) -> Option<Frame> {
        self.0
            .entry(addr)
            .or_insert_with(|| symbolise(addr.saturating_sub(1) as *const c_void))
            .clone()
    }
}

/// What a stack says of NPP: the innermost run of frames in NPP's libraries, and the function
/// named from it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NppStack {
    /// The function and its library's file name, by [`npp_entry`].
    pub(crate) function: String,
    pub(crate) library: String,
    /// The run's frames, innermost first, joined by ` ← `.
    pub(crate) text: String,
}

impl NppStack {
    /// The NPP code on `stack` (return addresses, innermost first), or `None` where no frame is
    /// in NPP.
    pub(crate) fn of(stack: &[usize], names: &mut Names) -> Option<NppStack> {
        let run = npp_run(stack.iter().map(|a| names.frame(*a)));
        let (function, library) = npp_entry(&run)?;
        let text: Vec<String> = run.iter().map(Frame::text).collect();
        Some(NppStack {
            function,
            library,
            text: text.join(" ← "),
        })
    }
}

/// The innermost run of frames in NPP's libraries.
fn npp_run(frames: impl IntoIterator<Item = Option<Frame>>) -> Vec<Frame> {
    let mut run: Vec<Frame> = Vec::new();
    for f in frames {
        match f {
            Some(f) if is_npp_library(file_name(&f.library)) => run.push(f),
            _ if !run.is_empty() => break,
            _ => {}
        }
    }
    run
}

/// The NPP function a run of NPP frames is in, and its library's file name: the outermost frame
/// held by an exported `npp…` symbol (the entry point the program called; inner frames of NPP's
/// own code have no exported names of their own). Where no frame is, the run is NPP's internal
/// code, named by its outermost library.
pub(crate) fn npp_entry(run: &[Frame]) -> Option<(String, String)> {
    let outermost = run.last()?;
    Some(
        match run
            .iter()
            .rev()
            .find_map(|f| f.symbol.as_deref().filter(|s| s.starts_with("npp")).map(|s| (f, s)))
        {
            Some((f, s)) => (s.to_owned(), file_name(&f.library).to_owned()),
            None => {
                let library = file_name(&outermost.library).to_owned();
                (format!("unexported code in {library}"), library)
            }
        },
    )
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
    use crate::recorder::stack::taken as stack;

    fn frame(library: &str, symbol: Option<&str>) -> Option<Frame> {
        Some(Frame {
            library: library.into(),
            symbol: symbol.map(str::to_owned),
            offset: 0x40,
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
            frame("/cuda/lib64/libnppc.so.13", None),
            frame("/cuda/lib64/libnppidei.so.13", Some("nppGetLibVersion")),
            frame("/cuda/lib64/libnppidei.so.13", Some("nppiResize_8u_C1R_Ctx")),
            frame("/cuda/lib64/libnppidei.so.13", None),
            frame("/app/server", Some("main")),
            frame("/cuda/lib64/libnppif.so.13", Some("nppiFilter_Ctx")),
        ];
        let run = npp_run(stack);
        assert_eq!(run.len(), 4, "the innermost run only");
        assert_eq!(
            npp_entry(&run),
            Some(("nppiResize_8u_C1R_Ctx".into(), "libnppidei.so.13".into()))
        );
        assert_eq!(npp_run([frame("/app/server", Some("main")), None]), []);
        assert_eq!(npp_entry(&[]), None);
    }

    #[test]
    fn a_run_of_internal_code_only_is_named_by_its_library() {
        let run = npp_run([
            frame("/cuda/lib64/libnppc.so.13", None),
            frame("/cuda/lib64/libnppidei.so.13", None),
            frame("/app/server", Some("main")),
        ]);
        assert_eq!(
            npp_entry(&run),
            Some(("unexported code in libnppidei.so.13".into(), "libnppidei.so.13".into()))
        );
        let text: Vec<String> = run.iter().map(Frame::text).collect();
        assert_eq!(text, ["libnppc.so.13: +0x40", "libnppidei.so.13: +0x40"]);
    }

    #[test]
    fn dladdr_names_a_function_only_within_its_extent() {
        let f = symbolise(libc::getpid as *const c_void).expect("getpid is in a loaded object");
        assert!(file_name(&f.library).starts_with("libc"), "{f:?}");
        assert!(f.symbol.is_some(), "{f:?}");
        assert_eq!(f.offset, 0);
        assert!(!stack().is_empty());
        // This test's own stack names no NPP code.
        assert_eq!(NppStack::of(&stack(), &mut Names::default()), None);
    }

    static SEEN: std::sync::Mutex<Option<Box<[usize]>>> = std::sync::Mutex::new(None);

    extern "C" fn take_stack() {
        *SEEN.lock().unwrap() = Some(stack());
    }

    /// The stand-in NPP, built beside this test, copied under an NPP library's name.
    fn standin_as_npp(dir: &Path) -> Option<std::path::PathBuf> {
        let exe = std::env::current_exe().ok()?;
        let built = ["libnppbench_trace_standin.so", "deps/libnppbench_trace_standin.so"]
            .iter()
            .map(|f| exe.parent().unwrap().join(f))
            .find(|p| p.exists())?;
        let copy = dir.join("libnppistandin.so");
        std::fs::copy(built, &copy).ok()?;
        Some(copy)
    }

    #[test]
    fn a_stack_through_npp_code_names_the_exported_function_it_passed() {
        let dir = tempfile::tempdir().unwrap();
        let Some(lib) = standin_as_npp(dir.path()) else {
            nppbench_model::say_skipped(
                "a_stack_through_npp_code_names_the_exported_function_it_passed",
                "the stand-in is not built beside this test",
            );
            return;
        };
        let path = std::ffi::CString::new(lib.to_str().unwrap()).unwrap();
        // SAFETY: the stand-in's initialisers are Rust's own; local, so its symbols stay apart.
        let handle = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        assert!(!handle.is_null());
        // SAFETY: a lookup through a valid handle.
        let f = unsafe { libc::dlsym(handle, c"nppbench_trace_standin_call_back".as_ptr()) };
        assert!(!f.is_null());
        // SAFETY: the stand-in's `extern "C" fn(extern "C" fn()) -> u64`.
        let call_back = unsafe { std::mem::transmute::<*mut c_void, extern "C" fn(extern "C" fn()) -> u64>(f) };
        assert_eq!(call_back(take_stack), 1);
        let seen = SEEN.lock().unwrap().take().unwrap();
        let npp = NppStack::of(&seen, &mut Names::default()).expect("a frame in libnppistandin.so");
        assert_eq!(
            (npp.function.as_str(), npp.library.as_str()),
            ("nppbench_trace_standin_call_back", "libnppistandin.so")
        );
        assert!(
            npp.text
                .starts_with("libnppistandin.so: nppbench_trace_standin_call_back+0x"),
            "{}",
            npp.text
        );
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
