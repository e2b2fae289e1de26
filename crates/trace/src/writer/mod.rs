//! The writer: everything that does not run on the program's threads' calls and callbacks
//! (`recorder/` is what does, and never names this module). Starting in the traced process and
//! writing the trace: the initialiser (run by the loader before `main`), the writer thread that samples memory every tenth of a second (and at once
//! when the process makes its first NPP call, for a baseline) and rewrites the file every half
//! second, and the exit path that samples and writes it once more (or, for SIGTERM, SIGINT and
//! SIGHUP left to their default action, the signal's handler: `recorder/signals.rs`). Each write goes to a
//! temporary file renamed over the trace, so a reader (or a crash) never sees half a file. The
//! writer also does the once-per-process lookup of the CUDA driver (`driver::prepare`), so that
//! a caller's thread seldom pays for it.

use std::ffi::CStr;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{LazyLock, Mutex, OnceLock};
use std::time::{Duration, Instant};

use nppbench_model::{ShieldPlan, TraceDevice, TraceEnd, TraceFile};
use nppbench_npp_sys::{GetLibVersion, NppLibraryVersion};

use crate::protocol::{self, FLUSH_INTERVAL_S, SAMPLE_INTERVAL_S};
use crate::recorder::clock::{self, seconds};
use crate::recorder::pending::Asking;
use crate::recorder::{cupti, driver, signals, work};
use memory::{Sampler, Samples, live_threads};
use snapshot::{Context, live_streams};
use sync::lock_until;

pub(crate) mod memory;
mod shield;
pub(crate) mod site;
mod snapshot;
pub(crate) mod streams;
pub(crate) mod symbolise;
pub(crate) mod sync;
pub(crate) mod thread;

/// Where and for whom the trace is written, fixed at start.
struct Config {
    out: PathBuf,
    /// A process the traced program started: it writes only once it has something.
    descendant: bool,
    /// The process that started: a forked copy of it writes nothing.
    pid: u32,
}

static CONFIG: OnceLock<Config> = OnceLock::new();

/// What the writer keeps between writes.
struct State {
    program: Vec<String>,
    streams_missing: Option<String>,
    /// Why NVML cannot be asked (not yet loaded, or failed to load).
    memory_unavailable: Option<String>,
    devices: Vec<TraceDevice>,
    samples: Samples,
    npp_version: Option<String>,
    /// The exit path has written the final file: nothing more is written.
    finished: bool,
}

static STATE: LazyLock<Mutex<State>> = LazyLock::new(|| {
    Mutex::new(State {
        program: Vec::new(),
        streams_missing: None,
        memory_unavailable: Some("the program ended before the writer thread had loaded NVML".into()),
        devices: Vec::new(),
        samples: Samples::new(SAMPLE_INTERVAL_S),
        npp_version: None,
        finished: false,
    })
});

/// How long a write waits for a thread busy recording before leaving its latest calls out.
const BUSY_WAIT: Duration = Duration::from_millis(200);

/// NVML, once the writer thread has loaded it (the exit path samples with it too).
static SAMPLER: OnceLock<Sampler> = OnceLock::new();

/// The traced program's arguments, from `/proc/self/cmdline`.
fn program() -> Vec<String> {
    let raw = std::fs::read("/proc/self/cmdline").unwrap_or_default();
    raw.split(|b| *b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect()
}

/// `nppGetLibVersion`, where libnppc is loaded.
fn npp_version() -> Option<String> {
    // SAFETY: looks a name up among the loaded objects.
    let f = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"nppGetLibVersion".as_ptr()) };
    if f.is_null() {
        return None;
    }
    // SAFETY: libnppc's nppGetLibVersion has the signature `sys::GetLibVersion` and returns a
    // pointer to a static struct (or null).
    let v: *const NppLibraryVersion = unsafe { std::mem::transmute::<*mut libc::c_void, GetLibVersion>(f)() };
    // SAFETY: non-null, it points at NPP's static version struct.
    let v = unsafe { v.as_ref() }?;
    Some(format!("{}.{}.{}", v.major, v.minor, v.build))
}

