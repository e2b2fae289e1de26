//! A trace that survives the way services end: SIGTERM, SIGINT and SIGHUP, where the program
//! leaves them to their default action (which ends the process without running its exit path).
//!
//! At start, for each of those signals whose action is still the default, a handler is installed.
//! It does only what is safe in a signal handler: it stores the signal in [`PENDING`], wakes the
//! writer thread (a futex wake on that word), and waits, sleeping a millisecond at a time, until
//! the writer says the final trace is written ([`FLUSHED`]), for at most [`FLUSH_WAIT`]. Then it
//! restores the default action and raises the signal again: the process ends by the signal, as it
//! would have without the interposer, its status unchanged. The writer thread blocks these
//! signals, so the kernel never picks it to run the handler, which would wait for itself.
//!
//! A program that installs its own handler replaces this one (the program's runs, and if it ends
//! with `exit` or `_exit`, the exit path writes). A forked child inherits the handler but not the
//! writer: it re-raises at once.

use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};
use std::time::Duration;

/// The signals whose default action ends the process without its exit path, and that a service
/// is ordinarily stopped with.
const CAUGHT: [libc::c_int; 3] = [libc::SIGTERM, libc::SIGINT, libc::SIGHUP];

/// The signal a handler caught, 0 until one is: the word the writer waits on.
pub(crate) static PENDING: AtomicU32 = AtomicU32::new(0);

/// Set by the writer once the final trace is written for the signal in [`PENDING`].
static FLUSHED: AtomicU32 = AtomicU32::new(0);

/// The pid that installed the handlers: a forked child has another, and no writer.
static INSTALLED_BY: AtomicI32 = AtomicI32::new(0);

/// The longest a handler waits for the writer's final write before it lets the signal end the
/// process anyway.
const FLUSH_WAIT: Duration = Duration::from_secs(2);

/// Installs the handler for each of [`CAUGHT`] whose action is the default. Returns the signals
/// it took.
pub(crate) fn install() -> Vec<libc::c_int> {
    // SAFETY: getpid has no preconditions.
    INSTALLED_BY.store(unsafe { libc::getpid() }, Ordering::SeqCst);
    let mut taken = Vec::new();
    for sig in CAUGHT {
        // SAFETY: a zeroed sigaction is a valid value of the C struct.
        let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
        // SAFETY: sigaction with a null new action only reads the current one into `old`.
        if unsafe { libc::sigaction(sig, std::ptr::null(), &mut old) } != 0 || old.sa_sigaction != libc::SIG_DFL {
            continue;
        }
        // SAFETY: a zeroed sigaction with our handler and an empty mask; `on_signal` is an
        // `extern "C" fn(c_int)` that only calls async-signal-safe functions.
        let mut new: libc::sigaction = unsafe { std::mem::zeroed() };
        new.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
        new.sa_flags = libc::SA_RESTART;
        // SAFETY: as above; the mask is a valid sigset_t inside `new`.
        unsafe { libc::sigemptyset(&mut new.sa_mask) };
        // SAFETY: installs a valid action for a catchable signal.
        if unsafe { libc::sigaction(sig, &new, std::ptr::null_mut()) } == 0 {
            taken.push(sig);
        }
    }
    taken
}

/// Blocks [`CAUGHT`] on the calling thread (the writer's), so that the kernel hands a
/// process-directed signal to another thread.
pub(crate) fn block_on_this_thread() {
    // SAFETY: builds a valid signal set and changes this thread's mask only.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for sig in CAUGHT {
            libc::sigaddset(&mut set, sig);
        }
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

/// The handler: wake the writer, wait for its final write (bounded), then end the process by the
/// same signal with its default action. Only async-signal-safe calls: atomics, `futex`,
/// `nanosleep`, `getpid`, `sigaction`, `raise`.
extern "C" fn on_signal(sig: libc::c_int) {
    // SAFETY: getpid is async-signal-safe.
    let ours = unsafe { libc::getpid() } == INSTALLED_BY.load(Ordering::SeqCst);
    if ours
        && PENDING
            .compare_exchange(0, sig as u32, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    {
        wake(&PENDING);
    }
    if ours {
        let step = libc::timespec {
            tv_sec: 0,
            tv_nsec: 1_000_000,
        };
        for _ in 0..FLUSH_WAIT.as_millis() {
            if FLUSHED.load(Ordering::SeqCst) != 0 {
                break;
            }
            // SAFETY: nanosleep is async-signal-safe; `step` is a valid timespec.
            unsafe { libc::nanosleep(&step, std::ptr::null_mut()) };
        }
    }
    // SAFETY: restores the default action of a catchable signal, then raises it: it is blocked
    // while this handler runs, so it ends the process as this handler returns. Both calls are
    // async-signal-safe.
    unsafe {
        let mut dfl: libc::sigaction = std::mem::zeroed();
        dfl.sa_sigaction = libc::SIG_DFL;
        libc::sigemptyset(&mut dfl.sa_mask);
        libc::sigaction(sig, &dfl, std::ptr::null_mut());
        libc::raise(sig);
    }
}

/// The signal caught, if a handler caught one.
pub(crate) fn pending() -> Option<libc::c_int> {
    match PENDING.load(Ordering::SeqCst) {
        0 => None,
        sig => Some(sig as libc::c_int),
    }
}

/// Tells a waiting handler that the final trace is written.
pub(crate) fn flushed() {
    FLUSHED.store(1, Ordering::SeqCst);
}

/// Waits on [`PENDING`] while it is 0, for at most `timeout`: returns early when a handler wakes
/// it (or spuriously; the caller looks again).
pub(crate) fn wait(timeout: Duration) {
    let ts = libc::timespec {
        tv_sec: timeout.as_secs() as libc::time_t,
        tv_nsec: timeout.subsec_nanos() as libc::c_long,
    };
    // SAFETY: FUTEX_WAIT on a live, aligned u32 with a valid relative timeout; it returns at
    // once if the word is no longer 0.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            PENDING.as_ptr(),
            libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
            0u32,
            &ts as *const libc::timespec,
        );
    }
}

/// Wakes every waiter on `word` (async-signal-safe: one system call).
fn wake(word: &AtomicU32) {
    // SAFETY: FUTEX_WAKE on a live, aligned u32.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
            i32::MAX,
        );
    }
}

/// The name of signal `sig`, as the trace's end records it.
pub(crate) fn name(sig: libc::c_int) -> String {
    match sig {
        libc::SIGTERM => "SIGTERM",
        libc::SIGINT => "SIGINT",
        libc::SIGHUP => "SIGHUP",
        _ => "signal",
    }
    .to_owned()
}
