//! What the process's first CUDA work sets off (its first stream created, its first call
//! recorded), kept apart from the writer so that the modules that see that work need not import
//! it: the writer installs its exit handler here at start, and looks here for the first call.
//! Also the flags the recorder reads and the writer sets: whether this is a forked child (which
//! records nothing), and whether the test hook of stream events is on.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::recorder::hot::HOT;

/// The writer's exit handler, installed at start in the preloaded library (never in the rlib).
static EXIT_HANDLER: OnceLock<extern "C" fn()> = OnceLock::new();

static EXIT_HOOKED_AT_WORK: AtomicBool = AtomicBool::new(false);

/// Installs the writer's exit handler and hooks it once now (a program that never calls NPP is
/// still written at exit).
pub(crate) fn install_exit_handler(handler: extern "C" fn()) {
    if EXIT_HANDLER.set(handler).is_ok() {
        hook_exit();
    }
}

fn hook_exit() {
    if let Some(handler) = EXIT_HANDLER.get() {
        // SAFETY: the handler is an `extern "C" fn()` that never unwinds (the writer's).
        unsafe { libc::atexit(*handler) };
    }
}

/// A thread makes its first catalogued call (`feed::enter` asks once per thread): the process's
/// first flags it for the writer, and hooks the exit path where no stream's creation did
/// ([`on_cuda_work`]); later threads read one flag.
#[inline]
pub(crate) fn on_call() {
    if !HOT.calls_began.load(Ordering::Relaxed) {
        first_call();
    }
}

#[cold]
#[inline(never)]
fn first_call() {
    HOT.calls_began.store(true, Ordering::Relaxed);
    // `atexit` may allocate: the call's `errno` stays NPP's.
    crate::recorder::errno::keeping_errno(on_cuda_work);
}

/// In a forked child, from `pthread_atfork`'s child handler: stops recording. Only an atomic
/// store, as a child of a threaded process may do before it `exec`s.
pub(crate) extern "C" fn on_fork_child() {
    HOT.forked.store(true, Ordering::Relaxed);
}

/// Whether calls are recorded: not where the process shields without tracing (set at start).
#[inline]
pub(crate) fn recording() -> bool {
    !HOT.not_recording.load(Ordering::Relaxed)
}

pub(crate) fn stop_recording() {
    HOT.not_recording.store(true, Ordering::Relaxed);
}

/// Whether this process is a forked copy of the traced one.
#[inline]
pub(crate) fn forked() -> bool {
    HOT.forked.load(Ordering::Relaxed)
}

/// Whether the test hook of stream events is on (`protocol::TEST_STREAM_EVENTS`, read once at
/// start).
static TEST_STREAM_EVENTS: AtomicBool = AtomicBool::new(false);

pub(crate) fn set_test_stream_events(on: bool) {
    TEST_STREAM_EVENTS.store(on, Ordering::Relaxed);
}

pub(crate) fn test_stream_events() -> bool {
    TEST_STREAM_EVENTS.load(Ordering::Relaxed)
}

/// Whether a call has been recorded.
pub(crate) fn calls_began() -> bool {
    HOT.calls_began.load(Ordering::Relaxed)
}

/// At the process's first stream created or call recorded, whichever comes first (CUDA has
/// started by then): hooks the exit path again, so that it runs before the exit handlers CUDA
/// registered at its start (which may tear streams down). Whichever hook runs first writes.
/// Usually a stream's creation, in a CUPTI callback, pays for `atexit`, not a call.
#[inline]
pub(crate) fn on_cuda_work() {
    if !EXIT_HOOKED_AT_WORK.load(Ordering::Relaxed) && !EXIT_HOOKED_AT_WORK.swap(true, Ordering::Relaxed) {
        hook_exit();
    }
}