/// Writes the trace as it stands, unless this is a forked copy of the traced process, the exit
/// path has already written it, or (a descendant) there is nothing to say.
pub(crate) fn write(end: TraceEnd) {
    let Some(cfg) = CONFIG.get() else { return };
    if std::process::id() != cfg.pid {
        if work::forked() && !matches!(end, TraceEnd::Running) {
            forked_child_trace(cfg, end);
        }
        return;
    }
    let deadline = Instant::now() + BUSY_WAIT;
    let Some(mut st) = lock_until(&STATE, deadline + BUSY_WAIT) else {
        return;
    };
    if st.finished {
        return;
    }
    let final_write = !matches!(end, TraceEnd::Running);
    if final_write && let Some(sampler) = SAMPLER.get() {
        st.samples.push(take_sample(sampler));
    }
    let npp_libraries = symbolise::npp_libraries();
    if st.npp_version.is_none() && !npp_libraries.is_empty() {
        st.npp_version = npp_version();
    }
    let ctx = Context {
        end,
        program: st.program.clone(),
        streams_missing: st.streams_missing.clone(),
        memory_unavailable: st.memory_unavailable.clone(),
        sampler: SAMPLER.get(),
        devices: &st.devices,
        samples: &st.samples,
        npp_libraries,
        npp_version: st.npp_version.clone(),
    };
    let trace = snapshot::snapshot(ctx, deadline);
    let something = !trace.npp_libraries.is_empty() || !trace.call_sites.is_empty() || !trace.streams.is_empty();
    if !cfg.descendant || something {
        let _ = write_atomic(&cfg.out, &trace);
    }
    st.finished = final_write;
}

/// A forked child's trace, at its exit: it stopped recording at the fork (it has none of the
/// writer's threads, and its copy of the parent's records is the parent's), and says so.
fn forked_child_trace(cfg: &Config, end: TraceEnd) {
    let pid = std::process::id();
    let why = format!(
        "a forked child of process {} (fork without exec): the interposer stops recording in a forked child, so its NPP calls after the fork are in no trace",
        cfg.pid
    );
    let trace = TraceFile::empty(program(), pid, clock::started_at(), seconds(clock::now_ns()), end, &why);
    let _ = write_atomic(&cfg.out.with_file_name(TraceFile::descendant_file_name(pid)), &trace);
}

/// Writes `trace` to a temporary file beside `path`, then renames it over `path`.
pub(crate) fn write_atomic(path: &Path, trace: &TraceFile) -> std::io::Result<()> {
    let tmp = path.with_extension(format!("json.{}.tmp", std::process::id()));
    let mut f = std::fs::File::create(&tmp)?;
    f.write_all(&serde_json::to_vec_pretty(trace).map_err(std::io::Error::other)?)?;
    f.write_all(b"\n")?;
    drop(f);
    std::fs::rename(&tmp, path)
}

fn take_sample(sampler: &Sampler) -> memory::RawSample {
    sampler.sample(
        seconds(clock::now_ns()),
        live_threads(),
        live_streams(Instant::now() + BUSY_WAIT),
    )
}

