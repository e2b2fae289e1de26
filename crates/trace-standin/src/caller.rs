//! The program side of the stand-in: loads `libnppbench_trace_standin.so` as a program linked
//! against NPP has it (`RTLD_NOW | RTLD_GLOBAL`), finds each symbol as the dynamic linker would
//! (`dlsym(RTLD_DEFAULT)`, so a preloaded interposer comes first) and calls them from many threads
//! with generated values, keeping what it sent, the thread and the status it got back.
//!
//! It loads only the stand-in (and, where the plan asks, a copy of it as the CUDA driver), and
//! refuses to call where a real NPP is mapped or a symbol resolves anywhere but the stand-in or
//! the interposer: the values it passes are not buffers. Threads run all at once, or one after
//! another as a program that starts a thread per frame runs them.

use std::ffi::{CStr, CString, c_int, c_void};
use std::path::Path;

use nppbench_npp_sys::{NppStatus, RawFn};

use crate::LIB_FILE_NAME;
use crate::plan::Values;
pub use crate::plan::{Plan, stream_of_thread};
use crate::stubs::{STUBS, Stub};

/// One call made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallRecord {
    pub symbol: String,
    /// The calling thread (kernel id).
    pub tid: i64,
    pub roi: (c_int, c_int),
    /// What the call returned.
    pub status: NppStatus,
    /// The line the stand-in logs for exactly the arguments sent, on this thread.
    pub sent: String,
}

/// The calls made, and the file names of the objects the symbols resolved into.
#[derive(Debug, Clone)]
pub struct Calls {
    pub records: Vec<CallRecord>,
    pub resolved_in: Vec<String>,
    /// How often the plan's stand-in driver was asked a stream's flags; `None` without one.
    pub flags_asked: Option<u64>,
}

/// Every symbol the stand-in exports, in catalogue order.
pub fn symbols() -> Vec<&'static str> {
    STUBS.iter().map(|(s, _)| *s).collect()
}

pub use crate::standin_path;

fn file_name(path: &str) -> String {
    Path::new(path)
        .file_name()
        .map_or(path.to_owned(), |n| n.to_string_lossy().into_owned())
}

/// Loads the stand-in globally and checks it is one.
fn load_standin() -> Result<(), String> {
    let path = standin_path().ok_or_else(|| format!("no {LIB_FILE_NAME} beside the executable"))?;
    let c = CString::new(path.as_os_str().as_encoded_bytes()).map_err(|e| e.to_string())?;
    // SAFETY: the stand-in's initialisers are Rust's own; it is the file this crate builds.
    let handle = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL) };
    if handle.is_null() {
        return Err(format!("dlopen {}: failed", path.display()));
    }
    // SAFETY: a lookup through a valid handle.
    let marker = unsafe { libc::dlsym(handle, c"nppbench_trace_standin_marker".as_ptr()) };
    if marker.is_null() {
        return Err(format!("{} is not the stand-in", path.display()));
    }
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
    if let Some(real) = maps.lines().filter_map(|l| l.find('/').map(|i| &l[i..])).find(|p| {
        let f = file_name(p);
        f.starts_with("libnpp") && !f.starts_with("libnppbench")
    }) {
        return Err(format!(
            "a real NPP is loaded ({real}): the stand-in's values would reach it"
        ));
    }
    Ok(())
}

