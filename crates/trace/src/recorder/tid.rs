//! The kernel's id of the calling thread, read without a system call where the C library keeps
//! it: glibc's thread descriptor holds it (the kernel writes it there as the thread starts; glibc
//! 2.42's `pthread_gettid_np` returns that field). A thread that registers on its first NPP call
//! would otherwise pay `gettid`, a system call of some hundreds of nanoseconds under a
//! hypervisor, on that call.
//!
//! Older glibc exports no reader, so the field's place is found once per process, off the call
//! path: among the descriptor's first KiB (glibc's descriptor is larger), the offsets that hold
//! the `gettid()` of two threads, this one and a new one; exactly one offset must hold both.
//! Where none or several do, or where the C library is not glibc, `gettid` is asked.

use std::sync::OnceLock;

/// How the calling thread's id is read.
#[derive(Debug, Clone, Copy)]
enum Reader {
    /// glibc's `pthread_gettid_np`.
    Exported(unsafe extern "C" fn(libc::pthread_t) -> libc::pid_t),
    /// The field at this offset of the thread's descriptor (`pthread_self()`).
    Offset(usize),
    /// The system call.
    Syscall,
}

static READER: OnceLock<Reader> = OnceLock::new();

/// 4-byte words of the descriptor searched.
const WORDS: usize = 256;

fn gettid() -> i64 {
    // SAFETY: gettid has no preconditions.
    i64::from(unsafe { libc::gettid() })
}

/// The offsets of the calling thread's descriptor that hold its id.
#[cfg(target_env = "gnu")]
fn offsets_holding_own_id() -> Vec<usize> {
    let tid = gettid() as libc::pid_t;
    // SAFETY: pthread_self has no preconditions; with glibc it returns the thread's descriptor,
    // `struct pthread`, which is over 1 KiB (its header alone is 704 bytes on x86_64), so the
    // words read are inside it.
    let base = unsafe { libc::pthread_self() } as *const libc::pid_t;
    (0..WORDS)
        // SAFETY: inside the descriptor (above); a volatile read of plain memory.
        .filter(|&i| unsafe { base.add(i).read_volatile() } == tid)
        .map(|i| i * size_of::<libc::pid_t>())
        .collect()
}

#[cfg(target_env = "gnu")]
fn find() -> Reader {
    // SAFETY: looks a symbol up by a NUL-terminated name; no library is loaded.
    let exported = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"pthread_gettid_np".as_ptr()) };
    if !exported.is_null() {
        // SAFETY: glibc's `pid_t pthread_gettid_np(pthread_t)`.
        return Reader::Exported(unsafe {
            std::mem::transmute::<*mut libc::c_void, unsafe extern "C" fn(libc::pthread_t) -> libc::pid_t>(exported)
        });
    }
    let here = offsets_holding_own_id();
    let Ok(there) = std::thread::spawn(offsets_holding_own_id).join() else {
        return Reader::Syscall;
    };
    match here.iter().filter(|o| there.contains(o)).collect::<Vec<_>>()[..] {
        [only] => Reader::Offset(*only),
        _ => Reader::Syscall,
    }
}

#[cfg(not(target_env = "gnu"))]
fn find() -> Reader {
    Reader::Syscall
}

/// Finds how to read a thread's id (once; the writer's start, and the bench's).
pub(crate) fn prepare() {
    READER.get_or_init(find);
}

/// The kernel's id of the calling thread.
pub(crate) fn current() -> i64 {
    match READER.get() {
        Some(Reader::Offset(offset)) => {
            // SAFETY: the offset was found inside glibc's descriptor (`find`), and every
            // thread's descriptor has the same layout.
            let base = unsafe { libc::pthread_self() } as *const u8;
            // SAFETY: as above; the field is a pid_t, aligned (found as the i-th pid_t).
            i64::from(unsafe { base.add(*offset).cast::<libc::pid_t>().read_volatile() })
        }
        // SAFETY: the calling thread's own handle, as glibc's function takes it.
        Some(Reader::Exported(f)) => i64::from(unsafe { f(libc::pthread_self()) }),
        Some(Reader::Syscall) | None => gettid(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_threads_id_is_read_as_the_kernel_gives_it_on_every_thread() {
        prepare();
        #[cfg(target_env = "gnu")]
        assert!(
            !matches!(READER.get(), Some(Reader::Syscall) | None),
            "glibc keeps the id where it can be read"
        );
        let ids: Vec<(i64, i64)> = (0..8)
            .map(|_| std::thread::spawn(|| (current(), gettid())).join().unwrap())
            .chain([(current(), gettid())])
            .collect();
        for (read, asked) in ids {
            assert_eq!(read, asked);
        }
    }
}