/// The writer thread: a first write at once, then a sample every [`SAMPLE_INTERVAL_S`] (once
/// NVML has loaded, on a thread of its own: loading it can take a second, and the calls are
/// flushed meanwhile; and one sample within [`FIRST_CALL_SLICE`] of the first NPP call: the
/// baseline of the memory's growth) and a write every [`FLUSH_INTERVAL_S`], until the exit path
/// has written, or a signal's handler asks for the final write (`signals.rs`).
fn writer_thread() {
    // Here, not in the library's initialiser: it starts and joins a thread.
    crate::recorder::tid::prepare();
    // Before NVML's thread starts, which inherits the mask.
    signals::block_on_this_thread();
    write(TraceEnd::Running);
    let _ = std::thread::Builder::new().name("nppbench-nvml".into()).spawn(|| {
        let _ = std::panic::catch_unwind(|| {
            let sampler = SAMPLER.get_or_init(Sampler::new);
            if let Some(mut st) = lock_until(&STATE, Instant::now() + BUSY_WAIT) {
                st.memory_unavailable = sampler.missing.clone();
                st.devices = sampler.devices.clone();
            }
        });
    });
    let flush = Duration::from_secs_f64(FLUSH_INTERVAL_S);
    let mut written = Instant::now();
    let mut sampled_at_first_call = false;
    loop {
        if let Some(sig) = signals::pending() {
            let end = TraceEnd::Signal {
                signal: sig,
                name: signals::name(sig),
            };
            write(end.clone());
            shield::write(end);
            signals::flushed();
            return;
        }
        driver::prepare();
        crate::recorder::feed::refill();
        // The threads' records are read at every tick, not only at each write, so that the
        // chunks go back to the pool sooner (a busy thread then rarely allocates one).
        thread::each_thread(Instant::now() + BUSY_WAIT, |_| {});
        let s = SAMPLER.get().map(take_sample);
        match lock_until(&STATE, Instant::now() + BUSY_WAIT) {
            Some(st) if st.finished => return,
            Some(mut st) => {
                if let Some(s) = s {
                    st.samples.push(s);
                }
            }
            None => {}
        }
        if written.elapsed() >= flush {
            write(TraceEnd::Running);
            written = Instant::now();
        }
        wait_for_tick(Duration::from_secs_f64(SAMPLE_INTERVAL_S), &mut sampled_at_first_call);
    }
}

/// How often the writer looks, until the first call, whether calls have begun.
const FIRST_CALL_SLICE: Duration = Duration::from_millis(5);

/// Waits `interval`, or less: until calls begin, it looks every [`FIRST_CALL_SLICE`] and returns
/// once they have, noting in `sampled_at_first_call` that the next sample is the calls' first
/// (and looks the CUDA driver up at each look, `driver::prepare`).
/// A signal's handler ends the wait at once.
fn wait_for_tick(interval: Duration, sampled_at_first_call: &mut bool) {
    let until = Instant::now() + interval;
    loop {
        let now = Instant::now();
        if now >= until || signals::pending().is_some() {
            return;
        }
        if *sampled_at_first_call {
            signals::wait(until - now);
            continue;
        }
        if work::calls_began() {
            *sampled_at_first_call = true;
            return;
        }
        // A program usually loads CUDA well before its first NPP call (its context takes tens
        // of ms to make): looked up here, the driver is ready by then, and no call pays for it.
        driver::prepare();
        signals::wait(FIRST_CALL_SLICE.min(until - now));
    }
}

/// C's `_exit` and `_Exit`, interposed (as bytehound does): a program that leaves through them
/// skips the exit handlers, so the final trace is written here first. A forked child (or a
/// `vfork` one) writes nothing. Then the C library's own ends the process.
fn exit_now(status: libc::c_int, name: &CStr) -> ! {
    let _ = std::panic::catch_unwind(|| write(TraceEnd::Exited { code: None }));
    let _ = std::panic::catch_unwind(|| shield::write(TraceEnd::Exited { code: None }));
    // SAFETY: looks the C library's own function up, after this library.
    let real = unsafe { libc::dlsym(libc::RTLD_NEXT, name.as_ptr()) };
    if !real.is_null() {
        // SAFETY: `_exit` and `_Exit` are `void (int)` and never return.
        unsafe { std::mem::transmute::<*mut libc::c_void, extern "C" fn(libc::c_int) -> !>(real)(status) }
    }
    // SAFETY: exit_group ends every thread of the process; it has no preconditions.
    unsafe { libc::syscall(libc::SYS_exit_group, status) };
    unreachable!("exit_group returned")
}

/// `_exit(2)`, interposed: see [`exit_now`].
#[unsafe(no_mangle)]
pub(crate) extern "C" fn _exit(status: libc::c_int) -> ! {
    exit_now(status, c"_exit")
}

/// `_Exit(3)`, interposed: see [`exit_now`].
#[unsafe(no_mangle)]
pub(crate) extern "C" fn _Exit(status: libc::c_int) -> ! {
    exit_now(status, c"_Exit")
}