/// `symbol` as the dynamic linker resolves it, and the file it resolved into.
fn resolve(symbol: &str) -> Result<(RawFn, String), String> {
    let c = CString::new(symbol).map_err(|e| e.to_string())?;
    // SAFETY: a lookup by name among the loaded objects.
    let p = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c.as_ptr()) };
    if p.is_null() {
        return Err(format!("{symbol}: not found"));
    }
    // SAFETY: Dl_info is plain data, zero is valid; dladdr fills it for any address.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    let found = unsafe { libc::dladdr(p, &mut info) } != 0 && !info.dli_fname.is_null();
    // SAFETY: dladdr's file name is NUL-terminated while the object is loaded.
    let lib = found.then(|| file_name(&unsafe { CStr::from_ptr(info.dli_fname) }.to_string_lossy()));
    match lib {
        Some(l) if l == LIB_FILE_NAME || l == "libnppbench_trace.so" => {
            // SAFETY: a non-null function address; the stub gives it its signature.
            Ok((unsafe { std::mem::transmute::<*mut c_void, RawFn>(p) }, l))
        }
        other => Err(format!(
            "{symbol} resolves into {other:?}, neither the interposer nor the stand-in"
        )),
    }
}

/// Makes the plan's calls: thread `t`'s `j`-th call is to `symbols[(t + j) % n]`.
pub fn run(plan: &Plan) -> Result<Calls, String> {
    load_standin()?;
    let driver = plan.driver.as_deref().map(crate::driver::load).transpose()?;
    let names: Vec<String> = if plan.symbols.is_empty() {
        symbols().into_iter().map(str::to_owned).collect()
    } else {
        plan.symbols.clone()
    };
    let mut targets: Vec<(String, RawFn, Stub)> = Vec::new();
    let mut resolved_in: Vec<String> = Vec::new();
    for name in &names {
        let stub = STUBS
            .iter()
            .find(|(s, _)| s == name)
            .ok_or_else(|| format!("{name}: not catalogued"))?
            .1;
        let (f, lib) = resolve(name)?;
        if !resolved_in.contains(&lib) {
            resolved_in.push(lib);
        }
        targets.push((name.clone(), f, stub));
    }
    if plan.rois.is_empty() || targets.is_empty() {
        return Err("the plan has no ROI or no symbol".into());
    }
    std::thread::sleep(plan.setup);
    let records = if plan.one_thread_at_a_time {
        (0..plan.threads)
            .flat_map(|t| {
                let targets = &targets;
                std::thread::scope(|scope| {
                    let h = scope.spawn(move || thread_calls(plan, targets, t));
                    h.join().expect("a caller thread panicked")
                })
            })
            .collect()
    } else {
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..plan.threads)
                .map(|t| {
                    let targets = &targets;
                    scope.spawn(move || thread_calls(plan, targets, t))
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().expect("a caller thread panicked"))
                .collect()
        })
    };
    Ok(Calls {
        records,
        resolved_in,
        flags_asked: driver.and_then(crate::driver::flags_asked),
    })
}

/// Touches `STACK_USED` bytes of the thread's stack, as a program's thread has by its first NPP
/// call (CUDA's own calls run deep), so that faulting those pages in is not counted as the
/// interposer's.
#[inline(never)]
fn use_stack() {
    let mut used = [0u8; STACK_USED];
    std::hint::black_box(&mut used);
}

/// Stack a caller thread touches before its first call.
const STACK_USED: usize = 64 << 10;

fn thread_calls(plan: &Plan, targets: &[(String, RawFn, Stub)], t: usize) -> Vec<CallRecord> {
    use_stack();
    // SAFETY: gettid has no preconditions.
    let tid = i64::from(unsafe { libc::gettid() });
    if let Some(created) = plan.stream_created {
        created(crate::plan::stream_of_thread(t), 1);
    }
    let roi = plan.rois[t % plan.rois.len()];
    (0..plan.calls_per_thread)
        .map(|j| {
            let (name, f, stub) = &targets[(t + j) % targets.len()];
            let v = Values::new(plan, roi, ((t as u64) << 20) + j as u64);
            // SAFETY: `f` resolved into the stand-in, or the interposer in front of it (checked
            // in `resolve`, with no real NPP mapped), and `stub` is `name`'s: both take any values.
            let (status, sent) = unsafe { stub(*f, &v) };
            CallRecord {
                symbol: name.clone(),
                tid,
                roi: (roi.width, roi.height),
                status,
                sent,
            }
        })
        .collect()
}