extern "C" fn at_exit() {
    let _ = std::panic::catch_unwind(|| write(TraceEnd::Exited { code: None }));
    let _ = std::panic::catch_unwind(|| shield::write(TraceEnd::Exited { code: None }));
}

/// Whether this code runs from a shared object (the preloaded interposer) rather than a
/// program that linked the crate's rlib (the CLI, a bench, a test), where it must stay inert.
fn in_shared_object() -> bool {
    symbolise::symbolise(init as *const libc::c_void)
        .and_then(|f| {
            Path::new(&f.library)
                .file_name()
                .map(|n| n.to_string_lossy().contains(".so"))
        })
        .unwrap_or(false)
}

/// Whether this process was started by the traced (or shielded) program rather than by
/// `nppbench` ([`protocol::PARENT`]).
fn descendant() -> bool {
    let parent = std::env::var(protocol::PARENT).ok().and_then(|p| p.parse::<u32>().ok());
    parent.is_some_and(|p| p != std::os::unix::process::parent_id())
}

/// The trace's path for this process: [`protocol::OUT`], or `trace-<pid>.json` beside it for a
/// process the traced program started.
fn config(out: PathBuf) -> Config {
    let pid = std::process::id();
    let descendant = descendant();
    let out = if descendant {
        out.with_file_name(TraceFile::descendant_file_name(pid))
    } else {
        out
    };
    Config { out, descendant, pid }
}

/// Starts the shield where [`ShieldPlan::PLAN_VAR`] names a plan (and the report's path is set):
/// whether it is on.
fn start_shield() -> bool {
    let (Some(plan), Some(report)) = (
        std::env::var_os(ShieldPlan::PLAN_VAR),
        std::env::var_os(ShieldPlan::REPORT_VAR),
    ) else {
        return false;
    };
    shield::start(Path::new(&plan), PathBuf::from(report), descendant())
}

fn start() {
    if !in_shared_object() {
        return;
    }
    let out = std::env::var_os(protocol::OUT);
    let shielding = start_shield();
    if out.is_none() && !shielding {
        return;
    }
    clock::start();
    work::install_exit_handler(at_exit);
    signals::install();
    if shielding {
        // SAFETY: registers a child handler that only stores atomics.
        unsafe { libc::pthread_atfork(None, None, Some(crate::shield::on_fork_child)) };
    }
    let Some(out) = out else {
        // Shielding without tracing: nothing is recorded, and the shield's thread writes its
        // report and answers the signals' handler.
        work::stop_recording();
        let _ = std::thread::Builder::new().name("nppbench-shield".into()).spawn(|| {
            let _ = std::panic::catch_unwind(shield::thread);
        });
        return;
    };
    if CONFIG.set(config(PathBuf::from(out))).is_err() {
        return;
    }
    let streams_missing = cupti::subscribe().err();
    if let Ok(mut st) = STATE.lock() {
        st.program = program();
        st.streams_missing = streams_missing;
    }
    crate::recorder::pending::set(Asking::from_env(std::env::var(protocol::ASK_PENDING).ok().as_deref()));
    work::set_test_stream_events(std::env::var_os(protocol::TEST_STREAM_EVENTS).is_some_and(|v| v == "1"));
    // SAFETY: registers a child handler that only stores an atomic.
    unsafe { libc::pthread_atfork(None, None, Some(work::on_fork_child)) };
    crate::recorder::feed::refill();
    crate::recorder::feed::note_offset();
    let _ = std::thread::Builder::new().name("nppbench-trace".into()).spawn(|| {
        crate::recorder::feed::confirm_offset();
        let _ = std::panic::catch_unwind(writer_thread);
    });
}

extern "C" fn init() {
    let _ = std::panic::catch_unwind(start);
}

/// Runs [`init`] when the loader maps the library, before the program's `main`.
#[used]
// SAFETY: `.init_array` holds `extern "C" fn()` pointers the loader calls once at load;
// `init` is one and never unwinds.
#[unsafe(link_section = ".init_array")]
static INIT: extern "C" fn() = init;
